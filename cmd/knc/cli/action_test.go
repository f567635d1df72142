package cli

import (
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"

	"github.com/rogpeppe/go-internal/testscript"
	"go.yaml.in/yaml/v3"
)

// actionFile is the repository's GitHub Action.
const actionFile = "../../../action.yml"

type actionStep struct {
	Name             string            `yaml:"name"`
	Run              string            `yaml:"run"`
	Env              map[string]string `yaml:"env"`
	WorkingDirectory string            `yaml:"working-directory"`
}

var expression = regexp.MustCompile(`\$\{\{\s*([^}]*?)\s*\}\}`)

// cmdActionStep runs the script of one step of action.yml, as the Actions
// runner would, in the script's current directory: actionstep NAME
// [CONTEXT=VALUE...]. Expressions such as ${{ inputs.paths }} take the
// values given (inputs.paths=apps), or the input's default, or else "".
// RUNNER_TEMP, GITHUB_OUTPUT and GITHUB_STEP_SUMMARY are under
// $WORK/runner, as on a runner.
func cmdActionStep(ts *testscript.TestScript, neg bool, args []string) {
	if len(args) < 1 {
		ts.Fatalf("usage: actionstep NAME [CONTEXT=VALUE...]")
	}
	data, err := os.ReadFile(actionFile)
	ts.Check(err)
	var action struct {
		Inputs map[string]struct {
			Default string `yaml:"default"`
		} `yaml:"inputs"`
		Runs struct {
			Steps []actionStep `yaml:"steps"`
		} `yaml:"runs"`
	}
	ts.Check(yaml.Unmarshal(data, &action))
	values := map[string]string{}
	for name, in := range action.Inputs {
		if !strings.Contains(in.Default, "${{") {
			values["inputs."+name] = in.Default
		}
	}
	for _, a := range args[1:] {
		k, v, ok := strings.Cut(a, "=")
		if !ok {
			ts.Fatalf("actionstep: %q is not CONTEXT=VALUE", a)
		}
		values[k] = v
	}
	eval := func(s string) string {
		return expression.ReplaceAllStringFunc(s, func(e string) string {
			return values[expression.FindStringSubmatch(e)[1]]
		})
	}
	var step *actionStep
	for i := range action.Runs.Steps {
		if action.Runs.Steps[i].Name == args[0] {
			step = &action.Runs.Steps[i]
		}
	}
	if step == nil || step.Run == "" {
		ts.Fatalf("actionstep: action.yml has no step %q with a script", args[0])
	}
	runner := filepath.Join(ts.Getenv("WORK"), "runner")
	ts.Check(os.MkdirAll(runner, 0o755))
	script := filepath.Join(runner, "step.sh")
	ts.Check(os.WriteFile(script, []byte(eval(step.Run)), 0o644))
	cmd := exec.Command("bash", "--noprofile", "--norc", "-eo", "pipefail", script)
	cmd.Dir = ts.MkAbs(eval(step.WorkingDirectory))
	cmd.Env = []string{
		"PATH=" + ts.Getenv("PATH"),
		"HOME=" + ts.Getenv("HOME"),
		"RUNNER_TEMP=" + runner,
		"GITHUB_OUTPUT=" + filepath.Join(runner, "output"),
		"GITHUB_STEP_SUMMARY=" + filepath.Join(runner, "summary.md"),
		"GITHUB_PATH=" + filepath.Join(runner, "path"),
		"RUNNER_TOOL_CACHE=" + filepath.Join(runner, "toolcache"),
	}
	for k, v := range step.Env {
		cmd.Env = append(cmd.Env, k+"="+eval(v))
	}
	cmd.Stdout, cmd.Stderr = ts.Stdout(), ts.Stderr()
	err = cmd.Run()
	switch {
	case err != nil && !neg:
		ts.Fatalf("step %q: %v", args[0], err)
	case err == nil && neg:
		ts.Fatalf("step %q succeeded unexpectedly", args[0])
	case err != nil:
		fmt.Fprintf(ts.Stderr(), "step %q: %v\n", args[0], err)
	}
}

// cmdReleaseServer serves DIR over HTTP on loopback as GitHub serves a
// project's releases (DIR/download/TAG/FILE), until the script ends:
// releaseserver DIR. It sets RELEASES to its URL, and appends the path of
// every request to $WORK/requests.log.
func cmdReleaseServer(ts *testscript.TestScript, neg bool, args []string) {
	if neg || len(args) != 1 {
		ts.Fatalf("usage: releaseserver DIR")
	}
	files := http.FileServerFS(os.DirFS(ts.MkAbs(args[0])))
	logPath := filepath.Join(ts.Getenv("WORK"), "requests.log")
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if f, err := os.OpenFile(logPath, os.O_APPEND|os.O_CREATE|os.O_WRONLY, 0o644); err == nil {
			fmt.Fprintln(f, r.URL.Path)
			f.Close()
		}
		files.ServeHTTP(w, r)
	}))
	ts.Defer(srv.Close)
	ts.Setenv("RELEASES", srv.URL)
}
