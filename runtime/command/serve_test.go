package command

import (
	"os"
	"path/filepath"
	"runtime/debug"
	"syscall"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/knc-dev/knc/internal/runtimeconfig"
	"github.com/knc-dev/knc/runtime/engine"
	"github.com/knc-dev/knc/runtime/ingress"
)

func TestReadBearerTokens(t *testing.T) {
	dir := t.TempDir()
	for name, content := range map[string]string{
		"broker.shop.orders":      "a\n\n b \n",
		"channel.shop.audit.v2":   "c",
		"broker.shop.blank":       "\n  \n",
		".hidden":                 "ignored",
		"..data/broker.x.y":       "ignored",
		"..2026_01_01/broker.x.y": "ignored",
	} {
		p := filepath.Join(dir, name)
		if err := os.MkdirAll(filepath.Dir(p), 0o700); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(content), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	fifo := filepath.Join(dir, "broker.shop.fifo")
	if err := syscall.Mkfifo(fifo, 0o600); err != nil {
		t.Fatal(err)
	}
	got, problems, err := readBearerTokens(dir)
	if err != nil {
		t.Fatal(err)
	}
	// A token file that gives no token names its ingress with none,
	// which keeps that ingress protected.
	want := ingress.BearerTokens{
		"/brokers/shop/orders":    {"a", "b"},
		"/channels/shop/audit.v2": {"c"},
		"/brokers/shop/blank":     nil,
		"/brokers/shop/fifo":      nil,
	}
	wantProblems := []tokenProblem{
		{msg: filepath.Join(dir, "broker.shop.blank") + " holds no token", unreadable: true},
		{msg: fifo + ": not a regular file (it is a named pipe); knc reads only regular files", unreadable: true},
	}
	if diff := cmp.Diff(wantProblems, problems, cmp.AllowUnexported(tokenProblem{})); diff != "" {
		t.Errorf("problems (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("tokens (-want +got):\n%s", diff)
	}
}

// TestServeSetsGCPercent: serving sets the collector's target, unless
// GOGC is set, which the Go runtime has applied already.
func TestServeSetsGCPercent(t *testing.T) {
	for _, tc := range []struct {
		gogc string
		want int
	}{
		{"", engine.GCPercent},
		{"150", 100},
	} {
		t.Run("GOGC="+tc.gogc, func(t *testing.T) {
			t.Setenv("GOGC", tc.gogc)
			defer debug.SetGCPercent(debug.SetGCPercent(100))
			if err := Apply(&engine.Options{}, runtimeconfig.New(runtimeconfig.Runtime)); err != nil {
				t.Fatal(err)
			}
			if got := debug.SetGCPercent(100); got != tc.want {
				t.Errorf("GC percent %d, want %d", got, tc.want)
			}
		})
	}
}
