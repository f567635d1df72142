package cesql

import (
	"errors"
	"io"
	"os"
	"strconv"
	"strings"
	"sync"
	"testing"

	"github.com/cloudevents/sdk-go/v2/event"
	"github.com/google/go-cmp/cmp"
)

func TestParseRejectsInvalidExpressions(t *testing.T) {
	tests := []struct {
		expr         string
		line, column int
		message      string // a substring of the message
	}{
		// The library panics on these; Parse must not.
		{expr: "type = ", line: 1, column: 8, message: "mismatched input end of expression"},
		{expr: "1 +", line: 1, column: 4, message: "mismatched input end of expression"},
		{expr: "a b", line: 1, column: 3, message: "extraneous input 'b'"},
		{expr: "'abc", line: 1, column: 1, message: "extraneous input '''"},
		{expr: "1 = = 2", line: 1, column: 5, message: "extraneous input '='"},
		// The library returns a half-built expression together with an
		// error for this one.
		{expr: "ABS(", line: 1, column: 5, message: "mismatched input end of expression"},
		{expr: "", line: 1, column: 1, message: "mismatched input end of expression"},
		{expr: "type = 'a'\nAND", line: 2, column: 4, message: "mismatched input end of expression"},
		{expr: "source LIKE 1", line: 1, column: 13, message: "expecting {string}"},
		// The lexer skips "#" and "$"; what is left is not an expression.
		{expr: "type = 'a' # comment", line: 1, column: 14, message: "extraneous input 'comment'"},
		{expr: "type = $", line: 1, column: 9, message: "mismatched input end of expression"},
		// Out of the 32-bit range: the grammar accepts it, the library's
		// tree builder does not, and says nothing about where.
		{expr: "2147483648", message: "value out of range"},
	}
	for _, tt := range tests {
		t.Run(tt.expr, func(t *testing.T) {
			x, err := Parse(tt.expr)
			var pe *ParseError
			if !errors.As(err, &pe) {
				t.Fatalf("Parse(%q) = %v, %v; want a *ParseError", tt.expr, x, err)
			}
			if diff := cmp.Diff([]any{tt.expr, tt.line, tt.column}, []any{pe.Expression, pe.Line, pe.Column}); diff != "" {
				t.Errorf("expression, line, column (-want +got):\n%s", diff)
			}
			if !strings.Contains(pe.Message, tt.message) {
				t.Errorf("message %q does not contain %q", pe.Message, tt.message)
			}
			if !strings.Contains(err.Error(), strconv.Quote(tt.expr)) {
				t.Errorf("error %q does not quote the expression", err)
			}
		})
	}
}

// TestParseDoesNotPrint checks that Parse writes nothing to stderr, which
// the library's lexer does for characters it cannot tokenize.
func TestParseDoesNotPrint(t *testing.T) {
	r, w, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	stderr := os.Stderr
	os.Stderr = w
	x, parseErr := Parse("type = 'a' \u00a7 \u00b6")
	os.Stderr = stderr
	w.Close()
	printed, err := io.ReadAll(r)
	if err != nil {
		t.Fatal(err)
	}
	if parseErr != nil || len(x.Skipped()) != 2 {
		t.Errorf("Parse = %v skipping %v; want the expression, skipping two characters", parseErr, x.Skipped())
	}
	if len(printed) != 0 {
		t.Errorf("Parse printed to stderr: %q", printed)
	}
}

// TestParseSkipsWhatTheLexerCannotRead checks that Parse, like the
// CloudEvents SDK's parser Knative admits Triggers and filters events with,
// parses an expression without the text its lexer cannot read, and says
// where that text was.
func TestParseSkipsWhatTheLexerCannotRead(t *testing.T) {
	e := testEvent(t)
	tests := []struct {
		expr string
		// without is expr without the skipped text: it must evaluate
		// alike.
		without string
		skipped []SkippedText
	}{
		{expr: "type = 'com.example.order.created' $", without: "type = 'com.example.order.created'",
			skipped: []SkippedText{{Line: 1, Column: 36, Text: "$"}}},
		{expr: "type = 'x' OR region = 'eu';", without: "type = 'x' OR region = 'eu'",
			skipped: []SkippedText{{Line: 1, Column: 28, Text: ";"}}},
		{expr: "region = 'eu' &&", without: "region = 'eu'",
			skipped: []SkippedText{{Line: 1, Column: 15, Text: "&"}, {Line: 1, Column: 16, Text: "&"}}},
		// An identifier does not start with "_": the lexer skips it and
		// reads the rest as the identifier.
		{expr: "_region = 'eu'", without: "region = 'eu'",
			skipped: []SkippedText{{Line: 1, Column: 1, Text: "_"}}},
		// The skipped text splits what is around it into two tokens.
		{expr: "sequence = 7\n#\nOR FALSE", without: "sequence = 7 OR FALSE",
			skipped: []SkippedText{{Line: 2, Column: 1, Text: "#"}}},
		{expr: "type = 'com.example.order.created'", without: "type = 'com.example.order.created'"},
	}
	for _, tt := range tests {
		t.Run(tt.expr, func(t *testing.T) {
			x, err := Parse(tt.expr)
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(tt.skipped, x.Skipped()); diff != "" {
				t.Errorf("Skipped (-want +got):\n%s", diff)
			}
			without, err := Parse(tt.without)
			if err != nil {
				t.Fatal(err)
			}
			got, gotErr := x.Evaluate(e)
			want, wantErr := without.Evaluate(e)
			if diff := cmp.Diff([]any{want, wantErr == nil}, []any{got, gotErr == nil}); diff != "" {
				t.Errorf("Evaluate differs from that of %q (-want +got):\n%s", tt.without, diff)
			}
			if !got {
				t.Errorf("Evaluate = false, %v; the test event passes %q", gotErr, tt.without)
			}
		})
	}
}

