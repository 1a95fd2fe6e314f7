package sqlitestore

// MaxTails is maxTails, for the tests.
const MaxTails = maxTails

// Tails counts the tails the store keeps.
func (s *Store) Tails() int {
	n := 0
	s.tails.Range(func(any, any) bool { n++; return true })
	return n
}

// SchemaVersion is the schema this build writes.
var SchemaVersion = len(migrations)
