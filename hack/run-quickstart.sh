#!/usr/bin/env bash
# Runs the quickstart example locally: `knc display` stands in for every
# Service subscriber and prints the events it receives, and `knc run`
# serves the example's Broker and Channel on 127.0.0.1:8080.
#
# Send an event from another terminal:
#   bin/knc send --to quickstart/default --type com.example.order.created \
#     --source /shop --data '{"amount": 1200}' --extension amount=1200
set -euo pipefail
cd "$(dirname "$0")/.."
knc=${KNC:-bin/knc}
display_addr=${DISPLAY_ADDR:-127.0.0.1:9090}
"$knc" display --addr "$display_addr" &
display=$!
trap 'kill -INT "$display" 2>/dev/null; wait "$display" 2>/dev/null || true' EXIT
"$knc" run examples/quickstart --services-url "http://$display_addr/" --data-dir .knc-data "$@"
