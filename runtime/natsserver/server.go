package natsserver

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/url"
	"os"
	"strconv"
	"sync"
	"time"

	"github.com/nats-io/nats-server/v2/server"
	"github.com/nats-io/nats.go"
)

// Options configure the embedded server.
type Options struct {
	// StoreDir is where JetStream keeps its files. It is created if missing.
	StoreDir string
	// MaxStoreBytes caps JetStream file storage; 0 lets the server choose (a
	// share of the free disk space). Once the cap is reached publishes are
	// refused, which the runtime reports as 503.
	MaxStoreBytes int64
	// MaxMemoryBytes caps JetStream memory storage; 0 lets the server choose.
	MaxMemoryBytes int64
	// MaxPayload is the largest message, headers included; 0 keeps NATS's
	// default of 1 MiB. Set it above the largest event the runtime accepts.
	MaxPayload int32
	// ListenAddr, when set ("127.0.0.1:4222"), also accepts NATS clients over
	// TCP, for inspecting streams with the nats CLI. Empty means no port.
	ListenAddr string
	// SyncAlways makes JetStream fsync every write before acknowledging it,
	// so that an acknowledged event survives the loss of the machine, not
	// only of the process. Writes are slower.
	SyncAlways bool
	// Cluster, when set, makes the server one node of a NATS cluster whose
	// JetStream replicates streams across nodes.
	Cluster *Cluster
	// StartTimeout bounds how long Start waits for the server to be ready;
	// JetStream recovers its streams from disk during that time. Default 30s.
	StartTimeout time.Duration
	// Logger receives the server's own log lines; nil discards them.
	Logger *slog.Logger
	// OnStoreFault, when set, is called with the fault when JetStream
	// starts refusing writes (the volume is full), and with nil once it
	// takes them again. It must not block.
	OnStoreFault func(err error)
}

// Cluster makes the embedded server a node of a JetStream cluster. Every
// node is given the same Name and Routes; each has its own ServerName and
// store.
type Cluster struct {
	// Name is the cluster's name, the same on every node.
	Name string
	// ServerName names this node, uniquely and stably across restarts (a
	// StatefulSet pod's name): JetStream identifies its peers by it.
	ServerName string
	// ListenAddr is where the other nodes connect, "0.0.0.0:6222".
	ListenAddr string
	// Routes are the nodes' route URLs, nats-route://HOST:PORT; this
	// node's own may be among them.
	Routes []string
}

func (c *Cluster) apply(o *server.Options) error {
	if c.Name == "" || c.ServerName == "" || c.ListenAddr == "" {
		return errors.New("a cluster needs a name, a server name and a listen address")
	}
	host, port, err := splitHostPort(c.ListenAddr)
	if err != nil {
		return fmt.Errorf("cluster listen address: %w", err)
	}
	o.ServerName = c.ServerName
	o.Cluster = server.ClusterOpts{Name: c.Name, Host: host, Port: port}
	for _, r := range c.Routes {
		u, err := url.Parse(r)
		if err != nil || u.Host == "" {
			return fmt.Errorf("cluster route %q is not a URL such as nats-route://host:6222", r)
		}
		o.Routes = append(o.Routes, u)
	}
	// JetStream's replication runs over the system account.
	o.NoSystemAccount = false
	if o.DontListen {
		// The server starts its routes only once it listens for clients:
		// listen on loopback, where nothing outside the pod reaches it.
		o.DontListen = false
		o.Host, o.Port = "127.0.0.1", server.RANDOM_PORT
	}
	return nil
}

func splitHostPort(addr string) (string, int, error) {
	host, port, err := net.SplitHostPort(addr)
	if err != nil {
		return "", 0, fmt.Errorf("%q: %w", addr, err)
	}
	p, err := strconv.Atoi(port)
	if err != nil {
		return "", 0, fmt.Errorf("port %q: %w", port, err)
	}
	if p == 0 {
		// The server reads 0 as its default port; a free one is -1.
		p = server.RANDOM_PORT
	}
	return host, p, nil
}

// Server is a running embedded NATS server.
type Server struct {
	ns   *server.Server
	lock *os.File
	log  *slog.Logger

	// storeDir, jsConfig and roomNeeded restart JetStream after its volume
	// was full (recover.go).
	storeDir   string
	jsConfig   server.JetStreamConfig
	roomNeeded int64
	fault      *faultState
	quit       chan struct{}
	stopOnce   sync.Once
	// damaged names the streams with a block JetStream cut as it started.
	damaged map[string]bool
}

