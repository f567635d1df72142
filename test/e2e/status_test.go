package e2e

import (
	"encoding/json"
	"io"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/knc-dev/knc/internal/routing"
	"github.com/knc-dev/knc/test/rig"
)

type statusList struct {
	Items []statusObject `json:"items"`
}

type statusObject struct {
	APIVersion string `json:"apiVersion"`
	Kind       string `json:"kind"`
	Metadata   struct {
		Namespace string `json:"namespace"`
		Name      string `json:"name"`
	} `json:"metadata"`
	Status struct {
		ObservedGeneration int64 `json:"observedGeneration"`
		Conditions         []struct {
			Type               string `json:"type"`
			Status             string `json:"status"`
			Reason             string `json:"reason"`
			Message            string `json:"message"`
			Severity           string `json:"severity"`
			LastTransitionTime string `json:"lastTransitionTime"`
		} `json:"conditions"`
		Address *struct {
			URL string `json:"url"`
		} `json:"address"`
		SubscriberURI        string `json:"subscriberUri"`
		DeadLetterSinkURI    string `json:"deadLetterSinkUri"`
		PhysicalSubscription *struct {
			SubscriberURI     string `json:"subscriberUri"`
			ReplyURI          string `json:"replyUri"`
			DeadLetterSinkURI string `json:"deadLetterSinkUri"`
		} `json:"physicalSubscription"`
		Subscribers []struct {
			ObservedGeneration int64  `json:"observedGeneration"`
			Ready              string `json:"ready"`
			Message            string `json:"message"`
		} `json:"subscribers"`
		SinkURI      string `json:"sinkUri"`
		CEAttributes []struct {
			Type   string `json:"type"`
			Source string `json:"source"`
		} `json:"ceAttributes"`
	} `json:"status"`
}

func getStatus(t *testing.T, k *knc) map[string]statusObject {
	t.Helper()
	resp, err := http.Get(k.URL() + "/status")
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var list statusList
	if err := json.NewDecoder(resp.Body).Decode(&list); err != nil {
		t.Fatal(err)
	}
	out := map[string]statusObject{}
	for _, o := range list.Items {
		out[o.Kind+"/"+o.Metadata.Name] = o
	}
	return out
}

// condition returns "Status Reason" of a condition, "" when absent.
func (o statusObject) condition(typ string) string {
	for _, c := range o.Status.Conditions {
		if c.Type == typ {
			return c.Status + " " + c.Reason
		}
	}
	return ""
}

func (o statusObject) transition(typ string) string {
	for _, c := range o.Status.Conditions {
		if c.Type == typ {
			return c.LastTransitionTime
		}
	}
	return ""
}

