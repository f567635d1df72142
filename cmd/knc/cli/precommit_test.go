package cli

import (
	"bytes"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/rogpeppe/go-internal/testscript"
	"go.yaml.in/yaml/v3"
)

// hooksFile is the repository's pre-commit hook manifest.
const hooksFile = "../../../.pre-commit-hooks.yaml"

// preCommitHook is an entry of .pre-commit-hooks.yaml: the fields with
// which pre-commit decides whether to run a hook and what to run
// (https://pre-commit.com/#new-hooks). A missing field has pre-commit's
// default, which readHooks fills in.
type preCommitHook struct {
	ID            string   `yaml:"id"`
	Entry         string   `yaml:"entry"`
	Args          []string `yaml:"args"`
	Language      string   `yaml:"language"`
	Files         string   `yaml:"files"`
	Exclude       string   `yaml:"exclude"`
	Types         []string `yaml:"types"`
	TypesOr       []string `yaml:"types_or"`
	ExcludeTypes  []string `yaml:"exclude_types"`
	PassFilenames *bool    `yaml:"pass_filenames"`
	AlwaysRun     bool     `yaml:"always_run"`
}

func readHooks() ([]preCommitHook, error) {
	data, err := os.ReadFile(hooksFile)
	if err != nil {
		return nil, err
	}
	var hooks []preCommitHook
	if err := yaml.Unmarshal(data, &hooks); err != nil {
		return nil, err
	}
	for i := range hooks {
		h := &hooks[i]
		if h.Exclude == "" {
			h.Exclude = "^$"
		}
		if h.Types == nil {
			h.Types = []string{"file"}
		}
		if h.PassFilenames == nil {
			pass := true
			h.PassFilenames = &pass
		}
	}
	return hooks, nil
}

func findHook(id string) (preCommitHook, error) {
	hooks, err := readHooks()
	if err != nil {
		return preCommitHook{}, err
	}
	for _, h := range hooks {
		if h.ID == id {
			return h, nil
		}
	}
	return preCommitHook{}, fs.ErrNotExist
}

// selectFiles lists the files of the repository in dir that the hook is
// run on, relative to dir with forward slashes, as pre-commit matches them
// (its files and exclude patterns are searched for, not anchored). Every
// file is of type "file"; the hooks name no other type, and a hook that
// does is an error here rather than a guess.
func (h preCommitHook) selectFiles(dir string) ([]string, error) {
	for _, t := range slices.Concat(h.Types, h.TypesOr, h.ExcludeTypes) {
		if t != "file" {
			return nil, &unknownTypeError{hook: h.ID, typ: t}
		}
	}
	files, err := regexp.Compile(h.Files)
	if err != nil {
		return nil, err
	}
	exclude, err := regexp.Compile(h.Exclude)
	if err != nil {
		return nil, err
	}
	var out []string
	err = filepath.WalkDir(dir, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() && d.Name() == ".git" {
			return filepath.SkipDir
		}
		if !d.Type().IsRegular() {
			return nil
		}
		rel, err := filepath.Rel(dir, path)
		if err != nil {
			return err
		}
		rel = filepath.ToSlash(rel)
		if files.MatchString(rel) && !exclude.MatchString(rel) {
			out = append(out, rel)
		}
		return nil
	})
	return out, err
}

type unknownTypeError struct{ hook, typ string }

func (e *unknownTypeError) Error() string {
	return "hook " + e.hook + " names file type " + e.typ + ", which this emulation of pre-commit does not identify"
}

