package cesql

import (
	"errors"
	"fmt"
	"strings"

	"github.com/antlr/antlr4/runtime/Go/antlr"
	sdkcesql "github.com/cloudevents/sdk-go/sql/v2"
	"github.com/cloudevents/sdk-go/sql/v2/gen"
	"github.com/cloudevents/sdk-go/sql/v2/parser"
	"github.com/cloudevents/sdk-go/v2/event"
)

// Expression is a parsed CESQL expression. The zero Expression is not valid;
// obtain one from Parse. An Expression is safe for concurrent use.
type Expression struct {
	source   string
	compiled sdkcesql.Expression
}

// ParseError reports an expression that is not valid CESQL.
type ParseError struct {
	// Expression is the text that failed to parse.
	Expression string
	// Line and Column locate the first syntax error, both counted from 1.
	// They are 0 when the parser could not say where the error is (for
	// example an integer literal out of range).
	Line, Column int
	// Message describes the error.
	Message string
}

func (e *ParseError) Error() string {
	if e.Line == 0 {
		return fmt.Sprintf("invalid CESQL expression %q: %s", e.Expression, e.Message)
	}
	return fmt.Sprintf("invalid CESQL expression %q: %d:%d: %s", e.Expression, e.Line, e.Column, e.Message)
}

// Parse parses expr. Every failure, including a panic inside the CESQL
// library, is returned as a *ParseError.
func Parse(expr string) (Expression, error) {
	compiled, err := parseRecovering(expr)
	if err == nil && compiled == nil {
		err = errors.New("the parser returned no expression")
	}
	if err != nil {
		return Expression{}, describeParseFailure(expr, err)
	}
	return Expression{source: expr, compiled: compiled}, nil
}

// parseRecovering calls the library's parser, turning a panic into an error.
// The library panics when its error listener or tree visitor meets a parse
// tree with missing nodes, which happens for input such as "type = " or
// "1 +".
func parseRecovering(expr string) (compiled sdkcesql.Expression, err error) {
	defer func() {
		if r := recover(); r != nil {
			compiled, err = nil, fmt.Errorf("parser panicked: %v", r)
		}
	}()
	return parser.Parse(expr)
}

// describeParseFailure builds the ParseError for expr. The library's own
// message is often just "syntax error: " with neither position nor reason, so
// the expression is parsed a second time with a listener that records where
// the first syntax error is and what the parser expected there. This costs a
// second parse only for invalid expressions.
func describeParseFailure(expr string, libraryErr error) *ParseError {
	pe := &ParseError{Expression: expr, Message: strings.TrimSpace(libraryErr.Error())}
	if first, ok := firstSyntaxError(expr); ok {
		pe.Line, pe.Column, pe.Message = first.line, first.column+1, first.message
	}
	return pe
}

type syntaxError struct {
	line, column int
	message      string
}

type firstErrorListener struct {
	*antlr.DefaultErrorListener
	first *syntaxError
}

func (l *firstErrorListener) SyntaxError(_ antlr.Recognizer, _ interface{}, line, column int, msg string, _ antlr.RecognitionException) {
	if l.first == nil {
		l.first = &syntaxError{line: line, column: column, message: "syntax error: " + msg}
	}
}

func firstSyntaxError(expr string) (found syntaxError, ok bool) {
	defer func() {
		if r := recover(); r != nil {
			ok = false
		}
	}()
	listener := &firstErrorListener{DefaultErrorListener: antlr.NewDefaultErrorListener()}
	lexer := gen.NewCESQLParserLexer(parser.NewCaseChangingStream(antlr.NewInputStream(expr), true))
	lexer.RemoveErrorListeners()
	lexer.AddErrorListener(listener)
	p := gen.NewCESQLParserParser(antlr.NewCommonTokenStream(lexer, antlr.TokenDefaultChannel))
	p.RemoveErrorListeners()
	p.AddErrorListener(listener)
	p.Cesql()
	if listener.first == nil {
		return syntaxError{}, false
	}
	return *listener.first, true
}

// String returns the expression as it was given to Parse.
func (x Expression) String() string { return x.source }

// Evaluate evaluates x against e and reports whether e passes it as a filter.
// As the CESQL specification requires of a filter, e passes only when the
// expression yields the Boolean true without error; an evaluation error or a
// non-Boolean result gives false and an *EvaluationError.
func (x Expression) Evaluate(e *event.Event) (bool, error) {
	v, err := x.value(e)
	if err != nil {
		return false, &EvaluationError{Expression: x.source, Err: err}
	}
	b, ok := v.(bool)
	if !ok {
		return false, &EvaluationError{Expression: x.source, Err: fmt.Errorf("the result %s is not a Boolean", describeValue(v))}
	}
	return b, nil
}

// value evaluates x against e and returns the library's result and error
// unchanged, so that tests can compare both with the conformance suite.
func (x Expression) value(e *event.Event) (v any, err error) {
	if x.compiled == nil {
		return nil, errors.New("expression was not parsed")
	}
	if e == nil {
		return nil, errors.New("no event")
	}
	defer func() {
		if r := recover(); r != nil {
			v, err = nil, fmt.Errorf("evaluation panicked: %v", r)
		}
	}()
	return x.compiled.Evaluate(*e)
}

// EvaluationError reports why an expression could not decide whether an event
// passes it.
type EvaluationError struct {
	Expression string
	Err        error
}

func (e *EvaluationError) Error() string { return "evaluation error: " + e.Err.Error() }

func (e *EvaluationError) Unwrap() error { return e.Err }

func describeValue(v any) string {
	switch v := v.(type) {
	case string:
		return fmt.Sprintf("String %q", v)
	case int32:
		return fmt.Sprintf("Integer %d", v)
	default:
		return fmt.Sprintf("%T %v", v, v)
	}
}
