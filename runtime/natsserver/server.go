package natsserver

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"os"
	"strconv"
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
	// StartTimeout bounds how long Start waits for the server to be ready;
	// JetStream recovers its streams from disk during that time. Default 30s.
	StartTimeout time.Duration
	// Logger receives the server's own log lines; nil discards them.
	Logger *slog.Logger
}

// Server is a running embedded NATS server.
type Server struct {
	ns *server.Server
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
		NoLog:      opts.Logger == nil,
		// The system account is of no use to a single embedded server.
		NoSystemAccount: true,
	}
	if opts.ListenAddr != "" {
		host, port, err := net.SplitHostPort(opts.ListenAddr)
		if err != nil {
			return nil, fmt.Errorf("starting NATS server: listen address %q: %w", opts.ListenAddr, err)
		}
		p, err := strconv.Atoi(port)
		if err != nil {
			return nil, fmt.Errorf("starting NATS server: listen port %q: %w", port, err)
		}
		sopts.Host, sopts.Port = host, p
	}
	ns, err := server.NewServer(sopts)
	if err != nil {
		return nil, fmt.Errorf("starting NATS server: %w", err)
	}
	if opts.Logger != nil {
		ns.SetLoggerV2(&slogAdapter{log: opts.Logger.With("component", "nats")}, false, false, false)
	}
	timeout := opts.StartTimeout
	if timeout <= 0 {
		timeout = 30 * time.Second
	}
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
	return &Server{ns: ns}, nil
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
		s.ns.Shutdown()
		s.ns.WaitForShutdown()
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
type slogAdapter struct{ log *slog.Logger }

// Notices (startup banners, limits) are routine for an embedded server.
func (a *slogAdapter) Noticef(format string, v ...any) { a.log.Debug(fmt.Sprintf(format, v...)) }
func (a *slogAdapter) Warnf(format string, v ...any)   { a.log.Warn(fmt.Sprintf(format, v...)) }
func (a *slogAdapter) Fatalf(format string, v ...any)  { a.log.Error(fmt.Sprintf(format, v...)) }
func (a *slogAdapter) Errorf(format string, v ...any)  { a.log.Error(fmt.Sprintf(format, v...)) }
func (a *slogAdapter) Debugf(format string, v ...any)  { a.log.Debug(fmt.Sprintf(format, v...)) }
func (a *slogAdapter) Tracef(format string, v ...any)  { a.log.Debug(fmt.Sprintf(format, v...)) }
