package layout

import (
	"os"
	"os/exec"
	"path/filepath"
	"testing"
)

// TestGraphvizCacheIsPrivate starts this test binary, which links
// go-graphviz as knc does, with TMPDIR pointing at a directory where
// another user planted a go-graphviz cache anyone can write. go-graphviz
// must neither load nor write code there: its cache goes to the user's own
// cache directory, mode 0700, or nowhere when that is not private.
func TestGraphvizCacheIsPrivate(t *testing.T) {
	tests := []struct {
		name string
		// cacheMode is the mode of the user's cache directory knc/ made
		// beforehand, 0 when it does not exist yet.
		cacheMode os.FileMode
		wantCache bool
	}{
		{"the user's cache directory is made", 0, true},
		{"the user's cache directory is private", 0o700, true},
		{"the user's cache directory is writable by others", 0o777, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			shared := t.TempDir()
			planted := filepath.Join(shared, "go-graphviz")
			if err := os.Mkdir(planted, 0o777); err != nil {
				t.Fatal(err)
			}
			if err := os.Chmod(planted, 0o777); err != nil {
				t.Fatal(err)
			}
			if os.Geteuid() == 0 {
				// As root, plant it as another user would.
				if err := os.Chown(planted, 65534, 65534); err != nil {
					t.Fatal(err)
				}
			}
			cacheHome := t.TempDir()
			if tt.cacheMode != 0 {
				dir := filepath.Join(cacheHome, "knc")
				if err := os.Mkdir(dir, 0o700); err != nil {
					t.Fatal(err)
				}
				if err := os.Chmod(dir, tt.cacheMode); err != nil {
					t.Fatal(err)
				}
			}

			cmd := exec.Command(os.Args[0], "-test.run=^$")
			cmd.Env = append(os.Environ(), "TMPDIR="+shared, "XDG_CACHE_HOME="+cacheHome)
			if out, err := cmd.CombinedOutput(); err != nil {
				t.Fatalf("the binary failed to start: %v\n%s", err, out)
			}

			if entries, err := os.ReadDir(planted); err != nil || len(entries) > 0 {
				t.Errorf("go-graphviz used the planted cache in TMPDIR (%d entries, %v)", len(entries), err)
			}
			private := filepath.Join(cacheHome, "knc", "go-graphviz")
			entries, err := os.ReadDir(private)
			if got := err == nil && len(entries) > 0; got != tt.wantCache {
				t.Errorf("a cache in %s: %v, want %v (%v)", private, got, tt.wantCache, err)
			}
			if tt.wantCache {
				info, err := os.Stat(filepath.Dir(private))
				if err != nil {
					t.Fatal(err)
				}
				if perm := info.Mode().Perm(); perm != 0o700 {
					t.Errorf("the cache's directory has mode %v, want 0700", perm)
				}
			}
		})
	}
}
