package conformance

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/knc-dev/knc/test/rig"
)

// namespace is where every object of the suite lives.
const namespace = "conf"

// config is the project config of every run: objects default to the
// suite's namespace.
const config = `apiVersion: config.knc.dev/v1alpha1
kind: Config
defaultNamespace: conf
`

// runManifests writes manifests (a multi-document YAML stream) next to the
// suite's config and namespace and serves them with `knc run DIR`.
func runManifests(t *testing.T, manifests string, args ...string) *rig.Knc {
	t.Helper()
	dir := t.TempDir()
	files := map[string]string{
		"knc.yaml":       config,
		"namespace.yaml": "apiVersion: v1\nkind: Namespace\nmetadata:\n  name: " + namespace + "\n",
		"objects.yaml":   manifests,
	}
	for name, content := range files {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(content), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	k := rig.NewKncManifests(t, kncBinary, dir, slices.Concat([]string{"--log-level", "debug"}, args)...)
	k.Start()
	return k
}

// received is one request a recorder received.
type received struct {
	Path   string
	Header http.Header
	Body   []byte
}

// ID is the CloudEvents id of a binary or structured request.
func (r received) ID() string { return rig.EventID(r.Header, r.Body) }

// structured decodes a structured-mode body.
func (r received) structured(t *testing.T) map[string]any {
	t.Helper()
	var m map[string]any
	if err := json.Unmarshal(r.Body, &m); err != nil {
		t.Fatalf("body of a structured request: %v\n%s", err, r.Body)
	}
	return m
}

// answer writes the response to the n-th request (from 1) of one path.
type answer func(w http.ResponseWriter, r *http.Request, n int)

// recorder is a subscriber on loopback: it records every request and
// answers per path, 202 unless told otherwise.
type recorder struct {
	srv     *httptest.Server
	mu      sync.Mutex
	reqs    []received
	answers map[string]answer
	counts  map[string]int
}

func newRecorder(t *testing.T) *recorder {
	r := &recorder{answers: map[string]answer{}, counts: map[string]int{}}
	r.srv = httptest.NewServer(http.HandlerFunc(r.serve))
	t.Cleanup(r.srv.Close)
	return r
}

func (r *recorder) serve(w http.ResponseWriter, req *http.Request) {
	body, _ := io.ReadAll(req.Body)
	r.mu.Lock()
	r.reqs = append(r.reqs, received{Path: req.URL.Path, Header: req.Header.Clone(), Body: body})
	r.counts[req.URL.Path]++
	n := r.counts[req.URL.Path]
	a := r.answers[req.URL.Path]
	r.mu.Unlock()
	if a == nil {
		w.WriteHeader(http.StatusAccepted)
		return
	}
	a(w, req, n)
}

// on sets how path answers.
func (r *recorder) on(path string, a answer) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.answers[path] = a
}

// url is the absolute URL of path.
func (r *recorder) url(path string) string { return r.srv.URL + path }

// at returns what path received so far.
func (r *recorder) at(path string) []received {
	r.mu.Lock()
	defer r.mu.Unlock()
	var out []received
	for _, q := range r.reqs {
		if q.Path == path {
			out = append(out, q)
		}
	}
	return out
}

// await waits until path has received at least n requests and returns them.
func (r *recorder) await(t *testing.T, path string, n int) []received {
	t.Helper()
	rig.Eventually(t, 20*time.Second, fmt.Sprintf("%d requests to %s", n, path), func() bool {
		return len(r.at(path)) >= n
	})
	return r.at(path)
}

// awaitID waits until path has received the event id and returns the first
// request carrying it.
func (r *recorder) awaitID(t *testing.T, path, id string) received {
	t.Helper()
	var got received
	rig.Eventually(t, 20*time.Second, fmt.Sprintf("event %q at %s", id, path), func() bool {
		for _, q := range r.at(path) {
			if q.ID() == id {
				got = q
				return true
			}
		}
		return false
	})
	return got
}

// status answers every request with code.
func status(code int) answer {
	return func(w http.ResponseWriter, _ *http.Request, _ int) { w.WriteHeader(code) }
}

// failFirst answers the first n requests with 500 and then a.
func failFirst(n int, then answer) answer {
	return func(w http.ResponseWriter, r *http.Request, i int) {
		if i <= n {
			w.WriteHeader(http.StatusInternalServerError)
			return
		}
		if then == nil {
			w.WriteHeader(http.StatusAccepted)
			return
		}
		then(w, r, i)
	}
}

