package gittest_test

import (
	"path/filepath"
	"strings"
	"testing"

	"github.com/knc-dev/knc/internal/gittest"
)

// TestServe clones a served repository over HTTP with git itself, sees a
// later commit through a fetch, and is refused a push.
func TestServe(t *testing.T) {
	repo := gittest.New(t)
	repo.Write(map[string]string{"deploy/kustomization.yaml": "resources: []\n"})
	first := repo.Commit("first")
	url := repo.Serve("platform")
	if !strings.HasSuffix(url, "/platform.git") || !strings.HasPrefix(url, "http://127.0.0.1:") {
		t.Fatalf("URL %q, want http://127.0.0.1:PORT/platform.git", url)
	}

	dir := t.TempDir()
	clone := filepath.Join(dir, "clone")
	if _, err := gittest.Run(dir, "clone", "--quiet", url, clone); err != nil {
		t.Fatal(err)
	}
	head, err := gittest.Run(clone, "rev-parse", "HEAD")
	if err != nil {
		t.Fatal(err)
	}
	if strings.TrimSpace(head) != first {
		t.Errorf("cloned HEAD %s, want %s", head, first)
	}

	repo.Write(map[string]string{"deploy/more.yaml": "{}\n"})
	second := repo.Commit("second")
	if _, err := gittest.Run(clone, "pull", "--quiet", "--ff-only"); err != nil {
		t.Fatal(err)
	}
	if head, _ := gittest.Run(clone, "rev-parse", "HEAD"); strings.TrimSpace(head) != second {
		t.Errorf("HEAD after pull %s, want %s", head, second)
	}

	if _, err := gittest.Run(clone, "commit", "--quiet", "--allow-empty", "-m", "pushed"); err != nil {
		t.Fatal(err)
	}
	// To a new branch, so that only the server can refuse it.
	_, err = gittest.Run(clone, "push", "--quiet", "origin", "HEAD:refs/heads/pushed")
	if err == nil || !strings.Contains(err.Error(), "403") {
		t.Errorf("push over HTTP: %v, want a 403: the server is read-only", err)
	}
}
