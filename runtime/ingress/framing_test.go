package ingress

import (
	"bufio"
	"io"
	"log/slog"
	"net"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
)

func TestFramingScanMarksTheAmbiguousRequest(t *testing.T) {
	const (
		plain     = "POST /a HTTP/1.1\r\nHost: x\r\nContent-Length: 2\r\n\r\n{}"
		get       = "GET /healthz HTTP/1.1\r\nHost: x\r\n\r\n"
		chunked   = "POST /a HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\n\r\n0\r\n\r\n"
		ambiguous = "POST /a HTTP/1.1\r\nHost: x\r\ncontent-length: 5\r\ntransfer-encoding: chunked\r\n\r\n0\r\n\r\n"
	)
	tests := []struct {
		name  string
		input string
		// want is the number of the request marked ambiguous, 0 for none.
		want int
	}{
		{"one plain request", plain, 0},
		{"a chunked request", chunked, 0},
		{"both headers", ambiguous, 1},
		{"both headers after two pipelined requests", plain + get + ambiguous, 3},
		{"a body that looks like headers is skipped", "POST /a HTTP/1.1\r\nContent-Length: 49\r\n\r\nTransfer-Encoding: chunked\r\nContent-Length: 1\r\n\r\n" + ambiguous, 2},
		{"bare line feeds", "POST /a HTTP/1.1\nContent-Length: 1\nTransfer-Encoding: chunked\n\n0\n\n", 1},
		{"blank lines before the request line", "\r\n\r\n" + ambiguous, 1},
		{"nothing after a chunked request is scanned", chunked + ambiguous, 0},
		{"an invalid length stops the scan", "POST /a HTTP/1.1\r\nContent-Length: x\r\n\r\n" + ambiguous, 0},
	}
	for _, tt := range tests {
		for _, size := range []int{1, 3, 7, len(tt.input)} {
			c := &framingConn{}
			for rest := tt.input; rest != ""; {
				n := min(size, len(rest))
				c.scan([]byte(rest[:n]))
				rest = rest[n:]
			}
			if diff := cmp.Diff(tt.want, c.ambiguous); diff != "" {
				t.Errorf("%s, read %d bytes at a time: ambiguous request (-want +got):\n%s", tt.name, size, diff)
			}
		}
	}
}

func TestHeaderEndAcrossReads(t *testing.T) {
	block := "GET / HTTP/1.1\r\nHost: x\r\n\r\n"
	for split := 1; split < len(block); split++ {
		kept, rest := []byte(block[:split]), []byte(block[split:]+"tail")
		if strings.Contains(block[:split], "\r\n\r\n") {
			continue
		}
		if got, want := headerEnd(kept, rest), len(block)-split; got != want {
			t.Errorf("split at %d: headerEnd = %d, want %d", split, got, want)
		}
	}
}

// BenchmarkFramingScan is the scan's cost per request on a keep-alive
// connection: a binary-mode event of 1 KiB, read 4 KiB at a time.
func BenchmarkFramingScan(b *testing.B) {
	body := strings.Repeat("x", 1024)
	request := "POST /brokers/ns/default HTTP/1.1\r\nHost: knc-ingress.ns.svc.cluster.local\r\nUser-Agent: Go-http-client/1.1\r\n" +
		"Ce-Specversion: 1.0\r\nCe-Id: 0b5c7f1e-3f1c-4d3b-9f7e-1c2d3e4f5a6b\r\nCe-Source: /shop/eu\r\nCe-Type: com.example.order.created\r\n" +
		"Ce-Time: 2024-05-06T07:08:09Z\r\nContent-Type: application/json\r\nContent-Length: 1024\r\nTraceparent: 00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01\r\n\r\n" + body
	stream := []byte(strings.Repeat(request, 64))
	b.SetBytes(int64(len(request)))
	b.ReportAllocs()
	c := &framingConn{}
	n := 0
	for b.Loop() {
		if n == 0 {
			c = &framingConn{}
			for off := 0; off < len(stream); off += 4096 {
				c.scan(stream[off:min(off+4096, len(stream))])
			}
		}
		n = (n + 1) % 64
	}
	if c.scanned != 64 || c.ambiguous != 0 {
		b.Fatalf("scanned %d requests, ambiguous %d; want 64 and 0", c.scanned, c.ambiguous)
	}
}

// FuzzFramingScan holds the scan to one answer however the connection's
// bytes are split into reads: the requests counted and the one marked
// ambiguous are those of the whole stream read at once.
func FuzzFramingScan(f *testing.F) {
	f.Add([]byte("POST /a HTTP/1.1\r\nContent-Length: 2\r\n\r\n{}POST /a HTTP/1.1\r\nContent-Length: 1\r\nTransfer-Encoding: chunked\r\n\r\n0\r\n\r\n"), uint8(3))
	f.Add([]byte("\r\n\nGET / HTTP/1.1\n\nPOST / HTTP/1.1\r\ncontent-length: 0\r\n\r\n"), uint8(1))
	f.Fuzz(func(t *testing.T, stream []byte, size uint8) {
		whole := &framingConn{}
		whole.scan(stream)
		split := &framingConn{}
		step := int(size%16) + 1
		for off := 0; off < len(stream); off += step {
			split.scan(stream[off:min(off+step, len(stream))])
		}
		if whole.scanned != split.scanned || whole.ambiguous != split.ambiguous {
			t.Errorf("read whole: %d requests, ambiguous %d; read %d bytes at a time: %d, ambiguous %d",
				whole.scanned, whole.ambiguous, step, split.scanned, split.ambiguous)
		}
	})
}

// TestAmbiguousRequestAfterOptionsStar pipelines OPTIONS * before a
// request with both Content-Length and Transfer-Encoding: net/http answers
// OPTIONS * itself unless told not to, which would leave the handler one
// request behind the scan, and the second request unrefused.
func TestAmbiguousRequestAfterOptionsStar(t *testing.T) {
	s := &Server{log: slog.New(slog.DiscardHandler)}
	srv := s.newHTTPServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) { w.WriteHeader(http.StatusAccepted) }), nil)
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	go func() { _ = srv.Serve(framingListener{ln}) }()
	t.Cleanup(func() { _ = srv.Close() })

	conn, err := net.Dial("tcp", ln.Addr().String())
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	if _, err := conn.Write([]byte("OPTIONS * HTTP/1.1\r\nHost: knc\r\n\r\n" +
		"POST /a HTTP/1.1\r\nHost: knc\r\nContent-Length: 5\r\nTransfer-Encoding: chunked\r\n\r\n0\r\n\r\n")); err != nil {
		t.Fatal(err)
	}
	if err := conn.SetReadDeadline(time.Now().Add(10 * time.Second)); err != nil {
		t.Fatal(err)
	}
	r := bufio.NewReader(conn)
	var codes []int
	for {
		resp, err := http.ReadResponse(r, nil)
		if err != nil {
			break
		}
		_, _ = io.Copy(io.Discard, resp.Body)
		resp.Body.Close()
		codes = append(codes, resp.StatusCode)
	}
	if len(codes) != 2 || codes[1] != http.StatusBadRequest {
		t.Errorf("answers = %v, want the second to be 400", codes)
	}
}