// replyEvent answers 200 with a binary-mode CloudEvent of type typ.
func replyEvent(typ string, extra http.Header) answer {
	return func(w http.ResponseWriter, r *http.Request, _ int) {
		h := w.Header()
		for k, v := range extra {
			h[k] = v
		}
		h.Set("Ce-Specversion", "1.0")
		h.Set("Ce-Id", "reply-"+r.Header.Get("Ce-Id"))
		h.Set("Ce-Source", "/replier")
		h.Set("Ce-Type", typ)
		h.Set("Content-Type", "text/plain")
		w.WriteHeader(http.StatusOK)
		_, _ = io.WriteString(w, "reply")
	}
}

var client = &http.Client{Timeout: 30 * time.Second}

// post sends a request with headers and body and returns the response,
// its body read.
func post(t *testing.T, method, url string, header http.Header, body string) (*http.Response, []byte) {
	t.Helper()
	req, err := http.NewRequest(method, url, strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	for k, v := range header {
		req.Header[http.CanonicalHeaderKey(k)] = v
	}
	resp, err := client.Do(req)
	if err != nil {
		t.Fatalf("%s %s: %v", method, url, err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp, b
}

// binary returns the headers of a binary-mode event of spec version
// specversion, with extra headers added.
func binary(specversion, id string, extra ...string) http.Header {
	h := http.Header{
		"Ce-Specversion": {specversion},
		"Ce-Id":          {id},
		"Ce-Source":      {"/conformance/sender"},
		"Ce-Type":        {"dev.knc.conformance"},
		"Content-Type":   {"application/json"},
	}
	for i := 0; i+1 < len(extra); i += 2 {
		h[http.CanonicalHeaderKey(extra[i])] = []string{extra[i+1]}
	}
	return h
}

// mustAccept posts a binary-mode event and fails unless it gets 202.
func mustAccept(t *testing.T, url string, h http.Header, body string) {
	t.Helper()
	resp, b := post(t, http.MethodPost, url, h, body)
	if resp.StatusCode != http.StatusAccepted {
		t.Fatalf("POST %s: %d %s, want 202", url, resp.StatusCode, bytes.TrimSpace(b))
	}
}

// brokerManifest is a Broker of the suite's namespace with an optional
// delivery block (YAML indented under spec).
func brokerManifest(name, delivery string) string {
	s := fmt.Sprintf("apiVersion: eventing.knative.dev/v1\nkind: Broker\nmetadata:\n  name: %s\n  namespace: %s\n", name, namespace)
	if delivery != "" {
		s += "spec:\n" + delivery
	}
	return s + "---\n"
}

// triggerManifest is a Trigger of broker delivering to subscriber (a YAML
// destination indented under subscriber), with optional extra spec fields.
func triggerManifest(name, broker, subscriber, extra string) string {
	return fmt.Sprintf("apiVersion: eventing.knative.dev/v1\nkind: Trigger\nmetadata:\n  name: %s\n  namespace: %s\nspec:\n  broker: %s\n  subscriber:\n%s%s---\n",
		name, namespace, broker, subscriber, extra)
}

// channelManifest is a Channel of the suite's namespace.
func channelManifest(name, delivery string) string {
	s := fmt.Sprintf("apiVersion: messaging.knative.dev/v1\nkind: Channel\nmetadata:\n  name: %s\n  namespace: %s\n", name, namespace)
	if delivery != "" {
		s += "spec:\n" + delivery
	}
	return s + "---\n"
}

// subscriptionManifest is a Subscription of channel; subscriber and extra
// are YAML under spec.
func subscriptionManifest(name, channel, subscriber, extra string) string {
	return fmt.Sprintf("apiVersion: messaging.knative.dev/v1\nkind: Subscription\nmetadata:\n  name: %s\n  namespace: %s\nspec:\n  channel:\n    apiVersion: messaging.knative.dev/v1\n    kind: Channel\n    name: %s\n  subscriber:\n%s%s---\n",
		name, namespace, channel, subscriber, extra)
}

// uri is a destination YAML body with an absolute URI, indented for a
// field under spec.
func uri(u string) string { return "    uri: " + u + "\n" }

// ref is a destination YAML body referring to a Broker or Channel.
func ref(kind, name string) string {
	api := "eventing.knative.dev/v1"
	if kind == "Channel" {
		api = "messaging.knative.dev/v1"
	}
	return fmt.Sprintf("    ref:\n      apiVersion: %s\n      kind: %s\n      name: %s\n", api, kind, name)
}
