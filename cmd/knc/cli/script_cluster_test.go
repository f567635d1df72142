package cli

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/rogpeppe/go-internal/testscript"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/knc-dev/knc/internal/kubetest"
)

// The scripts that talk to a cluster share one kube-apiserver and etcd,
// started by the first of them that asks (kubeapiserver) and stopped when
// the test binary's tests are done, as envtest suites do from TestMain.
var controlPlane struct {
	once sync.Once
	env  *kubetest.Env
	err  error
}

// withControlPlane stops the shared control plane once the tests have run.
type withControlPlane struct{ m *testing.M }

func (w withControlPlane) Run() int {
	code := w.m.Run()
	if env := controlPlane.env; env != nil {
		if err := env.Stop(); err != nil {
			fmt.Fprintf(os.Stderr, "FAIL: %v\n", err)
			if code == 0 {
				code = 1
			}
		}
	}
	return code
}

func sharedControlPlane(ts *testscript.TestScript) *kubetest.Env {
	controlPlane.once.Do(func() {
		controlPlane.env, controlPlane.err = kubetest.Start()
	})
	// Scripts that need the API server skip under -short ([short]
	// skip); otherwise missing binaries fail, with the message naming
	// the fix, because a skipped cluster test looks like a passing one.
	if err := controlPlane.err; err != nil {
		ts.Fatalf("%v", err)
	}
	return controlPlane.env
}

// cmdKubeAPIServer makes the script a client of the shared API server: it
// writes an admin kubeconfig to $WORK/kubeconfig, points KUBECONFIG at it,
// and creates a namespace of its own, named in $NS.
func cmdKubeAPIServer(ts *testscript.TestScript, neg bool, args []string) {
	if neg || len(args) != 0 {
		ts.Fatalf("usage: kubeapiserver")
	}
	env := sharedControlPlane(ts)
	kc, err := kubetest.KubeConfig(env.Config())
	ts.Check(err)
	path := ts.MkAbs("kubeconfig")
	ts.Check(os.WriteFile(path, kc, 0o600))
	ts.Setenv("KUBECONFIG", path)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	ns, err := env.Clientset().CoreV1().Namespaces().Create(ctx, &corev1.Namespace{
		ObjectMeta: metav1.ObjectMeta{GenerateName: "script-"},
	}, metav1.CreateOptions{})
	ts.Check(err)
	ts.Setenv("NS", ns.Name)
}

var aggregating sync.Mutex

// cmdKubeApply builds a kustomize directory and server-side applies it as
// Flux's kustomize-controller does: kubeapply DIR.
func cmdKubeApply(ts *testscript.TestScript, neg bool, args []string) {
	if neg || len(args) != 1 {
		ts.Fatalf("usage: kubeapply DIR")
	}
	env := sharedControlPlane(ts)
	objs, err := kubetest.Kustomize(ts.MkAbs(args[0]))
	ts.Check(err)
	applier, err := kubetest.NewApplier(env.Config())
	ts.Check(err)
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	ts.Check(applier.Apply(ctx, objs, kubetest.ApplyOptions{FieldManager: "kustomize-controller"}))
	// The aggregated ClusterRoles are cluster-wide: scripts running in
	// parallel would conflict updating them.
	aggregating.Lock()
	defer aggregating.Unlock()
	_, err = env.AggregateClusterRoles(ctx)
	ts.Check(err)
}

// cmdKubeServiceAccount writes a kubeconfig that acts as a ServiceAccount
// of $NS, with exactly the RBAC the cluster grants it:
// kubeserviceaccount NAME FILE.
func cmdKubeServiceAccount(ts *testscript.TestScript, neg bool, args []string) {
	if neg || len(args) != 2 {
		ts.Fatalf("usage: kubeserviceaccount NAME FILE")
	}
	env := sharedControlPlane(ts)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	cfg, err := env.ServiceAccountConfig(ctx, ts.Getenv("NS"), args[0])
	ts.Check(err)
	kc, err := kubetest.KubeConfig(cfg)
	ts.Check(err)
	ts.Check(os.WriteFile(ts.MkAbs(args[1]), kc, 0o600))
}

