package command

import (
	"io"
	"log/slog"
	"strings"

	"github.com/spf13/pflag"

	"github.com/knc-dev/knc/internal/runtimeconfig"
)

// RegisterFlags gives fl a flag for each setting of internal/runtimeconfig
// that cmd takes, which sets c: its type, default and help come from the
// table. The flags of knc run's compilation (Field.Compile) are left to
// the compiler's commands.
func RegisterFlags(fl *pflag.FlagSet, cmd runtimeconfig.Command, c *runtimeconfig.Config) {
	for _, f := range runtimeconfig.Fields {
		if f.Commands&cmd == 0 || f.Bind == nil {
			continue
		}
		f.AddFlag(fl, c, f.UsageFor(cmd))
	}
}

// MarkGiven records in c the flags of fl given on the command line, so
// that knc.yaml and the environment fill only the others.
func MarkGiven(fl *pflag.FlagSet, c *runtimeconfig.Config) {
	fl.Visit(func(f *pflag.Flag) {
		if rc, ok := runtimeconfig.Lookup(f.Name); ok && rc.Bind != nil {
			c.MarkGiven(f.Name)
		}
	})
}

// NewLogger is the logger --log-format and --log-level ask for.
func NewLogger(w io.Writer, format, level string) (*slog.Logger, error) {
	var lvl slog.Level
	if err := lvl.UnmarshalText([]byte(level)); err != nil {
		return nil, UsageError("--log-level %q: want debug, info, warn or error", level)
	}
	opts := &slog.HandlerOptions{Level: lvl}
	switch strings.ToLower(format) {
	case "text":
		return slog.New(slog.NewTextHandler(w, opts)), nil
	case "json":
		return slog.New(slog.NewJSONHandler(w, opts)), nil
	default:
		return nil, UsageError("--log-format %q: want text or json", format)
	}
}
