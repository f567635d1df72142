package ui

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/knc-dev/knc/internal/routing"
	"github.com/knc-dev/knc/internal/topology"
)

// TestLayoutStopsWhenTheClientLeaves: the layout of /ui/graph.svg is the
// request's. When its client leaves, the layout's context ends with the
// client's cancellation, not 30 s later at the layout's own timeout, and
// the next request lays it out again rather than being served the
// stopped one.
func TestLayoutStopsWhenTheClientLeaves(t *testing.T) {
	table := &routing.Table{Brokers: []routing.Broker{{Source: routing.Source{Namespace: "ns", Name: "b"}, Path: routing.BrokerPath("ns", "b")}}}
	started := make(chan struct{}, 1)
	stopped := make(chan error, 1)
	var layouts atomic.Int32
	h := New(Inputs{
		Table: func() *routing.Table { return table },
		Draw: func(ctx context.Context, w io.Writer, g *topology.Graph) error {
			if layouts.Add(1) > 1 {
				_, err := io.WriteString(w, "<svg>laid out</svg>")
				return err
			}
			started <- struct{}{}
			<-ctx.Done()
			stopped <- context.Cause(ctx)
			return fmt.Errorf("%w: %w", topology.ErrLayoutStopped, context.Cause(ctx))
		},
	})
	srv := httptest.NewServer(h)
	defer srv.Close()

	ctx, leave := context.WithCancel(t.Context())
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, srv.URL+"/ui/graph.svg", nil)
	if err != nil {
		t.Fatal(err)
	}
	answered := make(chan error, 1)
	go func() {
		resp, err := http.DefaultClient.Do(req)
		if err == nil {
			resp.Body.Close()
		}
		answered <- err
	}()
	<-started
	leave()
	<-answered
	select {
	case cause := <-stopped:
		if !errors.Is(cause, context.Canceled) {
			t.Errorf("the layout stopped with %v, want the client's leaving (%v)", cause, context.Canceled)
		}
	case <-time.After(2 * layoutTimeout):
		t.Fatal("the layout did not stop after its client left")
	}

	resp, err := http.Get(srv.URL + "/ui/graph.svg")
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	body, _ := io.ReadAll(resp.Body)
	if resp.StatusCode != http.StatusOK || !strings.Contains(string(body), "laid out") {
		t.Errorf("the next request got %d %s, want the drawing laid out again", resp.StatusCode, body)
	}
	if n := layouts.Load(); n != 2 {
		t.Errorf("%d layouts, want 2: the stopped one and the next request's", n)
	}
}
