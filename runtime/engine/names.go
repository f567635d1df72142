package engine

import (
	"crypto/sha256"
	"encoding/hex"
	"regexp"
	"strconv"
	"strings"

	"github.com/knc-dev/knc/runtime/routing"
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
	stageSend     = "send"
	stageDead     = "dead"
	stageHoldSend = "hold-send"
	stageHoldDead = "hold-dead"
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
func token(o routing.Object) string {
	if len(o.Namespace)+len(o.Name) <= 100 && dnsLabel.MatchString(o.Namespace) && dnsSubdomain.MatchString(o.Name) {
		return o.Namespace + "_" + strings.ReplaceAll(o.Name, ".", "_")
	}
	sum := sha256.Sum256([]byte(o.Namespace + "/" + o.Name))
	return "X" + hex.EncodeToString(sum[:12])
}

// sourceNames are the NATS names of one Broker or Channel.
type sourceNames struct {
	// id identifies the source among all Brokers and Channels: "broker.<token>".
	id string
	// in is the ingress subject; prefix starts every delivery subject.
	in, prefix string
	// inStream and outStream hold ingress and delivery messages.
	inStream, outStream string
}

func namesFor(kind sourceKind, o routing.Object) sourceNames {
	tok := token(o)
	base := "knc." + kind.String() + "." + tok
	return sourceNames{
		id:        kind.String() + "." + tok,
		in:        base + ".in",
		prefix:    base + ".",
		inStream:  "knc_" + kind.String() + "_" + tok + "_in",
		outStream: "knc_" + kind.String() + "_" + tok + "_out",
	}
}

// ingressShard returns the subject and stream of shard i of the ingress.
// Shard 0 is the ingress of an unsharded source, so that a runtime started
// with more or fewer shards finds the events already stored there.
func (n sourceNames) ingressShard(i int) (subject, stream string) {
	if i == 0 {
		return n.in, n.inStream
	}
	return n.in + "." + strconv.Itoa(i), n.inStream + "_" + strconv.Itoa(i)
}

// shardOf returns the shard number of an ingress stream of n, or -1.
func (n sourceNames) shardOf(stream string) int {
	if stream == n.inStream {
		return 0
	}
	rest, ok := strings.CutPrefix(stream, n.inStream+"_")
	if !ok {
		return -1
	}
	i, err := strconv.Atoi(rest)
	if err != nil || i < 1 || strconv.Itoa(i) != rest {
		return -1
	}
	return i
}

// subject is the delivery subject of a target in a stage.
func (n sourceNames) subject(stage, target string) string {
	return n.prefix + stage + "." + target
}

// parseSubject splits a delivery subject into stage and target token.
func (n sourceNames) parseSubject(subject string) (stage, target string, ok bool) {
	rest, ok := strings.CutPrefix(subject, n.prefix)
	if !ok {
		return "", "", false
	}
	return strings.Cut(rest, ".")
}

// outSubjects are the subjects of the delivery stream.
func (n sourceNames) outSubjects() []string {
	return []string{
		n.prefix + stageSend + ".*",
		n.prefix + stageDead + ".*",
		n.prefix + stageHoldSend + ".*",
		n.prefix + stageHoldDead + ".*",
	}
}

// holdStage and activeStage map between a stage and its hold stage.
func holdStage(stage string) string {
	if stage == stageDead {
		return stageHoldDead
	}
	return stageHoldSend
}

func activeStage(hold string) string {
	if hold == stageHoldDead {
		return stageDead
	}
	return stageSend
}
