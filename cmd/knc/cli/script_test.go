package cli

import (
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"sync"
	"testing"
	"time"

	"github.com/rogpeppe/go-internal/testscript"

	drawcli "github.com/knc-dev/knc/cmd/knc-draw/cli"
	"github.com/knc-dev/knc/internal/parallel"
)

func TestMain(m *testing.M) {
	testscript.Main(withControlPlane{m}, map[string]func(){
		// Main, as in the real binary, turns SIGINT and SIGTERM into a
		// cancelled context, so that `kill -INT` in a script stops a
		// server cleanly.
		"knc": func() { os.Exit(Main()) },
		// knc-draw lays out knc graph's and knc run's drawings; knc
		// finds it on the scripts' PATH.
		"knc-draw": func() { os.Exit(drawcli.Main()) },
		// knc-panicking is knc with a bug: it panics inside the
		// command boundary, while a compile runs on many goroutines.
		"knc-panicking": func() {
			beforeCommand = func([]string) {
				parallel.For(4, func(i int) {
					if i == 3 {
						panic("a bug planted by the test")
					}
				})
			}
			os.Exit(Main())
		},
	})
}

// TestScript runs the testscript cases in testdata/script. Set KNC_UPDATE=1
// to rewrite their expected output.
func TestScript(t *testing.T) {
	// Every knc process compiles Graphviz's WebAssembly module when it
	// starts, unless it finds it in a cache under its TMPDIR; one TMPDIR
	// for every script compiles it once instead of once per script.
	tmp := t.TempDir()
	testscript.Run(t, testscript.Params{
		Dir: "testdata/script",
		Setup: func(env *testscript.Env) error {
			env.Setenv("TMPDIR", tmp)
			return nil
		},
		UpdateScripts:       os.Getenv("KNC_UPDATE") != "",
		RequireExplicitExec: true,
		Cmds: map[string]func(ts *testscript.TestScript, neg bool, args []string){
			"freeport":      cmdFreePort,
			"fixture":       cmdFixture,
			"actionstep":    cmdActionStep,
			"releaseserver": cmdReleaseServer,
			"precommit":     cmdPreCommit,
			"kustomize":     cmdKustomize,
			"waitfor":       cmdWaitFor,
			"httpget":       cmdHTTPGet,
			"waitbody":      cmdWaitBody,
			"waitfile":      cmdWaitFile,
			// script_otlp_test.go
			"otlpreceiver": cmdOTLPReceiver,
			"otlpspans":    cmdOTLPSpans,
			// script_cluster_test.go
			"kubeapiserver":        cmdKubeAPIServer,
			"kubeapply":            cmdKubeApply,
			"kubeserviceaccount":   cmdKubeServiceAccount,
			"kubewaitcondition":    cmdKubeWaitCondition,
			"kuberesourceversions": cmdKubeResourceVersions,
			"expand":               cmdExpand,
			"exitcode":             cmdExitCode,
		},
	})
}

// cmdFixture copies a directory of testdata, such as the GitOps repository
// in testdata/gitops, into the script's work directory: fixture NAME DIR.
func cmdFixture(ts *testscript.TestScript, neg bool, args []string) {
	if neg || len(args) != 2 {
		ts.Fatalf("usage: fixture NAME DIR")
	}
	src, err := filepath.Abs(filepath.Join("testdata", args[0]))
	ts.Check(err)
	ts.Check(os.CopyFS(ts.MkAbs(args[1]), os.DirFS(src)))
}

// givenPorts are the ports cmdFreePort has handed out in this process.
// The kernel may offer a port again as soon as the probe closes it, so two
// calls before either port is bound could otherwise return the same one.
var givenPorts struct {
	sync.Mutex
	seen map[int]bool
}

