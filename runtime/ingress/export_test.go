package ingress

// CertReloadInterval is certReloadInterval, for the tests of package
// ingress_test.
const CertReloadInterval = certReloadInterval

// IngressInFlight is the number of ingress requests s is serving.
func IngressInFlight(s *Server) int64 { return s.ingressInflight.Load() }

// LeanServed is how many requests s served on its lean path.
func LeanServed(s *Server) int64 {
	if s.lean == nil {
		return 0
	}
	return s.lean.served.Load()
}
