package engine

import (
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/nats-io/nats.go"
)

// TestAckPublisherOutcomes checks that every publish is called back once:
// with nil when JetStream stores it, and with an error when no stream takes
// the subject, when nothing answers before the deadline, and when the
// deadline has passed already.
func TestAckPublisherOutcomes(t *testing.T) {
	e := startEngine(t, Options{Table: brokerTable()})
	src := e.currentPlan().ForPath("/brokers/ns/b")
	// A plain subscriber that never answers.
	mute, err := e.nc.SubscribeSync("mute.subject")
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = mute.Unsubscribe() }()
	tests := []struct {
		name     string
		subject  string
		deadline time.Duration
		wantErr  string
	}{
		{name: "stored", subject: src.Names().In, deadline: 5 * time.Second},
		{name: "no stream", subject: "no.stream.here", deadline: 400 * time.Millisecond, wantErr: "503"},
		{name: "no answer", subject: "mute.subject", deadline: 200 * time.Millisecond, wantErr: errPublishTimeout.Error()},
		{name: "deadline passed", subject: src.Names().In, deadline: -time.Second, wantErr: errPublishTimeout.Error()},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			calls := make(chan error, 2)
			e.acks.Publish(&nats.Msg{Subject: tt.subject}, time.Now().Add(tt.deadline), func(err error, _ bool) { calls <- err })
			var got error
			select {
			case got = <-calls:
			case <-time.After(10 * time.Second):
				t.Fatal("no outcome after 10s")
			}
			switch {
			case tt.wantErr == "" && got != nil:
				t.Errorf("outcome %v, want success", got)
			case tt.wantErr != "" && (got == nil || !strings.Contains(got.Error(), tt.wantErr)):
				t.Errorf("outcome %v, want an error with %q", got, tt.wantErr)
			}
			select {
			case again := <-calls:
				t.Errorf("called back twice, the second time with %v", again)
			case <-time.After(300 * time.Millisecond):
			}
		})
	}
}

func TestAckError(t *testing.T) {
	tests := []struct {
		name string
		msg  *nats.Msg
		want string // the error's text up to its end or to "*"
	}{
		{"ack", &nats.Msg{Data: []byte(`{"stream":"s","seq":3}`)}, ""},
		{"duplicate", &nats.Msg{Data: []byte(`{"stream":"s","seq":3,"duplicate":true}`)}, ""},
		{"error", &nats.Msg{Data: []byte(`{"error":{"code":503,"err_code":10077,"description":"maximum bytes exceeded"}}`)}, "publishing to JetStream: maximum bytes exceeded (code 503, error 10077)"},
		{"status", &nats.Msg{Header: nats.Header{"Status": {"503"}}}, "publishing to JetStream: status 503 "},
		{"empty", &nats.Msg{}, "publishing to JetStream: empty acknowledgement"},
		{"garbage", &nats.Msg{Data: []byte(`"error"`)}, "publishing to JetStream: unreadable acknowledgement: *"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var got string
			if err := ackError(tt.msg); err != nil {
				got = err.Error()
			}
			if prefix, ok := strings.CutSuffix(tt.want, "*"); ok && strings.HasPrefix(got, prefix) {
				return
			}
			if got != tt.want {
				t.Errorf("ackError = %q, want %q", got, tt.want)
			}
		})
	}
}

// TestFullStreamIsTyped: a stream with discard new that is at its limit
// refuses a message with an answer errors.Is tells as errStreamFull,
// wrapped or not; other refusals are not.
func TestFullStreamIsTyped(t *testing.T) {
	ack := func(code int, desc string) *nats.Msg {
		b, _ := json.Marshal(map[string]any{"error": map[string]any{"code": 503, "err_code": code, "description": desc}})
		return &nats.Msg{Data: b}
	}
	for _, tt := range []struct {
		name string
		msg  *nats.Msg
		full bool
	}{
		{"bytes", ack(10077, "maximum bytes exceeded"), true},
		{"messages", ack(10077, "maximum messages exceeded"), true},
		{"another failure to store", ack(10077, "message size exceeds maximum allowed"), false},
		{"another error", ack(10059, "stream not found"), false},
	} {
		err := ackError(tt.msg)
		if err == nil {
			t.Fatalf("%s: no error", tt.name)
		}
		if got := errors.Is(fmt.Errorf("publishing to x: %w", err), errStreamFull); got != tt.full {
			t.Errorf("%s: errors.Is(%v, errStreamFull) = %v, want %v", tt.name, err, got, tt.full)
		}
	}
}
