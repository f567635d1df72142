package cli

import (
	"context"
	"fmt"
	"io"
	"net/url"
	"strings"

	"github.com/spf13/cobra"

	"github.com/knc-dev/knc/compiler"
	"github.com/knc-dev/knc/compiler/project"
	"github.com/knc-dev/knc/internal/routing"
)

// addressFlags send events for objects of the cluster, such as the v1
// Services subscribers run behind, to processes on this machine.
type addressFlags struct {
	addresses   []string
	servicesURL string
}

func (f *addressFlags) register(cmd *cobra.Command) {
	cmd.Flags().StringArrayVar(&f.addresses, "address", nil, "resolve a reference to a local URL: `KIND/NAMESPACE/NAME=URL` or KIND/NAME=URL in the default namespace (repeatable)")
	cmd.Flags().StringVar(&f.servicesURL, "services-url", "", "resolve every v1 Service not named by --address to this `URL`, such as a local 'knc display'")
}

type addressKey struct{ kind, namespace, name string }

// resolver parses the flags; defaultNamespace completes KIND/NAME.
func (f *addressFlags) resolver(defaultNamespace string) (func(*compiler.Reference) (string, bool), error) {
	if len(f.addresses) == 0 && f.servicesURL == "" {
		return nil, nil
	}
	table := map[addressKey]string{}
	for _, a := range f.addresses {
		ref, target, ok := strings.Cut(a, "=")
		parts := strings.Split(ref, "/")
		if !ok || len(parts) < 2 || len(parts) > 3 || !absoluteURL(target) {
			return nil, usageError("--address %q: want KIND/NAMESPACE/NAME=URL or KIND/NAME=URL with an absolute URL", a)
		}
		if len(parts) == 2 {
			parts = []string{parts[0], defaultNamespace, parts[1]}
		}
		table[addressKey{parts[0], parts[1], parts[2]}] = target
	}
	if f.servicesURL != "" && !absoluteURL(f.servicesURL) {
		return nil, usageError("--services-url %q: want an absolute URL such as http://127.0.0.1:9090/", f.servicesURL)
	}
	return func(r *compiler.Reference) (string, bool) {
		if u, ok := table[addressKey{r.Kind, r.Namespace, r.Name}]; ok {
			return u, true
		}
		if f.servicesURL != "" && r.APIVersion == "v1" && r.Kind == "Service" {
			return f.servicesURL, true
		}
		return "", false
	}, nil
}

func absoluteURL(s string) bool {
	u, err := url.Parse(s)
	return err == nil && u.IsAbs() && u.Host != ""
}

// compileTable loads, validates and compiles manifests in memory. Invalid
// manifests are reported on stderr as knc validate reports them (exit 1).
func compileTable(stderr io.Writer, lf *loadFlags, af *addressFlags, paths []string) (*routing.Table, *project.Config, error) {
	t, cfg, _, err := compileProject(stderr, lf, af, paths)
	return t, cfg, err
}

// compileProject is compileTable that also returns the set of objects the
// table was compiled from.
func compileProject(stderr io.Writer, lf *loadFlags, af *addressFlags, paths []string) (*routing.Table, *project.Config, *compiler.Set, error) {
	res, err := lf.compile(context.Background(), paths, compiler.Options{Select: compiler.OneUnit, Command: "run", Routes: &compiler.RouteOptions{Address: af.resolver}})
	if res == nil {
		return nil, nil, nil, err
	}
	printDiagnostics(stderr, res.Diagnostics)
	if !res.Valid() {
		return nil, nil, nil, &exitError{code: exitFailed, err: fmt.Errorf("the manifests are invalid; nothing was started")}
	}
	if err != nil {
		return nil, nil, nil, err
	}
	if len(res.Later) > 0 {
		printDiagnostics(stderr, res.Later)
		return nil, nil, nil, silentExit(exitFailed)
	}
	return res.Table, res.Config, res.Set, nil
}
