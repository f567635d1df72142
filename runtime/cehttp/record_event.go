package cehttp

import (
	"encoding/binary"
	"strings"

	"github.com/cloudevents/sdk-go/v2/event"
)

// RecordEvent reads the event in the first record of batch, as
// FromNATS(&nats.Msg{Subject: subject, Header: h, Data: data}) does with
// what NextRecord(batch) returns, without building the header map: the
// route stage reads every stored event, and the map was most of the cost
// and the garbage of reading one. It also returns the first value of the
// headers named in extra ("" when absent or unnamed) and the records after
// this one.
//
// A record that cannot be read at all fails with ErrCorruptRecord and no
// rest: the records after it cannot be found either. A record that holds
// no valid event fails with FromNATS's error, and rest is the records
// after it.
func RecordEvent(batch []byte, subject string, extra RecordExtras) (e *event.Event, extraValues RecordExtras, rest []byte, err error) {
	r, err := frameRecord(batch)
	if err != nil {
		return nil, extraValues, nil, err
	}
	rest = r.rest

	// One string holds every key and value, as in NextRecord.
	text := string(batch[recordPairsAt:r.pairsEnd])
	var fields [32]string
	kv := fields[:0]
	for pos := 0; pos < len(text); {
		l, n := binary.Uvarint(batch[recordPairsAt+pos:])
		kv = append(kv, text[pos+n:pos+n+int(l)])
		pos += n + int(l)
	}
	// A key that appears twice counts with its first value, as
	// FromNATS reads values[0] of the header NextRecord merged.
	first := func(i int) bool {
		for j := 0; j < i; j += 2 {
			if kv[j] == kv[i] {
				return false
			}
		}
		return true
	}
	specversion, types, base64 := "", "", ""
	for i := 0; i < len(kv); i += 2 {
		if !first(i) {
			continue
		}
		switch kv[i] {
		case natsPrefix + "specversion":
			specversion = kv[i+1]
		case natsTypes:
			types = kv[i+1]
		case natsDataBase64:
			base64 = kv[i+1]
		case "":
		case extra[0]:
			extraValues[0] = kv[i+1]
		case extra[1]:
			extraValues[1] = kv[i+1]
		}
	}
	if specversion != event.CloudEventsVersionV1 && specversion != event.CloudEventsVersionV03 {
		return nil, extraValues, rest, attrError("specversion", "missing or unsupported in NATS message on "+subject, nil)
	}
	b := new(binaryEvent)
	b.event.Context = &b.context
	for i := 0; i < len(kv); i += 2 {
		if !first(i) {
			continue
		}
		if err := b.setFromNATSHeader(kv[i], kv[i+1], types); err != nil {
			return nil, extraValues, rest, err
		}
	}
	if err := validateContext(&b.context); err != nil {
		return nil, extraValues, rest, err
	}
	if len(r.data) > 0 {
		b.event.DataEncoded = r.data
	}
	if base64 == "true" {
		b.event.DataBase64 = true
	}
	return b.finish(specversion), extraValues, rest, nil
}

// RecordExtras names the headers whose first values RecordEvent returns
// besides the event ("" names none), and holds those values.
type RecordExtras [2]string

// kindOf returns the kind the knc-ce-types value types gives the extension
// name; of two pairs for one name, the last counts.
func kindOf(types, name string) string {
	kind := ""
	for types != "" {
		var pair string
		pair, types, _ = strings.Cut(types, ",")
		if n, k, _ := strings.Cut(pair, "="); n == name {
			kind = k
		}
	}
	return kind
}
