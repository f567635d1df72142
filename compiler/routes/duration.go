package routes

import (
	"fmt"
	"regexp"
	"strconv"
	"time"
)

var isoDurationRE = regexp.MustCompile(`^P(?:([0-9]+)Y)?(?:([0-9]+)M)?(?:([0-9]+)W)?(?:([0-9]+)D)?(?:T(?:([0-9]+)H)?(?:([0-9]+)M)?(?:([0-9]+(?:[.,][0-9]+)?)S)?)?$`)

// ParseDuration converts an ISO-8601 duration. Years and months have no
// fixed length; like Knative, knc takes a year as 365 days and a month as 30.
func ParseDuration(s string) (time.Duration, error) {
	m := isoDurationRE.FindStringSubmatch(s)
	if m == nil || s == "P" || s[len(s)-1] == 'T' {
		return 0, fmt.Errorf("%q is not an ISO-8601 duration", s)
	}
	units := []time.Duration{365 * 24 * time.Hour, 30 * 24 * time.Hour, 7 * 24 * time.Hour, 24 * time.Hour, time.Hour, time.Minute}
	var d time.Duration
	for i, unit := range units {
		if m[i+1] == "" {
			continue
		}
		n, err := strconv.ParseInt(m[i+1], 10, 64)
		if err != nil {
			return 0, fmt.Errorf("%q: %w", s, err)
		}
		d += time.Duration(n) * unit
	}
	if sec := m[7]; sec != "" {
		f, err := strconv.ParseFloat(replaceComma(sec), 64)
		if err != nil {
			return 0, fmt.Errorf("%q: %w", s, err)
		}
		d += time.Duration(f * float64(time.Second))
	}
	return d, nil
}

func replaceComma(s string) string {
	b := []byte(s)
	for i := range b {
		if b[i] == ',' {
			b[i] = '.'
		}
	}
	return string(b)
}
