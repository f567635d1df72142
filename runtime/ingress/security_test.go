package ingress_test

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"io"
	"log/slog"
	"math/big"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/prometheus/client_golang/prometheus"

	"github.com/knc-dev/knc/internal/routing"
	"github.com/knc-dev/knc/runtime/engine"
	"github.com/knc-dev/knc/runtime/ingress"
)

// selfSigned writes a self-signed certificate for 127.0.0.1 and its key,
// and returns their files and a pool that trusts the certificate.
func selfSigned(t *testing.T, dir, name string) (ingress.TLSFiles, *x509.CertPool) {
	t.Helper()
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	tmpl := &x509.Certificate{
		SerialNumber:          big.NewInt(time.Now().UnixNano()),
		Subject:               pkix.Name{CommonName: name},
		NotBefore:             time.Now().Add(-time.Hour),
		NotAfter:              time.Now().Add(time.Hour),
		KeyUsage:              x509.KeyUsageDigitalSignature | x509.KeyUsageCertSign,
		ExtKeyUsage:           []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth},
		IPAddresses:           []net.IP{net.IPv4(127, 0, 0, 1)},
		BasicConstraintsValid: true,
		IsCA:                  true,
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	if err != nil {
		t.Fatal(err)
	}
	keyDER, err := x509.MarshalECPrivateKey(key)
	if err != nil {
		t.Fatal(err)
	}
	files := ingress.TLSFiles{CertFile: filepath.Join(dir, "tls.crt"), KeyFile: filepath.Join(dir, "tls.key")}
	if err := os.WriteFile(files.CertFile, pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der}), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(files.KeyFile, pem.EncodeToMemory(&pem.Block{Type: "EC PRIVATE KEY", Bytes: keyDER}), 0o600); err != nil {
		t.Fatal(err)
	}
	cert, err := x509.ParseCertificate(der)
	if err != nil {
		t.Fatal(err)
	}
	pool := x509.NewCertPool()
	pool.AddCert(cert)
	return files, pool
}

func ceRequest(t *testing.T, url, id string) *http.Request {
	t.Helper()
	req, err := http.NewRequest(http.MethodPost, url, strings.NewReader(`{"n":1}`))
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Ce-Specversion", "1.0")
	req.Header.Set("Ce-Id", id)
	req.Header.Set("Ce-Source", "/test")
	req.Header.Set("Ce-Type", "t")
	return req
}

func statusOf(t *testing.T, c *http.Client, req *http.Request) int {
	t.Helper()
	resp, err := c.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	return resp.StatusCode
}

// TestTLSIngress serves the ingress over TLS with a self-signed certificate:
// a client that trusts it is accepted, plain HTTP and an untrusting client
// are not.
func TestTLSIngress(t *testing.T) {
	sub := newRecorder(t)
	files, pool := selfSigned(t, t.TempDir(), "knc-test")
	e := startEngine(t, engine.Options{Table: brokerTable(trigger("a", sub.srv.URL, nil)), TLS: &files})
	if !strings.HasPrefix(e.URL(), "https://127.0.0.1:") {
		t.Fatalf("URL = %q, want https on loopback", e.URL())
	}
	trusting := &http.Client{Transport: &http.Transport{TLSClientConfig: &tls.Config{RootCAs: pool}}}
	if code := statusOf(t, trusting, ceRequest(t, e.URL()+"/brokers/ns/b", "over-tls")); code != http.StatusAccepted {
		t.Fatalf("POST over TLS = %d, want 202", code)
	}
	eventually(t, 10*time.Second, "the delivery", func() bool { return sub.count() == 1 })

	if _, err := (&http.Client{}).Do(ceRequest(t, e.URL()+"/brokers/ns/b", "untrusted")); err == nil {
		t.Error("a client that does not trust the certificate was served")
	}
	plain := "http://" + strings.TrimPrefix(e.URL(), "https://")
	if resp, err := http.DefaultClient.Do(ceRequest(t, plain+"/brokers/ns/b", "plain")); err == nil {
		resp.Body.Close()
		if resp.StatusCode == http.StatusAccepted {
			t.Error("plain HTTP was accepted on the TLS listener")
		}
	}
	if n := sub.count(); n != 1 {
		t.Errorf("%d deliveries, want only the one sent over TLS", n)
	}
}