func TestStatusAndHeldEvents(t *testing.T) {
	sub := newSubscriber(t)
	ref := func(kind, name string) *routing.Ref {
		api := "eventing.knative.dev/v1"
		if kind == "Channel" {
			api = "messaging.knative.dev/v1"
		}
		if kind == "Service" {
			api = "serving.knative.dev/v1"
		}
		return &routing.Ref{APIVersion: api, Kind: kind, Namespace: "e2e", Name: name}
	}
	main := broker("main",
		trig("ok", sub.url("/ok"), nil),
		routing.Trigger{Source: obj("missing"), Subscriber: routing.Destination{Ref: ref("Service", "fn")}},
		routing.Trigger{Source: obj("to-later"), Subscriber: routing.Destination{Ref: ref("Channel", "later")}},
	)
	main.Source.Generation = 7
	main.Delivery = &routing.Delivery{DeadLetterSink: &routing.Destination{Ref: ref("Channel", "dead")}}
	tbl := table([]routing.Broker{main},
		channel("dead", routing.Subscription{Source: obj("dead-sub"), Subscriber: &routing.Destination{URI: sub.url("/dead")}}),
		channel("chan",
			routing.Subscription{Source: obj("s-ok"), Subscriber: &routing.Destination{URI: sub.url("/s")}},
			routing.Subscription{Source: obj("s-bad"), Subscriber: &routing.Destination{URI: sub.url("/s")},
				Reply: &routing.Destination{Ref: ref("Broker", "nope")}},
		),
	)
	k := startKnc(t, tbl)
	st := getStatus(t, k)

	checks := []struct {
		object, condition, want string
	}{
		{"Broker/main", "Ready", "True Ready"},
		{"Broker/main", "Addressable", "True AddressSet"},
		{"Broker/main", "IngressReady", "True IngressReady"},
		{"Broker/main", "DeadLetterSinkResolved", "True Resolved"},
		{"Trigger/ok", "Ready", "True Ready"},
		{"Trigger/ok", "BrokerReady", "True BrokerReady"},
		{"Trigger/ok", "SubscriberResolved", "True Resolved"},
		{"Trigger/missing", "Ready", "False Unresolved"},
		{"Trigger/missing", "SubscriberResolved", "False Unresolved"},
		{"Trigger/to-later", "Ready", "False Unresolved"},
		{"Channel/dead", "Ready", "True Ready"},
		{"Channel/chan", "Ready", "False SubscribersNotReady"},
		{"Channel/chan", "SubscribersReady", "False SubscribersNotReady"},
		{"Subscription/s-bad", "Ready", "False Unresolved"},
		{"Subscription/s-bad", "ReferencesResolved", "False Unresolved"},
		{"Subscription/s-ok", "ReferencesResolved", "True Resolved"},
		{"Subscription/s-ok", "ChannelReady", "False ChannelNotReady"},
		{"Subscription/dead-sub", "Ready", "True Ready"},
	}
	for _, c := range checks {
		if got := st[c.object].condition(c.condition); got != c.want {
			t.Errorf("%s %s = %q, want %q", c.object, c.condition, got, c.want)
		}
	}
	b := st["Broker/main"]
	if b.APIVersion != "eventing.knative.dev/v1" || b.Status.ObservedGeneration != 7 {
		t.Errorf("broker apiVersion %q observedGeneration %d, want eventing.knative.dev/v1 and 7", b.APIVersion, b.Status.ObservedGeneration)
	}
	if b.Status.Address == nil || b.Status.Address.URL != k.brokerURL("main") {
		t.Errorf("broker address = %+v, want %s", b.Status.Address, k.brokerURL("main"))
	}
	if b.Status.DeadLetterSinkURI != k.channelURL("dead") {
		t.Errorf("broker deadLetterSinkUri = %q, want %q", b.Status.DeadLetterSinkURI, k.channelURL("dead"))
	}
	if got := st["Trigger/ok"]; got.Status.SubscriberURI != sub.url("/ok") || got.Status.ObservedGeneration != 1 {
		t.Errorf("trigger ok: subscriberUri %q observedGeneration %d", got.Status.SubscriberURI, got.Status.ObservedGeneration)
	}
	if got := st["Trigger/missing"].Status.SubscriberURI; got != "" {
		t.Errorf("unresolved trigger subscriberUri = %q, want empty", got)
	}
	if ps := st["Subscription/s-ok"].Status.PhysicalSubscription; ps == nil || ps.SubscriberURI != sub.url("/s") {
		t.Errorf("s-ok physicalSubscription = %+v", ps)
	}
	if subs := st["Channel/chan"].Status.Subscribers; len(subs) != 2 || subs[0].Ready != "True" || subs[1].Ready != "False" {
		t.Errorf("channel subscribers = %+v, want ready True then False", subs)
	}
	for _, o := range st {
		for _, c := range o.Status.Conditions {
			if _, err := time.Parse(time.RFC3339, c.LastTransitionTime); err != nil || c.Severity != "" {
				t.Errorf("%s/%s condition %s: lastTransitionTime %q, severity %q", o.Kind, o.Metadata.Name, c.Type, c.LastTransitionTime, c.Severity)
			}
		}
	}

	// Events for unresolved triggers are held, not dropped.
	for _, id := range []string{"h1", "h2", "h3"} {
		mustSend(t, k.brokerURL("main"), event{id: id, typ: "t"})
	}
	sub.waitFor(t, "/ok", 3)

	// Adding the channel the trigger refers to makes it ready, and the held
	// events flow on, through the channel, to its subscription.
	okSince := st["Trigger/ok"].transition("Ready")
	rig.Eventually(t, 5*time.Second, "the clock to move past the first status", func() bool {
		return time.Now().UTC().Format(time.RFC3339) != okSince
	})
	tbl.Channels = append(tbl.Channels, channel("later", routing.Subscription{Source: obj("later-sub"), Subscriber: &routing.Destination{URI: sub.url("/later")}}))
	k.Reload(tbl)
	rig.Eventually(t, 10*time.Second, "trigger to-later to become ready", func() bool {
		return getStatus(t, k)["Trigger/to-later"].condition("Ready") == "True Ready"
	})
	if got := ids(sub.waitFor(t, "/later", 3)); len(got) != 3 || got[0] != "h1" || got[2] != "h3" {
		t.Errorf("held events delivered after reload = %v, want h1 h2 h3", got)
	}
	st = getStatus(t, k)
	if got := st["Trigger/ok"].transition("Ready"); got != okSince {
		t.Errorf("trigger ok Ready lastTransitionTime moved from %s to %s without a status change", okSince, got)
	}
	if got := st["Trigger/to-later"].transition("Ready"); got == okSince {
		t.Errorf("trigger to-later Ready lastTransitionTime did not move when it became True")
	}
	if st["Trigger/missing"].condition("Ready") != "False Unresolved" {
		t.Errorf("trigger missing became ready")
	}
	if got := metric(t, k.URL(), "knc_events_dropped_total", nil); got != 0 {
		t.Errorf("knc_events_dropped_total = %v, want 0: held events must not be dropped", got)
	}
}