// command is what pre-commit runs: the entry, split into words, then the
// args (args replaces the manifest's default args, as the args of a
// .pre-commit-config.yaml do), then the selected files when the hook takes
// file names. The entries are plain words; pre-commit splits them as a
// shell would, which for plain words is the same.
func (h preCommitHook) command(args, files []string) ([]string, error) {
	if strings.ContainsAny(h.Entry, `"'\`) {
		return nil, &quotedEntryError{h.ID}
	}
	argv := strings.Fields(h.Entry)
	if args == nil {
		args = h.Args
	}
	argv = append(argv, args...)
	if *h.PassFilenames {
		argv = append(argv, files...)
	}
	return argv, nil
}

type quotedEntryError struct{ hook string }

func (e *quotedEntryError) Error() string {
	return "hook " + e.hook + " has quotes in its entry; split it as shlex does"
}

// cmdPreCommit runs a hook of .pre-commit-hooks.yaml on the script's
// current directory as `pre-commit run --all-files ID` would, with the knc
// on the script's PATH: precommit ID [ARG...]. ARGs, when given, replace
// the hook's default args. A hook that no file selects is skipped, as
// pre-commit skips it, and says so on stdout.
func cmdPreCommit(ts *testscript.TestScript, neg bool, args []string) {
	if len(args) < 1 {
		ts.Fatalf("usage: precommit ID [ARG...]")
	}
	hook, err := findHook(args[0])
	if err != nil {
		ts.Fatalf("precommit: no hook %q in %s: %v", args[0], hooksFile, err)
	}
	// A golang hook runs the knc pre-commit installed, a system hook the
	// one on PATH; both are the knc on the script's PATH here.
	if hook.Language != "golang" && hook.Language != "system" {
		ts.Fatalf("precommit: hook %s is language %q; only golang and system hooks run knc", hook.ID, hook.Language)
	}
	files, err := hook.selectFiles(ts.MkAbs("."))
	ts.Check(err)
	if len(files) == 0 && !hook.AlwaysRun {
		if neg {
			ts.Fatalf("precommit: hook %s selects no file, and pre-commit skips it", hook.ID)
		}
		ts.Check(ts.Exec("echo", hook.ID+": (no files to check) Skipped"))
		return
	}
	var override []string
	if len(args) > 1 {
		override = args[1:]
	}
	argv, err := hook.command(override, files)
	ts.Check(err)
	err = ts.Exec(argv[0], argv[1:]...)
	switch {
	case neg && err == nil:
		ts.Fatalf("precommit: hook %s passed", hook.ID)
	case !neg && err != nil:
		ts.Fatalf("precommit: hook %s failed: %v", hook.ID, err)
	}
}

// TestPreCommitInstall installs the hooks as pre-commit's golang language
// does: go install ./... in the repository, with a GOPATH of the hook
// environment's own and no GOBIN, which puts the binaries in GOPATH/bin,
// the directory pre-commit adds to PATH. Only knc and knc-runtime may land there, and the
// hooks must then pass on the GitOps fixture. The module and build caches
// are the test's own, so that nothing is downloaded again.
func TestPreCommitInstall(t *testing.T) {
	if testing.Short() {
		t.Skip("links knc, which takes seconds; make test runs it")
	}
	goTool, err := exec.LookPath("go")
	if err != nil {
		t.Fatalf("pre-commit's golang hooks need go on PATH: %v", err)
	}
	caches := map[string]string{}
	for _, v := range []string{"GOMODCACHE", "GOCACHE"} {
		out, err := exec.Command(goTool, "env", v).Output()
		if err != nil {
			t.Fatalf("go env %s: %v", v, err)
		}
		caches[v] = strings.TrimSpace(string(out))
	}
	gopath := t.TempDir()
	env := slices.DeleteFunc(os.Environ(), func(kv string) bool {
		return strings.HasPrefix(kv, "GOBIN=") || strings.HasPrefix(kv, "GOPATH=")
	})
	env = append(env, "GOPATH="+gopath, "GOMODCACHE="+caches["GOMODCACHE"], "GOCACHE="+caches["GOCACHE"])
	install := exec.Command(goTool, "install", "./...")
	install.Dir = "../../.."
	install.Env = env
	if out, err := install.CombinedOutput(); err != nil {
		t.Fatalf("go install ./...: %v\n%s", err, out)
	}
	bin := filepath.Join(gopath, "bin")
	entries, err := os.ReadDir(bin)
	if err != nil {
		t.Fatal(err)
	}
	var installed []string
	for _, e := range entries {
		installed = append(installed, e.Name())
	}
	// knc-draw and knc-runtime, the binaries that lay out drawings and
	// serve the runtime, land beside it: no hook runs them, and they do
	// nothing unless started.
	if want := []string{"knc", "knc-draw", "knc-runtime"}; !slices.Equal(installed, want) {
		t.Fatalf("go install ./... put %v in GOPATH/bin, want %v: pre-commit would install them all", installed, want)
	}

	repo := t.TempDir()
	if err := os.CopyFS(repo, os.DirFS("testdata/gitops")); err != nil {
		t.Fatal(err)
	}
	// Only the hook environment's bin, so that no other knc is found.
	hookEnv := append(slices.DeleteFunc(slices.Clone(os.Environ()), func(kv string) bool {
		return strings.HasPrefix(kv, "PATH=")
	}), "PATH="+bin)
	// knc-build-check compares with the committed build, each deploy unit
	// in its subdirectory of deploy.
	build := exec.Command(filepath.Join(bin, "knc"), "build", ".", "-o", "deploy")
	build.Dir = repo
	build.Env = hookEnv
	if out, err := build.CombinedOutput(); err != nil {
		t.Fatalf("knc build . -o deploy: %v\n%s", err, out)
	}
	for _, id := range []string{"knc-validate", "knc-build-check", "knc-test", "knc-validate-system", "knc-build-check-system", "knc-test-system"} {
		hook, err := findHook(id)
		if err != nil {
			t.Fatalf("%s: %v", id, err)
		}
		files, err := hook.selectFiles(repo)
		if err != nil {
			t.Fatal(err)
		}
		if len(files) == 0 {
			t.Fatalf("hook %s selects no file of the fixture, so pre-commit would skip it", id)
		}
		argv, err := hook.command(nil, files)
		if err != nil {
			t.Fatal(err)
		}
		cmd := exec.Command(filepath.Join(bin, argv[0]), argv[1:]...)
		cmd.Dir = repo
		cmd.Env = hookEnv
		var stderr bytes.Buffer
		cmd.Stderr = &stderr
		if err := cmd.Run(); err != nil {
			t.Errorf("hook %s (%s): %v\n%s", id, strings.Join(argv, " "), err, stderr.String())
		}
	}
}

// TestSystemHooksTwinTheGolangHooks holds every hook that builds knc to a
// twin, its ID ending in -system, that runs the installed knc the same
// way: same entry, args and files, so that choosing one over the other
// changes only where knc comes from.
func TestSystemHooksTwinTheGolangHooks(t *testing.T) {
	hooks, err := readHooks()
	if err != nil {
		t.Fatal(err)
	}
	byID := map[string]preCommitHook{}
	for _, h := range hooks {
		byID[h.ID] = h
	}
	golang := 0
	for _, h := range hooks {
		if h.Language != "golang" {
			continue
		}
		golang++
		twin, ok := byID[h.ID+"-system"]
		if !ok {
			t.Errorf("hook %s has no twin %s-system", h.ID, h.ID)
			continue
		}
		if twin.Language != "system" {
			t.Errorf("hook %s: language %q, want system", twin.ID, twin.Language)
		}
		type run struct {
			Entry, Files, Exclude string
			Args                  []string
			PassFilenames         bool
		}
		want := run{h.Entry, h.Files, h.Exclude, h.Args, *h.PassFilenames}
		got := run{twin.Entry, twin.Files, twin.Exclude, twin.Args, *twin.PassFilenames}
		if diff := cmp.Diff(want, got); diff != "" {
			t.Errorf("hook %s runs differently from %s (-%s +%s):\n%s", twin.ID, h.ID, h.ID, twin.ID, diff)
		}
	}
	if golang == 0 {
		t.Fatal("no golang hook in " + hooksFile)
	}
}
