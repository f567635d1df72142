package cli

import (
	"archive/tar"
	"bytes"
	"compress/gzip"
	"crypto/sha256"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"regexp"
	"strings"
	"testing"
)

// readmeFile is the repository's README.
const readmeFile = "../../../README.md"

// TestREADMEInstallCommands runs the commands of the README's install
// section, as a reader pastes them into a shell, against a release served
// on loopback in place of GitHub's: they download the archive and
// checksums.txt, verify the one against the other, unpack knc and run it.
// A tampered archive must stop them before knc is unpacked.
func TestREADMEInstallCommands(t *testing.T) {
	for _, tool := range []string{"bash", "curl", "sha256sum", "tar"} {
		if _, err := exec.LookPath(tool); err != nil {
			t.Skipf("the README's install commands need %s, which is not installed here", tool)
		}
	}
	data, err := os.ReadFile(readmeFile)
	if err != nil {
		t.Fatal(err)
	}
	install := string(data)
	start := strings.Index(install, "\n## Install\n")
	if start < 0 {
		t.Fatal("the README has no Install section")
	}
	install = install[start:]
	block := regexp.MustCompile("(?s)```sh\n(.*?)```").FindStringSubmatch(install)
	if block == nil {
		t.Fatal("the README's Install section has no sh block")
	}
	script := block[1]
	const github = "https://github.com/knc-dev/knc/releases"
	if !strings.Contains(script, github) {
		t.Fatalf("the install commands do not download from %s:\n%s", github, script)
	}
	version := regexp.MustCompile(`version=v([0-9.]+)`).FindStringSubmatch(script)
	if version == nil {
		t.Fatalf("the install commands set no version=vX.Y.Z:\n%s", script)
	}

	for _, tamper := range []bool{false, true} {
		t.Run(fmt.Sprintf("tampered=%v", tamper), func(t *testing.T) {
			files := map[string][]byte{}
			var sums strings.Builder
			for _, osArch := range []string{"linux_amd64", "linux_arm64", "darwin_amd64", "darwin_arm64"} {
				name := "knc_" + version[1] + "_" + osArch + ".tar.gz"
				archive := knownKncArchive(t, "knc v"+version[1])
				fmt.Fprintf(&sums, "%x  %s\n", sha256.Sum256(archive), name)
				if tamper {
					archive = knownKncArchive(t, "tampered")
				}
				files["/download/v"+version[1]+"/"+name] = archive
			}
			files["/download/v"+version[1]+"/checksums.txt"] = []byte(sums.String())
			srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				b, ok := files[r.URL.Path]
				if !ok {
					http.NotFound(w, r)
					return
				}
				_, _ = w.Write(b)
			}))
			defer srv.Close()

			dir := t.TempDir()
			cmd := exec.Command("bash", "--noprofile", "--norc", "-eo", "pipefail", "-c", strings.ReplaceAll(script, github, srv.URL))
			cmd.Dir = dir
			out, err := cmd.CombinedOutput()
			if tamper {
				if err == nil {
					t.Fatalf("the install commands went on with a tampered archive:\n%s", out)
				}
				if _, statErr := os.Stat(dir + "/knc"); statErr == nil {
					t.Errorf("knc was unpacked from a tampered archive:\n%s", out)
				}
				return
			}
			if err != nil {
				t.Fatalf("the install commands failed: %v\n%s", err, out)
			}
			if !strings.Contains(string(out), "knc v"+version[1]) {
				t.Errorf("./knc version did not run the installed knc; output:\n%s", out)
			}
			if _, err := os.Stat(dir + "/knc-draw"); err != nil {
				t.Errorf("knc-draw was not unpacked beside knc, where knc graph looks for it: %v", err)
			}
		})
	}
}

// knownKncArchive is a release archive whose knc (and knc-draw) is a
// script printing line.
func knownKncArchive(t *testing.T, line string) []byte {
	t.Helper()
	script := []byte("#!/bin/sh\necho '" + line + "'\n")
	var buf bytes.Buffer
	gz := gzip.NewWriter(&buf)
	tw := tar.NewWriter(gz)
	// knc-draw, which lays out drawings, comes in the same archive.
	for _, name := range []string{"knc", "knc-draw"} {
		if err := tw.WriteHeader(&tar.Header{Name: name, Mode: 0o755, Size: int64(len(script))}); err != nil {
			t.Fatal(err)
		}
		if _, err := tw.Write(script); err != nil {
			t.Fatal(err)
		}
	}
	if err := tw.Close(); err != nil {
		t.Fatal(err)
	}
	if err := gz.Close(); err != nil {
		t.Fatal(err)
	}
	return buf.Bytes()
}
