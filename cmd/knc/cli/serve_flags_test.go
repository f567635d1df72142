package cli

import (
	"bufio"
	"bytes"
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"fmt"
	"io"
	"math/big"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/knc-dev/knc/internal/routing"
)

// syncBuffer is a bytes.Buffer that a running command and the test may
// use at once.
type syncBuffer struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (b *syncBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.Write(p)
}

func (b *syncBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.String()
}

// writeSelfSigned writes a certificate for 127.0.0.1 and its key into dir.
func writeSelfSigned(t *testing.T, dir string) (certFile, keyFile string, pool *x509.CertPool) {
	t.Helper()
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	tmpl := &x509.Certificate{
		SerialNumber: big.NewInt(1), Subject: pkix.Name{CommonName: "knc"},
		NotBefore: time.Now().Add(-time.Hour), NotAfter: time.Now().Add(time.Hour),
		KeyUsage: x509.KeyUsageDigitalSignature | x509.KeyUsageCertSign, ExtKeyUsage: []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth},
		IPAddresses: []net.IP{net.IPv4(127, 0, 0, 1)}, BasicConstraintsValid: true, IsCA: true,
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	if err != nil {
		t.Fatal(err)
	}
	keyDER, err := x509.MarshalECPrivateKey(key)
	if err != nil {
		t.Fatal(err)
	}
	certFile, keyFile = filepath.Join(dir, "tls.crt"), filepath.Join(dir, "tls.key")
	if err := os.WriteFile(certFile, pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der}), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(keyFile, pem.EncodeToMemory(&pem.Block{Type: "EC PRIVATE KEY", Bytes: keyDER}), 0o600); err != nil {
		t.Fatal(err)
	}
	cert, err := x509.ParseCertificate(der)
	if err != nil {
		t.Fatal(err)
	}
	pool = x509.NewCertPool()
	pool.AddCert(cert)
	return certFile, keyFile, pool
}