// Start starts the server and waits until it accepts connections and
// JetStream is enabled.
func Start(opts Options) (*Server, error) {
	if opts.StoreDir == "" {
		return nil, errors.New("starting NATS server: a store directory is required")
	}
	if err := os.MkdirAll(opts.StoreDir, 0o750); err != nil {
		return nil, fmt.Errorf("starting NATS server: %w", err)
	}
	lock, err := lockStore(opts.StoreDir)
	if err != nil {
		return nil, fmt.Errorf("starting NATS server: %w", err)
	}
	started := false
	defer func() {
		if !started {
			lock.Close()
		}
	}()
	sopts := &server.Options{
		ServerName:         "knc",
		JetStream:          true,
		StoreDir:           opts.StoreDir,
		JetStreamMaxStore:  opts.MaxStoreBytes,
		JetStreamMaxMemory: opts.MaxMemoryBytes,
		MaxPayload:         opts.MaxPayload,
		// The embedding process owns signal handling and its own shutdown.
		NoSigs: true,
		// Only the in-process connection is needed unless a port is asked for.
		DontListen: opts.ListenAddr == "",
		// The log is read for write failures even when it is discarded.
		NoLog: false,
		// The system account is of no use to a single embedded server.
		NoSystemAccount: true,
		SyncAlways:      opts.SyncAlways,
	}
	if opts.ListenAddr != "" {
		host, port, err := splitHostPort(opts.ListenAddr)
		if err != nil {
			return nil, fmt.Errorf("starting NATS server: listen address %w", err)
		}
		sopts.Host, sopts.Port = host, port
	}
	if opts.Cluster != nil {
		if err := opts.Cluster.apply(sopts); err != nil {
			return nil, fmt.Errorf("starting NATS server: %w", err)
		}
	}
	ns, err := server.NewServer(sopts)
	if err != nil {
		return nil, fmt.Errorf("starting NATS server: %w", err)
	}
	log := opts.Logger
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	fault := &faultState{changed: opts.OnStoreFault}
	ns.SetLoggerV2(&slogAdapter{log: log.With("component", "nats"), fault: fault}, false, false, false)
	timeout := opts.StartTimeout
	if timeout <= 0 {
		timeout = 30 * time.Second
	}
	before := blocks(opts.StoreDir)
	ns.Start()
	if !ns.ReadyForConnections(timeout) {
		ns.Shutdown()
		ns.WaitForShutdown()
		return nil, fmt.Errorf("starting NATS server: not ready after %s", timeout)
	}
	if !ns.JetStreamEnabled() {
		ns.Shutdown()
		ns.WaitForShutdown()
		return nil, errors.New("starting NATS server: JetStream did not start (is the store directory writable?)")
	}
	started = true
	srv := &Server{ns: ns, lock: lock, log: log, storeDir: opts.StoreDir, fault: fault, quit: make(chan struct{}),
		damaged: damagedStreams(before, blocks(opts.StoreDir))}
	if cfg := ns.JetStreamConfig(); cfg != nil {
		srv.jsConfig = *cfg
	}
	// Room for the largest message, and for the files JetStream writes as
	// it starts.
	srv.roomNeeded = max(int64(opts.MaxPayload), 1<<20) + 1<<20
	if opts.Cluster == nil {
		// A cluster node's JetStream rejoins its peers' meta group as it
		// starts; restarting it alone is not attempted.
		go srv.recoverStore(srv.quit)
	}
	return srv, nil
}

// Connect opens an in-process client connection. Reconnecting makes no sense
// for a pipe that lives as long as the server, so it is disabled: a closed
// connection means the server is gone.
func (s *Server) Connect(name string, opts ...nats.Option) (*nats.Conn, error) {
	all := append([]nats.Option{
		nats.Name(name),
		nats.InProcessServer(s.ns),
		nats.NoReconnect(),
	}, opts...)
	nc, err := nats.Connect("", all...)
	if err != nil {
		return nil, fmt.Errorf("connecting to the embedded NATS server: %w", err)
	}
	return nc, nil
}

// ClientURL is the server's TCP URL when it listens on a port, "" otherwise.
func (s *Server) ClientURL() string {
	if addr := s.ns.Addr(); addr != nil {
		return "nats://" + addr.String()
	}
	return ""
}

// Shutdown stops the server and waits until its files are closed, or ctx ends.
func (s *Server) Shutdown(ctx context.Context) error {
	done := make(chan struct{})
	go func() {
		s.stopOnce.Do(func() { close(s.quit) })
		s.ns.Shutdown()
		s.ns.WaitForShutdown()
		// The lock goes only once the files are closed.
		s.lock.Close()
		close(done)
	}()
	select {
	case <-done:
		return nil
	case <-ctx.Done():
		return fmt.Errorf("shutting down the NATS server: %w", ctx.Err())
	}
}

// slogAdapter forwards the server's printf-style log lines to slog.
// Those that report a write failing for lack of space set the store's
// fault.
type slogAdapter struct {
	log   *slog.Logger
	fault *faultState
}

func (a *slogAdapter) noteFailure(line string) {
	if storeWriteFailure(line) {
		a.fault.set(ErrStorageFull)
	}
}

// Notices (startup banners, limits) are routine for an embedded server.
func (a *slogAdapter) Noticef(format string, v ...any) { a.log.Debug(fmt.Sprintf(format, v...)) }
func (a *slogAdapter) Warnf(format string, v ...any) {
	line := fmt.Sprintf(format, v...)
	a.noteFailure(line)
	a.log.Warn(line)
}

func (a *slogAdapter) Fatalf(format string, v ...any) { a.log.Error(fmt.Sprintf(format, v...)) }

func (a *slogAdapter) Errorf(format string, v ...any) {
	line := fmt.Sprintf(format, v...)
	a.noteFailure(line)
	a.log.Error(line)
}
func (a *slogAdapter) Debugf(format string, v ...any) { a.log.Debug(fmt.Sprintf(format, v...)) }
func (a *slogAdapter) Tracef(format string, v ...any) { a.log.Debug(fmt.Sprintf(format, v...)) }