// cmdFreePort sets the environment variable named by its argument to a TCP
// port that is free on 127.0.0.1 and was not handed out before.
func cmdFreePort(ts *testscript.TestScript, neg bool, args []string) {
	if neg || len(args) != 1 {
		ts.Fatalf("usage: freeport VAR")
	}
	givenPorts.Lock()
	defer givenPorts.Unlock()
	if givenPorts.seen == nil {
		givenPorts.seen = map[int]bool{}
	}
	for {
		ln, err := net.Listen("tcp", "127.0.0.1:0")
		ts.Check(err)
		port := ln.Addr().(*net.TCPAddr).Port
		ts.Check(ln.Close())
		if !givenPorts.seen[port] {
			givenPorts.seen[port] = true
			ts.Setenv(args[0], strconv.Itoa(port))
			return
		}
	}
}

// cmdWaitFor waits until something accepts TCP connections at the host and
// port of a URL, for at most 30 seconds.
func cmdWaitFor(ts *testscript.TestScript, neg bool, args []string) {
	if neg || len(args) != 1 {
		ts.Fatalf("usage: waitfor URL")
	}
	u, err := url.Parse(args[0])
	ts.Check(err)
	deadline := time.Now().Add(30 * time.Second)
	for {
		conn, err := net.DialTimeout("tcp", u.Host, time.Second)
		if err == nil {
			conn.Close()
			break
		}
		if time.Now().After(deadline) {
			ts.Fatalf("nothing listens at %s: %v", u.Host, err)
		}
		time.Sleep(20 * time.Millisecond)
	}
	// A runtime listens before its routes are set up; /readyz says when
	// they are.
	if u.Path != "/readyz" {
		return
	}
	for {
		resp, err := http.Get(u.String())
		if err == nil {
			resp.Body.Close()
			if resp.StatusCode == http.StatusOK {
				return
			}
		}
		if time.Now().After(deadline) {
			ts.Fatalf("%s is not ready: %v", u, err)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// cmdHTTPGet sends GET URL and writes the status code, then the body, to
// the script's stdout: httpget URL.
func cmdHTTPGet(ts *testscript.TestScript, neg bool, args []string) {
	if neg || len(args) != 1 {
		ts.Fatalf("usage: httpget URL")
	}
	resp, err := http.Get(args[0])
	ts.Check(err)
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	ts.Check(err)
	_, err = fmt.Fprintf(ts.Stdout(), "%d\n%s", resp.StatusCode, body)
	ts.Check(err)
}

// cmdWaitBody polls GET URL until its body matches the regular expression,
// for at most 30 seconds: waitbody URL REGEXP.
// cmdWaitFile waits until a file, such as the output of a background
// command, matches a regular expression, for at most 60 seconds:
// waitfile FILE REGEXP.
func cmdWaitFile(ts *testscript.TestScript, neg bool, args []string) {
	if neg || len(args) != 2 {
		ts.Fatalf("usage: waitfile FILE REGEXP")
	}
	re, err := regexp.Compile(args[1])
	ts.Check(err)
	deadline := time.Now().Add(60 * time.Second)
	for {
		data, err := os.ReadFile(ts.MkAbs(args[0]))
		if err == nil && re.Match(data) {
			return
		}
		if time.Now().After(deadline) {
			ts.Fatalf("%s did not match %s within 60s: %v\n%s", args[0], args[1], err, data)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

func cmdWaitBody(ts *testscript.TestScript, neg bool, args []string) {
	if neg || len(args) != 2 {
		ts.Fatalf("usage: waitbody URL REGEXP")
	}
	re, err := regexp.Compile(args[1])
	ts.Check(err)
	deadline := time.Now().Add(30 * time.Second)
	for {
		var body []byte
		resp, err := http.Get(args[0])
		if err == nil {
			body, _ = io.ReadAll(resp.Body)
			resp.Body.Close()
			if re.Match(body) {
				return
			}
		}
		if time.Now().After(deadline) {
			ts.Fatalf("GET %s did not match %s within 30s: %v\n%s", args[0], args[1], err, body)
		}
		time.Sleep(20 * time.Millisecond)
	}
}
