package render

// What the external tests compare, which load their input through package
// compiler: that imports render, so they cannot be tests of package render.
var (
	CleanTrigger      = cleanTrigger
	CleanSubscription = cleanSubscription
	Normalise         = normalise
	EncodeYAML        = encodeYAML
	EncodeTyped       = encodeTyped
)
