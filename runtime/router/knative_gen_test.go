package router

import (
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"strings"

	"github.com/knc-dev/knc/internal/routing"
)

// This file generates Triggers and structured-mode CloudEvents for the
// comparison with Knative's Broker filter (knative_oracle_test.go). Every
// choice comes from one seeded source, so a seed names a case for good.
//
// The pools are small and overlap on purpose: filter values are values,
// prefixes and suffixes of event attributes; attribute names are context
// attributes of both spec versions, the attributes only Knative's lookup
// knows (datamediatype, datacontentencoding), extensions of every JSON type,
// and names no event has; events leave attributes out, set them empty and
// carry the Broker's TTL extension.

type knativeGen struct{ r *rand.Rand }

func newKnativeGen(seed uint64) *knativeGen {
	return &knativeGen{r: rand.New(rand.NewPCG(seed, 0x6b666c74))}
}

func (g *knativeGen) intn(n int) int { return g.r.IntN(n) }

func (g *knativeGen) pick(pool []string) string { return pool[g.intn(len(pool))] }

var (
	kgAttributes = []string{
		"specversion", "id", "source", "type", "subject", "time", "datacontenttype", "dataschema",
		"schemaurl", "datamediatype", "datacontentencoding",
		"region", "count", "flag", "empty", "ratio", "knativebrokerttl", "missing",
	}
	// kgTrickyAttributes are the names whose lookup differs most between
	// implementations: unset context attributes, typed and empty
	// extensions, the TTL.
	kgTrickyAttributes = []string{"time", "subject", "empty", "count", "flag", "region", "knativebrokerttl", "datamediatype"}
	kgTrickyValues     = []string{"", "", "-3", "3", "true", "false", "ab", "0001-01-01T00:00:00Z", "10", "application/json"}
	kgValues           = []string{
		"a", "ab", "abc", "b", "ba", "cab", "", "-3", "3", "1", "0", "true", "false", "1.0", "0.3",
		"2024-05-01T12:30:00+02:00", "2024-05-01", "0001-01-01T00:00:00Z", "0001", "Z", "+02:00",
		"application/json", "application/json; charset=utf-8", "application/", "json", "base64",
		"https://a.example/b", "https://", "/b",
	}
	kgTypes   = []string{"a", "ab", "abc", "b", "ba", "cab", "com.example.a"}
	kgSources = []string{"a", "ab", "b", "cab", "https://a.example/b", "/b"}
	// kgExpressions are CESQL expressions over the same attributes: every
	// operator, function and coercion of the language, some of which fail
	// to evaluate or yield a non-Boolean.
	kgExpressions = []string{
		"type = 'a'", "type <> 'ab'", "type != 'ab'", "type LIKE 'a%'", "type NOT LIKE '%b'", "type LIKE 'a_'",
		"source = 'ab'", "source LIKE 'https://%'", "subject = 'a'", "subject = ''", "EXISTS subject",
		"NOT EXISTS subject", "EXISTS time", "EXISTS region", "EXISTS empty", "EXISTS knativebrokerttl",
		"EXISTS datacontenttype", "EXISTS dataschema", "EXISTS schemaurl", "EXISTS datamediatype",
		"region = 'ab'", "region IN ('a', 'b', 'ab')", "region NOT IN ('a')", "empty = ''",
		"count = -3", "count = '-3'", "count < 0", "count + 1 = -2", "count * 2 = -6", "-count = 3", "count % 2 = -1",
		"count / 0 = 0", "ratio = 1", "ratio > 0",
		"flag", "flag = TRUE", "flag = 'true'", "NOT flag", "flag AND type = 'a'", "flag OR type = 'b'", "flag XOR TRUE",
		"knativebrokerttl < 30", "knativebrokerttl = 255", "knativebrokerttl > 0 OR type = 'b'", "NOT EXISTS knativebrokerttl",
		"missing = 'a'", "missing", "NOT (missing = 'a')", "EXISTS missing",
		"1 + 1", "'a'", "type", "TRUE", "FALSE", "1 = 1", "'1' = 1", "'true' = TRUE", "'abc' < 'b'",
		"LENGTH(type) = 2", "CONCAT(type, source) = 'aab'", "CONCAT_WS('-', type, source) = 'a-b'",
		"LOWER(type) = 'a'", "UPPER(type) = 'A'", "TRIM(' a ') = type", "LEFT(type, 1) = 'a'", "RIGHT(type, 1) = 'b'",
		"SUBSTRING(type, 1) = 'ab'", "SUBSTRING(type, 1, 1) = 'a'", "ABS(count) = 3", "INT(count) = -3",
		"BOOL(flag)", "BOOL('true')", "STRING(count) = '-3'", "IS_INT(count)", "IS_BOOL(flag)", "IS_STRING(type)",
		"INT('x') = 0", "time > '2024-01-01'", "time = '2024-05-01T12:30:00+02:00'", "specversion = '0.3'",
		"specversion = '1.0'", "id = 'a'", "datacontenttype = 'application/json'", "dataschema = '/b'", "schemaurl = '/b'",
		"type = 'a' AND (region = 'ab' OR NOT EXISTS region)", "(type = 'a') = (source = 'a')",
	}
	// kgLexerJunk are characters CESQL's lexer cannot read: Knative's
	// parser goes on without them.
	kgLexerJunk = []string{" $", "$", " &&", ";", " _x", " #", " @ ", "'unterminated", " ?"}
)