func TestParseErrorFormat(t *testing.T) {
	_, err := Parse("type = ")
	want := `invalid CESQL expression "type = ": 1:8: syntax error: mismatched input end of expression expecting {'(', 'NOT', '-', 'EXISTS', 'TRUE', 'FALSE', string, integer, identifier}`
	if diff := cmp.Diff(want, err.Error()); diff != "" {
		t.Errorf("error (-want +got):\n%s", diff)
	}
}

func testEvent(t testing.TB) *event.Event {
	t.Helper()
	e := event.New()
	e.SetID("1")
	e.SetSource("https://example.com/orders")
	e.SetType("com.example.order.created")
	e.SetSubject("order/42")
	e.SetExtension("region", "eu")
	e.SetExtension("sequence", int32(7))
	if err := e.Validate(); err != nil {
		t.Fatal(err)
	}
	return &e
}

func TestEvaluate(t *testing.T) {
	e := testEvent(t)
	tests := []struct {
		expr    string
		want    bool
		wantErr string // a substring of the error; "" for none
	}{
		{expr: "type = 'com.example.order.created'", want: true},
		{expr: "type = 'com.example.order.deleted'", want: false},
		{expr: "type LIKE 'com.example.%' AND region = 'eu'", want: true},
		{expr: "EXISTS subject AND NOT EXISTS dataschema", want: true},
		{expr: "sequence > 5", want: true},
		{expr: "source = 'https://example.com/orders'", want: true},
		{expr: "missing = 'x'", wantErr: "evaluation error: missing attribute error: missing"},
		{expr: "1 / 0 = 0", wantErr: "math error"},
		{expr: "NOSUCHFUNCTION(1)", wantErr: "missing function error"},
		{expr: "1 + 1", wantErr: "the result Integer 2 is not a Boolean"},
		{expr: "LOWER(type)", wantErr: `the result String "com.example.order.created" is not a Boolean`},
	}
	for _, tt := range tests {
		t.Run(tt.expr, func(t *testing.T) {
			x, err := Parse(tt.expr)
			if err != nil {
				t.Fatal(err)
			}
			got, err := x.Evaluate(e)
			if tt.wantErr == "" {
				if err != nil || got != tt.want {
					t.Errorf("Evaluate = %t, %v; want %t, nil", got, err, tt.want)
				}
				return
			}
			var ee *EvaluationError
			if got || !errors.As(err, &ee) || !strings.Contains(err.Error(), tt.wantErr) {
				t.Errorf("Evaluate = %t, %v; want false and an *EvaluationError containing %q", got, err, tt.wantErr)
			}
		})
	}
}

func TestEvaluateWithoutEventOrExpression(t *testing.T) {
	x, err := Parse("true")
	if err != nil {
		t.Fatal(err)
	}
	if ok, err := x.Evaluate(nil); ok || err == nil {
		t.Errorf("Evaluate(nil) = %t, %v; want false and an error", ok, err)
	}
	var zero Expression
	if ok, err := zero.Evaluate(testEvent(t)); ok || err == nil {
		t.Errorf("zero Expression: Evaluate = %t, %v; want false and an error", ok, err)
	}
}

// TestEvaluateConcurrently checks that one Expression can serve many
// goroutines, as the router shares it; run with -race.
func TestEvaluateConcurrently(t *testing.T) {
	x, err := Parse("type LIKE '%.created' AND sequence + 1 = 8")
	if err != nil {
		t.Fatal(err)
	}
	e := testEvent(t)
	var wg sync.WaitGroup
	errs := make(chan error, 8)
	for range 8 {
		wg.Go(func() {
			for range 200 {
				ok, err := x.Evaluate(e)
				if !ok || err != nil {
					errs <- errors.Join(errors.New("Evaluate did not return true"), err)
					return
				}
			}
		})
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Error(err)
	}
}

// FuzzParse checks that no input makes Parse panic, and that whatever it
// accepts can be evaluated without panicking.
func FuzzParse(f *testing.F) {
	for _, seed := range []string{"type = ", "1 +", "a b", "'abc", "type = 'x' AND NOT EXISTS subject", "ABS(-2147483648) = 1", "SUBSTRING(type, 2, 3) IN ('a', 'b')"} {
		f.Add(seed)
	}
	e := testEvent(f)
	f.Fuzz(func(t *testing.T, expr string) {
		x, err := Parse(expr)
		if err != nil {
			var pe *ParseError
			if !errors.As(err, &pe) {
				t.Fatalf("Parse(%q) error %T is not a *ParseError", expr, err)
			}
			return
		}
		if ok, err := x.Evaluate(e); ok && err != nil {
			t.Fatalf("Evaluate(%q) = true with error %v", expr, err)
		}
	})
}

func BenchmarkEvaluate(b *testing.B) {
	x, err := Parse("type = 'com.example.order.created'")
	if err != nil {
		b.Fatal(err)
	}
	e := testEvent(b)
	b.ReportAllocs()
	for b.Loop() {
		if ok, _ := x.Evaluate(e); !ok {
			b.Fatal("no match")
		}
	}
}
