package lease

// Crash ends s as a killed process would, for tests: its renewals stop and its
// generator refuses, but nothing is released, in the store or in the journal.
func Crash(s *Session, cause error) {
	s.cancel(cause)
	<-s.stopped
	s.g.Revoke(cause)
}

// Fence returns s's fence length (TTL minus the margin) and renewal interval.
func Fence(s *Session) (fence, every int64) {
	return int64(s.opts.TTL - s.margin), int64(s.every)
}

// SessionCheckScope and SessionCheckTTL are the session's copies of package
// leasestore's checks, for TestChecksAgree.
var (
	SessionCheckScope = checkScope
	SessionCheckTTL   = checkTTL
)