func (g *knativeGen) expression() string {
	e := g.pick(kgExpressions)
	if g.intn(12) == 0 {
		// Junk at the end, or after the first token.
		junk := g.pick(kgLexerJunk)
		if i := strings.IndexByte(e, ' '); i > 0 && g.intn(2) == 0 {
			return e[:i] + junk + e[i:]
		}
		return e + junk
	}
	return e
}

func (g *knativeGen) attributeMap(n int) map[string]string {
	m := map[string]string{}
	for range n {
		name, value := g.pick(kgAttributes), g.pick(kgValues)
		if g.intn(2) == 0 {
			name, value = g.pick(kgTrickyAttributes), g.pick(kgTrickyValues)
		}
		m[name] = value
	}
	return m
}

func (g *knativeGen) filter(depth int) routing.Filter {
	dialects := 7
	if depth >= 3 {
		dialects = 3
	}
	switch g.intn(dialects + 1) {
	case 0:
		return routing.Filter{Exact: g.attributeMap(1)}
	case 1:
		return routing.Filter{Prefix: g.attributeMap(1)}
	case 2:
		return routing.Filter{Suffix: g.attributeMap(1)}
	case 3:
		if depth >= 3 {
			return routing.Filter{CESQL: g.expression()}
		}
		return routing.Filter{All: g.filters(depth + 1)}
	case 4:
		return routing.Filter{Any: g.filters(depth + 1)}
	case 5:
		f := g.filter(depth + 1)
		return routing.Filter{Not: &f}
	default:
		return routing.Filter{CESQL: g.expression()}
	}
}

func (g *knativeGen) filters(depth int) []routing.Filter {
	fs := make([]routing.Filter, 1+g.intn(3))
	for i := range fs {
		fs[i] = g.filter(depth)
	}
	return fs
}

func (g *knativeGen) trigger(name string) routing.Trigger {
	t := routing.Trigger{Source: routing.Source{Namespace: "default", Name: name}}
	switch g.intn(10) {
	case 0: // no filter at all
	case 1, 2, 3, 4:
		t.Attributes = g.attributeMap(1 + g.intn(3)/2)
	default:
		t.Filters = g.filters(0)
	}
	return t
}

// event returns one structured-mode JSON CloudEvent.
func (g *knativeGen) event() json.RawMessage {
	e := map[string]any{}
	v03 := g.intn(4) == 0
	if v03 {
		e["specversion"] = "0.3"
	} else {
		e["specversion"] = "1.0"
	}
	e["id"] = g.pick([]string{"a", "ab", "1"})
	e["source"] = g.pick(kgSources)
	e["type"] = g.pick(kgTypes)
	if g.intn(2) == 0 {
		e["subject"] = g.pick([]string{"a", "ab", "b", ""})
	}
	if g.intn(3) == 0 {
		e["time"] = g.pick([]string{"2024-05-01T12:30:00+02:00", "2024-05-01T10:30:00Z", "0001-01-01T00:00:00Z"})
	}
	if g.intn(3) == 0 {
		e["datacontenttype"] = g.pick([]string{"application/json", "application/json; charset=utf-8", "text/plain", ""})
	}
	if g.intn(4) == 0 {
		name := "dataschema"
		if v03 {
			name = "schemaurl"
		}
		e[name] = g.pick([]string{"/b", "https://a.example/b"})
	}
	if v03 && g.intn(5) == 0 {
		e["datacontentencoding"] = "base64"
	}
	if g.intn(2) == 0 {
		e["region"] = g.pick([]string{"a", "ab", "b", ""})
	}
	switch g.intn(4) {
	case 0:
		e["count"] = -3
	case 1:
		e["count"] = "-3"
	case 2:
		e["count"] = 3
	}
	switch g.intn(4) {
	case 0:
		e["flag"] = true
	case 1:
		e["flag"] = "true"
	case 2:
		e["flag"] = false
	}
	if g.intn(2) == 0 {
		e["empty"] = ""
	}
	if g.intn(5) == 0 {
		e["ratio"] = 1.5
	}
	switch g.intn(3) {
	case 0:
		e["knativebrokerttl"] = g.pick([]string{"255", "10"})
	case 1:
		e["knativebrokerttl"] = 10
	}
	if g.intn(3) == 0 {
		e["data"] = map[string]any{"a": 1}
	}
	b, err := json.Marshal(e)
	if err != nil {
		panic(fmt.Sprintf("marshal generated event: %v", err))
	}
	return b
}
