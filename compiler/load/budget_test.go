package load

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/knc-dev/knc/compiler/diag"
	"github.com/knc-dev/knc/internal/cuelimit"
	"github.com/knc-dev/knc/internal/inputfs"
)

func TestInputBudgetStopsBeforeTheFileThatGoesOver(t *testing.T) {
	dir := t.TempDir()
	object := "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: c\n"
	var files []string
	for _, name := range []string{"a.yaml", "b.yaml", "c.yaml"} {
		f := filepath.Join(dir, name)
		if err := os.WriteFile(f, []byte(object), 0o644); err != nil {
			t.Fatal(err)
		}
		files = append(files, f)
	}
	size := int64(len(object))

	l, err := ReadFiles(inputfs.Disk, dir, files, cuelimit.Default, NewInputBudget(3*size, 0))
	if err != nil || len(l.Docs) != 3 {
		t.Fatalf("within the limit: %d documents, error %v; want 3, nil", len(l.Docs), err)
	}

	_, err = ReadFiles(inputfs.Disk, dir, files, cuelimit.Default, NewInputBudget(2*size+1, 0))
	if !errors.Is(err, ErrInputTooLarge) {
		t.Fatalf("over the limit: error %v, want ErrInputTooLarge", err)
	}
	if want := "c.yaml: the input goes over its limit of "; !strings.HasPrefix(err.Error(), want) || !strings.HasSuffix(err.Error(), "or raise "+MaxInputFlag) {
		t.Errorf("error %q, want it to start with %q and to name %s", err, want, MaxInputFlag)
	}
}

func TestInputBudgetNamesTheLimitInUnits(t *testing.T) {
	for limit, want := range map[int64]string{
		0:       "limit of 1 GiB (1073741824 bytes),",
		3 << 20: "limit of 3 MiB (3145728 bytes),",
		1000:    "limit of 1000 bytes,",
	} {
		b := NewInputBudget(limit, 0)
		err := b.Charge("f", b.Remaining()+1)
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("limit %d: error %v, want it to hold %q", limit, err, want)
		}
	}
	var none *InputBudget
	if err := none.Charge("f", 1<<40); err != nil {
		t.Errorf("a nil budget refused: %v", err)
	}
}

func TestInputBudgetCountsEachFileOnceAndNamesTheOneThatWentOver(t *testing.T) {
	b := NewInputBudget(100, 0)
	for range 3 {
		// A base read by two overlays, and again for positions.
		if err := b.ChargeFile("/p/base.yaml", "base.yaml", 60); err != nil {
			t.Fatalf("a file read again was counted again: %v", err)
		}
	}
	err := b.ChargeFile("/p/big.yaml", "big.yaml", 60)
	if err == nil || !strings.HasPrefix(err.Error(), "big.yaml: ") {
		t.Fatalf("error %v, want it for big.yaml", err)
	}
	// Every file after it, even one counted before, gets the same error.
	for _, again := range []error{b.ChargeFile("/p/base.yaml", "base.yaml", 60), b.Charge("stdin", 0)} {
		if again == nil || again.Error() != err.Error() {
			t.Errorf("after going over: error %v, want %v", again, err)
		}
	}
}

// aliasedConfigMap is a ConfigMap whose one value of size bytes is
// aliased times times.
func aliasedConfigMap(name string, size, times int) []byte {
	var b strings.Builder
	b.WriteString("apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: " + name + "\ndata:\n  a0: &big " + strings.Repeat("x", size) + "\n")
	for i := 1; i <= times; i++ {
		fmt.Fprintf(&b, "  a%d: *big\n", i)
	}
	return []byte(b.String())
}

// TestAliasBudgetRefusesALargeValueAliasedManyTimes: one 64 KiB value
// aliased 10,000 times is a 200 KB file that adds 655 MB; it passed and
// build wrote it out in gigabytes of memory.
func TestAliasBudgetRefusesALargeValueAliasedManyTimes(t *testing.T) {
	src := aliasedConfigMap("bomb", 64<<10, 10_000)
	l, err := Read([]Source{{Name: "bomb.yaml", Data: src}}, cuelimit.Default, NewInputBudget(0, 0))
	if err != nil {
		t.Fatal(err)
	}
	want := diag.List{{Pos: diag.Pos{File: "bomb.yaml", Line: 7, Column: 7}, Message: "aliases expand the documents read by more than their limit of 64 MiB (67108864 bytes), for all files and standard input together: write the repeated parts out, or raise " + MaxAliasFlag}}
	if diff := cmp.Diff(want, l.Diags); diff != "" {
		t.Errorf("diagnostics (-want +got):\n%s", diff)
	}
	if len(l.Docs) != 0 {
		t.Errorf("%d documents read, want none", len(l.Docs))
	}
}

// TestAliasBudgetIsForAllDocuments: documents that each stay under the
// limit go over it together, and the one that does is named however the
// parsing is spread over the cores.
func TestAliasBudgetIsForAllDocuments(t *testing.T) {
	// Each adds 4 × 1,000 bytes.
	one := aliasedConfigMap("one", 1000, 4)
	for range 5 {
		b := NewInputBudget(0, 10_000)
		l, err := Read([]Source{
			{Name: "a.yaml", Data: one},
			{Name: "b.yaml", Data: one},
			{Name: "c.yaml", Data: one},
		}, cuelimit.Default, b)
		if err != nil {
			t.Fatal(err)
		}
		var files []string
		for _, d := range l.Diags {
			files = append(files, d.Pos.File)
		}
		if diff := cmp.Diff([]string{"c.yaml"}, files); diff != "" {
			t.Fatalf("files named (-want +got):\n%s", diff)
		}
		if len(l.Docs) != 2 {
			t.Errorf("%d documents read, want the 2 within the limit", len(l.Docs))
		}
	}
	// Written out, the same values add nothing.
	plain := []byte("apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: p\ndata:\n  a: " + strings.Repeat("x", 20_000) + "\n")
	l, err := Read([]Source{{Name: "p.yaml", Data: plain}}, cuelimit.Default, NewInputBudget(0, 1))
	if err != nil || len(l.Diags) != 0 {
		t.Errorf("no aliases: diagnostics %v, error %v; want none", l.Diags, err)
	}
}
