package command

import (
	"context"
	"log/slog"
	"os"
	"path/filepath"
	"runtime/debug"
	"slices"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/knc-dev/knc/internal/runtimeconfig"
	"github.com/knc-dev/knc/runtime/engine"
	"github.com/knc-dev/knc/runtime/ingress"
	"github.com/knc-dev/knc/runtime/status"
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

// heldTokens records what watchTokens gives the engine.
type heldTokens struct {
	mu  sync.Mutex
	set []ingress.BearerTokens
}

func (h *heldTokens) SetBearerTokens(t ingress.BearerTokens) {
	h.mu.Lock()
	defer h.mu.Unlock()
	h.set = append(h.set, t)
}

func (h *heldTokens) Statuses() []status.Report { return nil }

func (h *heldTokens) given() []ingress.BearerTokens {
	h.mu.Lock()
	defer h.mu.Unlock()
	return slices.Clone(h.set)
}

// TestWatchTokensAppliesAFileReplacedBeforeItStarts checks that a token
// file replaced after the engine read its tokens, and before the watch
// started, is applied at once: the watch starts from the directory, not
// from what it reads itself.
func TestWatchTokensAppliesAFileReplacedBeforeItStarts(t *testing.T) {
	dir := t.TempDir()
	file := filepath.Join(dir, "broker.shop.orders")
	if err := os.WriteFile(file, []byte("old\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	atStart, _, err := readBearerTokens(dir)
	if err != nil {
		t.Fatal(err)
	}
	// The rotation, between the engine's options and the watch.
	if err := os.WriteFile(file, []byte("new\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	held := &heldTokens{set: []ingress.BearerTokens{atStart}}
	ctx, cancel := context.WithCancel(t.Context())
	done := make(chan struct{})
	go func() {
		defer close(done)
		// An hour between reads: only the watch's first read can apply it.
		watchTokens(ctx, dir, time.Hour, held, slog.New(slog.DiscardHandler))
	}()
	want := []ingress.BearerTokens{atStart, {"/brokers/shop/orders": {"new"}}}
	deadline := time.Now().Add(30 * time.Second)
	for !cmp.Equal(want, held.given()) && time.Now().Before(deadline) {
		time.Sleep(5 * time.Millisecond)
	}
	cancel()
	<-done
	if diff := cmp.Diff(want, held.given()); diff != "" {
		t.Errorf("tokens given to the engine (-want +got):\n%s", diff)
	}
}
