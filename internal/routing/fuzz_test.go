package routing

import (
	"bytes"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"
)

// FuzzDecode feeds Decode arbitrary bytes: it must never panic, and a table
// it accepts must encode to bytes that decode to the same table and encode
// to the same bytes again, so that what the runtime reads is what the
// compiler wrote. The seed corpus is in testdata/fuzz/FuzzDecode.
func FuzzDecode(f *testing.F) {
	valid, err := Encode(sampleTable())
	if err != nil {
		f.Fatal(err)
	}
	f.Add(valid)
	f.Fuzz(func(t *testing.T, b []byte) {
		table, err := Decode(b)
		if err != nil {
			if table != nil {
				t.Fatalf("Decode returned a table with error %v", err)
			}
			return
		}
		enc, err := Encode(table)
		if err != nil {
			t.Fatalf("a decoded table does not encode: %v", err)
		}
		again, err := Decode(enc)
		if err != nil {
			t.Fatalf("the encoding of a decoded table does not decode: %v\n%s", err, enc)
		}
		if diff := cmp.Diff(table, again, cmpopts.EquateEmpty()); diff != "" {
			t.Fatalf("decode, encode, decode changed the table (-first +second):\n%s", diff)
		}
		enc2, err := Encode(again)
		if err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(enc, enc2) {
			t.Fatalf("encoding is not stable:\n%s\n---\n%s", enc, enc2)
		}
	})
}

func TestDecodeRejectsTrailingData(t *testing.T) {
	valid, err := Encode(sampleTable())
	if err != nil {
		t.Fatal(err)
	}
	for _, tail := range []string{"{", "{}", "x", `{"apiVersion":"routing.knc.dev/v1alpha1"}`} {
		if _, err := Decode(append(bytes.Clone(valid), tail...)); err == nil {
			t.Errorf("Decode accepted a table followed by %q", tail)
		}
	}
	if _, err := Decode(append(bytes.Clone(valid), " \n\t"...)); err != nil {
		t.Errorf("Decode refused a table followed by white space: %v", err)
	}
}

func TestDecodeRejectsEmptyDialects(t *testing.T) {
	for _, filter := range []string{`{"exact":{}}`, `{"prefix":{}}`, `{"suffix":{}}`, `{"all":[]}`, `{"any":[]}`, `{"not":{"all":[]}}`} {
		table := `{"apiVersion":"routing.knc.dev/v1alpha1","kind":"RoutingTable","brokers":[{"namespace":"ns","name":"b","path":"/brokers/ns/b",` +
			`"triggers":[{"namespace":"ns","name":"t","filters":[` + filter + `],"subscriber":{"uri":"http://s/"}}]}]}`
		if _, err := Decode([]byte(table)); err == nil || !strings.Contains(err.Error(), "must not be empty") {
			t.Errorf("filter %s: Decode error %v, want one saying it must not be empty", filter, err)
		}
	}
}
