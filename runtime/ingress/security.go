package ingress

import (
	"crypto/sha256"
	"crypto/subtle"
	"crypto/tls"
	"fmt"
	"log/slog"
	"maps"
	"net"
	"net/http"
	"os"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/prometheus/client_golang/prometheus"
)

// TLSFiles serve the HTTP listener over TLS with a certificate and key in
// PEM files, such as the tls.crt and tls.key of a kubernetes.io/tls Secret.
// The files are read again when they change, so a renewed certificate is
// served without a restart.
type TLSFiles struct {
	CertFile, KeyFile string
}

// certReloadInterval is how often the certificate files are checked for a
// change, at most.
const certReloadInterval = 10 * time.Second

// certificate holds the certificate being served and reloads it from its
// files when they change.
type certificate struct {
	files   TLSFiles
	log     *slog.Logger
	metrics *tlsMetrics

	mu      sync.Mutex
	cert    *tls.Certificate
	modTime time.Time
	checked time.Time
	lastErr string // of the last failed reload, logged once
}

// tlsMetrics say whether a renewed certificate was taken, and until when
// the one served is valid: a renewal that fails is otherwise unnoticed
// until clients refuse the expired certificate.
type tlsMetrics struct {
	failures prometheus.Counter
	expiry   prometheus.Gauge
}

func newTLSMetrics(reg prometheus.Registerer) *tlsMetrics {
	m := &tlsMetrics{
		failures: prometheus.NewCounter(prometheus.CounterOpts{Name: "knc_tls_reload_failures_total",
			Help: "Failed reloads of the TLS certificate files; the previous certificate stays in service."}),
		expiry: prometheus.NewGauge(prometheus.GaugeOpts{Name: "knc_tls_certificate_expiry_timestamp_seconds",
			Help: "When the TLS certificate being served expires, in seconds since the Unix epoch."}),
	}
	reg.MustRegister(m.failures, m.expiry)
	return m
}

func loadCertificate(files TLSFiles, log *slog.Logger, metrics *tlsMetrics) (*certificate, error) {
	c := &certificate{files: files, log: log, metrics: metrics}
	if err := c.reload(time.Now()); err != nil {
		return nil, err
	}
	return c, nil
}

func (c *certificate) reload(now time.Time) error {
	info, err := os.Stat(c.files.CertFile)
	if err != nil {
		return fmt.Errorf("TLS certificate: %w", err)
	}
	c.checked = now
	if c.cert != nil && info.ModTime().Equal(c.modTime) {
		return nil
	}
	cert, err := tls.LoadX509KeyPair(c.files.CertFile, c.files.KeyFile)
	if err != nil {
		return fmt.Errorf("TLS certificate: %w", err)
	}
	c.cert, c.modTime = &cert, info.ModTime()
	if c.metrics != nil && cert.Leaf != nil {
		c.metrics.expiry.Set(float64(cert.Leaf.NotAfter.Unix()))
	}
	return nil
}

// get serves tls.Config.GetCertificate. A certificate that fails to load
// keeps the previous one in service.
func (c *certificate) get(*tls.ClientHelloInfo) (*tls.Certificate, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if now := time.Now(); now.Sub(c.checked) >= certReloadInterval {
		c.reloadOrReport(now)
	}
	return c.cert, nil
}

// reloadOrReport reloads the certificate; a failure is counted each time
// and logged once for each different reason, with the expiry of the
// certificate that stays in service.
func (c *certificate) reloadOrReport(now time.Time) {
	err := c.reload(now)
	if err == nil {
		c.lastErr = ""
		return
	}
	c.checked = now
	if c.metrics != nil {
		c.metrics.failures.Inc()
	}
	if err.Error() == c.lastErr || c.log == nil {
		return
	}
	c.lastErr = err.Error()
	attrs := []any{"cert_file", c.files.CertFile, "key_file", c.files.KeyFile, "error", err}
	if c.cert != nil && c.cert.Leaf != nil {
		attrs = append(attrs, "serving_until", c.cert.Leaf.NotAfter.UTC().Format(time.RFC3339))
	}
	c.log.Error("could not reload the TLS certificate; the previous one stays in service", attrs...)
}

func newTLSConfig(files TLSFiles, log *slog.Logger, metrics *tlsMetrics) (*tls.Config, error) {
	c, err := loadCertificate(files, log, metrics)
	if err != nil {
		return nil, err
	}
	return &tls.Config{
		MinVersion:     tls.VersionTLS12,
		GetCertificate: c.get,
		NextProtos:     []string{"h2", "http/1.1"},
	}, nil
}

// BearerTokens are the tokens each ingress accepts, by the path of its
// Broker or Channel (/brokers/NAMESPACE/NAME). A request to an ingress that
// has tokens must carry one in "Authorization: Bearer TOKEN", or gets 401;
// an ingress not named takes any request. Several tokens let one be
// rotated without refusing senders that still use the previous one.
//
// An ingress named with no token is one whose tokens could not be read (a
// token file emptied, unreadable, or not a regular file): it stays
// protected. It keeps the tokens it had, or, when it never had any,
// refuses every request with 503 until its tokens can be read. Failing
// open would let anyone send events while a Secret is being rewritten.
type BearerTokens map[string][]string

