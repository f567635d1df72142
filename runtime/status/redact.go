package status

import "github.com/knc-dev/knc/internal/redact"

// Redacted returns copies of objs with the password and query values of
// every URI masked, in the URI fields and in condition messages, for
// /status, which anyone who reaches the listener may read. The status
// written to the cluster keeps the URIs whole, as Knative's controllers
// write them, behind the API server's access control.
func Redacted(objs []Report) []Report {
	out := make([]Report, len(objs))
	for i, o := range objs {
		s := &o.Status
		s.Conditions = append([]Condition(nil), s.Conditions...)
		for j := range s.Conditions {
			s.Conditions[j].Message = redact.Text(s.Conditions[j].Message)
		}
		if s.Address != nil {
			s.Address = &Addressable{URL: redact.URI(s.Address.URL)}
		}
		s.SubscriberURI = redact.URI(s.SubscriberURI)
		s.DeadLetterSinkURI = redact.URI(s.DeadLetterSinkURI)
		if p := s.PhysicalSubscription; p != nil {
			s.PhysicalSubscription = &PhysicalSubscription{
				SubscriberURI:     redact.URI(p.SubscriberURI),
				ReplyURI:          redact.URI(p.ReplyURI),
				DeadLetterSinkURI: redact.URI(p.DeadLetterSinkURI),
			}
		}
		out[i] = o
	}
	return out
}
