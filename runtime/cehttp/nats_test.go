package cehttp

import (
	"net/url"
	"testing"
	"time"

	"github.com/cloudevents/sdk-go/v2/event"
	"github.com/cloudevents/sdk-go/v2/types"
	"github.com/google/go-cmp/cmp"
	"github.com/nats-io/nats-server/v2/server"
	"github.com/nats-io/nats.go"
)

// jetStreamStore is a real embedded JetStream server with one stream and a
// pull consumer: events go in with ToNATS and come out with FromNATS.
type jetStreamStore struct {
	js  nats.JetStreamContext
	sub *nats.Subscription
}

func startJetStream(tb testing.TB) *jetStreamStore {
	tb.Helper()
	ns, err := server.NewServer(&server.Options{
		JetStream: true, StoreDir: tb.TempDir(),
		DontListen: true, NoLog: true, NoSigs: true, NoSystemAccount: true,
	})
	if err != nil {
		tb.Fatal(err)
	}
	go ns.Start()
	tb.Cleanup(ns.Shutdown)
	if !ns.ReadyForConnections(30 * time.Second) {
		tb.Fatal("NATS server not ready")
	}
	nc, err := nats.Connect("", nats.InProcessServer(ns))
	if err != nil {
		tb.Fatal(err)
	}
	tb.Cleanup(nc.Close)
	js, err := nc.JetStream()
	if err != nil {
		tb.Fatal(err)
	}
	if _, err := js.AddStream(&nats.StreamConfig{Name: "EVENTS", Subjects: []string{"events.>"}, Storage: nats.FileStorage}); err != nil {
		tb.Fatal(err)
	}
	sub, err := js.PullSubscribe("events.>", "test")
	if err != nil {
		tb.Fatal(err)
	}
	return &jetStreamStore{js: js, sub: sub}
}

// roundTrip stores e and reads it back.
func (s *jetStreamStore) roundTrip(tb testing.TB, e *event.Event) (*event.Event, error) {
	tb.Helper()
	if _, err := s.js.PublishMsg(ToNATS(e, "events.ns.default")); err != nil {
		tb.Fatalf("publishing: %v", err)
	}
	msgs, err := s.sub.Fetch(1, nats.MaxWait(10*time.Second))
	if err != nil || len(msgs) != 1 {
		tb.Fatalf("fetching: %d messages, %v", len(msgs), err)
	}
	if err := msgs[0].Ack(); err != nil {
		tb.Fatalf("acking: %v", err)
	}
	return FromNATS(msgs[0])
}

func TestNATSRoundTrip(t *testing.T) {
	store := startJetStream(t)
	tests := []struct {
		name   string
		modify func(*event.Event)
	}{
		{"every attribute", func(*event.Event) {}},
		{"no optional attributes", func(e *event.Event) {
			ec := e.Context.(*event.EventContextV1)
			ec.Subject, ec.Time, ec.DataSchema, ec.DataContentType, ec.Extensions = nil, nil, nil, nil, nil
			e.DataEncoded = nil
		}},
		{"values NATS would alter", func(e *event.Event) {
			e.SetSubject(" a\r\nb%20 ")
			e.SetExtension("pad", "\tx ")
			e.SetID("%")
		}},
		{"typed extensions", func(e *event.Event) {
			e.SetExtension("count", int32(-7))
			e.SetExtension("flag", true)
			e.SetExtension("blob", []byte{0, 1, 0xff})
			e.SetExtension("link", types.URI{URL: url.URL{Scheme: "https", Host: "example.com", Path: "/x"}})
			e.SetExtension("ref", types.URIRef{URL: url.URL{Path: "/y"}})
			e.SetExtension("at", types.Timestamp{Time: time.Date(2020, 1, 1, 0, 0, 0, 1, time.FixedZone("", -3600))})
		}},
		{"time with an offset", func(e *event.Event) {
			e.SetTime(time.Date(2024, 1, 2, 3, 4, 5, 6, time.FixedZone("", 5*3600+30*60)))
		}},
		{"binary payload from data_base64", func(e *event.Event) {
			e.DataEncoded = []byte{0xff, 0, '\r', '\n'}
			e.DataBase64 = true
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			e := testEvent(t, "application/json", []byte(" {\"a\": 1}\n"))
			tt.modify(e)
			got, err := store.roundTrip(t, e)
			if err != nil {
				t.Fatalf("FromNATS: %v", err)
			}
			if diff := cmp.Diff(e, got, attributeOpts); diff != "" {
				t.Errorf("event (-stored +read):\n%s", diff)
			}
		})
	}
}

