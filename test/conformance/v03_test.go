package conformance

import (
	"fmt"
	"net/http"
	"testing"
)

// TestCloudEvents03 checks CloudEvents 0.3 on a Broker and a Channel:
// test/rekt/features/knconf/data_plane.go (AcceptsCEVersions) sends 0.3
// and 1.0 and wants a 2xx; test/rekt/features/broker/data_plane.go says
// "The Broker SHOULD NOT perform an upgrade of the produced event's
// CloudEvents version" and test/rekt/features/channel/data_plane.go "The
// Channel MUST NOT perform an upgrade of the passed in version. It MUST
// emit the event with the same version."
func TestCloudEvents03(t *testing.T) {
	sub := newRecorder(t)
	sub.on("/broken", status(http.StatusBadRequest))
	dls := fmt.Sprintf("  delivery:\n    deadLetterSink:\n      uri: %s\n", sub.url("/dls"))
	k := runManifests(t,
		brokerManifest("default", "")+
			triggerManifest("all", "default", uri(sub.url("/all")), "")+
			triggerManifest("structured", "default", uri(sub.url("/structured")), "  delivery:\n    format: json\n")+
			// pkg/eventfilter/attributes/filter.go (LookupAttribute): a
			// filter on schemaurl sees a 0.3 event's schemaurl.
			triggerManifest("by-schemaurl", "default", uri(sub.url("/by-schemaurl")), "  filter:\n    attributes:\n      schemaurl: http://example.com/schema\n")+
			triggerManifest("by-cesql", "default", uri(sub.url("/by-cesql")), "  filters:\n  - cesql: \"specversion = '0.3' AND dataschema = 'http://example.com/schema'\"\n")+
			triggerManifest("broken", "default", uri(sub.url("/broken")), dls)+
			channelManifest("ch", "")+
			subscriptionManifest("ch-sub", "ch", uri(sub.url("/from-channel")), ""))

	binary03 := binary("0.3", "v03-binary", "Ce-Schemaurl", "http://example.com/schema", "Ce-Myext", "v")
	structured03 := http.Header{"Content-Type": {"application/cloudevents+json"}}
	structuredBody := `{"specversion":"0.3","id":"v03-structured","source":"/conformance/sender","type":"dev.knc.conformance","schemaurl":"http://example.com/schema","datacontenttype":"application/json","data":{"a":1}}`

	for _, target := range []struct{ name, url string }{
		{"Broker", k.BrokerURL(namespace, "default")},
		{"Channel", k.ChannelURL(namespace, "ch")},
	} {
		t.Run(target.name+" accepts 0.3 in binary mode", func(t *testing.T) {
			mustAccept(t, target.url, binary03, `{"a":1}`)
		})
		t.Run(target.name+" accepts 0.3 in structured mode", func(t *testing.T) {
			mustAccept(t, target.url, structured03, structuredBody)
		})
	}
	checkV03 := func(t *testing.T, got received) {
		t.Helper()
		if v := got.Header.Get("Ce-Specversion"); v != "0.3" {
			t.Errorf("ce-specversion = %q, want 0.3", v)
		}
		if v := got.Header.Get("Ce-Schemaurl"); v != "http://example.com/schema" {
			t.Errorf("ce-schemaurl = %q, want http://example.com/schema", v)
		}
		if v := got.Header.Get("Ce-Dataschema"); v != "" {
			t.Errorf("a 0.3 event was delivered with ce-dataschema %q", v)
		}
	}
	t.Run("Broker delivers 0.3 as 0.3", func(t *testing.T) {
		for _, id := range []string{"v03-binary", "v03-structured"} {
			checkV03(t, sub.awaitID(t, "/all", id))
		}
	})
	t.Run("Channel delivers 0.3 as 0.3", func(t *testing.T) {
		for _, id := range []string{"v03-binary", "v03-structured"} {
			checkV03(t, sub.awaitID(t, "/from-channel", id))
		}
	})
	t.Run("structured delivery keeps 0.3", func(t *testing.T) {
		got := sub.awaitID(t, "/structured", "v03-binary").structured(t)
		if got["specversion"] != "0.3" || got["schemaurl"] != "http://example.com/schema" {
			t.Errorf("structured delivery: %v", got)
		}
	})
	t.Run("attribute filter sees schemaurl", func(t *testing.T) {
		sub.awaitID(t, "/by-schemaurl", "v03-binary")
	})
	t.Run("CESQL sees specversion and dataschema as the SDK does", func(t *testing.T) {
		sub.awaitID(t, "/by-cesql", "v03-binary")
	})
	t.Run("dead letter is 0.3 with Knative's extensions", func(t *testing.T) {
		got := sub.awaitID(t, "/dls", "v03-binary")
		checkV03(t, got)
		if got.Header.Get("Ce-Knativeerrorcode") != "400" || got.Header.Get("Ce-Knativeerrordest") != sub.url("/broken") {
			t.Errorf("dead letter extensions: code %q dest %q", got.Header.Get("Ce-Knativeerrorcode"), got.Header.Get("Ce-Knativeerrordest"))
		}
	})
}
