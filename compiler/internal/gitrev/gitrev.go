package gitrev

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path"
	"path/filepath"
	"strconv"
	"strings"
)

// Errors callers can tell apart.
var (
	// ErrNoGit is returned when the git command cannot be found.
	ErrNoGit = errors.New("git command not found")
	// ErrNotRepository is returned for a directory outside any git work tree.
	ErrNotRepository = errors.New("not inside a git work tree")
	// ErrUnknownRevision is returned when a revision names no commit this
	// repository holds.
	ErrUnknownRevision = errors.New("unknown revision")
)

// Repo is a git work tree.
type Repo struct {
	root string
}

// Open finds the work tree dir belongs to.
func Open(ctx context.Context, dir string) (*Repo, error) {
	if _, err := exec.LookPath("git"); err != nil {
		return nil, fmt.Errorf("%w: install git, or run knc where it is on PATH", ErrNoGit)
	}
	out, err := git(ctx, dir, nil, "rev-parse", "--show-toplevel")
	if err != nil {
		var ge *gitError
		if errors.As(err, &ge) && strings.Contains(ge.stderr, "not a git repository") {
			return nil, fmt.Errorf("%s: %w", dir, ErrNotRepository)
		}
		return nil, err
	}
	root := strings.TrimSpace(string(out))
	if root == "" {
		// A bare repository has no top level: nothing to compare with.
		return nil, fmt.Errorf("%s: %w", dir, ErrNotRepository)
	}
	// Compare paths as the file system resolves them: on some systems the
	// temporary directory is behind a symbolic link, and git reports the
	// resolved path.
	if resolved, err := filepath.EvalSymlinks(root); err == nil {
		root = resolved
	}
	return &Repo{root: filepath.Clean(root)}, nil
}

// Root returns the top directory of the work tree.
func (r *Repo) Root() string { return r.root }

// Rel returns p (absolute, or relative to the working directory) as a
// slash-separated path relative to the work tree's root. It fails for a
// path outside the work tree.
func (r *Repo) Rel(p string) (string, error) {
	abs, err := filepath.Abs(p)
	if err != nil {
		return "", err
	}
	abs = resolveExisting(abs)
	rel, err := filepath.Rel(r.root, abs)
	if err != nil || rel == ".." || strings.HasPrefix(rel, ".."+string(filepath.Separator)) {
		return "", fmt.Errorf("%s is outside the git work tree %s", p, r.root)
	}
	return filepath.ToSlash(rel), nil
}

// resolveExisting resolves symbolic links in the longest existing prefix of
// p, so that a path that does not exist (any more) is still placed right.
func resolveExisting(p string) string {
	var rest []string
	for {
		if resolved, err := filepath.EvalSymlinks(p); err == nil {
			return filepath.Join(append([]string{resolved}, rest...)...)
		}
		parent := filepath.Dir(p)
		if parent == p {
			return filepath.Join(append([]string{p}, rest...)...)
		}
		rest = append([]string{filepath.Base(p)}, rest...)
		p = parent
	}
}

// Commit resolves rev to the full name of a commit. When the commit is
// missing from a shallow clone, the error says so and how to fetch it.
func (r *Repo) Commit(ctx context.Context, rev string) (string, error) {
	if rev == "" || strings.HasPrefix(rev, "-") {
		return "", fmt.Errorf("%w %q: a revision is a commit, branch or tag name", ErrUnknownRevision, rev)
	}
	out, err := git(ctx, r.root, nil, "rev-parse", "--verify", "--quiet", "--end-of-options", rev+"^{commit}")
	if err == nil {
		return strings.TrimSpace(string(out)), nil
	}
	var ge *gitError
	if !errors.As(err, &ge) {
		return "", err
	}
	shallow, serr := r.Shallow(ctx)
	if serr != nil {
		return "", errors.Join(fmt.Errorf("%w %q", ErrUnknownRevision, rev), serr)
	}
	if shallow {
		return "", fmt.Errorf("%w %q: this is a shallow clone and the commit is not in it; "+
			"fetch more history with 'git fetch --deepen=50' (repeat until it is found) or 'git fetch --unshallow', "+
			"or on GitHub Actions check out with actions/checkout's fetch-depth: 0", ErrUnknownRevision, rev)
	}
	return "", fmt.Errorf("%w %q: no such commit, branch or tag in %s (fetch it first if it lives on a remote)", ErrUnknownRevision, rev, r.root)
}

// Shallow reports whether the repository is a shallow clone.
func (r *Repo) Shallow(ctx context.Context) (bool, error) {
	out, err := git(ctx, r.root, nil, "rev-parse", "--is-shallow-repository")
	if err != nil {
		return false, err
	}
	return strings.TrimSpace(string(out)) == "true", nil
}

