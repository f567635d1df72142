package cehttp

import (
	"errors"
	"net/url"
	"testing"
	"time"

	"github.com/cloudevents/sdk-go/v2/event"
	"github.com/cloudevents/sdk-go/v2/types"
	"github.com/google/go-cmp/cmp"
	"github.com/nats-io/nats.go"
)

// compareRecordEvent checks that RecordEvent reads the first record of
// batch as FromNATS reads what NextRecord returns: the same event or an
// error for both, the same rest, and the extra header's first value.
func compareRecordEvent(t *testing.T, batch []byte) {
	t.Helper()
	extras := RecordExtras{"knc-accepted", NATSPassThrough}
	got, gotExtras, gotRest, gotErr := RecordEvent(batch, "x", extras)
	h, data, rest, err := NextRecord(batch)
	if err != nil {
		if !errors.Is(gotErr, ErrCorruptRecord) || gotRest != nil {
			t.Fatalf("NextRecord: %v; RecordEvent: %v with %d bytes of rest, want ErrCorruptRecord and none", err, gotErr, len(gotRest))
		}
		return
	}
	if string(gotRest) != string(rest) || len(gotRest) != len(rest) {
		t.Fatalf("rest: RecordEvent %q, NextRecord %q", gotRest, rest)
	}
	for i, extra := range extras {
		wantExtra := ""
		if v := h[extra]; len(v) > 0 {
			wantExtra = v[0]
		}
		if gotExtras[i] != wantExtra {
			t.Fatalf("%s: RecordEvent %q, header %q", extra, gotExtras[i], wantExtra)
		}
	}
	want, wantErr := FromNATS(&nats.Msg{Subject: "x", Header: h, Data: data})
	if (gotErr == nil) != (wantErr == nil) {
		t.Fatalf("RecordEvent error %v, FromNATS error %v", gotErr, wantErr)
	}
	if wantErr != nil {
		return
	}
	if diff := cmp.Diff(want, got, attributeOpts); diff != "" {
		t.Fatalf("event (-FromNATS +RecordEvent):\n%s", diff)
	}
}

// recordSeeds are batches on which RecordEvent must agree with FromNATS
// and NextRecord. They seed FuzzRecordEvent and run as a plain test.
func recordSeeds(t testing.TB) [][]byte {
	valid := nats.Header{"ce-specversion": {"1.0"}, "ce-id": {"1"}, "ce-source": {"/s"}, "ce-type": {"t"}}
	with := func(extra nats.Header) nats.Header {
		h := nats.Header{}
		for k, v := range valid {
			h[k] = v
		}
		for k, v := range extra {
			h[k] = v
		}
		return h
	}
	var seeds [][]byte
	add := func(h nats.Header, data []byte) {
		rec, err := AppendRecord(nil, h, data)
		if err != nil {
			t.Fatal(err)
		}
		// A record followed by another, so that rest matters.
		two, err := AppendRecord(append([]byte(nil), rec...), valid, []byte("next"))
		if err != nil {
			t.Fatal(err)
		}
		seeds = append(seeds, rec, two)
	}
	add(valid, nil)
	add(with(nats.Header{"knc-accepted": {"42", "43"}, "content-type": {"application/json"}}), []byte(`{"a":1}`))
	add(with(nats.Header{"knc-accepted": {"42"}, NATSPassThrough: {"Knative-Hello=world"}}), nil)
	add(with(nats.Header{"ce-id": {"first", "second"}}), nil)
	add(with(nats.Header{"ce-n": {"7"}, "ce-b": {"true"}, natsTypes: {"b=boolean,n=integer,n=boolean"}}), nil)
	add(with(nats.Header{"ce-n": {"x"}, natsTypes: {"n=integer"}}), nil)
	add(with(nats.Header{"ce-id": {"%zz"}}), nil)
	add(with(nats.Header{"ce-specversion": {"0.3"}}), nil)
	add(nats.Header{"ce-id": {"1"}, "ce-source": {"/s"}, "ce-type": {"t"}}, nil)
	add(with(nats.Header{"ce-": {"x"}, "ce-time": {"2024-05-06T07:08:09+02:00"}, "ce-subject": {"%20s%0D"}}), nil)
	add(with(nats.Header{natsDataBase64: {"true"}, "ce-dataschema": {"http://e/s"}}), []byte{0xff, 0})
	add(with(nats.Header{"ce-source": {"%zz"}}), nil)

	e := event.New()
	e.SetID("id")
	e.SetSource("https://example.com/a")
	e.SetType("t")
	e.SetTime(time.Date(2024, 1, 2, 3, 4, 5, 6, time.UTC))
	e.SetExtension("count", int32(-7))
	e.SetExtension("blob", []byte{0, 1, 0xff})
	e.SetExtension("link", types.URI{URL: url.URL{Scheme: "https", Host: "example.com", Path: "/x"}})
	e.SetExtension("at", types.Timestamp{Time: time.Date(2020, 1, 1, 0, 0, 0, 1, time.FixedZone("", -3600))})
	_ = e.SetData("application/json", map[string]int{"a": 1})
	rec, err := AppendEventRecord(nil, &e, "knc-accepted", "1")
	if err != nil {
		t.Fatal(err)
	}
	seeds = append(seeds, rec, rec[:len(rec)-1], []byte{0x80}, []byte{1, 0, 0xff, 0xff, 0xff, 0xff, 0x0f})
	return seeds
}

func TestRecordEventMatchesFromNATS(t *testing.T) {
	for _, batch := range recordSeeds(t) {
		compareRecordEvent(t, batch)
	}
}

// FuzzRecordEvent checks that RecordEvent and FromNATS over NextRecord, the
// reference, agree on any input.
func FuzzRecordEvent(f *testing.F) {
	for _, batch := range recordSeeds(f) {
		f.Add(batch)
	}
	f.Fuzz(func(t *testing.T, batch []byte) {
		compareRecordEvent(t, batch)
	})
}

func BenchmarkRecordEvent(b *testing.B) {
	e := event.New()
	e.SetID("id-0123456789")
	e.SetSource("/loadgen")
	e.SetType("loadgen")
	e.SetExtension("knativebrokerttl", int32(255))
	e.SetExtension("loadsent", "1763776000000000000")
	_ = e.SetData("application/json", []byte(`{"a":1}`))
	rec, err := AppendEventRecord(nil, &e, "knc-accepted", "1763776000000000000")
	if err != nil {
		b.Fatal(err)
	}
	b.Run("RecordEvent", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			if _, _, _, err := RecordEvent(rec, "x", RecordExtras{"knc-accepted", NATSPassThrough}); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("NextRecord+FromNATS", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			h, data, _, err := NextRecord(rec)
			if err != nil {
				b.Fatal(err)
			}
			if _, err := FromNATS(&nats.Msg{Subject: "x", Header: h, Data: data}); err != nil {
				b.Fatal(err)
			}
		}
	})
}
