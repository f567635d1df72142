package load

import (
	"errors"
	"fmt"
	"math"
	"os"
	"sync"
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

// InputBudget counts the bytes read against a limit. It is safe for use
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
}

// NewInputBudget returns a budget of limit bytes; limit <= 0 means
// DefaultMaxInputBytes.
func NewInputBudget(limit int64) *InputBudget {
	if limit <= 0 {
		limit = DefaultMaxInputBytes
	}
	return &InputBudget{limit: limit, files: map[string]bool{}}
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
func (b *InputBudget) ChargeRegularFile(path, name string) error {
	if b == nil {
		return nil
	}
	info, err := os.Stat(path)
	if err != nil || !info.Mode().IsRegular() {
		return nil
	}
	return b.ChargeFile(path, name, info.Size())
}

func (b *InputBudget) exceeded(name string) error {
	limit := bytesText(b.limit)
	if exact := fmt.Sprintf("%d bytes", b.limit); limit != exact {
		limit += " (" + exact + ")"
	}
	return fmt.Errorf("%s: %w of %s, for all files and standard input together: give fewer paths, skip what is not manifests (exclude in knc.yaml, or --exclude), or raise %s",
		name, ErrInputTooLarge, limit, MaxInputFlag)
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