// tokenSet holds the digests of each path's tokens: comparing fixed-size
// digests in constant time tells nothing about a token's length or prefix.
// A path with no digest refuses every request.
type tokenSet map[string][][sha256.Size]byte

// tokenState is what the ingresses check requests against, and which of
// them could not read their tokens.
type tokenState struct {
	set tokenSet
	// unread holds the ingresses whose tokens could not be read: true
	// for one that keeps its previous tokens, false for one that refuses
	// every request.
	unread map[string]bool
}

func digests(list []string) [][sha256.Size]byte {
	var out [][sha256.Size]byte
	for _, tok := range list {
		if tok = strings.TrimSpace(tok); tok != "" {
			out = append(out, sha256.Sum256([]byte(tok)))
		}
	}
	return out
}

// SetBearerTokens replaces the tokens the ingresses accept, for a rotated
// Secret; requests already admitted are not checked again. An ingress
// named with no token keeps the tokens it had, or refuses every request
// (see BearerTokens).
func (s *Server) SetBearerTokens(tokens BearerTokens) {
	s.tokenMu.Lock()
	defer s.tokenMu.Unlock()
	var prev tokenSet
	if old := s.tokens.Load(); old != nil {
		prev = old.set
	}
	next := &tokenState{set: tokenSet{}, unread: map[string]bool{}}
	for path, list := range tokens {
		d := digests(list)
		if len(d) == 0 {
			d = prev[path]
			next.unread[path] = len(d) > 0
		}
		next.set[path] = d
	}
	s.tokens.Store(next)
	s.tokensUnread.Reset()
	for path, kept := range next.unread {
		fallback := "refuse"
		if kept {
			fallback = "previous"
		}
		s.tokensUnread.WithLabelValues(path, fallback).Set(1)
	}
}

// tokenTrouble says, for /readyz, which ingresses could not read their
// bearer tokens and what they do meanwhile; "" when all could.
func (s *Server) tokenTrouble() string {
	st := s.tokens.Load()
	if st == nil || len(st.unread) == 0 {
		return ""
	}
	var b strings.Builder
	for _, path := range slices.Sorted(maps.Keys(st.unread)) {
		if st.unread[path] {
			fmt.Fprintf(&b, "the bearer tokens of %s cannot be read: its previous tokens stay in force\n", path)
		} else {
			fmt.Fprintf(&b, "the bearer tokens of %s cannot be read: it refuses every request\n", path)
		}
	}
	return strings.TrimSuffix(b.String(), "\n")
}

// authorized checks the bearer token of a request to the ingress at path,
// and answers 401 when it is missing or wrong, and 503 when the ingress's
// tokens could not be read.
func (s *Server) authorized(w http.ResponseWriter, r *http.Request, path string) bool {
	st := s.tokens.Load()
	if st == nil {
		return true
	}
	want, protected := st.set[path]
	if !protected {
		return true
	}
	if len(want) == 0 {
		s.unavailable(w, "the bearer tokens of this ingress cannot be read; no request is accepted until they can")
		return false
	}
	auth := r.Header.Get("Authorization")
	scheme, tok, ok := strings.Cut(auth, " ")
	if ok && strings.EqualFold(scheme, "Bearer") {
		got := sha256.Sum256([]byte(strings.TrimSpace(tok)))
		match := 0
		for _, w := range want {
			match |= subtle.ConstantTimeCompare(got[:], w[:])
		}
		if match == 1 {
			return true
		}
	}
	w.Header().Set("WWW-Authenticate", `Bearer realm="knc"`)
	s.reject(w, http.StatusUnauthorized, "a valid bearer token is required")
	return false
}

// AdminTokenPath is the key of BearerTokens whose tokens authorise the
// kept-letter API of the admin listener (knc dlq).
const AdminTokenPath = "/dlq"

// authorizedAdmin checks a request to the kept-letter API: it must carry
// a token of AdminTokenPath when there is one; without one, only a
// client on the loopback interface (knc run on a workstation, or a port
// forwarded to the pod, which the cluster authorised) is served, and any
// other is refused with 403. Event data is behind it: failing open is
// never right.
func (s *Server) authorizedAdmin(w http.ResponseWriter, r *http.Request) bool {
	if st := s.tokens.Load(); st != nil {
		if _, protected := st.set[AdminTokenPath]; protected {
			return s.authorized(w, r, AdminTokenPath)
		}
	}
	host, _, err := net.SplitHostPort(r.RemoteAddr)
	if ip := net.ParseIP(host); err == nil && ip != nil && ip.IsLoopback() {
		return true
	}
	s.reject(w, http.StatusForbidden, "the kept-letter API needs a bearer token: put one in the file admin of the --bearer-tokens directory")
	return false
}
