package diff

import (
	"bytes"
	"fmt"
	"strings"
)

// maxEdits bounds the search for a shortest edit script. Past it, the
// differing middle of the two files is shown as removed and added as a
// whole: still a correct diff, found in bounded time and memory.
const maxEdits = 1000

// Unified returns the unified diff of two texts, with context lines of
// context, or "" when they are equal. oldName and newName label the ---
// and +++ lines.
func Unified(oldName, newName string, old, new []byte, context int) string {
	if bytes.Equal(old, new) {
		return ""
	}
	a, b := splitLines(old), splitLines(new)
	ops := editScript(a, b)
	var out strings.Builder
	fmt.Fprintf(&out, "--- %s\n+++ %s\n", oldName, newName)
	for _, h := range hunks(ops, context) {
		writeHunk(&out, h, a, b)
	}
	return out.String()
}

// splitLines splits text into lines, each keeping its newline; the last
// may have none.
func splitLines(b []byte) []string {
	if len(b) == 0 {
		return nil
	}
	lines := strings.SplitAfter(string(b), "\n")
	if lines[len(lines)-1] == "" {
		lines = lines[:len(lines)-1]
	}
	return lines
}

// op is one step of an edit script: keep a[i] (and b[j]), delete a[i], or
// insert b[j].
type op struct {
	kind byte // ' ', '-' or '+'
	i, j int
}

// editScript returns a shortest edit script from a to b, by Myers'
// O(ND) algorithm, after taking off the common start and end.
func editScript(a, b []string) []op {
	prefix := 0
	for prefix < len(a) && prefix < len(b) && a[prefix] == b[prefix] {
		prefix++
	}
	suffix := 0
	for suffix < len(a)-prefix && suffix < len(b)-prefix && a[len(a)-1-suffix] == b[len(b)-1-suffix] {
		suffix++
	}
	var ops []op
	for k := range prefix {
		ops = append(ops, op{' ', k, k})
	}
	ops = append(ops, middle(a[prefix:len(a)-suffix], b[prefix:len(b)-suffix], prefix)...)
	for k := range suffix {
		i, j := len(a)-suffix+k, len(b)-suffix+k
		ops = append(ops, op{' ', i, j})
	}
	return ops
}

// middle diffs the part of the texts that differ; offset is where it
// starts in both.
func middle(a, b []string, offset int) []op {
	n, m := len(a), len(b)
	whole := func() []op {
		ops := make([]op, 0, n+m)
		for i := range n {
			ops = append(ops, op{'-', offset + i, offset})
		}
		for j := range m {
			ops = append(ops, op{'+', offset + n, offset + j})
		}
		return ops
	}
	if n == 0 || m == 0 {
		return whole()
	}
	// Lines compared as small integers.
	ids := map[string]int{}
	intern := func(lines []string) []int {
		out := make([]int, len(lines))
		for i, l := range lines {
			id, ok := ids[l]
			if !ok {
				id = len(ids)
				ids[l] = id
			}
			out[i] = id
		}
		return out
	}
	x, y := intern(a), intern(b)
	limit := min(n+m, maxEdits)
	vOffset := limit + 1
	v := make([]int, 2*limit+3)
	var trace [][]int
	found := -1
	for d := 0; d <= limit && found < 0; d++ {
		// Step d reads the diagonals -d..d of the step before: keep
		// those, for the walk back.
		trace = append(trace, append([]int(nil), v[vOffset-d:vOffset+d+1]...))
		for k := -d; k <= d; k += 2 {
			var i int
			if k == -d || k != d && v[vOffset+k-1] < v[vOffset+k+1] {
				i = v[vOffset+k+1]
			} else {
				i = v[vOffset+k-1] + 1
			}
			j := i - k
			for i < n && j < m && x[i] == y[j] {
				i++
				j++
			}
			v[vOffset+k] = i
			if i >= n && j >= m {
				found = d
				break
			}
		}
	}
	if found < 0 {
		return whole()
	}
	// Walk back through the trace to recover the script.
	var rev []op
	i, j := n, m
	for d := found; d > 0; d-- {
		vd := func(k int) int { return trace[d][d+k] }
		k := i - j
		var prevK int
		if k == -d || k != d && vd(k-1) < vd(k+1) {
			prevK = k + 1
		} else {
			prevK = k - 1
		}
		prevI := vd(prevK)
		prevJ := prevI - prevK
		for i > prevI && j > prevJ {
			i--
			j--
			rev = append(rev, op{' ', offset + i, offset + j})
		}
		if i == prevI {
			j--
			rev = append(rev, op{'+', offset + i, offset + j})
		} else {
			i--
			rev = append(rev, op{'-', offset + i, offset + j})
		}
	}
	for i > 0 && j > 0 {
		i--
		j--
		rev = append(rev, op{' ', offset + i, offset + j})
	}
	ops := make([]op, len(rev))
	for k, o := range rev {
		ops[len(rev)-1-k] = o
	}
	return ops
}

// hunks groups an edit script into runs of changes with context lines of
// unchanged text around them, merging runs that their context joins.
func hunks(ops []op, context int) [][]op {
	var out [][]op
	start, end := -1, -1
	for k, o := range ops {
		if o.kind == ' ' {
			continue
		}
		lo, hi := max(0, k-context), min(len(ops), k+context+1)
		if start >= 0 && lo <= end {
			end = hi
			continue
		}
		if start >= 0 {
			out = append(out, ops[start:end])
		}
		start, end = lo, hi
	}
	if start >= 0 {
		out = append(out, ops[start:end])
	}
	return out
}

func writeHunk(out *strings.Builder, h []op, a, b []string) {
	oldStart, newStart := h[0].i, h[0].j
	oldLen, newLen := 0, 0
	for _, o := range h {
		switch o.kind {
		case ' ':
			oldLen++
			newLen++
		case '-':
			oldLen++
		case '+':
			newLen++
		}
	}
	fmt.Fprintf(out, "@@ -%s +%s @@\n", hunkRange(oldStart, oldLen), hunkRange(newStart, newLen))
	for _, o := range h {
		var line string
		switch o.kind {
		case '+':
			line = b[o.j]
		default:
			line = a[o.i]
		}
		out.WriteByte(o.kind)
		out.WriteString(line)
		if !strings.HasSuffix(line, "\n") {
			out.WriteString("\n\\ No newline at end of file\n")
		}
	}
}

// hunkRange writes a hunk's start and length as diff(1) does: an empty
// range starts at the line before it.
func hunkRange(start, length int) string {
	switch length {
	case 0:
		return fmt.Sprintf("%d,0", start)
	case 1:
		return fmt.Sprintf("%d", start+1)
	}
	return fmt.Sprintf("%d,%d", start+1, length)
}
