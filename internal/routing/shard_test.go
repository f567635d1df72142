package routing

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
)

// largeTable has a Broker with triggers Triggers, a few small Brokers, a
// Channel with subscriptions Subscriptions, 40 PingSources, 40 other
// sources, and as many
// Sequences and Parallels as a hundredth of Triggers.
func largeTable(triggers, subscriptions int) *Table {
	t := &Table{APIVersion: APIVersion, Kind: Kind}
	for _, name := range []string{"a", "big", "c"} {
		b := Broker{Source: Source{Namespace: "shop", Name: name}, Path: BrokerPath("shop", name),
			Delivery: &Delivery{Retry: 2, BackoffDelay: Duration(time.Second)}}
		n := 2
		if name == "big" {
			n = triggers
		}
		for i := range n {
			b.Triggers = append(b.Triggers, Trigger{
				Source:     Source{Namespace: "shop", Name: fmt.Sprintf("%s-trigger-%05d", name, i), SpecHash: "0123456789"},
				Filters:    []Filter{{Exact: map[string]string{"type": fmt.Sprintf("com.example.order.%d", i)}}},
				Subscriber: Destination{URI: fmt.Sprintf("http://orders-%d.shop.svc.cluster.local/events", i)},
			})
		}
		t.Brokers = append(t.Brokers, b)
	}
	c := Channel{Source: Source{Namespace: "shop", Name: "audit"}, Path: ChannelPath("shop", "audit")}
	for i := range subscriptions {
		c.Subscriptions = append(c.Subscriptions, Subscription{
			Source:     Source{Namespace: "shop", Name: fmt.Sprintf("audit-%05d", i)},
			Subscriber: &Destination{URI: fmt.Sprintf("http://audit-%d.shop.svc.cluster.local/", i)},
		})
	}
	t.Channels = append(t.Channels, c)
	// PingSources come last, so that parts of small tables hold some
	// without the Broker they send to.
	for i := range 40 {
		t.PingSources = append(t.PingSources, PingSource{
			Source:   Source{Namespace: "shop", Name: fmt.Sprintf("tick-%02d", i)},
			Schedule: "*/5 * * * *", Timezone: "Europe/Paris", ContentType: "application/json", Data: fmt.Sprintf(`{"tick":%d}`, i),
			Extensions: map[string]string{"team": "shop"},
			Sink:       Destination{URI: "http://knc-ingress.shop.svc.cluster.local/brokers/shop/a"}, SinkPath: BrokerPath("shop", "a"),
		})
	}
	for i := range 40 {
		t.Sources = append(t.Sources, EventSource{
			Source: Source{Namespace: "shop", Name: fmt.Sprintf("watch-%02d", i)}, APIVersion: "sources.knative.dev/v1", Kind: "ApiServerSource",
			Extensions: map[string]string{"team": "shop"},
			Sink:       Destination{URI: "http://knc-ingress.shop.svc.cluster.local/channels/shop/audit"}, SinkPath: ChannelPath("shop", "audit"),
		})
	}
	for i := range triggers/100 + 1 {
		name := fmt.Sprintf("flow-%05d", i)
		t.Sequences = append(t.Sequences, Sequence{Source: Source{Namespace: "shop", Name: name},
			Channels: []string{name + "-kn-sequence-0"}, Subscriptions: []string{name + "-kn-sequence-0"}})
		t.Parallels = append(t.Parallels, Parallel{Source: Source{Namespace: "shop", Name: name}, Channel: name + "-kn-parallel",
			Branches: []Branch{{Channel: name + "-kn-parallel-0", FilterSubscription: name + "-kn-parallel-filter-0", Subscription: name + "-kn-parallel-0"}}})
	}
	return t
}