// TestRunServesTLSWithBearerTokens runs knc run with --tls-cert, --tls-key
// and --bearer-tokens, as a Deployment with a TLS Secret and a token
// Secret mounted would, and posts events over HTTPS with and without the
// token.
func TestRunServesTLSWithBearerTokens(t *testing.T) {
	dir := t.TempDir()
	certFile, keyFile, pool := writeSelfSigned(t, dir)
	tokens := filepath.Join(dir, "tokens")
	if err := os.Mkdir(tokens, 0o700); err != nil {
		t.Fatal(err)
	}
	// A mounted Secret also holds ..data and a timestamped directory.
	if err := os.Mkdir(filepath.Join(tokens, "..2026_01_01"), 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(tokens, "broker.shop.orders"), []byte("first-token\nsecond-token\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	tableFile := writeShopTable(t, dir)

	base, _ := startRun(t, dir, "--table", tableFile, "--tls-cert", certFile, "--tls-key", keyFile,
		"--bearer-tokens", tokens, "--max-concurrent-requests", "64", "--read-timeout", "500ms", "--write-timeout", "500ms")
	client := &http.Client{Transport: &http.Transport{TLSClientConfig: &tls.Config{RootCAs: pool}}}
	post := func(broker, token string) int { return postEvent(t, client, base, broker, token) }
	got := map[string]int{
		"orders without a token":  post("orders", ""),
		"orders with a wrong one": post("orders", "nope"),
		"orders with the first":   post("orders", "first-token"),
		"orders with the second":  post("orders", "second-token"),
		"public without a token":  post("public", ""),
	}
	want := map[string]int{
		"orders without a token":  http.StatusUnauthorized,
		"orders with a wrong one": http.StatusUnauthorized,
		"orders with the first":   http.StatusAccepted,
		"orders with the second":  http.StatusAccepted,
		"public without a token":  http.StatusAccepted,
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("answers (-want +got):\n%s", diff)
	}

	// A body trickled over TLS for longer than --read-timeout gets 408,
	// though --write-timeout, equal as by default, has passed as well.
	conn, err := tls.Dial("tcp", strings.TrimPrefix(base, "https://"), &tls.Config{RootCAs: pool})
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	began := time.Now()
	head := "POST " + routing.BrokerPath("shop", "public") + " HTTP/1.1\r\nHost: knc\r\nCe-Specversion: 1.0\r\nCe-Id: slow\r\n" +
		"Ce-Source: /test\r\nCe-Type: t\r\nContent-Length: 1000\r\n\r\n"
	if _, err := conn.Write([]byte(head)); err != nil {
		t.Fatal(err)
	}
	go func() {
		for range 100 {
			if _, err := conn.Write([]byte("x")); err != nil {
				return
			}
			time.Sleep(50 * time.Millisecond)
		}
	}()
	if err := conn.SetReadDeadline(time.Now().Add(5 * time.Second)); err != nil {
		t.Fatal(err)
	}
	resp, err := http.ReadResponse(bufio.NewReader(conn), nil)
	if err != nil {
		t.Fatalf("no answer to a body sent too slowly over TLS: %v", err)
	}
	resp.Body.Close()
	if took := time.Since(began); resp.StatusCode != http.StatusRequestTimeout || took > 3*time.Second {
		t.Errorf("a body sent too slowly over TLS got %d after %s, want 408 soon after --read-timeout and --write-timeout 500ms", resp.StatusCode, took)
	}
}

// TestBearerTokensReload changes the --bearer-tokens directory while knc
// run serves, as the kubelet does when the mounted Secret changes: a token
// is revoked, and a stray README and a file for a Broker that does not
// exist appear in the same reload. The revocation applies, the other
// tokens stay in force, and both stray files are reported.
func TestBearerTokensReload(t *testing.T) {
	dir := t.TempDir()
	tokens := filepath.Join(dir, "tokens")
	if err := os.Mkdir(tokens, 0o700); err != nil {
		t.Fatal(err)
	}
	// A file is replaced by a rename, so that a reload never reads half
	// of it.
	write := func(name, content string) {
		t.Helper()
		tmp := filepath.Join(dir, "new-"+name)
		if err := os.WriteFile(tmp, []byte(content), 0o600); err != nil {
			t.Fatal(err)
		}
		if err := os.Rename(tmp, filepath.Join(tokens, name)); err != nil {
			t.Fatal(err)
		}
	}
	write("broker.shop.orders", "kept-token\nrevoked-token\n")
	write("broker.shop.public", "public-token\n")
	tableFile := writeShopTable(t, dir)

	base, stderr := startRun(t, dir, "--table", tableFile, "--bearer-tokens", tokens, "--bearer-tokens-reload-interval", "50ms")
	post := func(broker, token string) int { return postEvent(t, http.DefaultClient, base, broker, token) }
	answers := func() map[string]int {
		return map[string]int{
			"orders, kept token":    post("orders", "kept-token"),
			"orders, revoked token": post("orders", "revoked-token"),
			"public, its token":     post("public", "public-token"),
			"public, no such token": post("public", "kept-token"),
		}
	}
	before := map[string]int{
		"orders, kept token":    http.StatusAccepted,
		"orders, revoked token": http.StatusAccepted,
		"public, its token":     http.StatusAccepted,
		"public, no such token": http.StatusUnauthorized,
	}
	if diff := cmp.Diff(before, answers()); diff != "" {
		t.Fatalf("answers before the change (-want +got):\n%s", diff)
	}

	write("README", "These files are the ingress tokens.\n")
	write("broker.shop.missing", "token-of-nothing\n")
	write("broker.shop.orders", "kept-token\n")

	after := map[string]int{
		"orders, kept token":    http.StatusAccepted,
		"orders, revoked token": http.StatusUnauthorized,
		"public, its token":     http.StatusAccepted,
		"public, no such token": http.StatusUnauthorized,
	}
	reported := []string{
		`level=WARN msg="bearer token file skipped; the other files apply" problem="` + filepath.Join(tokens, "README") + `: name it broker.NAMESPACE.NAME, channel.NAMESPACE.NAME or admin"`,
		`level=WARN msg="bearer tokens for an ingress this runtime does not serve; check the file's name" path=/brokers/shop/missing`,
	}
	deadline := time.Now().Add(30 * time.Second)
	for {
		got := answers()
		log := stderr.String()
		var missing []string
		for _, line := range reported {
			if !strings.Contains(log, line) {
				missing = append(missing, line)
			}
		}
		diff := cmp.Diff(after, got)
		if diff == "" && len(missing) == 0 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("30s after the change, answers (-want +got):\n%s\nnot logged: %q\nlog:\n%s", diff, missing, log)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// TestBearerTokensUnreadableFailClosed empties the token file of a Broker
// while knc run serves, then replaces it by a FIFO, then by blank lines:
// each time the Broker keeps its token, /readyz says its tokens cannot be
// read, and a change to another file in the same reload applies, so that
// the FIFO never blocked the reload. The Broker accepted requests without
// a token before.
func TestBearerTokensUnreadableFailClosed(t *testing.T) {
	dir := t.TempDir()
	tokens := filepath.Join(dir, "tokens")
	if err := os.Mkdir(tokens, 0o700); err != nil {
		t.Fatal(err)
	}
	replace := func(name string, make func(path string) error) {
		t.Helper()
		tmp := filepath.Join(dir, "new-"+name)
		if err := make(tmp); err != nil {
			t.Fatal(err)
		}
		if err := os.Rename(tmp, filepath.Join(tokens, name)); err != nil {
			t.Fatal(err)
		}
	}
	write := func(name, content string) {
		t.Helper()
		replace(name, func(p string) error { return os.WriteFile(p, []byte(content), 0o600) })
	}
	write("broker.shop.orders", "orders-token\n")
	write("broker.shop.public", "public-0\n")
	tableFile := writeShopTable(t, dir)
	base, stderr := startRun(t, dir, "--table", tableFile, "--bearer-tokens", tokens, "--bearer-tokens-reload-interval", "50ms")

	readyz := func() string {
		resp, err := http.Get(base + "/readyz")
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		return fmt.Sprintf("%d %s", resp.StatusCode, b)
	}
	kept := "200 ready\nthe bearer tokens of /brokers/shop/orders cannot be read: its previous tokens stay in force\n"
	for i, breakFile := range []struct {
		name string
		make func(path string) error
	}{
		{"emptied", func(p string) error { return os.WriteFile(p, nil, 0o600) }},
		{"a FIFO", func(p string) error { return syscall.Mkfifo(p, 0o600) }},
		{"blank lines", func(p string) error { return os.WriteFile(p, []byte("\n  \n\n"), 0o600) }},
	} {
		publicToken := fmt.Sprintf("public-%d", i+1)
		replace("broker.shop.orders", breakFile.make)
		write("broker.shop.public", publicToken+"\n")
		eventually(t, 30*time.Second, "the public token to be rotated, with the orders file "+breakFile.name, func() bool {
			return postEvent(t, http.DefaultClient, base, "public", publicToken) == http.StatusAccepted
		})
		got := map[string]int{
			"orders, no token":  postEvent(t, http.DefaultClient, base, "orders", ""),
			"orders, its token": postEvent(t, http.DefaultClient, base, "orders", "orders-token"),
		}
		want := map[string]int{"orders, no token": http.StatusUnauthorized, "orders, its token": http.StatusAccepted}
		if diff := cmp.Diff(want, got); diff != "" {
			t.Errorf("orders file %s: answers (-want +got):\n%s", breakFile.name, diff)
		}
		if got := readyz(); got != kept {
			t.Errorf("orders file %s: /readyz = %q, want %q", breakFile.name, got, kept)
		}
	}
	if log := stderr.String(); !strings.Contains(log, `level=WARN msg="bearer token file cannot be read; its ingress keeps its previous tokens, or refuses every request if it has none" problem="`+filepath.Join(tokens, "broker.shop.orders")+`: not a regular file (it is a named pipe)`) {
		t.Errorf("the FIFO is not reported:\n%s", log)
	}

	write("broker.shop.orders", "orders-new\n")
	eventually(t, 30*time.Second, "the orders file to be read again", func() bool {
		return postEvent(t, http.DefaultClient, base, "orders", "orders-new") == http.StatusAccepted
	})
	if got := readyz(); got != "200 ready\n" {
		t.Errorf("/readyz once the file is read = %q, want 200 ready", got)
	}
}

// eventually polls cond until it holds, and fails the test after timeout.
func eventually(t *testing.T, timeout time.Duration, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(timeout)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out after %s waiting for %s", timeout, what)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// writeShopTable writes a routing table of the Brokers shop/orders and
// shop/public into dir, and returns its path.
func writeShopTable(t *testing.T, dir string) string {
	t.Helper()
	table := &routing.Table{APIVersion: routing.APIVersion, Kind: routing.Kind, Brokers: []routing.Broker{
		{Source: routing.Source{Namespace: "shop", Name: "orders"}, Path: routing.BrokerPath("shop", "orders")},
		{Source: routing.Source{Namespace: "shop", Name: "public"}, Path: routing.BrokerPath("shop", "public")},
	}}
	b, err := routing.Encode(table)
	if err != nil {
		t.Fatal(err)
	}
	tableFile := filepath.Join(dir, "table.json")
	if err := os.WriteFile(tableFile, b, 0o600); err != nil {
		t.Fatal(err)
	}
	return tableFile
}

// startRun runs knc run with args in this process, its data in dir, on a
// free loopback port, until the test ends, and returns the base URL it
// serves on and what it writes to stderr.
func startRun(t *testing.T, dir string, args ...string) (string, *syncBuffer) {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	stderr := &syncBuffer{}
	done := make(chan int, 1)
	args = append([]string{"run", "--http-addr", "127.0.0.1:0", "--data-dir", filepath.Join(dir, "data")}, args...)
	go func() { done <- run(ctx, args, nil, &bytes.Buffer{}, stderr) }()
	t.Cleanup(func() {
		cancel()
		select {
		case code := <-done:
			if code != exitOK {
				t.Errorf("knc run exited with %d:\n%s", code, stderr.String())
			}
		case <-time.After(30 * time.Second):
			t.Error("knc run still running 30s after its context ended")
		}
	})
	ready := regexp.MustCompile(`knc: serving .* on (https?://\S+)`)
	deadline := time.Now().Add(30 * time.Second)
	for {
		if m := ready.FindStringSubmatch(stderr.String()); m != nil {
			return m[1], stderr
		}
		if time.Now().After(deadline) {
			t.Fatalf("knc run not serving after 30s:\n%s", stderr.String())
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// postEvent posts an event to the Broker shop/broker of base, with token
// unless it is empty, and returns the status code.
func postEvent(t *testing.T, client *http.Client, base, broker, token string) int {
	t.Helper()
	req, err := http.NewRequest(http.MethodPost, base+routing.BrokerPath("shop", broker), strings.NewReader("{}"))
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Ce-Specversion", "1.0")
	req.Header.Set("Ce-Id", "1")
	req.Header.Set("Ce-Source", "/test")
	req.Header.Set("Ce-Type", "t")
	if token != "" {
		req.Header.Set("Authorization", "Bearer "+token)
	}
	resp, err := client.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	return resp.StatusCode
}
