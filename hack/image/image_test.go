package main

import (
	"archive/tar"
	"bytes"
	"errors"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"syscall"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-containerregistry/pkg/compression"
	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/google/go-containerregistry/pkg/v1/layout"
	"github.com/google/go-containerregistry/pkg/v1/mutate"
)

// TestImage checks the image `make image` wrote (make image-test passes
// its layout in KNC_IMAGE_LAYOUT): one image per platform, each with one
// layer compressed as KNC_IMAGE_COMPRESSION says (zstd by default), each running
// knc-runtime as user 65532 with the OCI labels of its commit, and the
// image of this machine's platform runs it from its own root file system,
// with the arguments knc build renders and with those of knc runtime
// before it.
func TestImage(t *testing.T) {
	dir := os.Getenv("KNC_IMAGE_LAYOUT")
	if dir == "" {
		t.Fatal("KNC_IMAGE_LAYOUT is not set: run make image-test, which builds the image and passes its layout")
	}
	p, err := layout.FromPath(dir)
	if err != nil {
		t.Fatal(err)
	}
	idx, err := p.ImageIndex()
	if err != nil {
		t.Fatal(err)
	}
	manifest, err := idx.IndexManifest()
	if err != nil {
		t.Fatal(err)
	}
	var platforms []string
	var native v1.Image
	for _, desc := range manifest.Manifests {
		platform := desc.Platform.OS + "/" + desc.Platform.Architecture
		platforms = append(platforms, platform)
		img, err := idx.Image(desc.Digest)
		if err != nil {
			t.Fatal(err)
		}
		cfg, err := img.ConfigFile()
		if err != nil {
			t.Fatal(err)
		}
		if cfg.OS != desc.Platform.OS || cfg.Architecture != desc.Platform.Architecture {
			t.Errorf("%s: the config says %s/%s", platform, cfg.OS, cfg.Architecture)
		}
		if cfg.Config.User != "65532:65532" {
			t.Errorf("%s: user %q, want 65532:65532", platform, cfg.Config.User)
		}
		if diff := cmp.Diff([]string{"/knc-runtime"}, cfg.Config.Entrypoint); diff != "" {
			t.Errorf("%s: entrypoint (-want +got):\n%s", platform, diff)
		}
		for label, want := range map[string]string{
			"org.opencontainers.image.source":   "https://github.com/knc-dev/knc",
			"org.opencontainers.image.revision": os.Getenv("KNC_IMAGE_REVISION"),
			"org.opencontainers.image.version":  os.Getenv("KNC_IMAGE_VERSION"),
		} {
			if got := cfg.Config.Labels[label]; got != want || want == "" {
				t.Errorf("%s: label %s is %q, want %q", platform, label, got, want)
			}
		}
		checkLayer(t, platform, img)
		if desc.Platform.OS == runtime.GOOS && desc.Platform.Architecture == runtime.GOARCH {
			native = img
		}
	}
	want := []string{"linux/amd64", "linux/arm64"}
	if p := os.Getenv("KNC_IMAGE_PLATFORMS"); p != "" {
		want = strings.Fields(p)
	}
	if diff := cmp.Diff(want, platforms); diff != "" {
		t.Errorf("platforms (-want +got):\n%s", diff)
	}
	if native == nil {
		t.Fatalf("no image for %s/%s to run", runtime.GOOS, runtime.GOARCH)
	}

	// The root of the image is /, which its user must be able to enter.
	root := filepath.Join(t.TempDir(), "root")
	if err := os.Mkdir(root, 0o755); err != nil {
		t.Fatal(err)
	}
	unpack(t, native, root)
	passwd, err := os.ReadFile(filepath.Join(root, "etc/passwd"))
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(passwd), "nonroot:x:65532:65532:") {
		t.Errorf("/etc/passwd has no user 65532:\n%s", passwd)
	}
	out := runInImage(t, root, "--version")
	for _, want := range []string{"knc-runtime " + os.Getenv("KNC_IMAGE_VERSION") + "\n", "commit: " + os.Getenv("KNC_IMAGE_REVISION") + "\n", "go: go1."} {
		if !strings.Contains(out, want) {
			t.Errorf("knc-runtime --version in the image printed\n%s\nwithout %q", out, want)
		}
	}
	for _, args := range [][]string{{"--help"}, {"runtime", "--help"}} {
		out = runInImage(t, root, args...)
		if !strings.Contains(out, "--table") {
			t.Errorf("knc-runtime %s in the image printed\n%s", strings.Join(args, " "), out)
		}
	}
}