// TestSplitMerge splits tables of several sizes: every part fits, and the
// parts merge back into the table, read from a directory as the runtime
// reads the mounted ConfigMaps.
func TestSplitMerge(t *testing.T) {
	const limit = 1<<20 - 4<<10
	tests := []struct {
		name                    string
		triggers, subscriptions int
		maxBytes                int
		wantParts               int // 0: more than one
	}{
		{name: "fits", triggers: 10, subscriptions: 3, maxBytes: limit, wantParts: 1},
		{name: "ten thousand triggers", triggers: 10000, subscriptions: 3, maxBytes: limit},
		{name: "many subscriptions", triggers: 10, subscriptions: 12000, maxBytes: limit},
		{name: "small parts", triggers: 300, subscriptions: 300, maxBytes: 16 << 10},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			want := largeTable(tt.triggers, tt.subscriptions)
			parts, err := Split(want, tt.maxBytes)
			if err != nil {
				t.Fatal(err)
			}
			if tt.wantParts > 0 && len(parts) != tt.wantParts || tt.wantParts == 0 && len(parts) < 2 {
				t.Fatalf("%d parts, want %d (0: several)", len(parts), tt.wantParts)
			}
			dir := t.TempDir()
			for i, p := range parts {
				b, err := Encode(p)
				if err != nil {
					t.Fatal(err)
				}
				if len(b) > tt.maxBytes {
					t.Errorf("part %d takes %d bytes, more than %d", i, len(b), tt.maxBytes)
				}
				name := ShardFile(i)
				if len(parts) == 1 {
					name = "table.json"
				}
				if err := os.WriteFile(filepath.Join(dir, name), b, 0o600); err != nil {
					t.Fatal(err)
				}
			}
			path := dir
			if len(parts) == 1 {
				path = filepath.Join(dir, "table.json")
			}
			got, _, err := Read(path)
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(want, got); diff != "" {
				t.Errorf("merged table (-want +got):\n%s", diff)
			}
		})
	}
}

func TestMergeRejects(t *testing.T) {
	parts, err := Split(largeTable(400, 10), 32<<10)
	if err != nil {
		t.Fatal(err)
	}
	if len(parts) < 3 {
		t.Fatalf("%d parts, want at least 3", len(parts))
	}
	other, err := Split(largeTable(401, 10), 32<<10)
	if err != nil {
		t.Fatal(err)
	}
	changed := func(i int, change func(*Table)) *Table {
		c := *parts[i]
		c.Brokers = append([]Broker(nil), c.Brokers...)
		change(&c)
		return &c
	}
	tests := []struct {
		name  string
		parts []*Table
		want  string
	}{
		{"missing part", parts[1:], "parts 0 of"},
		{"part twice", append([]*Table{parts[0]}, parts...), "part 0 twice"},
		{"parts of two tables", append([]*Table{other[0]}, parts[1:]...), "of table"},
		{"whole table among parts", append([]*Table{largeTable(1, 1)}, parts[1:]...), "no shard"},
		{"broker differs", append([]*Table{changed(0, func(c *Table) {
			c.Brokers[len(c.Brokers)-1].Path = "/brokers/shop/elsewhere"
		})}, parts[1:]...), "differs between parts"},
		{"trigger twice", append([]*Table{changed(1, func(c *Table) {
			c.Brokers[0].Triggers = append(c.Brokers[0].Triggers, parts[0].Brokers[len(parts[0].Brokers)-1].Triggers[0])
		})}, append([]*Table{parts[0]}, parts[2:]...)...), "is in two parts"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := Merge(tt.parts)
			if err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Errorf("Merge = %v, %v; want an error with %q", got != nil, err, tt.want)
			}
		})
	}
}

func TestReadRejectsAPartAlone(t *testing.T) {
	parts, err := Split(largeTable(400, 10), 32<<10)
	if err != nil {
		t.Fatal(err)
	}
	b, err := Encode(parts[1])
	if err != nil {
		t.Fatal(err)
	}
	file := filepath.Join(t.TempDir(), "table.json")
	if err := os.WriteFile(file, b, 0o600); err != nil {
		t.Fatal(err)
	}
	if _, _, err := Read(file); err == nil || !strings.Contains(err.Error(), "read the directory") {
		t.Errorf("Read = %v, want an error saying to read the directory", err)
	}
	if _, _, err := Read(t.TempDir()); err == nil || !strings.Contains(err.Error(), "no routing-table-0.json") {
		t.Errorf("Read of an empty directory = %v", err)
	}
}

// BenchmarkReadTenThousandTriggers reads a table of 10,000 Triggers split
// across ConfigMap-sized files, as the runtime does when it starts.
func BenchmarkReadTenThousandTriggers(b *testing.B) {
	parts, err := Split(largeTable(10000, 0), 1<<20-4<<10)
	if err != nil {
		b.Fatal(err)
	}
	dir := b.TempDir()
	for i, p := range parts {
		data, err := Encode(p)
		if err != nil {
			b.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(dir, ShardFile(i)), data, 0o600); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric(float64(len(parts)), "files")
	for b.Loop() {
		if _, _, err := Read(dir); err != nil {
			b.Fatal(err)
		}
	}
}
