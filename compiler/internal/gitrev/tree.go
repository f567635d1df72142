package gitrev

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os/exec"
	"path"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"
)

// Tree is the tree of a commit as a read-only fs.FS, read from git's
// objects as it is read: no file is copied anywhere. Its listing is read
// once, whole, when it is opened, so that a tree git fsck would flag is
// refused before anything reads it; a file's content is read when it is
// opened and read, through one git cat-file --batch process the Tree
// keeps until Close.
//
// Symbolic links are fs.ReadLinkFS links: Lstat and ReadLink see them,
// and Open does not follow them, so that the reader decides where a link
// may lead. The top holds an empty .git directory, as a work tree's top
// holds its repository, so that a search for the top of the work tree
// stops there.
type Tree struct {
	repo   *Repo
	ctx    context.Context
	commit string
	nodes  map[string]*treeNode

	mu  sync.Mutex
	cat *catFile
}

// treeNode is a file, link or directory of a Tree.
type treeNode struct {
	name     string
	mode     fs.FileMode
	object   string
	size     int64
	children []string // sorted names, for a directory
}

// maxLinkBytes bounds the target of a link, as PATH_MAX does on a disk.
const maxLinkBytes = 4096

// Tree lists commit's tree and checks it; see Tree.
func (r *Repo) Tree(ctx context.Context, commit string) (*Tree, error) {
	entries, err := r.list(ctx, commit)
	if err != nil {
		return nil, err
	}
	if err := checkEntries(entries, commit); err != nil {
		return nil, err
	}
	t := &Tree{repo: r, ctx: ctx, commit: commit, nodes: map[string]*treeNode{".": {name: ".", mode: fs.ModeDir | 0o755}}}
	t.addDir(".git")
	for _, e := range entries {
		mode := fs.FileMode(0o644)
		switch e.mode {
		case "120000":
			mode = fs.ModeSymlink | 0o777
		case "100755":
			mode = 0o755
		}
		t.add(e.path, &treeNode{name: path.Base(e.path), mode: mode, object: e.object, size: e.size})
	}
	for _, n := range t.nodes {
		slices.Sort(n.children)
		n.children = slices.Compact(n.children)
	}
	return t, nil
}

// AddEmptyDir makes p, a slash-separated path, an empty directory of the
// tree when the commit has nothing there: a directory a change adds is
// empty at the commit before.
func (t *Tree) AddEmptyDir(p string) {
	p = path.Clean(p)
	if _, ok := t.nodes[p]; !ok {
		t.addDir(p)
	}
}

// add puts n at p, and the directories above it.
func (t *Tree) add(p string, n *treeNode) {
	t.nodes[p] = n
	dir := path.Dir(p)
	t.addDir(dir)
	parent := t.nodes[dir]
	parent.children = append(parent.children, n.name)
}

func (t *Tree) addDir(p string) {
	if _, ok := t.nodes[p]; ok || p == "." {
		return
	}
	t.add(p, &treeNode{name: path.Base(p), mode: fs.ModeDir | 0o755})
}

// Close stops the git process that reads the files.
func (t *Tree) Close() error {
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.cat == nil {
		return nil
	}
	err := t.cat.close()
	t.cat = nil
	return err
}

func (t *Tree) node(op, name string) (*treeNode, error) {
	if !fs.ValidPath(name) {
		return nil, &fs.PathError{Op: op, Path: name, Err: fs.ErrInvalid}
	}
	n, ok := t.nodes[name]
	if !ok {
		return nil, &fs.PathError{Op: op, Path: name, Err: fs.ErrNotExist}
	}
	return n, nil
}

// Lstat describes name without following a link.
func (t *Tree) Lstat(name string) (fs.FileInfo, error) {
	n, err := t.node("lstat", name)
	if err != nil {
		return nil, err
	}
	return nodeInfo{n}, nil
}

// Stat is Lstat: the Tree follows no link itself.
func (t *Tree) Stat(name string) (fs.FileInfo, error) { return t.Lstat(name) }

// ReadDir lists a directory, sorted by name.
func (t *Tree) ReadDir(name string) ([]fs.DirEntry, error) {
	n, err := t.node("readdir", name)
	if err != nil {
		return nil, err
	}
	if !n.mode.IsDir() {
		return nil, &fs.PathError{Op: "readdir", Path: name, Err: errors.New("not a directory")}
	}
	out := make([]fs.DirEntry, len(n.children))
	for i, c := range n.children {
		out[i] = fs.FileInfoToDirEntry(nodeInfo{t.nodes[path.Join(name, c)]})
	}
	return out, nil
}

// ReadLink returns the target of the link name, as committed.
func (t *Tree) ReadLink(name string) (string, error) {
	n, err := t.node("readlink", name)
	if err != nil {
		return "", err
	}
	if n.mode&fs.ModeSymlink == 0 {
		return "", &fs.PathError{Op: "readlink", Path: name, Err: fs.ErrInvalid}
	}
	if n.size > maxLinkBytes {
		return "", &fs.PathError{Op: "readlink", Path: name, Err: fmt.Errorf("a target of %d bytes, longer than any path", n.size)}
	}
	data, err := t.blob(name, n)
	return string(data), err
}

