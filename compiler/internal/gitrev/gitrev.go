package gitrev

import (
	"bufio"
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

// Select says which files of a tree to extract.
type Select struct {
	// Paths are slash-separated paths relative to the root: files, or
	// directories taken with everything below them. "." is the whole tree.
	Paths []string
	// Keep reports whether a file found below one of Paths is wanted; nil
	// keeps all. Files named in Paths themselves are always kept.
	Keep func(file string) bool
}

// Extract writes the files sel selects, as they are in commit, below dst,
// at their paths relative to the root. Paths that do not exist in commit
// are skipped: a directory the change adds has no files at the base. It
// returns the slash-separated paths of the files written.
func (r *Repo) Extract(ctx context.Context, commit string, sel Select, dst string) ([]string, error) {
	listed, err := r.list(ctx, commit, sel)
	if err != nil {
		return nil, err
	}
	// The whole listing is checked, files Keep passes over included: a
	// link that is not kept still makes the files below its name a tree
	// git fsck flags, which no checkout would write as a directory.
	if err := checkEntries(listed, commit); err != nil {
		return nil, err
	}
	var entries []treeEntry
	for _, e := range listed {
		if e.keep {
			entries = append(entries, e)
		}
	}
	if len(entries) == 0 {
		return nil, nil
	}
	if err := os.MkdirAll(dst, 0o755); err != nil {
		return nil, err
	}
	// Every write goes through an os.Root, which refuses a path that leads
	// out of dst by ".." or by a symbolic link; checkEntries has already
	// refused such paths, and links that other entries would be written
	// through.
	root, err := os.OpenRoot(dst)
	if err != nil {
		return nil, err
	}
	defer root.Close()
	if err := r.writeBlobs(ctx, entries, root); err != nil {
		return nil, err
	}
	files := make([]string, len(entries))
	for i, e := range entries {
		files[i] = e.path
	}
	return files, nil
}

type treeEntry struct {
	mode, object, path string
	// keep is false for a file that Select.Keep passes over.
	keep bool
}

// list runs git ls-tree over the selected paths.
func (r *Repo) list(ctx context.Context, commit string, sel Select) ([]treeEntry, error) {
	args := []string{"ls-tree", "-r", "-z", "--full-tree", commit, "--"}
	named := map[string]bool{}
	whole := false
	for _, p := range sel.Paths {
		p = path.Clean(p)
		if p == "." {
			whole = true
			continue
		}
		named[p] = true
		args = append(args, p)
	}
	if whole {
		args = args[:len(args)-len(named)]
	} else if len(named) == 0 {
		return nil, nil
	}
	out, err := git(ctx, r.root, nil, args...)
	if err != nil {
		return nil, fmt.Errorf("listing %s at %s: %w", strings.Join(sel.Paths, ", "), short(commit), err)
	}
	var entries []treeEntry
	for rec := range bytes.SplitSeq(out, []byte{0}) {
		if len(rec) == 0 {
			continue
		}
		// <mode> SP <type> SP <object> TAB <path>
		meta, p, ok := strings.Cut(string(rec), "\t")
		if !ok {
			return nil, fmt.Errorf("unexpected git ls-tree output %q", rec)
		}
		fields := strings.Fields(meta)
		if len(fields) != 3 {
			return nil, fmt.Errorf("unexpected git ls-tree output %q", rec)
		}
		if fields[1] != "blob" {
			// Submodules are other repositories: not part of this project.
			continue
		}
		keep := named[p] || sel.Keep == nil || sel.Keep(p)
		entries = append(entries, treeEntry{mode: fields[0], object: fields[2], path: p, keep: keep})
	}
	return entries, nil
}

// ErrMalformedTree is returned for a tree that git fsck would flag and git
// fetch still accepts: a path with "..", an absolute path, or a symbolic
// link with files below the same name.
var ErrMalformedTree = errors.New("malformed git tree")

// checkEntries refuses a tree whose files would be written anywhere but at
// their own path below the destination.
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

// writeBlobs reads every blob through one git cat-file --batch process.
func (r *Repo) writeBlobs(ctx context.Context, entries []treeEntry, dst *os.Root) (err error) {
	cmd := command(ctx, r.root, "cat-file", "--batch")
	stdin, err := cmd.StdinPipe()
	if err != nil {
		return err
	}
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		return err
	}
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	if err := cmd.Start(); err != nil {
		return err
	}
	writeErr := make(chan error, 1)
	go func() {
		w := bufio.NewWriter(stdin)
		for _, e := range entries {
			if _, err := w.WriteString(e.object + "\n"); err != nil {
				writeErr <- err
				stdin.Close()
				return
			}
		}
		err := w.Flush()
		writeErr <- errors.Join(err, stdin.Close())
	}()
	readErr := readBlobs(bufio.NewReader(stdout), entries, dst)
	if readErr != nil {
		// Stop git before waiting for it, or a half-read pipe keeps it
		// blocked forever.
		_ = cmd.Process.Kill()
		_, _ = io.Copy(io.Discard, stdout)
	}
	waitErr := cmd.Wait()
	wErr := <-writeErr
	if readErr != nil {
		return readErr
	}
	if waitErr != nil {
		return &gitError{args: []string{"cat-file", "--batch"}, stderr: stderr.String(), err: waitErr}
	}
	return wErr
}

func readBlobs(rd *bufio.Reader, entries []treeEntry, dst *os.Root) error {
	for _, e := range entries {
		header, err := rd.ReadString('\n')
		if err != nil {
			return fmt.Errorf("reading %s from git: %w", e.path, err)
		}
		fields := strings.Fields(header)
		if len(fields) != 3 || fields[1] != "blob" {
			return fmt.Errorf("reading %s from git: object %s: %s", e.path, e.object, strings.TrimSpace(header))
		}
		size, err := strconv.ParseInt(fields[2], 10, 64)
		if err != nil {
			return fmt.Errorf("reading %s from git: bad size in %q", e.path, strings.TrimSpace(header))
		}
		data := make([]byte, size)
		if _, err := io.ReadFull(rd, data); err != nil {
			return fmt.Errorf("reading %s from git: %w", e.path, err)
		}
		if _, err := rd.Discard(1); err != nil {
			return fmt.Errorf("reading %s from git: %w", e.path, err)
		}
		if err := writeEntry(dst, e, data); err != nil {
			return err
		}
	}
	return nil
}

func writeEntry(dst *os.Root, e treeEntry, data []byte) error {
	p := filepath.FromSlash(e.path)
	if err := dst.MkdirAll(filepath.Dir(p), 0o755); err != nil {
		return err
	}
	// O_EXCL: a file is created, never written over or through a link.
	perm := os.FileMode(0o644)
	switch e.mode {
	case "120000":
		return dst.Symlink(string(data), p)
	case "100755":
		perm = 0o755
	}
	f, err := dst.OpenFile(p, os.O_WRONLY|os.O_CREATE|os.O_EXCL, perm)
	if err != nil {
		return err
	}
	_, err = f.Write(data)
	return errors.Join(err, f.Close())
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
