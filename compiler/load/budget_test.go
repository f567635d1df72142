package load

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/knc-dev/knc/internal/cuelimit"
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

	l, err := ReadFiles(dir, files, cuelimit.Default, NewInputBudget(3*size))
	if err != nil || len(l.Docs) != 3 {
		t.Fatalf("within the limit: %d documents, error %v; want 3, nil", len(l.Docs), err)
	}

	_, err = ReadFiles(dir, files, cuelimit.Default, NewInputBudget(2*size+1))
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
		b := NewInputBudget(limit)
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
	b := NewInputBudget(100)
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
