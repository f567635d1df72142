package cehttp

import (
	"encoding/binary"
	"errors"
	"fmt"

	"github.com/cloudevents/sdk-go/v2/event"
	"github.com/nats-io/nats.go"
)

// Batches: one NATS message that holds several events, so that storing a
// burst of events costs JetStream one message instead of one each.
//
// A batch's data is a sequence of records. A record is what a single-event
// message holds, its headers (as ToNATS writes them, plus any other header
// the caller adds) and its data:
//
//	record = pairs:uint16 (little endian) { uvarint(len) key uvarint(len) value } uvarint(len) data
//
// A header with several values is several pairs with the same key. The
// count has a fixed width so that a record is written in one pass. The
// format version is the value of the batch message's HeaderBatch header.
const (
	HeaderBatch  = "knc-batch"
	BatchVersion = "1"
)

// maxRecordPairs bounds the headers of a record. An HTTP request's headers
// (64 KiB at most in the runtime) hold far fewer CloudEvents attributes.
const maxRecordPairs = 1<<16 - 1

// IsBatch tells whether a message with headers h holds a batch.
func IsBatch(h nats.Header) bool {
	v := h[HeaderBatch]
	return len(v) > 0
}

// ErrBatchVersion is returned for a batch of a format this version does not
// know.
var ErrBatchVersion = errors.New("unknown batch format version")

// CheckBatch returns an error unless h is the header of a batch this
// version reads.
func CheckBatch(h nats.Header) error {
	if v := h[HeaderBatch]; len(v) != 1 || v[0] != BatchVersion {
		return fmt.Errorf("%w: %q", ErrBatchVersion, v)
	}
	return nil
}

// ErrTooManyAttributes is returned for an event with more attributes than a
// record holds.
var ErrTooManyAttributes = errors.New("too many attributes for a batch record")

// recordWriter appends one record.
type recordWriter struct {
	buf   []byte
	at    int // where the pair count goes
	pairs int
}

func startRecord(dst []byte) recordWriter {
	return recordWriter{buf: append(dst, 0, 0), at: len(dst)}
}

func (w *recordWriter) pair(k, v string) {
	w.pairs++
	w.buf = binary.AppendUvarint(w.buf, uint64(len(k)))
	w.buf = append(w.buf, k...)
	w.buf = binary.AppendUvarint(w.buf, uint64(len(v)))
	w.buf = append(w.buf, v...)
}

func (w *recordWriter) finish(data []byte) ([]byte, error) {
	if w.pairs > maxRecordPairs {
		return w.buf[:w.at], ErrTooManyAttributes
	}
	binary.LittleEndian.PutUint16(w.buf[w.at:], uint16(w.pairs))
	w.buf = binary.AppendUvarint(w.buf, uint64(len(data)))
	return append(w.buf, data...), nil
}

// AppendRecord appends to batch the record of a message with headers h and
// data. On error batch is returned unchanged.
func AppendRecord(batch []byte, h nats.Header, data []byte) ([]byte, error) {
	w := startRecord(batch)
	for k, vs := range h {
		for _, v := range vs {
			w.pair(k, v)
		}
	}
	return w.finish(data)
}

// AppendEventRecord appends to batch the record of e: the headers and data
// of ToNATS(e), followed by extra, which are header keys and values in
// turn. It builds no message on the way. On error batch is returned
// unchanged.
func AppendEventRecord(batch []byte, e *event.Event, extra ...string) ([]byte, error) {
	w := startRecord(batch)
	natsHeaders(e, w.pair)
	for i := 0; i+1 < len(extra); i += 2 {
		w.pair(extra[i], extra[i+1])
	}
	return w.finish(e.DataEncoded)
}

// ErrCorruptRecord reports a batch record that cannot be read: the records
// after it cannot be found either.
var ErrCorruptRecord = errors.New("corrupt batch record")

// NextRecord reads the first record of batch and returns its headers, its
// data and the records after it. The keys and values share one allocation;
// data is a slice of batch.
func NextRecord(batch []byte) (h nats.Header, data, rest []byte, err error) {
	r, err := frameRecord(batch)
	if err != nil {
		return nil, nil, nil, err
	}
	text := string(batch[recordPairsAt:r.pairsEnd])
	values := make([]string, 0, r.pairs)
	h = make(nats.Header, r.pairs)
	pos := 0
	field := func() string {
		l, n := binary.Uvarint(batch[recordPairsAt+pos:])
		s := text[pos+n : pos+n+int(l)]
		pos += n + int(l)
		return s
	}
	for range r.pairs {
		k := field()
		v := field()
		if prev, ok := h[k]; ok {
			h[k] = append(prev, v)
			continue
		}
		values = append(values, v)
		h[k] = values[len(values)-1 : len(values) : len(values)]
	}
	return h, r.data, r.rest, nil
}

// recordPairsAt is where a record's pairs start, after their count.
const recordPairsAt = 2

// framedRecord is where the parts of the first record of a batch are.
type framedRecord struct {
	pairs int
	// pairsEnd is the offset of the end of the keys and values.
	pairsEnd   int
	data, rest []byte
}

// frameRecord finds the parts of the first record of batch; it fails with
// ErrCorruptRecord when a length runs past the end.
func frameRecord(batch []byte) (framedRecord, error) {
	if len(batch) < recordPairsAt {
		return framedRecord{}, ErrCorruptRecord
	}
	r := framedRecord{pairs: int(binary.LittleEndian.Uint16(batch))}
	at := recordPairsAt
	for range 2 * r.pairs {
		l, n := binary.Uvarint(batch[at:])
		if n <= 0 || l > uint64(len(batch)-at-n) {
			return framedRecord{}, ErrCorruptRecord
		}
		at += n + int(l)
	}
	r.pairsEnd = at
	l, n := binary.Uvarint(batch[at:])
	if n <= 0 || l > uint64(len(batch)-at-n) {
		return framedRecord{}, ErrCorruptRecord
	}
	at += n
	r.data = batch[at : at+int(l) : at+int(l)]
	if l == 0 {
		r.data = nil
	}
	r.rest = batch[at+int(l):]
	return r, nil
}
