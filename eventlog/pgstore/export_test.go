package pgstore

// LoseConnection makes the store cut its writer connection before
// (afterCommit false) or after (true) the COMMIT of its next commit.
func (s *Store) LoseConnection(afterCommit bool) {
	armed := true
	s.testLoseConn = func(after bool) bool {
		if armed && after == afterCommit {
			armed = false
			return true
		}
		return false
	}
}

// OnCommit sets the hook asked before and after each COMMIT whether to cut
// the writer's connection there.
func (s *Store) OnCommit(f func(afterCommit bool) bool) { s.testLoseConn = f }
