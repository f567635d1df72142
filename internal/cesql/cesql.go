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
	// The grammar is checked first with knc's own error listener on both the
	// lexer and the parser: the library leaves ANTLR's console listener on its
	// lexer, which would print characters it cannot tokenize to stderr and
	// then parse the expression without them, accepting for example
	// "type = 'a' §". The library's parser only runs on input the grammar
	// accepts, which also keeps it clear of the malformed trees it panics on.
	if first, ok := firstSyntaxError(expr); ok {
		return Expression{}, &ParseError{Expression: expr, Line: first.line, Column: first.column, Message: first.message}
	}
	compiled, err := parseRecovering(expr)
	if err == nil && compiled == nil {
		err = errors.New("the parser returned no expression")
	}
	if err != nil {
		// The grammar accepted expr, so this is a check the library makes
		// while building the tree, such as an integer literal out of range;
		// it does not say where.
		return Expression{}, &ParseError{Expression: expr, Message: strings.TrimSpace(err.Error())}
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

// syntaxError locates an error like ParseError does: line and column count
// from 1, and are 0 when unknown.
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
		l.first = &syntaxError{line: line, column: column + 1, message: "syntax error: " + tokenNames.Replace(msg)}
	}
}

// tokenNames rewrites the grammar's token names in ANTLR's messages into
// words a manifest author knows.
var tokenNames = strings.NewReplacer(
	"'<EOF>'", "end of expression",
	"<EOF>", "end of expression",
	"DQUOTED_STRING_LITERAL, SQUOTED_STRING_LITERAL", "string",
	"DQUOTED_STRING_LITERAL", "string",
	"SQUOTED_STRING_LITERAL", "string",
	"INTEGER_LITERAL", "integer",
	"IDENTIFIER, IDENTIFIER_WITH_NUMBER, FUNCTION_IDENTIFIER_WITH_UNDERSCORE", "identifier",
	"FUNCTION_IDENTIFIER_WITH_UNDERSCORE", "identifier",
	"IDENTIFIER_WITH_NUMBER", "identifier",
	"IDENTIFIER", "identifier",
)

// firstSyntaxError parses expr with the library's generated lexer and
// parser, reporting the first error either finds.
func firstSyntaxError(expr string) (found syntaxError, ok bool) {
	defer func() {
		if r := recover(); r != nil {
			found, ok = syntaxError{message: fmt.Sprintf("syntax error: the parser panicked: %v", r)}, true
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
