package policy_test

import (
	"fmt"
	"testing"

	"github.com/knc-dev/knc/compiler"
	"github.com/knc-dev/knc/compiler/policy"
	"github.com/knc-dev/knc/internal/benchcorpus"
	"github.com/knc-dev/knc/internal/inputfs"
)

// BenchmarkValidate is knc validate's work on 10,000 objects, with no
// policies and with benchcorpus's five: load and check the manifests,
// then compile the policies and check every object against them. The
// policies are meant to keep the run under 2 s; compare the two lines.
// hack/bench-policies.sh measures the same with the knc binary.
func BenchmarkValidate(b *testing.B) {
	const objects = 10_000
	dir := b.TempDir()
	if err := benchcorpus.WriteByKind(dir, benchcorpus.Shape{Objects: objects}); err != nil {
		b.Fatal(err)
	}
	policies := b.TempDir()
	if err := benchcorpus.WritePolicies(policies); err != nil {
		b.Fatal(err)
	}
	for _, n := range []int{0, 5} {
		b.Run(fmt.Sprintf("policies=%d", n), func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				res, err := compiler.Load(compiler.Options{Paths: []string{dir}, Dir: dir})
				if err != nil {
					b.Fatal(err)
				}
				if !res.Valid() {
					b.Fatalf("corpus is invalid: %v", res.Diagnostics[:min(3, len(res.Diagnostics))])
				}
				if n == 0 {
					continue
				}
				files, err := policy.Files(inputfs.Disk, policies, []string{policies})
				if err != nil {
					b.Fatal(err)
				}
				set, diags, err := policy.Load(inputfs.Disk, files, policy.DefaultLimits)
				if err != nil || len(diags) > 0 {
					b.Fatalf("policies: %v %v", err, diags)
				}
				if len(set.Policies) != n {
					b.Fatalf("%d policies, want %d", len(set.Policies), n)
				}
				for _, u := range res.Units {
					found, err := set.Check(u.Set.Entries, policy.DefaultLimits)
					if err != nil {
						b.Fatal(err)
					}
					if len(found) > 0 {
						b.Fatalf("the corpus violates the policies: %v", found[:min(3, len(found))])
					}
				}
			}
		})
	}
}

// BenchmarkCheck is the policies' share of BenchmarkValidate alone:
// compiling the five policies in each worker and checking 10,000 loaded
// objects. Run with -cpu 1,2 to see how it spreads over cores.
func BenchmarkCheck(b *testing.B) {
	dir := b.TempDir()
	if err := benchcorpus.WriteByKind(dir, benchcorpus.Shape{Objects: 10_000}); err != nil {
		b.Fatal(err)
	}
	policies := b.TempDir()
	if err := benchcorpus.WritePolicies(policies); err != nil {
		b.Fatal(err)
	}
	res, err := compiler.Load(compiler.Options{Paths: []string{dir}, Dir: dir})
	if err != nil {
		b.Fatal(err)
	}
	files, err := policy.Files(inputfs.Disk, policies, []string{policies})
	if err != nil {
		b.Fatal(err)
	}
	set, diags, err := policy.Load(inputfs.Disk, files, policy.DefaultLimits)
	if err != nil || len(diags) > 0 {
		b.Fatalf("policies: %v %v", err, diags)
	}
	b.ReportAllocs()
	b.ResetTimer()
	for b.Loop() {
		for _, u := range res.Units {
			if _, err := set.Check(u.Set.Entries, policy.DefaultLimits); err != nil {
				b.Fatal(err)
			}
		}
	}
}
