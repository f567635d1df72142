package routes

import (
	"time"

	"github.com/knc-dev/knc/compiler/model"
)

// ParseDuration converts an ISO-8601 duration as Knative's dispatchers do
// (see model.ParseDuration): a year is 365.2425 days, a month a twelfth of
// that, and fractions finer than a tenth of a unit are dropped.
func ParseDuration(s string) (time.Duration, error) {
	_, d, err := model.ParseDuration(s)
	return d, err
}
