package pipeline

import (
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/cloudevents/sdk-go/v2/event"
	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"

	"github.com/knc-dev/knc/runtime/cehttp"
	"github.com/knc-dev/knc/runtime/ingress"
)

// cloneHeader copies h without the headers JetStream set when it was
// stored, with room for extra more.
func cloneHeader(h nats.Header, extra int) nats.Header {
	c := make(nats.Header, len(h)+extra)
	for k, v := range h {
		if !strings.HasPrefix(k, "Nats-") {
			c[k] = v
		}
	}
	return c
}

// forward copies msg to subject: the same event, byte for byte, with the
// headers JetStream set for the original removed.
func forward(msg jetstream.Msg, subject string) *nats.Msg {
	return &nats.Msg{Subject: subject, Header: cloneHeader(msg.Headers(), 1), Data: msg.Data()}
}

// eventOf reads the event stored in msg.
func eventOf(msg jetstream.Msg) (*event.Event, error) {
	return cehttp.FromNATS(&nats.Msg{Subject: msg.Subject(), Header: msg.Headers(), Data: msg.Data()})
}

func stamp(m *nats.Msg, accepted time.Time) {
	if m.Header == nil {
		m.Header = nats.Header{}
	}
	m.Header[ingress.HeaderAccepted] = []string{strconv.FormatInt(accepted.UnixNano(), 10)}
}

// acceptedOf returns the first knc-accepted value of h, "" without one.
func acceptedOf(h nats.Header) string {
	if v := h[ingress.HeaderAccepted]; len(v) > 0 {
		return v[0]
	}
	return ""
}

// acceptedAt reads a knc-accepted value.
func acceptedAt(v string) (time.Time, bool) {
	n, err := strconv.ParseInt(v, 10, 64)
	if err != nil {
		return time.Time{}, false
	}
	return time.Unix(0, n), true
}

// msgID names a message published because of msg, for deduplication.
func msgID(kind string, msg jetstream.Msg, meta *jetstream.MsgMetadata, suffix string) string {
	return fmt.Sprintf("%s:%s:%d:%s", kind, meta.Stream, meta.Sequence.Stream, suffix)
}