// checkLayer checks that img has one layer, whose media type names the
// compression KNC_IMAGE_COMPRESSION asked for and whose bytes are in it.
func checkLayer(t *testing.T, platform string, img v1.Image) {
	t.Helper()
	name := os.Getenv("KNC_IMAGE_COMPRESSION")
	if name == "" {
		name = "zstd"
	}
	want, err := layerCodec(name)
	if err != nil {
		t.Fatal(err)
	}
	layers, err := img.Layers()
	if err != nil {
		t.Fatal(err)
	}
	if len(layers) != 1 {
		t.Fatalf("%s: %d layers, want 1", platform, len(layers))
	}
	mt, err := layers[0].MediaType()
	if err != nil {
		t.Fatal(err)
	}
	if mt != want.mediaType {
		t.Errorf("%s: the layer's media type is %s, want %s", platform, mt, want.mediaType)
	}
	rc, err := layers[0].Compressed()
	if err != nil {
		t.Fatal(err)
	}
	defer rc.Close()
	head := make([]byte, 4)
	if _, err := io.ReadFull(rc, head); err != nil {
		t.Fatal(err)
	}
	// The magic numbers of RFC 1952 (gzip) and RFC 8878 (zstd).
	magic := map[compression.Compression][]byte{
		compression.GZip: {0x1f, 0x8b},
		compression.ZStd: {0x28, 0xb5, 0x2f, 0xfd},
	}[want.algorithm]
	if !bytes.HasPrefix(head, magic) {
		t.Errorf("%s: the layer starts % x, not %s's magic number % x", platform, head, want.algorithm, magic)
	}
}

// runInImage runs the image's entrypoint with args, chrooted into root,
// with nothing from the host's environment. As root it runs as the image's
// user; otherwise it chroots inside a user namespace of its own, where the
// one user it can map is the caller.
func runInImage(t *testing.T, root string, args ...string) string {
	t.Helper()
	cmd := exec.Command("/knc-runtime", args...)
	cmd.Dir = "/"
	cmd.Env = []string{"PATH=/", "HOME=/home/nonroot"}
	if os.Geteuid() == 0 {
		cmd.SysProcAttr = &syscall.SysProcAttr{Chroot: root, Credential: &syscall.Credential{Uid: 65532, Gid: 65532}}
	} else {
		cmd.SysProcAttr = &syscall.SysProcAttr{
			Chroot:      root,
			Cloneflags:  syscall.CLONE_NEWUSER,
			UidMappings: []syscall.SysProcIDMap{{ContainerID: 0, HostID: os.Getuid(), Size: 1}},
			GidMappings: []syscall.SysProcIDMap{{ContainerID: 0, HostID: os.Getgid(), Size: 1}},
		}
	}
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("knc-runtime %s in the image (chroot needs root, or unprivileged user namespaces): %v\n%s", strings.Join(args, " "), err, out)
	}
	return string(out)
}

// unpack writes the image's file system into dir.
func unpack(t *testing.T, img v1.Image, dir string) {
	t.Helper()
	rc := mutate.Extract(img)
	defer rc.Close()
	tr := tar.NewReader(rc)
	for {
		h, err := tr.Next()
		if errors.Is(err, io.EOF) {
			return
		}
		if err != nil {
			t.Fatal(err)
		}
		p := filepath.Join(dir, filepath.FromSlash(h.Name))
		if !strings.HasPrefix(p, dir+string(filepath.Separator)) {
			t.Fatalf("entry %q leaves the root", h.Name)
		}
		mode := os.FileMode(h.Mode & 0o777)
		switch h.Typeflag {
		case tar.TypeDir:
			if err := os.MkdirAll(p, mode); err != nil {
				t.Fatal(err)
			}
		case tar.TypeReg:
			f, err := os.OpenFile(p, os.O_CREATE|os.O_WRONLY|os.O_TRUNC, mode)
			if err != nil {
				t.Fatal(err)
			}
			if _, err := io.Copy(f, tr); err != nil {
				t.Fatal(err)
			}
			if err := f.Close(); err != nil {
				t.Fatal(err)
			}
		default:
			t.Fatalf("unexpected entry %q of type %c", h.Name, h.Typeflag)
		}
		if err := os.Lchown(p, h.Uid, h.Gid); err != nil && os.Geteuid() == 0 {
			t.Fatal(err)
		}
		if err := os.Chmod(p, mode); err != nil {
			t.Fatal(err)
		}
	}
}
