package pipeline

import (
	"crypto/sha256"
	"encoding/hex"
	"regexp"
	"strconv"
	"strings"

	"github.com/knc-dev/knc/internal/routing"
)

// Subjects and streams are named after the objects they serve so that `nats
// stream ls` on a runtime started with a NATS port reads like the table:
//
//	stream knc_broker_<ns>_<name>_in    subject knc.broker.<ns>_<name>.in
//	stream knc_broker_<ns>_<name>_out   subjects knc.broker.<ns>_<name>.<stage>.<target>
//
// where <stage> is one of the stage constants below and <target> names a
// Trigger or Subscription the same way.

// Delivery stages, the fourth token of a delivery subject. A message moves
// from send to dead when its subscriber gives up, and to the hold stage of
// the same name while its Trigger or Subscription is not ready.
const (
	StageSend     = "send"
	StageDead     = "dead"
	StageHoldSend = "hold-send"
	StageHoldDead = "hold-dead"
)

var (
	dnsLabel     = regexp.MustCompile(`^[a-z0-9]([-a-z0-9]*[a-z0-9])?$`)
	dnsSubdomain = regexp.MustCompile(`^[a-z0-9]([-a-z0-9.]*[a-z0-9])?$`)
)

// token names an object in one subject token, injectively: a namespace is a
// DNS label (no '_' nor '.'), so "<namespace>_<name with '.' as '_'>" splits
// back at its first '_'. A name that is not a valid Kubernetes name, or a
// very long one, is hashed instead; hashes start with an upper-case letter,
// which no Kubernetes name does.
func token(o routing.Source) string {
	if len(o.Namespace)+len(o.Name) <= 100 && dnsLabel.MatchString(o.Namespace) && dnsSubdomain.MatchString(o.Name) {
		return o.Namespace + "_" + strings.ReplaceAll(o.Name, ".", "_")
	}
	sum := sha256.Sum256([]byte(o.Namespace + "/" + o.Name))
	return "X" + hex.EncodeToString(sum[:12])
}

// Names are the NATS names of one Broker or Channel.
type Names struct {
	// ID identifies the source among all Brokers and Channels: "broker.<token>".
	ID string
	// In is the ingress subject; Prefix starts every delivery subject.
	In, Prefix string
	// InStream and OutStream hold ingress and delivery messages.
	InStream, OutStream string
}

// NamesFor returns the names of the Broker or Channel o.
func NamesFor(kind SourceKind, o routing.Source) Names {
	tok := token(o)
	base := "knc." + kind.String() + "." + tok
	return Names{
		ID:        kind.String() + "." + tok,
		In:        base + ".in",
		Prefix:    base + ".",
		InStream:  "knc_" + kind.String() + "_" + tok + "_in",
		OutStream: "knc_" + kind.String() + "_" + tok + "_out",
	}
}

// IngressShard returns the subject and stream of shard i of the ingress.
// Shard 0 is the ingress of an unsharded source, so that a runtime started
// with more or fewer shards finds the events already stored there.
func (n Names) IngressShard(i int) (subject, stream string) {
	if i == 0 {
		return n.In, n.InStream
	}
	return n.In + "." + strconv.Itoa(i), n.InStream + "_" + strconv.Itoa(i)
}

// ShardOf returns the shard number of an ingress stream of n, or -1.
func (n Names) ShardOf(stream string) int {
	if stream == n.InStream {
		return 0
	}
	rest, ok := strings.CutPrefix(stream, n.InStream+"_")
	if !ok {
		return -1
	}
	i, err := strconv.Atoi(rest)
	if err != nil || i < 1 || strconv.Itoa(i) != rest {
		return -1
	}
	return i
}

// Subject is the delivery subject of a target in a stage.
func (n Names) Subject(stage, target string) string {
	return n.Prefix + stage + "." + target
}

// ParseSubject splits a delivery subject into stage and target token.
func (n Names) ParseSubject(subject string) (stage, target string, ok bool) {
	rest, ok := strings.CutPrefix(subject, n.Prefix)
	if !ok {
		return "", "", false
	}
	return strings.Cut(rest, ".")
}

// OutSubjects are the subjects of the delivery stream.
func (n Names) OutSubjects() []string {
	return []string{
		n.Prefix + StageSend + ".*",
		n.Prefix + StageDead + ".*",
		n.Prefix + StageHoldSend + ".*",
		n.Prefix + StageHoldDead + ".*",
	}
}

// holdStage and activeStage map between a stage and its hold stage.
func holdStage(stage string) string {
	if stage == StageDead {
		return StageHoldDead
	}
	return StageHoldSend
}

func activeStage(hold string) string {
	if hold == StageHoldDead {
		return StageDead
	}
	return StageSend
}
