package inputfs_test

import (
	"errors"
	"io/fs"
	"path/filepath"
	"testing"
	"testing/fstest"

	"github.com/google/go-cmp/cmp"

	"github.com/knc-dev/knc/internal/inputfs"
	"github.com/knc-dev/knc/internal/safeio"
)

func link(target string) *fstest.MapFile {
	return &fstest.MapFile{Data: []byte(target), Mode: fs.ModeSymlink | 0o777}
}

func file(text string) *fstest.MapFile { return &fstest.MapFile{Data: []byte(text), Mode: 0o644} }

// project is a MapFS mounted at /m with links that stay in it and links
// that would lead out of it.
func project() inputfs.FS {
	return inputfs.Mount(fstest.MapFS{
		"app/broker.yaml":  file("kind: Broker\n"),
		"app/alias.yaml":   link("broker.yaml"),
		"app/chain.yaml":   link("alias.yaml"),
		"app/shared":       link("../shared"),
		"shared/a.yaml":    file("kind: Trigger\n"),
		"app/etc.yaml":     link("/etc/hostname"),
		"app/climb.yaml":   link("../../../etc/hostname"),
		"app/loop.yaml":    link("loop.yaml"),
		"other/note.yaml":  file("x\n"),
		"app/to-other.yml": link("../other/note.yaml"),
	}, filepath.FromSlash("/m"))
}

func p(s string) string { return filepath.FromSlash(s) }

// TestMountResolvesLinksWithinIt resolves links as a disk would, below the
// mount; a link that leads out of the mount leads to nothing, never to a
// file of the machine.
func TestMountResolvesLinksWithinIt(t *testing.T) {
	fsys := project()
	for _, tt := range []struct {
		path, want string
	}{
		{"/m/app/chain.yaml", "/m/app/broker.yaml"},
		{"/m/app/shared/a.yaml", "/m/shared/a.yaml"},
		{"/m/app", "/m/app"},
	} {
		got, err := fsys.EvalSymlinks(p(tt.path))
		if err != nil || got != p(tt.want) {
			t.Errorf("EvalSymlinks(%s) = %q, %v; want %s", tt.path, got, err, tt.want)
		}
	}
	for _, out := range []string{"/m/app/etc.yaml", "/m/app/climb.yaml", "/etc/hostname", "/m/../etc/hostname"} {
		if _, err := fsys.Stat(p(out)); !errors.Is(err, fs.ErrNotExist) {
			t.Errorf("Stat(%s) = %v, want fs.ErrNotExist", out, err)
		}
		if _, err := fsys.ReadFile(p(out), 1<<20); !errors.Is(err, fs.ErrNotExist) {
			t.Errorf("ReadFile(%s) = %v, want fs.ErrNotExist", out, err)
		}
	}
	if _, err := fsys.Stat(p("/m/app/loop.yaml")); err == nil {
		t.Error("Stat of a link to itself succeeded")
	}
	target, err := fsys.ReadLink(p("/m/app/etc.yaml"))
	if err != nil || target != p("/etc/hostname") {
		t.Errorf("ReadLink = %q, %v; want the target as committed", target, err)
	}
	if info, err := fsys.Lstat(p("/m/app/alias.yaml")); err != nil || info.Mode().Type() != fs.ModeSymlink {
		t.Errorf("Lstat = %v, %v; want the link itself", info, err)
	}
}

// TestMountReadsAsSafeioDoes checks the limits a read from the disk has.
func TestMountReadsAsSafeioDoes(t *testing.T) {
	fsys := project()
	data, err := fsys.ReadFile(p("/m/app/chain.yaml"), 100)
	if err != nil || string(data) != "kind: Broker\n" {
		t.Errorf("ReadFile through links = %q, %v", data, err)
	}
	if _, err := fsys.ReadFile(p("/m/app/broker.yaml"), 4); !errors.Is(err, safeio.ErrTooLarge) {
		t.Errorf("ReadFile over the limit = %v, want safeio.ErrTooLarge", err)
	}
	if _, err := fsys.ReadFile(p("/m/app"), 100); !errors.Is(err, safeio.ErrNotRegular) {
		t.Errorf("ReadFile of a directory = %v, want safeio.ErrNotRegular", err)
	}
	if err := inputfs.Within(fsys, p("/m/app"), p("/m/app/chain.yaml")); err != nil {
		t.Errorf("Within for a link inside = %v", err)
	}
	if err := inputfs.Within(fsys, p("/m/app"), p("/m/app/to-other.yml")); !errors.Is(err, safeio.ErrLinkOutside) {
		t.Errorf("Within for a link out of the root = %v, want safeio.ErrLinkOutside", err)
	}
}

// TestMountWalksAsWalkDir walks in lexical order, following the root
// when it is a link given with a trailing separator, as filepath.WalkDir
// does on a disk.
func TestMountWalksAsWalkDir(t *testing.T) {
	fsys := project()
	var got []string
	err := fsys.WalkDir(p("/m/app/shared")+string(filepath.Separator), func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		got = append(got, filepath.ToSlash(path))
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff([]string{"/m/app/shared/", "/m/app/shared/a.yaml"}, got); diff != "" {
		t.Errorf("walk (-want +got):\n%s", diff)
	}
}
