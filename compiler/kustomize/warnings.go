package kustomize

import (
	"bufio"
	"io"
	"log"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"sync"

	"go.yaml.in/yaml/v3"
	"sigs.k8s.io/kustomize/api/types"
	sigsyaml "sigs.k8s.io/yaml"

	"github.com/knc-dev/knc/compiler/diag"
	"github.com/knc-dev/knc/compiler/load"
	"github.com/knc-dev/knc/internal/inputfs"
)

// deprecation is kustomize's warning for a field it deprecated: 'FIELD'
// is deprecated ... 'REPLACEMENT'.
var deprecation = regexp.MustCompile(`'([A-Za-z0-9]+)' is deprecated\. Please use '([A-Za-z0-9]+)'`)

// deprecationWarnings are warnings at the deprecated fields of the
// kustomization files among files, as kustomize finds them: the same
// whichever renderer built the kustomization, where kustomize itself
// writes its own to stderr while it builds.
func deprecationWarnings(fsys inputfs.FS, files []string, rel func(string) string) diag.List {
	var warnings diag.List
	for _, f := range files {
		if !slices.Contains(load.KustomizationFileNames, filepath.Base(f)) {
			continue
		}
		text, err := fsys.ReadFile(f, load.MaxFileBytes)
		if err != nil {
			continue // the build has read it, or said why not
		}
		var k types.Kustomization
		if err := sigsyaml.Unmarshal(text, &k); err != nil {
			continue
		}
		msgs := k.CheckDeprecatedFields()
		if msgs == nil {
			continue
		}
		var root yaml.Node
		_ = yaml.Unmarshal(text, &root)
		for _, msg := range *msgs {
			m := deprecation.FindStringSubmatch(msg)
			if m == nil {
				warnings.AddWarning(diag.Pos{File: rel(f), Line: 1, Column: 1}, "", "kustomize: %s", strings.TrimPrefix(msg, "# Warning: "))
				continue
			}
			field, use := m[1], m[2]
			warnings.AddWarning(keyPos(&root, rel(f), field), field,
				"deprecated by kustomize; use %s instead (kustomize edit fix rewrites the file)", use)
		}
	}
	return warnings
}

// keyPos is the position of a top-level key of the YAML document root,
// or the start of the file.
func keyPos(root *yaml.Node, file, key string) diag.Pos {
	pos := diag.Pos{File: file, Line: 1, Column: 1}
	if len(root.Content) == 0 || root.Content[0].Kind != yaml.MappingNode {
		return pos
	}
	m := root.Content[0]
	for i := 0; i+1 < len(m.Content); i += 2 {
		if m.Content[i].Value == key {
			return diag.Pos{File: file, Line: m.Content[i].Line, Column: m.Content[i].Column}
		}
	}
	return pos
}

// captureOutput runs build with the process's stderr and the standard
// logger sent to a pipe, and returns the lines written there: krusty
// writes warnings to both itself, which knc reports as diagnostics
// instead. The caller holds buildMu, so no other build runs meanwhile;
// knc's own output goes to writers chosen before any build.
func captureOutput(build func()) (lines []string) {
	r, w, err := os.Pipe()
	if err != nil {
		build()
		return nil
	}
	var written []string
	var read sync.WaitGroup
	read.Go(func() {
		sc := bufio.NewScanner(r)
		sc.Buffer(make([]byte, 64<<10), 1<<20)
		for sc.Scan() {
			if line := strings.TrimSpace(sc.Text()); line != "" {
				written = append(written, line)
			}
		}
		_, _ = io.Copy(io.Discard, r)
	})
	stderr, logOut, logFlags := os.Stderr, log.Writer(), log.Flags()
	os.Stderr = w
	log.SetOutput(w)
	log.SetFlags(0)
	defer func() {
		os.Stderr = stderr
		log.SetOutput(logOut)
		log.SetFlags(logFlags)
		_ = w.Close()
		read.Wait()
		_ = r.Close()
		lines = written
	}()
	build()
	return nil
}
