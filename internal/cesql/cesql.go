package cesql

import (
	"errors"
	"fmt"
	"slices"
	"strings"
	"unicode"

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
	skipped  []SkippedText
}

// SkippedText is text of an expression that CESQL's lexer cannot read, such
// as "$", a leading "_" or "&&". The CloudEvents SDK's parser, which Knative
// uses both to admit a Trigger and to filter its events, reports such text
// nowhere but on stderr and parses the expression without it; Parse does the
// same, and lists it so that the validator can warn.
type SkippedText struct {
	// Line and Column locate its first character, both counted from 1.
	Line, Column int
	// Text is what the lexer skipped.
	Text string
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

// Parse parses expr as Knative does: an expression the grammar does not
// accept once the text the lexer cannot read is skipped is an error; the
// skipped text is not, and Expression.Skipped lists it. Every failure,
// including a panic inside the CESQL library, is returned as a *ParseError.
func Parse(expr string) (Expression, error) {
	// The grammar is checked first with knc's own error listeners: the
	// library leaves ANTLR's console listener on its lexer, which prints
	// the text it skips to stderr. The library's parser then only runs on
	// input the grammar accepts, which keeps it clear of the malformed trees
	// it panics on, and on the text with the skipped characters blanked out,
	// which lexes to the same tokens without a word on stderr.
	checked := checkSyntax(expr)
	if first := checked.parserError; first != nil {
		return Expression{}, &ParseError{Expression: expr, Line: first.line, Column: first.column, Message: first.message}
	}
	compiled, err := parseRecovering(checked.blanked)
	if err == nil && compiled == nil {
		err = errors.New("the parser returned no expression")
	}
	if err != nil {
		// The grammar accepted expr, so this is a check the library makes
		// while building the tree, such as an integer literal out of range;
		// it does not say where.
		return Expression{}, &ParseError{Expression: expr, Message: strings.TrimSpace(err.Error())}
	}
	return Expression{source: expr, compiled: compiled, skipped: checked.skipped}, nil
}

// Skipped lists the text of the expression that the lexer could not read
// and the parser never saw, in order.
func (x Expression) Skipped() []SkippedText { return slices.Clone(x.skipped) }

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

// parserErrorListener keeps the parser's first error.
type parserErrorListener struct {
	*antlr.DefaultErrorListener
	first *syntaxError
}

func (l *parserErrorListener) SyntaxError(_ antlr.Recognizer, _ interface{}, line, column int, msg string, _ antlr.RecognitionException) {
	if l.first == nil {
		l.first = &syntaxError{line: line, column: column + 1, message: "syntax error: " + tokenNames.Replace(msg)}
	}
}

// lexerErrorListener records the runes the lexer skips. ANTLR's lexer,
// meeting text no token starts with, reports the text from the token's start
// to where it gave up and then skips it, together with the rune it gave up
// on unless that is the end of the input.
type lexerErrorListener struct {
	*antlr.DefaultErrorListener
	lexer *gen.CESQLParserLexer
	size  int
	spans [][2]int // rune offsets, end excluded
}

func (l *lexerErrorListener) SyntaxError(_ antlr.Recognizer, _ interface{}, _, _ int, _ string, _ antlr.RecognitionException) {
	start, end := l.lexer.TokenStartCharIndex, l.lexer.GetInputStream().Index()
	if end < l.size {
		end++
	}
	l.spans = append(l.spans, [2]int{start, end})
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

// syntaxCheck is what checkSyntax finds.
type syntaxCheck struct {
	// parserError is the parser's first error, nil when there is none.
	parserError *syntaxError
	// skipped is the text the lexer skipped.
	skipped []SkippedText
	// blanked is the expression with every skipped rune replaced by a space.
	blanked string
}

// checkSyntax lexes and parses expr with the library's generated lexer and
// parser, as the library's Parse does, but with knc's own listeners.
func checkSyntax(expr string) (found syntaxCheck) {
	found.blanked = expr
	defer func() {
		if r := recover(); r != nil {
			found.parserError = &syntaxError{message: fmt.Sprintf("syntax error: the parser panicked: %v", r)}
		}
	}()
	runes := []rune(expr)
	lexer := gen.NewCESQLParserLexer(parser.NewCaseChangingStream(antlr.NewInputStream(expr), true))
	lexerErrors := &lexerErrorListener{DefaultErrorListener: antlr.NewDefaultErrorListener(), lexer: lexer, size: len(runes)}
	lexer.RemoveErrorListeners()
	lexer.AddErrorListener(lexerErrors)
	parserErrors := &parserErrorListener{DefaultErrorListener: antlr.NewDefaultErrorListener()}
	p := gen.NewCESQLParserParser(antlr.NewCommonTokenStream(lexer, antlr.TokenDefaultChannel))
	p.RemoveErrorListeners()
	p.AddErrorListener(parserErrors)
	p.Cesql()
	found.parserError = parserErrors.first
	if len(lexerErrors.spans) == 0 {
		return found
	}
	for _, span := range lexerErrors.spans {
		line, column := position(runes, span[0])
		found.skipped = append(found.skipped, SkippedText{Line: line, Column: column, Text: string(runes[span[0]:span[1]])})
		for i := span[0]; i < span[1]; i++ {
			if !unicode.IsSpace(runes[i]) {
				runes[i] = ' '
			}
		}
	}
	found.blanked = string(runes)
	return found
}

// position returns the line and column, from 1, of the rune at offset.
func position(runes []rune, offset int) (line, column int) {
	line, column = 1, 1
	for _, r := range runes[:offset] {
		if r == '\n' {
			line, column = line+1, 1
		} else {
			column++
		}
	}
	return line, column
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
		return false, &EvaluationError{Expression: x.source, Err: fmt.Errorf("the result %s is %w", describeValue(v), ErrNotBoolean)}
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
			v, err = nil, fmt.Errorf("%w: %v", ErrEvaluationPanicked, r)
		}
	}()
	return x.compiled.Evaluate(*e)
}

var (
	// ErrNotBoolean is the error of an expression that yields a value but
	// not a Boolean. Knative's filter panics on it, where it fails the
	// filter on any other evaluation error.
	ErrNotBoolean = errors.New("not a Boolean")
	// ErrEvaluationPanicked is the error of an evaluation the library
	// panicked in.
	ErrEvaluationPanicked = errors.New("evaluation panicked")
)

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
