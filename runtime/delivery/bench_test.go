package delivery

import (
	"bytes"
	"context"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/cloudevents/sdk-go/v2/event"

	"github.com/knc-dev/knc/internal/routing"
)

// BenchmarkAttempt measures one delivery of a 1 KiB event to a subscriber
// on 127.0.0.1 that answers 202, next to a plain net/http POST of the same
// payload to the same server: the difference is what knc adds per attempt.
func BenchmarkAttempt(b *testing.B) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		io.Copy(io.Discard, r.Body)
		w.WriteHeader(http.StatusAccepted)
	}))
	defer srv.Close()
	e := event.New()
	e.SetID("42")
	e.SetSource("/orders")
	e.SetType("order.created")
	e.SetExtension("tenant", "acme")
	e.SetTime(time.Now())
	e.SetDataContentType("application/json")
	e.DataEncoded = []byte(`{"order":"` + strings.Repeat("x", 1024-12) + `"}`)
	ctx := context.Background()

	for _, parallel := range []bool{false, true} {
		name := "serial"
		if parallel {
			name = "parallel"
		}
		b.Run(name+"/knc", func(b *testing.B) {
			sender := NewSender()
			run(b, parallel, func() {
				if r := sender.Attempt(ctx, &e, srv.URL, routing.FormatBinary, 10*time.Second); !r.Success {
					b.Fatalf("attempt failed: %+v", r)
				}
			})
		})
		b.Run(name+"/knc-shared-encoding", func(b *testing.B) {
			// As each delivery of a fan-out sends: the event encoded once.
			sender := NewSender()
			enc, err := Encode(&e, routing.FormatBinary, "")
			if err != nil {
				b.Fatal(err)
			}
			o := Options{Format: routing.FormatBinary, Timeout: 10 * time.Second, Encoded: enc}
			run(b, parallel, func() {
				if r := sender.Send(ctx, &e, srv.URL, o); !r.Success {
					b.Fatalf("attempt failed: %+v", r)
				}
			})
		})
		b.Run(name+"/nethttp", func(b *testing.B) {
			client := &http.Client{Transport: NewSender().Client.Transport}
			run(b, parallel, func() {
				resp, err := client.Post(srv.URL, "application/json", bytes.NewReader(e.DataEncoded))
				if err != nil {
					b.Fatal(err)
				}
				io.Copy(io.Discard, resp.Body)
				resp.Body.Close()
			})
		})
	}
}

func run(b *testing.B, parallel bool, attempt func()) {
	b.ReportAllocs()
	if !parallel {
		for b.Loop() {
			attempt()
		}
		return
	}
	b.SetParallelism(8)
	b.RunParallel(func(pb *testing.PB) {
		for pb.Next() {
			attempt()
		}
	})
}
