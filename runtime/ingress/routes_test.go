package ingress_test

import (
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/knc-dev/knc/runtime/engine"
)

// TestHandlerRoutes checks which part of the main listener answers each
// path, with the live page off: the probes and reports, the kept-letter
// API's pointer to the admin listener, and the ingress for everything
// else, /ui included.
func TestHandlerRoutes(t *testing.T) {
	rec := newRecorder(t)
	e := startEngine(t, engine.Options{Table: brokerTable(trigger("t", rec.srv.URL, nil))})
	for _, tc := range []struct {
		path     string
		wantCode int
		wantBody string
	}{
		{"/healthz", http.StatusOK, "ok"},
		{"/readyz", http.StatusOK, "ready"},
		{"/status", http.StatusOK, `"items"`},
		{"/metrics", http.StatusOK, "# HELP"},
		{"/dlq/letters", http.StatusNotFound, "served on the admin listener only"},
		{"/ui", http.StatusNotFound, "no broker or channel at /ui"},
		{"/brokers/ns/missing", http.StatusNotFound, "no broker or channel at /brokers/ns/missing"},
	} {
		t.Run(tc.path, func(t *testing.T) {
			w := httptest.NewRecorder()
			e.Ingress().Handler().ServeHTTP(w, httptest.NewRequest(http.MethodGet, tc.path, nil))
			body, _ := io.ReadAll(w.Result().Body)
			if w.Code != tc.wantCode || !strings.Contains(string(body), tc.wantBody) {
				t.Errorf("GET %s = %d %q, want %d with %q", tc.path, w.Code, body, tc.wantCode, tc.wantBody)
			}
		})
	}
}
