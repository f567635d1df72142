package live

import (
	"sort"

	"github.com/knc-dev/knc/compiler/diag"
	"github.com/knc-dev/knc/compiler/diff"
	"github.com/knc-dev/knc/compiler/model"
)

// relocate makes the positions of a cluster report useful: package diff
// places each change in the stream the objects were read from, whose
// lines mean nothing to the reader. A change to an object of the build's
// manifests is placed where the manifests define it (field by field); a
// change to an object knc generates (the runtime, its RBAC) has no place;
// an object only the cluster has is placed in the cluster.
func relocate(r *diff.Report, unit *model.Set, before, after []lineEntry) {
	at := func(p diag.Pos, path string) diag.Pos {
		switch p.File {
		case clusterSource:
			return diag.Pos{File: clusterSource}
		case buildSource:
			e := entryAt(after, p.Line)
			if e == nil || unit == nil {
				return diag.Pos{}
			}
			if src, ok := unit.Index[e.Key]; ok {
				return src.Doc.PosOf(path)
			}
			return diag.Pos{}
		}
		return p
	}
	for i := range r.Objects {
		o := &r.Objects[i]
		o.Pos = at(o.Pos, "")
		for j := range o.Fields {
			o.Fields[j].Pos = at(o.Fields[j].Pos, o.Fields[j].Path)
		}
	}
	for i := range r.Filters {
		r.Filters[i].Pos = at(r.Filters[i].Pos, "spec.filter")
	}
	for i := range r.Deliveries {
		r.Deliveries[i].Pos = at(r.Deliveries[i].Pos, "spec.delivery")
	}
	for i := range r.Violations {
		r.Violations[i].Pos = at(r.Violations[i].Pos, r.Violations[i].Path)
	}
	r.Violations = r.Violations.Sorted()
}

// entryAt is the object whose document holds line: the last to start at
// or before it.
func entryAt(byLine []lineEntry, line int) *model.Entry {
	i := sort.Search(len(byLine), func(i int) bool { return byLine[i].line > line })
	if i == 0 {
		return nil
	}
	return byLine[i-1].entry
}
