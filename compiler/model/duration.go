package model

import (
	"fmt"
	"time"

	"github.com/rickb777/date/period"
)

// ParseDuration reads an ISO-8601 duration with the parser Knative's webhook
// and dispatchers use, so that knc admits exactly the strings Knative
// admits (P0, PT1.5M, -PT1S, P1DT among them) and converts them to the same
// length: a year is 365.2425 days and a month a twelfth of that.
func ParseDuration(s string) (p period.Period, d time.Duration, err error) {
	// The parser indexes its input after a sign without checking the
	// length, so a lone sign would panic.
	if s == "-" || s == "+" {
		return p, 0, fmt.Errorf("%q is not an ISO-8601 duration", s)
	}
	p, err = period.Parse(s)
	if err != nil {
		return p, 0, err
	}
	d, _ = p.Duration()
	return p, d, nil
}
