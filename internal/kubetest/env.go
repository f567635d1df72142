package kubetest

import (
	"bufio"
	"bytes"
	"crypto/rand"
	"crypto/rsa"
	"crypto/x509"
	"encoding/pem"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"time"

	"github.com/go-logr/logr"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	"sigs.k8s.io/controller-runtime/pkg/envtest"
	ctrllog "sigs.k8s.io/controller-runtime/pkg/log"
)

// ErrBinariesMissing is returned by Start when kube-apiserver or etcd cannot
// be found. Its message says how to build them.
var ErrBinariesMissing = errors.New("kube-apiserver and etcd test binaries are missing; run `make testbin` (or `bash hack/testbin/build.sh`) and, outside the repository, set KUBEBUILDER_ASSETS to their directory")

// modulePath identifies the checkout whose hack/testbin/bin is the fallback
// binary directory.
const modulePath = "github.com/knc-dev/knc"

// setLogger sets controller-runtime's logger once per process.
var setLogger sync.Once

// serviceAccountIssuer is what the API server signs into tokens and accepts
// as their audience; any stable URL will do because nothing outside the API
// server verifies them.
const serviceAccountIssuer = "https://kubernetes.default.svc.cluster.local"

// Env is a running etcd and kube-apiserver.
type Env struct {
	te         *envtest.Environment
	admin      *rest.Config
	clientset  *kubernetes.Clientset
	root       string
	reaper     *reaper
	startTook  time.Duration
	assetsDir  string
	stopOnce   sync.Once
	stopResult error
}

// Option configures Start.
type Option func(*options)

type options struct {
	assetsDir string
	crdPaths  []string
}

// WithAssetsDir takes kube-apiserver and etcd from dir instead of
// KUBEBUILDER_ASSETS or hack/testbin/bin.
func WithAssetsDir(dir string) Option {
	return func(o *options) { o.assetsDir = dir }
}

// WithCRDPaths installs the CRDs in the given YAML or JSON files, or in the
// files directly inside the given directories, once the API server is up;
// Start returns only after they are established and served.
func WithCRDPaths(paths ...string) Option {
	return func(o *options) { o.crdPaths = append(o.crdPaths, paths...) }
}

// Start runs etcd and kube-apiserver on free loopback ports and waits until
// the API server serves requests. The caller must call Stop; if the process
// dies first (a panic, a timeout, a signal), a watchdog process kills the
// control plane and removes its files.
func Start(opts ...Option) (_ *Env, err error) {
	// envtest logs through controller-runtime's logger, which prints a
	// stack trace when nothing was set: its lines say nothing the
	// returned errors do not.
	setLogger.Do(func() { ctrllog.SetLogger(logr.Discard()) })
	var o options
	for _, opt := range opts {
		opt(&o)
	}

	assets, err := findAssets(o.assetsDir)
	if err != nil {
		return nil, err
	}

	root, err := os.MkdirTemp("", "kubetest-")
	if err != nil {
		return nil, fmt.Errorf("kubetest: creating the control plane's directory: %w", err)
	}
	e := &Env{root: root, assetsDir: assets}
	defer func() {
		if err != nil {
			err = errors.Join(err, e.Stop())
		}
	}()

	keyFile, pubFile, err := writeServiceAccountKey(root)
	if err != nil {
		return nil, err
	}

	etcdDir := filepath.Join(root, "etcd")
	certDir := filepath.Join(root, "apiserver")
	for _, d := range []string{etcdDir, certDir} {
		if err := os.Mkdir(d, 0o700); err != nil {
			return nil, fmt.Errorf("kubetest: %w", err)
		}
	}

	e.te = &envtest.Environment{
		// envtest gives each process 20s to become ready and tries five
		// times; on a loaded 2-core machine kube-apiserver has taken
		// longer than that five times over. Readiness is polled, so a
		// longer bound costs nothing when the machine is quiet.
		ControlPlaneStartTimeout: 2 * time.Minute,
		ControlPlaneStopTimeout:  time.Minute,
		ControlPlane: envtest.ControlPlane{
			Etcd: &envtest.Etcd{
				Path:    filepath.Join(assets, "etcd"),
				DataDir: etcdDir,
			},
			APIServer: &envtest.APIServer{
				Path:    filepath.Join(assets, "kube-apiserver"),
				CertDir: certDir,
			},
		},
	}
	args := e.te.ControlPlane.GetAPIServer().Configure()
	// envtest would generate its own signing key and take the server's URL as
	// issuer; setting them here keeps the token setup visible and independent
	// of envtest's defaults.
	args.Set("authorization-mode", "RBAC")
	args.Set("service-account-issuer", serviceAccountIssuer)
	args.Set("api-audiences", serviceAccountIssuer)
	args.Set("service-account-key-file", pubFile)
	args.Set("service-account-signing-key-file", keyFile)

	started := time.Now()
	admin, err := e.te.Start()
	if err != nil {
		return nil, fmt.Errorf("kubetest: starting etcd and kube-apiserver from %s: %w", assets, err)
	}
	e.startTook = time.Since(started)

	e.reaper, err = startReaper(root, e.te.ControlPlane.Etcd.Path, e.te.ControlPlane.APIServer.Path)
	if err != nil {
		return nil, err
	}

	e.admin = admin
	e.clientset, err = kubernetes.NewForConfig(admin)
	if err != nil {
		return nil, fmt.Errorf("kubetest: admin clientset: %w", err)
	}

	if len(o.crdPaths) > 0 {
		ctx, cancel := contextWithTimeout(crdTimeout)
		defer cancel()
		if err := e.InstallCRDPaths(ctx, o.crdPaths...); err != nil {
			return nil, err
		}
	}
	return e, nil
}

