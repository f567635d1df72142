package admissionfuzz

import (
	"bufio"
	"bytes"
	"cmp"
	"fmt"
	"io"
	"maps"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strings"

	"go.yaml.in/yaml/v3"
)

// Verdict is one judge's decision on one object.
type Verdict struct {
	Refused bool
	// Crashed says the judge panicked; that is a disagreement whatever
	// the other side says.
	Crashed bool
	Reason  string // the first error, when refused
}

func (v Verdict) String() string {
	if v.Crashed {
		return "crash"
	}
	if v.Refused {
		return "refuse"
	}
	return "admit"
}

// Judge decides on the object in file, as knc would.
type Judge func(file string) Verdict

// Oracle is the command that prints Knative's verdicts: `Bin -configs
// Configs DIR` prints "FILE#N KIND valid" or "FILE#N KIND invalid: MESSAGE"
// per object.
type Oracle struct {
	Bin     string
	Configs string
}

// The oracle prints "FILE#N KIND [NAMESPACE/NAME] valid|invalid: MESSAGE";
// the name is left out when the object could not be decoded.
var oracleLine = regexp.MustCompile(`^(\S+)#0 \S+ (?:.*? )?(valid|invalid: (.*))$`)

// Judge returns the verdict on the first object of every file in dir, by
// the file's base name.
func (o Oracle) Judge(dir string) (map[string]Verdict, error) {
	cmd := exec.Command(o.Bin, "-configs", o.Configs, dir)
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil && len(out) == 0 {
		return nil, fmt.Errorf("%s: %w: %s", o.Bin, err, stderr.Bytes())
	}
	verdicts := map[string]Verdict{}
	sc := bufio.NewScanner(bytes.NewReader(out))
	sc.Buffer(make([]byte, 1<<20), 1<<24)
	for sc.Scan() {
		m := oracleLine.FindStringSubmatch(sc.Text())
		if m == nil {
			continue
		}
		verdicts[filepath.Base(m[1])] = Verdict{Refused: m[2] != "valid", Reason: m[3]}
	}
	return verdicts, sc.Err()
}

// NotJudged is the oracle's reason for an object it passed over, not being
// of a kind it covers.
const NotJudged = "not an object of a kind the oracle covers"

// Outcome is both verdicts on one case.
type Outcome struct {
	Case    *Case
	Knc     Verdict
	Knative Verdict
	// Allowed names the deliberate difference that explains a
	// disagreement; empty when there is none or it is not explained.
	Allowed string
}

// Disagrees says whether the two verdicts differ.
func (o Outcome) Disagrees() bool { return o.Knc.Crashed || o.Knc.Refused != o.Knative.Refused }

// Allowance is a deliberate difference between knc and Knative.
type Allowance struct {
	Name   string
	Reason string
	// Match says whether the disagreement is this difference.
	Match func(Outcome) bool
}

// Campaign judges cases by both sides.
type Campaign struct {
	Oracle Oracle
	Judge  Judge
	// Dir is a scratch directory for the cases' files.
	Dir   string
	Allow []Allowance
}

// Run writes the cases, runs the oracle over all of them at once and knc
// on each, and returns the outcomes in the order of cases.
func (c *Campaign) Run(cases []*Case) ([]Outcome, error) {
	dir, err := os.MkdirTemp(c.Dir, "batch-")
	if err != nil {
		return nil, err
	}
	defer os.RemoveAll(dir)
	files := make([]string, len(cases))
	for i, cs := range cases {
		files[i] = filepath.Join(dir, fmt.Sprintf("%s-%d.yaml", cs.ID(), i))
		if err := os.WriteFile(files[i], cs.YAML(), 0o644); err != nil {
			return nil, err
		}
	}
	knative, err := c.Oracle.Judge(dir)
	if err != nil {
		return nil, err
	}
	out := make([]Outcome, len(cases))
	for i, cs := range cases {
		v, ok := knative[filepath.Base(files[i])]
		if !ok {
			// The oracle passes over a document that is not an object
			// of its kinds; the API server refuses it too.
			v = Verdict{Refused: true, Reason: NotJudged}
		}
		o := Outcome{Case: cs, Knc: c.Judge(files[i]), Knative: v}
		if o.Disagrees() {
			for _, a := range c.Allow {
				if a.Match(o) {
					o.Allowed = a.Name
					break
				}
			}
		}
		out[i] = o
	}
	return out, nil
}