// TestTLSCertificateReload replaces the certificate files and checks that
// new connections get the new certificate.
func TestTLSCertificateReload(t *testing.T) {
	dir := t.TempDir()
	files, oldPool := selfSigned(t, dir, "first")
	e := startEngine(t, engine.Options{Table: brokerTable(), TLS: &files})
	get := func(pool *x509.CertPool) error {
		c := &http.Client{Transport: &http.Transport{TLSClientConfig: &tls.Config{RootCAs: pool}, DisableKeepAlives: true}}
		resp, err := c.Get(e.URL() + "/healthz")
		if err == nil {
			resp.Body.Close()
		}
		return err
	}
	if err := get(oldPool); err != nil {
		t.Fatal(err)
	}
	// A later modification time than the first files, whatever the
	// file system's timestamp resolution.
	_, newPool := selfSigned(t, dir, "second")
	later := time.Now().Add(time.Minute)
	if err := os.Chtimes(files.CertFile, later, later); err != nil {
		t.Fatal(err)
	}
	eventually(t, 2*ingress.CertReloadInterval+5*time.Second, "the new certificate to be served", func() bool {
		return get(newPool) == nil
	})
}

func TestBearerTokens(t *testing.T) {
	sub := newRecorder(t)
	table := brokerTable(trigger("a", sub.srv.URL, nil))
	table.Brokers = append(table.Brokers, routing.Broker{
		Source:   routing.Source{Namespace: "ns", Name: "open"},
		Path:     routing.BrokerPath("ns", "open"),
		Triggers: []routing.Trigger{trigger("o", sub.srv.URL, nil)},
	})
	e := startEngine(t, engine.Options{Table: table, BearerTokens: ingress.BearerTokens{
		routing.BrokerPath("ns", "b"): {"s3cret", "next-secret"},
	}})
	secured := e.URL() + routing.BrokerPath("ns", "b")
	with := func(auth string) *http.Request {
		r := ceRequest(t, secured, "id-"+auth)
		if auth != "" {
			r.Header.Set("Authorization", auth)
		}
		return r
	}
	tests := []struct {
		name string
		req  *http.Request
		want int
	}{
		{"no token", with(""), http.StatusUnauthorized},
		{"wrong token", with("Bearer nope"), http.StatusUnauthorized},
		{"prefix of the token", with("Bearer s3c"), http.StatusUnauthorized},
		{"basic scheme", with("Basic czNjcmV0"), http.StatusUnauthorized},
		{"token", with("Bearer s3cret"), http.StatusAccepted},
		{"second token", with("bearer next-secret"), http.StatusAccepted},
		{"broker without tokens", ceRequest(t, e.URL()+routing.BrokerPath("ns", "open"), "open"), http.StatusAccepted},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			resp, err := http.DefaultClient.Do(tt.req)
			if err != nil {
				t.Fatal(err)
			}
			resp.Body.Close()
			if resp.StatusCode != tt.want {
				t.Errorf("status = %d, want %d", resp.StatusCode, tt.want)
			}
			if tt.want == http.StatusUnauthorized && resp.Header.Get("WWW-Authenticate") == "" {
				t.Error("401 without WWW-Authenticate")
			}
		})
	}
	// Rotation: the old token stops working, the new one works.
	e.SetBearerTokens(ingress.BearerTokens{routing.BrokerPath("ns", "b"): {"rotated"}})
	if code := statusOf(t, http.DefaultClient, with("Bearer s3cret")); code != http.StatusUnauthorized {
		t.Errorf("old token after rotation = %d, want 401", code)
	}
	if code := statusOf(t, http.DefaultClient, with("Bearer rotated")); code != http.StatusAccepted {
		t.Errorf("new token after rotation = %d, want 202", code)
	}
	eventually(t, 10*time.Second, "4 deliveries", func() bool { return sub.count() == 4 })
}

