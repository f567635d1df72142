// Package drawing lays out the drawings of internal/topology as SVG or PNG
// by running knc-draw, the binary that links Graphviz. Graphviz compiles
// its WebAssembly module at every start of a process that links it, and a
// layout inside WebAssembly cannot be interrupted: in a process of its own
// it costs only the commands that draw, and a layout nobody waits for any
// more ends with its process, memory and all.
package drawing

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"time"

	"github.com/knc-dev/knc/internal/topology"
)

// Command is the name of the binary that lays out drawings, shipped beside
// knc in the same archive.
const Command = "knc-draw"

// EnvCommand names the knc-draw to run, for installations that keep it
// neither beside knc nor on PATH.
const EnvCommand = "KNC_DRAW"

// MaxOutputBytes bounds a laid-out drawing read back from knc-draw.
const MaxOutputBytes = 256 << 20

// ErrNoDrawer is returned when no knc-draw is found.
var ErrNoDrawer = errors.New("knc-draw, which lays out drawings, was not found")

// started, when set (by tests), is called with the process id of each
// knc-draw started.
var started func(pid int)

// WriteSVG writes g as a standalone SVG image, laid out by Graphviz's dot
// from the DOT that topology.WriteDOT writes, or gives up when ctx is done
// (topology.ErrLayoutStopped), stopping the layout.
func WriteSVG(ctx context.Context, w io.Writer, g *topology.Graph) error {
	return draw(ctx, w, g, "svg")
}

// WritePNG writes g as a PNG image, laid out as WriteSVG lays it out.
func WritePNG(ctx context.Context, w io.Writer, g *topology.Graph) error {
	return draw(ctx, w, g, "png")
}

func draw(ctx context.Context, w io.Writer, g *topology.Graph, format string) error {
	if err := topology.CheckSize(g); err != nil {
		return err
	}
	var dot bytes.Buffer
	if err := topology.WriteDOT(&dot, g); err != nil {
		return err
	}
	if err := ctx.Err(); err != nil {
		return fmt.Errorf("%w: %w", topology.ErrLayoutStopped, context.Cause(ctx))
	}
	path, err := find()
	if err != nil {
		return err
	}
	cmd := exec.CommandContext(ctx, path, "-T", format)
	cmd.Stdin = &dot
	out := &boundedBuffer{max: MaxOutputBytes}
	errOut := &boundedBuffer{max: 16 << 10}
	cmd.Stdout, cmd.Stderr = out, errOut
	// Killed, knc-draw leaves its pipes at once; WaitDelay only guards
	// against a process it started that would hold them open.
	cmd.WaitDelay = 5 * time.Second
	endWithParent(cmd)
	if err := cmd.Start(); err != nil {
		return fmt.Errorf("starting %s: %w", path, err)
	}
	if started != nil {
		started(cmd.Process.Pid)
	}
	err = cmd.Wait()
	if ctx.Err() != nil {
		return fmt.Errorf("%w: %w", topology.ErrLayoutStopped, context.Cause(ctx))
	}
	if err != nil {
		msg := strings.TrimSpace(strings.TrimPrefix(errOut.String(), "knc-draw: "))
		if msg == "" {
			msg = err.Error()
		}
		return fmt.Errorf("laying out the drawing with %s: %s", path, msg)
	}
	if out.over {
		return fmt.Errorf("laying out the drawing: %s wrote more than %d MiB; draw a part of it", path, MaxOutputBytes>>20)
	}
	_, err = w.Write(out.Bytes())
	return err
}

// find returns the knc-draw to run: the one $KNC_DRAW names, else the one
// beside the running binary (the release archive's layout), else the first
// on PATH.
func find() (string, error) {
	if p := os.Getenv(EnvCommand); p != "" {
		if !isExecutable(p) {
			return "", fmt.Errorf("%w: $%s is %q, which is not an executable file; point it at knc-draw, or unset it", ErrNoDrawer, EnvCommand, p)
		}
		return p, nil
	}
	var beside string
	if exe, err := os.Executable(); err == nil {
		beside = filepath.Join(filepath.Dir(exe), Command)
		if isExecutable(beside) {
			return beside, nil
		}
	}
	if p, err := exec.LookPath(Command); err == nil {
		return p, nil
	}
	where := "on PATH"
	if beside != "" {
		where = fmt.Sprintf("at %s or on PATH", beside)
	}
	return "", fmt.Errorf("%w %s: install it from the archive knc came in (or go install github.com/knc-dev/knc/cmd/knc-draw), or set $%s to its path", ErrNoDrawer, where, EnvCommand)
}

func isExecutable(p string) bool {
	info, err := os.Stat(p)
	return err == nil && info.Mode().IsRegular() && info.Mode().Perm()&0o111 != 0
}

// boundedBuffer keeps at most max bytes and remembers that more came.
type boundedBuffer struct {
	bytes.Buffer
	max  int
	over bool
}

func (b *boundedBuffer) Write(p []byte) (int, error) {
	if room := b.max - b.Len(); len(p) > room {
		b.over = true
		if room > 0 {
			b.Buffer.Write(p[:room])
		}
		return len(p), nil
	}
	return b.Buffer.Write(p)
}