// Shrink removes, round by round, the fields of each disagreeing case that
// its mutations did not touch, keeping each removal after which both
// verdicts stay the same: what is left is a reproducer.
func (c *Campaign) Shrink(outs []Outcome, rounds int) ([]Outcome, error) {
	shrunk := slices.Clone(outs)
	pending := make([]int, len(outs))
	for i := range pending {
		pending[i] = i
	}
	for range rounds {
		if len(pending) == 0 {
			break
		}
		var batch []*Case
		var owner []int
		for _, i := range pending {
			for _, cand := range removals(shrunk[i].Case) {
				batch = append(batch, cand)
				owner = append(owner, i)
			}
		}
		results, err := c.Run(batch)
		if err != nil {
			return nil, err
		}
		progressed := map[int]bool{}
		for j, r := range results {
			i := owner[j]
			if progressed[i] || !sameDisagreement(shrunk[i], r) {
				continue
			}
			progressed[i] = true
			r.Allowed = shrunk[i].Allowed
			shrunk[i] = r
		}
		pending = slices.DeleteFunc(pending, func(i int) bool { return !progressed[i] })
	}
	return shrunk, nil
}

// sameDisagreement says whether after has the verdicts of before, for the
// same reason: the refusing side names no problem it did not name before.
func sameDisagreement(before, after Outcome) bool {
	if after.Knc.Refused != before.Knc.Refused || after.Knc.Crashed != before.Knc.Crashed || after.Knative.Refused != before.Knative.Refused {
		return false
	}
	if before.Knc.Crashed {
		return true
	}
	if before.Knc.Refused && after.Knc.Reason != before.Knc.Reason {
		return false
	}
	if before.Knative.Refused {
		for _, p := range strings.Split(after.Knative.Reason, " | ") {
			if !strings.Contains(before.Knative.Reason, p) {
				return false
			}
		}
	}
	return true
}

// removals are copies of c, each without one entry that c's mutations did
// not touch, the larger ones first.
func removals(c *Case) []*Case {
	type cand struct {
		c    *Case
		size int
	}
	var cands []cand
	for _, s := range sites(c.Doc) {
		if s.parent == nil || c.touched(s.node) || s.key != nil && c.touched(s.key) || essential(s.path) {
			continue
		}
		m := map[*yaml.Node]*yaml.Node{}
		cp := &Case{Seed: c.Seed, Index: c.Index, Kind: c.Kind, Base: c.Base, Mutations: c.Mutations, Doc: clone(c.Doc, m)}
		for _, n := range c.mutated {
			if n != nil && m[n] != nil {
				cp.mutated = append(cp.mutated, m[n])
			}
		}
		remove(site{parent: m[s.parent], index: s.index})
		cands = append(cands, cand{cp, size(s.node)})
	}
	slices.SortStableFunc(cands, func(a, b cand) int { return cmp.Compare(b.size, a.size) })
	out := make([]*Case, len(cands))
	for i, c := range cands {
		out[i] = c.c
	}
	return out
}

func essential(path string) bool {
	return path == "apiVersion" || path == "kind" || path == "metadata" || path == "metadata.name"
}

func size(n *yaml.Node) int {
	s := 1
	for _, c := range n.Content {
		s += size(c)
	}
	return s
}

// Reproducer is the file a disagreement is kept in: Knative's verdict in
// the header the corpus of compiler/check reads, the case's provenance,
// both verdicts' reasons, then the object.
func Reproducer(o Outcome) []byte {
	var b bytes.Buffer
	fmt.Fprintf(&b, "# knative: %s\n", o.Knative)
	b.WriteString(o.Case.Provenance())
	fmt.Fprintf(&b, "# Knative: %s\n", oneLine(o.Knative))
	fmt.Fprintf(&b, "# knc: %s\n", oneLine(o.Knc))
	if o.Allowed != "" {
		fmt.Fprintf(&b, "# allowed: %s\n", o.Allowed)
	}
	b.Write(o.Case.YAML())
	return b.Bytes()
}

func oneLine(v Verdict) string {
	s := v.String()
	if v.Reason != "" {
		s += ": " + strings.ReplaceAll(v.Reason, "\n", " ")
	}
	return s
}

// WriteReproducers writes each outcome's reproducer into dir, named by kind,
// operators and case.
func WriteReproducers(dir string, outs []Outcome) ([]string, error) {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, err
	}
	var files []string
	for _, o := range outs {
		name := fmt.Sprintf("%s-%s-%s.yaml", strings.ToLower(o.Case.Kind), o.Case.Ops(), o.Case.ID())
		f := filepath.Join(dir, name)
		if err := os.WriteFile(f, Reproducer(o), 0o644); err != nil {
			return nil, err
		}
		files = append(files, f)
	}
	return files, nil
}

// Tally counts outcomes by kind and operator; a case of two mutations
// counts under each of its operators, and once in Total.
type Tally struct {
	Cells map[[2]string]*Cell // by kind, operators
	// Classes counts disagreements by operator, field (indices and free
	// keys left out) and direction.
	Classes map[string]int
	Allowed map[string]int
	// Kinds counts by kind alone, each case once.
	Kinds map[string]*Cell
	Total Cell
}