// syncBuffer is a log destination tests read while the runtime writes.
type syncBuffer struct {
	mu sync.Mutex
	b  strings.Builder
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

// TestTLSReloadFailureIsReported breaks the certificate files, as a failed
// renewal does: the previous certificate stays in service, and the failure
// is logged with its reason and counted, next to the expiry of the
// certificate served. It was silently ignored before.
func TestTLSReloadFailureIsReported(t *testing.T) {
	dir := t.TempDir()
	files, pool := selfSigned(t, dir, "first")
	var logs syncBuffer
	reg := prometheus.NewRegistry()
	e := startEngine(t, engine.Options{Table: brokerTable(), TLS: &files, Registry: reg,
		Logger: slog.New(slog.NewTextHandler(&logs, nil))})
	get := func() error {
		c := &http.Client{Transport: &http.Transport{TLSClientConfig: &tls.Config{RootCAs: pool}, DisableKeepAlives: true}}
		resp, err := c.Get(e.URL() + "/healthz")
		if err == nil {
			resp.Body.Close()
		}
		return err
	}
	if err := get(); err != nil {
		t.Fatal(err)
	}
	cert, err := tls.LoadX509KeyPair(files.CertFile, files.KeyFile)
	if err != nil {
		t.Fatal(err)
	}
	if got, want := gauge(t, reg, "knc_tls_certificate_expiry_timestamp_seconds"), float64(cert.Leaf.NotAfter.Unix()); got != want {
		t.Errorf("knc_tls_certificate_expiry_timestamp_seconds = %v, want %v", got, want)
	}

	if err := os.WriteFile(files.CertFile, []byte("not a certificate\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	later := time.Now().Add(time.Minute)
	if err := os.Chtimes(files.CertFile, later, later); err != nil {
		t.Fatal(err)
	}
	eventually(t, 2*ingress.CertReloadInterval+5*time.Second, "the failed reload to be counted", func() bool {
		if err := get(); err != nil {
			t.Fatalf("the previous certificate is no longer served: %v", err)
		}
		return counter(t, reg, "knc_tls_reload_failures_total") > 0
	})
	log := logs.String()
	for _, want := range []string{"could not reload the TLS certificate; the previous one stays in service", "cert_file=" + files.CertFile, "failed to find any PEM data", "serving_until="} {
		if !strings.Contains(log, want) {
			t.Errorf("log lacks %q:\n%s", want, log)
		}
	}
}

func gauge(t *testing.T, reg *prometheus.Registry, name string) float64 {
	t.Helper()
	families, err := reg.Gather()
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range families {
		if f.GetName() == name && len(f.GetMetric()) == 1 {
			return f.GetMetric()[0].GetGauge().GetValue()
		}
	}
	t.Fatalf("no gauge %s", name)
	return 0
}

// TestUnreadableBearerTokensFailClosed gives an ingress no token, as the
// runtime does when its token file is emptied, replaced by a FIFO or left
// with blank lines: the ingress keeps the tokens it had, one that never
// had any refuses every request, and /readyz and a metric say so. Such an
// ingress accepted requests without a token before.
func TestUnreadableBearerTokensFailClosed(t *testing.T) {
	sub := newRecorder(t)
	table := brokerTable(trigger("a", sub.srv.URL, nil))
	table.Brokers = append(table.Brokers, routing.Broker{
		Source:   routing.Source{Namespace: "ns", Name: "locked"},
		Path:     routing.BrokerPath("ns", "locked"),
		Triggers: []routing.Trigger{trigger("l", sub.srv.URL, nil)},
	})
	reg := prometheus.NewRegistry()
	secured, locked := routing.BrokerPath("ns", "b"), routing.BrokerPath("ns", "locked")
	e := startEngine(t, engine.Options{Table: table, Registry: reg, BearerTokens: ingress.BearerTokens{
		secured: {"s3cret"},
		locked:  nil,
	}})
	send := func(path, token string) int {
		r := ceRequest(t, e.URL()+path, "id")
		if token != "" {
			r.Header.Set("Authorization", "Bearer "+token)
		}
		return statusOf(t, http.DefaultClient, r)
	}
	answers := func() map[string]int {
		return map[string]int{
			"secured, no token":  send(secured, ""),
			"secured, its token": send(secured, "s3cret"),
			"locked, no token":   send(locked, ""),
			"locked, some token": send(locked, "s3cret"),
		}
	}
	readyz := func() (int, string) {
		resp, err := http.Get(e.URL() + "/readyz")
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		return resp.StatusCode, string(b)
	}
	unreadable := func() map[string]float64 {
		families, err := reg.Gather()
		if err != nil {
			t.Fatal(err)
		}
		got := map[string]float64{}
		for _, f := range families {
			if f.GetName() != "knc_ingress_bearer_tokens_unreadable" {
				continue
			}
			for _, m := range f.GetMetric() {
				var labels []string
				for _, l := range m.GetLabel() {
					labels = append(labels, l.GetName()+"="+l.GetValue())
				}
				got[strings.Join(labels, ",")] = m.GetGauge().GetValue()
			}
		}
		return got
	}
	lockedLine := "the bearer tokens of /brokers/ns/locked cannot be read: it refuses every request"
	keptLine := "the bearer tokens of /brokers/ns/b cannot be read: its previous tokens stay in force"

	want := map[string]int{
		"secured, no token":  http.StatusUnauthorized,
		"secured, its token": http.StatusAccepted,
		"locked, no token":   http.StatusServiceUnavailable,
		"locked, some token": http.StatusServiceUnavailable,
	}
	if diff := cmp.Diff(want, answers()); diff != "" {
		t.Errorf("answers at start (-want +got):\n%s", diff)
	}
	if code, body := readyz(); code != http.StatusOK || body != "ready\n"+lockedLine+"\n" {
		t.Errorf("/readyz at start = %d %q, want 200 naming the locked ingress", code, body)
	}

	// The secured Broker's file is emptied.
	e.SetBearerTokens(ingress.BearerTokens{secured: {"", "  "}, locked: nil})
	if diff := cmp.Diff(want, answers()); diff != "" {
		t.Errorf("answers once the tokens cannot be read (-want +got):\n%s", diff)
	}
	if code, body := readyz(); code != http.StatusOK || body != "ready\n"+keptLine+"\n"+lockedLine+"\n" {
		t.Errorf("/readyz = %d %q, want 200 naming both ingresses", code, body)
	}
	wantGauge := map[string]float64{
		"fallback=previous,ingress=/brokers/ns/b":    1,
		"fallback=refuse,ingress=/brokers/ns/locked": 1,
	}
	if diff := cmp.Diff(wantGauge, unreadable()); diff != "" {
		t.Errorf("knc_ingress_bearer_tokens_unreadable (-want +got):\n%s", diff)
	}

	// The files are readable again.
	e.SetBearerTokens(ingress.BearerTokens{secured: {"rotated"}, locked: {"opened"}})
	if code := send(secured, "s3cret"); code != http.StatusUnauthorized {
		t.Errorf("the previous token once new ones are read = %d, want 401", code)
	}
	if code := send(locked, "opened"); code != http.StatusAccepted {
		t.Errorf("the locked Broker with its token = %d, want 202", code)
	}
	if code, body := readyz(); code != http.StatusOK || body != "ready\n" {
		t.Errorf("/readyz = %d %q, want 200 ready", code, body)
	}
	if diff := cmp.Diff(map[string]float64{}, unreadable()); diff != "" {
		t.Errorf("knc_ingress_bearer_tokens_unreadable once read (-want +got):\n%s", diff)
	}
}
