package model

import "math"

// Validate checks one Parallel as Knative's admission does, after its
// defaulting (an absent channel template is the cluster's default).
// Knative does not validate a branch's delivery; knc checks it as a
// warning, since the branch's Subscription would carry it.
func (p *Parallel) Validate(f Features, namespace string) FieldErrors {
	var errs FieldErrors
	validateMeta(&errs, &p.Metadata)
	rc := refContext{features: f}
	if len(p.Spec.Branches) == 0 {
		errs.Add("spec.branches", "is required: give at least one branch")
	}
	for i := range p.Spec.Branches {
		b := &p.Spec.Branches[i]
		bp := "spec.branches[" + itoa(i) + "]"
		if b.Filter != nil {
			validateDestination(&errs, bp+".filter", b.Filter, rc)
		}
		if b.Subscriber == nil {
			errs.Add(bp+".subscriber", "is required: give the ref or uri of the branch's subscriber")
		} else {
			validateDestination(&errs, bp+".subscriber", b.Subscriber, rc)
		}
		if b.Reply != nil {
			validateDestination(&errs, bp+".reply", b.Reply, rc)
		}
		if b.Delivery != nil {
			// Knative decodes retry as a 32-bit integer: a number out of
			// its range fails decoding before validation.
			retryPath := bp + ".delivery.retry"
			r := b.Delivery.Retry
			undecodable := r != nil && (*r < math.MinInt32 || *r > math.MaxInt32)
			if undecodable {
				errs.Add(retryPath, "%d is out of the range of a 32-bit integer, which Knative decodes retry as", *r)
			}
			var de FieldErrors
			validateDelivery(&de, bp+".delivery", b.Delivery, rc)
			for _, e := range de {
				if undecodable && e.Path == retryPath {
					// The error above already says what is wrong with it.
					continue
				}
				errs.Warn(e.Path, "%s (Knative does not check a branch's delivery, but its Subscription would be refused)", e.Message)
			}
		}
	}
	validateFlowChannelTemplate(&errs, p.Spec.ChannelTemplate)
	if p.Spec.Reply != nil {
		validateDestination(&errs, "spec.reply", p.Spec.Reply, rc)
	}
	if p.Status != nil {
		validateStatus(&errs, "status", &p.Status.Status)
	}
	return errs
}
