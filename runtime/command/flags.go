package command

import (
	"fmt"
	"io"
	"log/slog"
	"strings"
	"time"

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
		name, usage := f.Flag, f.UsageFor(cmd)
		switch p := f.Bind(c).(type) {
		case *string:
			fl.StringVar(p, name, *p, usage)
		case *bool:
			fl.BoolVar(p, name, *p, usage)
		case *int:
			fl.IntVar(p, name, *p, usage)
		case *int64:
			fl.Int64Var(p, name, *p, usage)
		case *float32:
			fl.Float32Var(p, name, *p, usage)
		case *float64:
			fl.Float64Var(p, name, *p, usage)
		case *time.Duration:
			fl.DurationVar(p, name, *p, usage)
		case *[]string:
			if f.Type == "stringArray" {
				fl.StringArrayVar(p, name, *p, usage)
			} else {
				fl.StringSliceVar(p, name, *p, usage)
			}
		case *map[string]string:
			fl.StringToStringVar(p, name, *p, usage)
		default:
			panic(fmt.Sprintf("command: --%s binds a %T", f.Flag, p))
		}
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