// Cell is one count.
type Cell struct{ Inputs, RefusedByKnative, Disagreements, Allowed int }

func (c *Cell) add(o Outcome) {
	c.Inputs++
	if o.Knative.Refused {
		c.RefusedByKnative++
	}
	if o.Disagrees() {
		if o.Allowed != "" {
			c.Allowed++
		} else {
			c.Disagreements++
		}
	}
}

// Count tallies outs.
func Count(outs []Outcome) *Tally {
	t := &Tally{Cells: map[[2]string]*Cell{}, Classes: map[string]int{}, Allowed: map[string]int{}, Kinds: map[string]*Cell{}}
	for _, o := range outs {
		// A case of two mutations counts under both operators.
		for _, op := range slices.Compact(slices.Sorted(slices.Values(strings.Split(o.Case.Ops(), "+")))) {
			k := [2]string{o.Case.Kind, op}
			if t.Cells[k] == nil {
				t.Cells[k] = &Cell{}
			}
			t.Cells[k].add(o)
		}
		if t.Kinds[o.Case.Kind] == nil {
			t.Kinds[o.Case.Kind] = &Cell{}
		}
		t.Kinds[o.Case.Kind].add(o)
		t.Total.add(o)
		switch {
		case !o.Disagrees():
		case o.Allowed != "":
			t.Allowed[o.Allowed]++
		default:
			t.Classes[Class(o)]++
		}
	}
	return t
}

// RefusedShare is the share of inputs Knative refuses.
func (t *Tally) RefusedShare() float64 {
	if t.Total.Inputs == 0 {
		return 0
	}
	return float64(t.Total.RefusedByKnative) / float64(t.Total.Inputs)
}

var (
	indexRE   = regexp.MustCompile(`\[\d+\]`)
	freeKeyRE = regexp.MustCompile(`\.(labels|annotations|attributes|exact|prefix|suffix|extensions|matchLabels)\..*$`)
)

// Class names a disagreement's kind: the mutations, the fields they
// changed, and which side refused.
func Class(o Outcome) string {
	var parts []string
	for _, m := range o.Case.Mutations {
		p := freeKeyRE.ReplaceAllString(indexRE.ReplaceAllString(m.Path, "[]"), ".$1.*")
		parts = append(parts, m.Op+" "+p)
	}
	dir := "knc refuses, Knative admits"
	if o.Knative.Refused {
		dir = "knc admits, Knative refuses"
	}
	if o.Knc.Crashed {
		dir = "knc crashes"
	}
	return fmt.Sprintf("%s: %s (%s)", o.Case.Kind, strings.Join(parts, " + "), dir)
}

// Print writes the tally: inputs, Knative's refusals and disagreements by
// kind × operators, the share refused, the allowed differences and the
// classes of disagreement.
func (t *Tally) Print(w io.Writer) {
	keys := slices.SortedFunc(maps.Keys(t.Cells), func(a, b [2]string) int {
		return cmp.Or(cmp.Compare(a[0], b[0]), cmp.Compare(a[1], b[1]))
	})
	fmt.Fprintf(w, "%-13s %-14s %7s %8s %9s %8s\n", "KIND", "OPERATOR", "INPUTS", "REFUSED", "DISAGREE", "ALLOWED")
	for _, k := range keys {
		c := t.Cells[k]
		fmt.Fprintf(w, "%-13s %-14s %7d %8d %9d %8d\n", k[0], k[1], c.Inputs, c.RefusedByKnative, c.Disagreements, c.Allowed)
	}
	for _, kind := range slices.Sorted(maps.Keys(t.Kinds)) {
		c := t.Kinds[kind]
		fmt.Fprintf(w, "%-13s %-14s %7d %8d %9d %8d\n", kind, "(all)", c.Inputs, c.RefusedByKnative, c.Disagreements, c.Allowed)
	}
	fmt.Fprintf(w, "%-13s %-14s %7d %8d %9d %8d\n", "all", "", t.Total.Inputs, t.Total.RefusedByKnative, t.Total.Disagreements, t.Total.Allowed)
	fmt.Fprintf(w, "Knative refuses %.1f%% of the inputs\n", 100*t.RefusedShare())
	for _, name := range slices.Sorted(maps.Keys(t.Allowed)) {
		fmt.Fprintf(w, "allowed difference %s: %d\n", name, t.Allowed[name])
	}
	classes := slices.SortedFunc(maps.Keys(t.Classes), func(a, b string) int {
		return cmp.Or(cmp.Compare(t.Classes[b], t.Classes[a]), cmp.Compare(a, b))
	})
	for _, cl := range classes {
		fmt.Fprintf(w, "disagreement %4d  %s\n", t.Classes[cl], cl)
	}
}
