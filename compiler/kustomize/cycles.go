package kustomize

import (
	"path/filepath"
	"slices"

	"go.yaml.in/yaml/v3"

	"github.com/knc-dev/knc/compiler/load"
	"github.com/knc-dev/knc/internal/inputfs"
)

// Cycle is a ring of kustomizations each of which includes the next, the
// last including the first. kustomize refuses to build any of them, so
// knc cannot know which objects they deploy.
type Cycle struct {
	// Dirs are the kustomizations' directories as absolute paths, in
	// include order, starting with the least by name; a kustomization
	// that includes itself is a cycle of one.
	Dirs []string
	// Line and Column locate, in the first kustomization's file, the
	// entry that includes the second (or 1:1 when it cannot be found).
	Line, Column int
	// file is the kustomization file of Dirs[0].
	file string
}

// File is the kustomization file of the cycle's first directory.
func (c Cycle) File() string { return c.file }

// Cycles finds the include cycles reachable from the kustomizations in
// dirs, following resources, components and bases as Includes does. Each
// cycle is reported once, however many of dirs reach it.
func Cycles(fsys inputfs.FS, dirs []string) []Cycle {
	f := cycleFinder{fs: fsys, edges: map[string][]string{}, state: map[string]int{}, seen: map[string]bool{}}
	for _, d := range dirs {
		abs, err := filepath.Abs(d)
		if err != nil {
			continue
		}
		f.visit(abs)
	}
	slices.SortFunc(f.cycles, func(a, b Cycle) int { return slices.Compare(a.Dirs, b.Dirs) })
	return f.cycles
}

const (
	unvisited = iota
	onStack
	done
)

type cycleFinder struct {
	fs     inputfs.FS
	edges  map[string][]string
	state  map[string]int
	stack  []string
	seen   map[string]bool // cycles already reported, by their key
	cycles []Cycle
}

func (f *cycleFinder) includes(dir string) []string {
	subs, ok := f.edges[dir]
	if !ok {
		subs = Includes(f.fs, dir)
		f.edges[dir] = subs
	}
	return subs
}

// visit is a depth-first walk that reports a cycle whenever an include
// leads back to a directory on the current path.
func (f *cycleFinder) visit(dir string) {
	switch f.state[dir] {
	case done:
		return
	case onStack:
		i := slices.Index(f.stack, dir)
		f.report(slices.Clone(f.stack[i:]))
		return
	}
	f.state[dir] = onStack
	f.stack = append(f.stack, dir)
	for _, sub := range f.includes(dir) {
		f.visit(filepath.Clean(sub))
	}
	f.stack = f.stack[:len(f.stack)-1]
	f.state[dir] = done
}

// report records ring once, rotated so that it starts at its least
// directory: the same cycle found from different starts is one.
func (f *cycleFinder) report(ring []string) {
	least := 0
	for i, d := range ring {
		if d < ring[least] {
			least = i
		}
	}
	ring = append(ring[least:], ring[:least]...)
	key := filepath.Join(ring...)
	if f.seen[key] {
		return
	}
	f.seen[key] = true
	next := ring[0]
	if len(ring) > 1 {
		next = ring[1]
	}
	line, col := includeEntryPos(f.fs, ring[0], next)
	f.cycles = append(f.cycles, Cycle{Dirs: ring, Line: line, Column: col, file: load.KustomizationFile(f.fs, ring[0])})
}

// includeEntryPos is the position of the entry of the kustomization in
// dir whose path leads to target, or 1:1.
func includeEntryPos(fsys inputfs.FS, dir, target string) (line, col int) {
	text, err := fsys.ReadFile(load.KustomizationFile(fsys, dir), load.MaxFileBytes)
	if err != nil {
		return 1, 1
	}
	var root yaml.Node
	if yaml.Unmarshal(text, &root) != nil || len(root.Content) == 0 || root.Content[0].Kind != yaml.MappingNode {
		return 1, 1
	}
	m := root.Content[0]
	for i := 0; i+1 < len(m.Content); i += 2 {
		switch m.Content[i].Value {
		case "resources", "components", "bases":
		default:
			continue
		}
		if m.Content[i+1].Kind != yaml.SequenceNode {
			continue
		}
		for _, entry := range m.Content[i+1].Content {
			if entry.Kind == yaml.ScalarNode && filepath.Join(dir, entry.Value) == target {
				return entry.Line, entry.Column
			}
		}
	}
	return 1, 1
}