// cmdKubeWaitCondition waits, for at most a minute, until a Knative object
// of $NS has a condition with the status given:
// kubewaitcondition KIND NAME TYPE STATUS.
func cmdKubeWaitCondition(ts *testscript.TestScript, neg bool, args []string) {
	if neg || len(args) != 4 {
		ts.Fatalf("usage: kubewaitcondition KIND NAME TYPE STATUS")
	}
	env := sharedControlPlane(ts)
	applier, err := kubetest.NewApplier(env.Config())
	ts.Check(err)
	gvr, ok := knativeResources[args[0]]
	if !ok {
		ts.Fatalf("kubewaitcondition: unknown kind %s", args[0])
	}
	deadline := time.Now().Add(time.Minute)
	var last any
	for time.Now().Before(deadline) {
		u, err := applier.Dynamic().Resource(gvr).Namespace(ts.Getenv("NS")).Get(context.Background(), args[1], metav1.GetOptions{})
		if err == nil {
			conds, _, _ := unstructured.NestedSlice(u.Object, "status", "conditions")
			last = conds
			for _, c := range conds {
				m, _ := c.(map[string]any)
				if m["type"] == args[2] && m["status"] == args[3] {
					return
				}
			}
		}
		time.Sleep(50 * time.Millisecond)
	}
	ts.Fatalf("%s %s has no %s=%s condition after a minute; its conditions: %v", args[0], args[1], args[2], args[3], last)
}

var knativeResources = map[string]schema.GroupVersionResource{
	"Broker":       {Group: "eventing.knative.dev", Version: "v1", Resource: "brokers"},
	"Trigger":      {Group: "eventing.knative.dev", Version: "v1", Resource: "triggers"},
	"Channel":      {Group: "messaging.knative.dev", Version: "v1", Resource: "channels"},
	"Subscription": {Group: "messaging.knative.dev", Version: "v1", Resource: "subscriptions"},
}

// resourceVersioned are the resources whose objects kuberesourceversions
// lists: the four kinds and what knc build generates in a namespace.
var resourceVersioned = append(slices.Collect(func(yield func(schema.GroupVersionResource) bool) {
	for _, k := range []string{"Broker", "Trigger", "Channel", "Subscription"} {
		if !yield(knativeResources[k]) {
			return
		}
	}
}),
	schema.GroupVersionResource{Version: "v1", Resource: "configmaps"},
	schema.GroupVersionResource{Version: "v1", Resource: "services"},
	schema.GroupVersionResource{Version: "v1", Resource: "serviceaccounts"},
	schema.GroupVersionResource{Group: "apps", Version: "v1", Resource: "deployments"},
	schema.GroupVersionResource{Group: "rbac.authorization.k8s.io", Version: "v1", Resource: "roles"},
	schema.GroupVersionResource{Group: "rbac.authorization.k8s.io", Version: "v1", Resource: "rolebindings"},
)

// cmdKubeResourceVersions writes the resourceVersion of every object of
// $NS, one "RESOURCE NAME VERSION" a line, sorted, so that a script can
// compare the namespace before and after a command that must change
// nothing: kuberesourceversions FILE.
func cmdKubeResourceVersions(ts *testscript.TestScript, neg bool, args []string) {
	if neg || len(args) != 1 {
		ts.Fatalf("usage: kuberesourceversions FILE")
	}
	env := sharedControlPlane(ts)
	applier, err := kubetest.NewApplier(env.Config())
	ts.Check(err)
	var lines []string
	for _, gvr := range resourceVersioned {
		list, err := applier.Dynamic().Resource(gvr).Namespace(ts.Getenv("NS")).List(context.Background(), metav1.ListOptions{})
		ts.Check(err)
		for _, u := range list.Items {
			lines = append(lines, fmt.Sprintf("%s %s %s", gvr.Resource, u.GetName(), u.GetResourceVersion()))
		}
	}
	slices.Sort(lines)
	ts.Check(os.WriteFile(ts.MkAbs(args[0]), []byte(strings.Join(lines, "\n")+"\n"), 0o644))
}

// cmdExpand replaces ${VAR} and $VAR in files with the script's
// environment, for manifests that name the script's namespace:
// expand FILE...
func cmdExpand(ts *testscript.TestScript, neg bool, args []string) {
	if neg || len(args) == 0 {
		ts.Fatalf("usage: expand FILE...")
	}
	for _, f := range args {
		data, err := os.ReadFile(ts.MkAbs(f))
		ts.Check(err)
		ts.Check(os.WriteFile(ts.MkAbs(f), []byte(os.Expand(string(data), ts.Getenv)), 0o644))
	}
}

// cmdExitCode runs a command as exec does, and fails unless it exits with
// the code given, for the commands whose 1 (a difference, something not
// Ready) and 2 (trouble) mean different things: exitcode N COMMAND ARGS...
func cmdExitCode(ts *testscript.TestScript, neg bool, args []string) {
	if neg || len(args) < 2 {
		ts.Fatalf("usage: exitcode N COMMAND [ARGS...]")
	}
	want, err := strconv.Atoi(args[0])
	ts.Check(err)
	got := 0
	if err := ts.Exec(args[1], args[2:]...); err != nil {
		var exit *exec.ExitError
		if !errors.As(err, &exit) {
			ts.Fatalf("%s: %v", args[1], err)
		}
		got = exit.ExitCode()
	}
	if got != want {
		ts.Fatalf("%s exited with %d, want %d", args[1], got, want)
	}
}
