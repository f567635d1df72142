package statuspatch

// MergeConditions computes the change of the conditions from before to
// after and makes it on latest, as Patch does on the object it read.
func MergeConditions(before, after Getter, latest Setter, owned []string) error {
	return apply(diff(before, after), latest, owned)
}