// TestStatusAndLogsMaskSecrets serves Triggers whose subscriber URIs carry
// a password, a user name alone, a token in the query, one in a path
// parameter and one in the fragment: /status, which anyone who reaches the
// listener reads, and the log of a failed delivery show them masked. Both
// showed them whole before, and the user name, path parameter and
// fragment until internal/redact masked every part of a URI that can hold
// a credential.
func TestStatusAndLogsMaskSecrets(t *testing.T) {
	sub := newSubscriber(t)
	withSecrets := strings.Replace(sub.url("/hook?token=s3cr3t-token"), "http://", "http://ops:hunter2-pw@", 1)
	userOnly := strings.Replace(sub.url("/in;sig=p4th-s3cret#fr4g-s3cret"), "http://", "http://T0KEN-u5er@", 1)
	down := strings.Replace(closedPort(t), "http://", "http://T0KEN-u5er@", 1) + "down;sig=p4th-s3cret?token=s3cr3t-token#fr4g-s3cret"
	k := startKnc(t, table([]routing.Broker{broker("b",
		trig("ok", withSecrets, nil),
		trig("user", userOnly, nil),
		trig("down", down, &routing.Delivery{}))}))
	secrets := []string{"hunter2-pw", "s3cr3t-token", "T0KEN-u5er", "p4th-s3cret", "fr4g-s3cret"}

	st := getStatus(t, k)
	for name, want := range map[string]string{
		"Trigger/ok":   strings.Replace(sub.url("/hook?token=xxxxx"), "http://", "http://xxxxx@", 1),
		"Trigger/user": strings.Replace(sub.url("/in;sig=xxxxx#xxxxx"), "http://", "http://xxxxx@", 1),
	} {
		if got := st[name].Status.SubscriberURI; got != want {
			t.Errorf("%s subscriberUri = %q, want %q", name, got, want)
		}
	}
	body := rawStatus(t, k)
	for _, secret := range secrets {
		if strings.Contains(body, secret) {
			t.Errorf("/status shows %q:\n%s", secret, body)
		}
	}

	mustSend(t, k.brokerURL("b"), event{id: "1", typ: "t", source: "/s", contentType: "application/json", body: []byte("{}")})
	sub.waitFor(t, "/hook", 1)
	rig.Eventually(t, 30*time.Second, "the failed delivery to be logged", func() bool {
		return strings.Contains(k.Log(), "kept an event that could not be delivered")
	})
	for _, secret := range secrets {
		if strings.Contains(k.Log(), secret) {
			t.Errorf("the log shows %q:\n%s", secret, k.Log())
		}
	}
}

func rawStatus(t *testing.T, k *knc) string {
	t.Helper()
	resp, err := http.Get(k.URL() + "/status")
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}
