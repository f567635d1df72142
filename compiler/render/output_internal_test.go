package render

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

func sampleOutput() *Output {
	return &Output{Files: []File{
		{Path: "kustomization.yaml", Data: []byte("resources: [a]\n")},
		{Path: "a/x.yaml", Data: []byte("new\n")},
	}}
}

// listTree returns every file under dir with its content.
func listTree(t *testing.T, dir string) map[string]string {
	t.Helper()
	out := map[string]string{}
	err := filepath.WalkDir(dir, func(p string, d os.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		b, err := os.ReadFile(p)
		rel, _ := filepath.Rel(dir, p)
		out[filepath.ToSlash(rel)] = string(b)
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	return out
}

// TestFailedBuildLeavesPreviousOutput breaks each step of a write in turn
// and checks that the previous output is left exactly as it was, with
// nothing beside it.
func TestFailedBuildLeavesPreviousOutput(t *testing.T) {
	boom := errors.New("boom")
	tests := []struct {
		name  string
		setup func()
	}{
		{"writing a file fails", func() {
			writeFile = func(*os.Root, string, []byte) error { return boom }
		}},
		{"moving the new output into place fails", func() {
			calls := 0
			rename = func(from, to string) error {
				calls++
				if calls == 2 {
					return boom
				}
				return os.Rename(from, to)
			}
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			parent := t.TempDir()
			dir := filepath.Join(parent, "out")
			previous := &Output{Files: []File{{Path: "kustomization.yaml", Data: []byte("old\n")}, {Path: "b/y.yaml", Data: []byte("old\n")}}}
			if err := previous.Write(dir); err != nil {
				t.Fatal(err)
			}
			before := listTree(t, parent)

			tt.setup()
			t.Cleanup(func() { rename, writeFile = os.Rename, writeSynced })
			if err := sampleOutput().Write(dir); !errors.Is(err, boom) {
				t.Fatalf("Write = %v, want %v", err, boom)
			}
			if diff := cmp.Diff(before, listTree(t, parent)); diff != "" {
				t.Errorf("files changed (-before +after):\n%s", diff)
			}
		})
	}
}

// TestWriteRefusesPathsOutsideTheOutput checks the second line of defence
// against a path that leads out of the output directory: validate refuses
// the names that would make one, and Write refuses the path itself.
func TestWriteRefusesPathsOutsideTheOutput(t *testing.T) {
	for _, p := range []string{"../escaped/kustomization.yaml", "namespaces/../../escaped.yaml", "/etc/escaped.yaml"} {
		t.Run(p, func(t *testing.T) {
			parent := t.TempDir()
			dir := filepath.Join(parent, "a", "out")
			out := &Output{Files: []File{{Path: p, Data: []byte("x: 1\n")}}}
			err := out.Write(dir)
			if err == nil {
				t.Fatalf("Write wrote %s", p)
			}
			if want := "leads out of the output directory"; !strings.Contains(err.Error(), want) {
				t.Errorf("Write = %v, want an error saying it %s", err, want)
			}
			if diff := cmp.Diff(map[string]string{}, listTree(t, parent)); diff != "" {
				t.Errorf("files written (-want +got):\n%s", diff)
			}
		})
	}
}
