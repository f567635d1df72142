package load

import (
	"errors"
	"fmt"
	"math"
	"sync"

	"github.com/knc-dev/knc/internal/inputfs"
)

// DefaultMaxInputBytes bounds what one command reads in all: the files,
// standard input, and what kustomizations include. With the parser's
// nodes held for one document at a time and a compact form for the rest,
// a gibibyte of manifests loads in a few gibibytes of memory; more is
// rarely one project, and more likely a path given by mistake, such as
// a home directory.
const DefaultMaxInputBytes = 1 << 30

// MaxInputFlag is the command-line flag that sets the limit.
const MaxInputFlag = "--max-input-bytes"

// ErrInputTooLarge is returned once the input of one command goes over
// its limit.
var ErrInputTooLarge = errors.New("the input goes over its limit")

// DefaultMaxAliasBytes bounds the bytes that YAML aliases and merge keys
// add to all documents one command reads: what they expand to less what
// they are written with. Written out, the output is bounded by the input;
// aliases let a file of a hundred kilobytes expand to gigabytes in build.
// Anchors that repeat labels or a container's settings add kilobytes.
const DefaultMaxAliasBytes = 64 << 20

// MaxAliasFlag is the command-line flag that sets the aliases' limit.
const MaxAliasFlag = "--max-alias-bytes"

// ErrAliasesTooLarge is returned once the aliases of the documents one
// command reads expand them by more than their limit.
var ErrAliasesTooLarge = errors.New("aliases expand the documents read by more than their limit")

// InputBudget counts the bytes read against a limit, and the bytes aliases
// add against another. It is safe for use
// by several goroutines; a nil *InputBudget counts nothing.
type InputBudget struct {
	limit int64
	mu    sync.Mutex
	used  int64
	// files holds the files counted, each once however often it is read.
	files map[string]bool
	// over is the error of the file that went over the limit, given
	// again for every file after it.
	over error

	aliasLimit, aliasUsed int64
}

// NewInputBudget returns a budget of limit bytes read and aliasLimit bytes
// added by aliases; a limit <= 0 means its default.
func NewInputBudget(limit, aliasLimit int64) *InputBudget {
	if limit <= 0 {
		limit = DefaultMaxInputBytes
	}
	if aliasLimit <= 0 {
		aliasLimit = DefaultMaxAliasBytes
	}
	return &InputBudget{limit: limit, aliasLimit: aliasLimit, files: map[string]bool{}}
}

// ChargeAliases counts n bytes that a document's aliases add. It fails
// once the total is over the limit, for this document and every one with
// aliases after it; the caller names the document.
func (b *InputBudget) ChargeAliases(n int64) error {
	if b == nil || n == 0 {
		return nil
	}
	b.mu.Lock()
	defer b.mu.Unlock()
	b.aliasUsed = min(b.aliasUsed+n, math.MaxInt64/2)
	if b.aliasUsed <= b.aliasLimit {
		return nil
	}
	return fmt.Errorf("%w of %s, for all files and standard input together: write the repeated parts out, or raise %s",
		ErrAliasesTooLarge, limitText(b.aliasLimit), MaxAliasFlag)
}

// Remaining is what may still be read: for a nil budget, more than any
// input.
func (b *InputBudget) Remaining() int64 {
	if b == nil {
		return math.MaxInt64 - 1
	}
	b.mu.Lock()
	defer b.mu.Unlock()
	return max(b.limit-b.used, 0)
}

// Charge counts n bytes read from name. It fails once the total goes over
// the limit, and for every call after that, with the same error.
func (b *InputBudget) Charge(name string, n int64) error {
	if b == nil {
		return nil
	}
	b.mu.Lock()
	defer b.mu.Unlock()
	b.used += n
	return b.check(name)
}

func (b *InputBudget) check(name string) error {
	if b.over == nil && b.used > b.limit {
		b.over = b.exceeded(name)
	}
	return b.over
}

// ChargeFile counts the file at path, of n bytes, once however often it
// is read (a base that two overlays include, a file a renderer reads and
// knc reads again for positions); name is how errors name it. Once the
// total is over the limit, it fails for every file, naming the one that
// went over.
func (b *InputBudget) ChargeFile(path, name string, n int64) error {
	if b == nil {
		return nil
	}
	b.mu.Lock()
	defer b.mu.Unlock()
	if !b.files[path] {
		b.files[path] = true
		b.used += n
	}
	return b.check(name)
}

// ChargeRegularFile is ChargeFile for the file at path at its size now,
// when it is a regular file; anything else is left to the read, which
// refuses it.
func (b *InputBudget) ChargeRegularFile(fsys inputfs.FS, path, name string) error {
	if b == nil {
		return nil
	}
	info, err := fsys.Stat(path)
	if err != nil || !info.Mode().IsRegular() {
		return nil
	}
	return b.ChargeFile(path, name, info.Size())
}

func (b *InputBudget) exceeded(name string) error {
	return fmt.Errorf("%s: %w of %s, for all files and standard input together: give fewer paths, skip what is not manifests (exclude in knc.yaml, or --exclude), or raise %s",
		name, ErrInputTooLarge, limitText(b.limit), MaxInputFlag)
}

// limitText writes a limit in its unit, and in bytes when that differs.
func limitText(n int64) string {
	text := bytesText(n)
	if exact := fmt.Sprintf("%d bytes", n); text != exact {
		text += " (" + exact + ")"
	}
	return text
}

// bytesText writes n in the largest binary unit that divides it, as
// the limit is usually given.
func bytesText(n int64) string {
	for _, u := range []struct {
		shift int
		name  string
	}{{40, "TiB"}, {30, "GiB"}, {20, "MiB"}, {10, "KiB"}} {
		if n >= 1<<u.shift && n%(1<<u.shift) == 0 {
			return fmt.Sprintf("%d %s", n>>u.shift, u.name)
		}
	}
	return fmt.Sprintf("%d bytes", n)
}