func TestFromNATSRejects(t *testing.T) {
	tests := []struct {
		name   string
		header nats.Header
	}{
		{"no specversion", nats.Header{"ce-id": {"1"}, "ce-source": {"/s"}, "ce-type": {"t"}}},
		{"missing id", nats.Header{"ce-specversion": {"1.0"}, "ce-source": {"/s"}, "ce-type": {"t"}}},
		{"bad escape", nats.Header{"ce-specversion": {"1.0"}, "ce-id": {"%zz"}, "ce-source": {"/s"}, "ce-type": {"t"}}},
		{"bad typed extension", nats.Header{"ce-specversion": {"1.0"}, "ce-id": {"1"}, "ce-source": {"/s"}, "ce-type": {"t"}, "ce-n": {"x"}, natsTypes: {"n=integer"}}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if e, err := FromNATS(&nats.Msg{Subject: "events.x", Header: tt.header}); err == nil {
				t.Fatalf("FromNATS = %v, want an error", e)
			}
		})
	}
}

// FuzzNATSRoundTrip checks that any valid event goes through a real
// JetStream stream and reads back equal, with identical payload bytes.
func FuzzNATSRoundTrip(f *testing.F) {
	f.Add("1", "/s", "t", "", "", "", int64(0), int16(0), "ext", "v", int32(0), false, []byte(nil), false)
	f.Add(" id ", "https://u:p@example.com/a%20b?q#f", "t\n", "sub\r\nject", "text/plain; charset=utf-8", "https://e/s", int64(1700000000123456789), int16(90), "count", "%41", int32(-5), true, []byte{0xff, 0}, true)
	f.Add("%", "urn:x", " t", " ", "application/json", "", int64(-1), int16(-600), "pad", " \t", int32(1), false, []byte(`{"a":1}`), false)
	store := startJetStream(f)
	f.Fuzz(func(t *testing.T, id, source, typ, subject, contentType, dataSchema string, unixNanos int64, offsetMinutes int16,
		extName, extValue string, extInt int32, extBool bool, data []byte, dataBase64 bool) {
		ec := &event.EventContextV1{ID: id, Type: typ}
		u, err := url.Parse(source)
		if err != nil {
			return
		}
		ec.Source = types.URIRef{URL: *u}
		if subject != "" {
			ec.Subject = &subject
		}
		if contentType != "" {
			ec.DataContentType = &contentType
		}
		if dataSchema != "" {
			u, err := url.Parse(dataSchema)
			if err != nil {
				return
			}
			ec.DataSchema = &types.URI{URL: *u}
		}
		if unixNanos != 0 {
			// RFC 3339 has whole-minute offsets under a day.
			zone := time.FixedZone("", int(offsetMinutes)%(24*60)*60)
			ec.Time = &types.Timestamp{Time: time.Unix(0, unixNanos).In(zone)}
		}
		if _, err := extensionName(extName); err != nil || extName != extValueName(extName) {
			return
		}
		ec.Extensions = map[string]any{extName: extValue, "n" + extName: extInt, "b" + extName: extBool}
		if validateContext(ec) != nil {
			return
		}
		e := &event.Event{Context: ec, DataBase64: dataBase64}
		if len(data) > 0 {
			e.DataEncoded = data
		}
		got, err := store.roundTrip(t, e)
		if err != nil {
			t.Fatalf("FromNATS: %v\nstored: %s", err, e)
		}
		if diff := cmp.Diff(e, got, attributeOpts); diff != "" {
			t.Fatalf("event (-stored +read):\n%s", diff)
		}
	})
}

// extValueName is the stored form of an extension name: lower case.
func extValueName(name string) string {
	n, _ := extensionName(name)
	return n
}