// Stop stops kube-apiserver and etcd and removes their files. It is safe to
// call more than once.
func (e *Env) Stop() error {
	e.stopOnce.Do(func() {
		var errs []error
		stopped := true
		if e.te != nil {
			if err := e.te.Stop(); err != nil {
				stopped = false
				errs = append(errs, fmt.Errorf("kubetest: stopping the control plane: %w", err))
			}
		}
		if e.reaper != nil {
			// A control plane that did not stop cleanly is left to the
			// watchdog, which kills it.
			if err := e.reaper.release(!stopped); err != nil {
				errs = append(errs, err)
			}
		}
		if err := os.RemoveAll(e.root); err != nil {
			errs = append(errs, fmt.Errorf("kubetest: removing the control plane's files: %w", err))
		}
		e.stopResult = errors.Join(errs...)
	})
	return e.stopResult
}

// Config returns a copy of the admin configuration: a client certificate in
// group system:masters, which RBAC never restricts.
func (e *Env) Config() *rest.Config {
	return rest.CopyConfig(e.admin)
}

// Clientset returns a typed clientset with admin rights.
func (e *Env) Clientset() kubernetes.Interface {
	return e.clientset
}

// StartDuration is how long Start waited for etcd and kube-apiserver to
// become ready, CRD installation not included.
func (e *Env) StartDuration() time.Duration {
	return e.startTook
}

// AssetsDir is the directory kube-apiserver and etcd were run from.
func (e *Env) AssetsDir() string {
	return e.assetsDir
}

// findAssets returns the directory holding kube-apiserver and etcd: dir if
// given, else KUBEBUILDER_ASSETS, else hack/testbin/bin of the knc checkout
// enclosing the working directory.
func findAssets(dir string) (string, error) {
	if dir == "" {
		dir = os.Getenv("KUBEBUILDER_ASSETS")
	}
	if dir == "" {
		wd, err := os.Getwd()
		if err != nil {
			return "", fmt.Errorf("kubetest: %w", err)
		}
		repo, ok := findModuleRoot(wd)
		if !ok {
			return "", fmt.Errorf("%w (KUBEBUILDER_ASSETS is unset and %s is not inside %s)", ErrBinariesMissing, wd, modulePath)
		}
		dir = filepath.Join(repo, "hack", "testbin", "bin")
	}
	var missing []string
	for _, name := range []string{"kube-apiserver", "etcd"} {
		fi, err := os.Stat(filepath.Join(dir, name))
		if err != nil || fi.IsDir() || fi.Mode().Perm()&0o111 == 0 {
			missing = append(missing, name)
		}
	}
	if len(missing) > 0 {
		return "", fmt.Errorf("%w (no executable %s in %s)", ErrBinariesMissing, strings.Join(missing, " or "), dir)
	}
	return dir, nil
}

// findModuleRoot walks up from dir to the directory whose go.mod declares
// modulePath. Other go.mod files on the way (hack/testbin has one) are
// passed over.
func findModuleRoot(dir string) (string, bool) {
	for {
		if data, err := os.ReadFile(filepath.Join(dir, "go.mod")); err == nil && declaresModule(data, modulePath) {
			return dir, true
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			return "", false
		}
		dir = parent
	}
}

func declaresModule(gomod []byte, path string) bool {
	sc := bufio.NewScanner(bytes.NewReader(gomod))
	for sc.Scan() {
		fields := strings.Fields(sc.Text())
		if len(fields) >= 2 && fields[0] == "module" {
			return strings.Trim(fields[1], `"`) == path
		}
	}
	return false
}

// writeServiceAccountKey writes a fresh RSA key pair for signing and
// verifying service-account tokens.
func writeServiceAccountKey(dir string) (keyFile, pubFile string, err error) {
	key, err := rsa.GenerateKey(rand.Reader, 2048)
	if err != nil {
		return "", "", fmt.Errorf("kubetest: generating the service-account key: %w", err)
	}
	pub, err := x509.MarshalPKIXPublicKey(&key.PublicKey)
	if err != nil {
		return "", "", fmt.Errorf("kubetest: encoding the service-account public key: %w", err)
	}
	keyFile = filepath.Join(dir, "sa.key")
	pubFile = filepath.Join(dir, "sa.pub")
	keyPEM := pem.EncodeToMemory(&pem.Block{Type: "RSA PRIVATE KEY", Bytes: x509.MarshalPKCS1PrivateKey(key)})
	pubPEM := pem.EncodeToMemory(&pem.Block{Type: "PUBLIC KEY", Bytes: pub})
	if err := os.WriteFile(keyFile, keyPEM, 0o600); err != nil {
		return "", "", fmt.Errorf("kubetest: %w", err)
	}
	if err := os.WriteFile(pubFile, pubPEM, 0o600); err != nil {
		return "", "", fmt.Errorf("kubetest: %w", err)
	}
	return keyFile, pubFile, nil
}