type treeEntry struct {
	mode, object, path string
	size               int64
}

// list runs git ls-tree over the whole tree of commit, with the size of
// each file.
func (r *Repo) list(ctx context.Context, commit string) ([]treeEntry, error) {
	out, err := git(ctx, r.root, nil, "ls-tree", "-r", "-l", "-z", "--full-tree", commit)
	if err != nil {
		return nil, fmt.Errorf("listing the tree of %s: %w", short(commit), err)
	}
	var entries []treeEntry
	for rec := range bytes.SplitSeq(out, []byte{0}) {
		if len(rec) == 0 {
			continue
		}
		// <mode> SP <type> SP <object> SP+ <size> TAB <path>
		meta, p, ok := strings.Cut(string(rec), "\t")
		if !ok {
			return nil, fmt.Errorf("unexpected git ls-tree output %q", rec)
		}
		fields := strings.Fields(meta)
		if len(fields) != 4 {
			return nil, fmt.Errorf("unexpected git ls-tree output %q", rec)
		}
		if fields[1] != "blob" {
			// Submodules are other repositories: not part of this project.
			continue
		}
		size, err := strconv.ParseInt(fields[3], 10, 64)
		if err != nil {
			return nil, fmt.Errorf("unexpected git ls-tree output %q", rec)
		}
		entries = append(entries, treeEntry{mode: fields[0], object: fields[2], path: p, size: size})
	}
	return entries, nil
}

// ErrMalformedTree is returned for a tree that git fsck would flag and git
// fetch still accepts: a path with "..", an absolute path, or a symbolic
// link with files below the same name.
var ErrMalformedTree = errors.New("malformed git tree")

// checkEntries refuses a tree whose files a checkout would write anywhere
// but at their own path below the work tree, as git fsck does: a reader of
// the tree would otherwise see files where no checkout puts them.
func checkEntries(entries []treeEntry, commit string) error {
	links := map[string]bool{}
	seen := map[string]bool{}
	var errs []error
	for _, e := range entries {
		if !localPath(e.path) {
			errs = append(errs, fmt.Errorf("%w at %s: entry %q is not a relative path of plain names", ErrMalformedTree, short(commit), e.path))
			continue
		}
		if seen[e.path] {
			errs = append(errs, fmt.Errorf("%w at %s: entry %q appears twice", ErrMalformedTree, short(commit), e.path))
		}
		seen[e.path] = true
		if e.mode == "120000" {
			links[e.path] = true
		}
	}
	for _, e := range entries {
		for dir := path.Dir(e.path); dir != "." && dir != "/"; dir = path.Dir(dir) {
			if links[dir] {
				errs = append(errs, fmt.Errorf("%w at %s: %q is a symbolic link and %q would be written through it", ErrMalformedTree, short(commit), dir, e.path))
				break
			}
		}
	}
	return errors.Join(errs...)
}

// localPath reports whether p is a slash-separated path of names, none of
// them empty, "." or "..", with no backslash (a separator elsewhere).
func localPath(p string) bool {
	if p == "" || strings.ContainsAny(p, "\\\x00") {
		return false
	}
	for name := range strings.SplitSeq(p, "/") {
		if name == "" || name == "." || name == ".." {
			return false
		}
	}
	return true
}

// gitError is a failed git command with what it said.
type gitError struct {
	args   []string
	stderr string
	err    error
}

func (e *gitError) Error() string {
	msg := strings.TrimSpace(e.stderr)
	if msg == "" {
		msg = e.err.Error()
	}
	return fmt.Sprintf("git %s: %s", strings.Join(e.args, " "), msg)
}

func (e *gitError) Unwrap() error { return e.err }

func command(ctx context.Context, dir string, args ...string) *exec.Cmd {
	// Literal pathspecs: a path is a path, never a glob or a :(magic).
	cmd := exec.CommandContext(ctx, "git", append([]string{"--literal-pathspecs", "-C", dir}, args...)...)
	// Never wait for a password, and read messages in one language.
	cmd.Env = append(os.Environ(), "GIT_TERMINAL_PROMPT=0", "LC_ALL=C")
	return cmd
}

func git(ctx context.Context, dir string, stdin io.Reader, args ...string) ([]byte, error) {
	cmd := command(ctx, dir, args...)
	cmd.Stdin = stdin
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Run(); err != nil {
		if ctx.Err() != nil {
			return nil, ctx.Err()
		}
		var ee *exec.ExitError
		if errors.As(err, &ee) {
			return nil, &gitError{args: args, stderr: stderr.String(), err: err}
		}
		return nil, err
	}
	return stdout.Bytes(), nil
}

func short(commit string) string {
	if len(commit) > 12 {
		return commit[:12]
	}
	return commit
}
