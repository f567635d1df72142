// Package cluster3 tests knc's scale-out: a JetStream cluster of three NATS
// servers on loopback, streams replicated on all three (R3), and two knc
// runtimes sharing them through --nats-url. Under load, one NATS node and
// one runtime are killed; every event answered 202 must still be
// delivered, and the duplicates that at-least-once delivery allows are
// counted.
//
// The NATS nodes run in the test process (runtime/natsserver with cluster
// routes); the runtimes are real knc processes. A second test runs the
// form knc build renders for runtime.replicas: 3: three runtimes whose
// embedded servers are the cluster, one of which is killed and restarted;
// a third runs the same form firing a PingSource through 20 ticks of a
// shared test clock, with one runtime killed midway, and checks that each
// tick is stored once and delivered. Another keeps the letters a refusing
// subscriber leaves on the external cluster, and lists and replays them
// with knc dlq across a restart.
package cluster3