// Open opens a file or directory; a file's content is read from git on
// its first Read.
func (t *Tree) Open(name string) (fs.File, error) {
	n, err := t.node("open", name)
	if err != nil {
		return nil, err
	}
	if n.mode&fs.ModeSymlink != 0 {
		return nil, &fs.PathError{Op: "open", Path: name, Err: errors.New("a symbolic link: resolve it with ReadLink")}
	}
	return &treeFile{t: t, name: name, n: n}, nil
}

// blob reads the content of n from git.
func (t *Tree) blob(name string, n *treeNode) ([]byte, error) {
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.cat == nil {
		cat, err := startCatFile(t.ctx, t.repo.root)
		if err != nil {
			return nil, fmt.Errorf("reading %s at %s: %w", name, short(t.commit), err)
		}
		t.cat = cat
	}
	data, err := t.cat.read(n.object, n.size)
	if err != nil {
		return nil, fmt.Errorf("reading %s at %s from git: %w", name, short(t.commit), err)
	}
	return data, nil
}

type nodeInfo struct{ n *treeNode }

func (i nodeInfo) Name() string       { return i.n.name }
func (i nodeInfo) Size() int64        { return i.n.size }
func (i nodeInfo) Mode() fs.FileMode  { return i.n.mode }
func (i nodeInfo) ModTime() time.Time { return time.Time{} }
func (i nodeInfo) IsDir() bool        { return i.n.mode.IsDir() }
func (i nodeInfo) Sys() any           { return nil }

// treeFile is a file or directory of a Tree, opened.
type treeFile struct {
	t    *Tree
	name string
	n    *treeNode
	r    *bytes.Reader
	dir  []fs.DirEntry
	read bool
}

func (f *treeFile) Stat() (fs.FileInfo, error) { return nodeInfo{f.n}, nil }
func (f *treeFile) Close() error               { return nil }

func (f *treeFile) Read(p []byte) (int, error) {
	if f.n.mode.IsDir() {
		return 0, &fs.PathError{Op: "read", Path: f.name, Err: errors.New("is a directory")}
	}
	if f.r == nil {
		data, err := f.t.blob(f.name, f.n)
		if err != nil {
			return 0, err
		}
		f.r = bytes.NewReader(data)
	}
	return f.r.Read(p)
}

func (f *treeFile) ReadDir(count int) ([]fs.DirEntry, error) {
	if !f.read {
		entries, err := f.t.ReadDir(f.name)
		if err != nil {
			return nil, err
		}
		f.dir, f.read = entries, true
	}
	if count <= 0 {
		out := f.dir
		f.dir = nil
		return out, nil
	}
	if len(f.dir) == 0 {
		return nil, io.EOF
	}
	n := min(count, len(f.dir))
	out := f.dir[:n]
	f.dir = f.dir[n:]
	return out, nil
}

// catFile is a git cat-file --batch process, which reads objects one
// after the other.
type catFile struct {
	cmd    *exec.Cmd
	stdin  io.WriteCloser
	stdout *bufio.Reader
	stderr *bytes.Buffer
}

func startCatFile(ctx context.Context, dir string) (*catFile, error) {
	cmd := command(ctx, dir, "cat-file", "--batch")
	stdin, err := cmd.StdinPipe()
	if err != nil {
		return nil, err
	}
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		return nil, err
	}
	stderr := &bytes.Buffer{}
	cmd.Stderr = stderr
	if err := cmd.Start(); err != nil {
		return nil, err
	}
	return &catFile{cmd: cmd, stdin: stdin, stdout: bufio.NewReader(stdout), stderr: stderr}, nil
}

// read reads object, a blob the listing says is size bytes long.
func (c *catFile) read(object string, size int64) ([]byte, error) {
	if _, err := io.WriteString(c.stdin, object+"\n"); err != nil {
		return nil, c.failed(err)
	}
	header, err := c.stdout.ReadString('\n')
	if err != nil {
		return nil, c.failed(err)
	}
	fields := strings.Fields(header)
	if len(fields) != 3 || fields[1] != "blob" {
		return nil, fmt.Errorf("object %s: %s", object, strings.TrimSpace(header))
	}
	n, err := strconv.ParseInt(fields[2], 10, 64)
	if err != nil || n != size {
		return nil, fmt.Errorf("object %s: size %q, the listing said %d", object, fields[2], size)
	}
	data := make([]byte, n+1) // and the newline that ends it
	if _, err := io.ReadFull(c.stdout, data); err != nil {
		return nil, c.failed(err)
	}
	return data[:n], nil
}

// failed is err, with what git said when it stopped.
func (c *catFile) failed(err error) error {
	if msg := strings.TrimSpace(c.stderr.String()); msg != "" {
		return &gitError{args: []string{"cat-file", "--batch"}, stderr: msg, err: err}
	}
	return err
}

func (c *catFile) close() error {
	c.stdin.Close()
	_, _ = io.Copy(io.Discard, c.stdout)
	if err := c.cmd.Wait(); err != nil {
		return c.failed(err)
	}
	return nil
}
