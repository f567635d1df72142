package load

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/knc-dev/knc/internal/inputfs"
	"github.com/knc-dev/knc/internal/safeio"
)

// TestResolveWithin resolves links below a project root one hop at a
// time, refusing a target outside the root by its name alone.
func TestResolveWithin(t *testing.T) {
	top := resolved(inputfs.Disk, t.TempDir())
	root := filepath.Join(top, "proj")
	for _, d := range []string{"proj/dir", "outside"} {
		if err := os.MkdirAll(filepath.Join(top, d), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	for _, f := range []string{"proj/file.yaml", "proj/dir/x.yaml", "outside/secret.yaml"} {
		if err := os.WriteFile(filepath.Join(top, f), nil, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	links := map[string]string{
		"inside.yaml": "file.yaml",
		"chain.yaml":  "inside.yaml",
		"sub":         "dir",
		"up.yaml":     "../proj/file.yaml",
		"out.yaml":    "../outside/secret.yaml",
		"abs.yaml":    "/etc/passwd",
		"outdir":      "../outside",
		"via.yaml":    "outdir/secret.yaml",
		"to-out.yaml": "out.yaml",
		"gone.yaml":   "missing.yaml",
		"nowhere":     "../no-such-dir/x.yaml",
		"notdir.yaml": "/etc/passwd/x.yaml",
		"loop1.yaml":  "loop2.yaml",
		"loop2.yaml":  "loop1.yaml",
	}
	for name, target := range links {
		if err := os.Symlink(target, filepath.Join(root, name)); err != nil {
			t.Fatal(err)
		}
	}
	for _, tc := range []struct {
		path    string
		want    string // the path p leads to, relative to root
		wantErr error
		message string // part of the error's message
	}{
		{path: "file.yaml", want: "file.yaml"},
		{path: "inside.yaml", want: "file.yaml"},
		{path: "chain.yaml", want: "file.yaml"},
		{path: "sub/x.yaml", want: "dir/x.yaml"},
		{path: "up.yaml", want: "file.yaml"},
		{path: "out.yaml", wantErr: ErrLinkOutside, message: "(it leads to " + filepath.Join(top, "outside/secret.yaml") + ")"},
		// The sentinel is safeio's, which policies and plugins wrap too.
		{path: "abs.yaml", wantErr: safeio.ErrLinkOutside, message: "(it leads to /etc/passwd)"},
		{path: "via.yaml", wantErr: ErrLinkOutside, message: "(it leads to " + filepath.Join(top, "outside/secret.yaml") + ")"},
		{path: "outdir/secret.yaml", wantErr: ErrLinkOutside, message: "(it leads to " + filepath.Join(top, "outside/secret.yaml") + ")"},
		{path: "to-out.yaml", wantErr: ErrLinkOutside, message: "to-out.yaml: symbolic link leads outside"},
		{path: "gone.yaml", wantErr: ErrLinkBroken, message: "gone.yaml: symbolic link leads to nothing: its target missing.yaml does not exist; remove the link, or exclude it in knc.yaml"},
		// Outside and missing, or outside and not even a possible path:
		// refused by name, without a lookup's error.
		{path: "nowhere", wantErr: ErrLinkOutside, message: "(it leads to " + filepath.Join(top, "no-such-dir/x.yaml") + ")"},
		{path: "notdir.yaml", wantErr: ErrLinkOutside, message: "(it leads to /etc/passwd/x.yaml)"},
		{path: "loop1.yaml", message: "more than 255 symbolic links in a row"},
	} {
		t.Run(tc.path, func(t *testing.T) {
			p := filepath.Join(root, tc.path)
			got, err := resolveWithin(inputfs.Disk, p, root)
			if tc.message == "" {
				if err != nil {
					t.Fatalf("resolveWithin: %v", err)
				}
				if want := filepath.Join(root, tc.want); got != want {
					t.Errorf("resolveWithin = %s, want %s", got, want)
				}
				return
			}
			if err == nil {
				t.Fatalf("resolveWithin = %s, want an error with %q", got, tc.message)
			}
			if tc.wantErr != nil && !errors.Is(err, tc.wantErr) {
				t.Errorf("error %q does not wrap %q", err, tc.wantErr)
			}
			if !strings.Contains(err.Error(), tc.message) || !strings.HasPrefix(err.Error(), p+":") {
				t.Errorf("error %q, want it to start with %s: and hold %q", err, p, tc.message)
			}
		})
	}
}
