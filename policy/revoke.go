package policy

import (
	"fmt"

	"github.com/custom-agent/custom-agent/permission"
)

// RemoveSession removes the session rule with the given id and returns
// it as the engine saw it, so that the caller can record the removal
// (policy.changed, level session, op remove) with the rule it removed. An
// id no session rule has is an error wrapping ErrNotFound; the other
// levels are not looked at.
func (s *Store) RemoveSession(id string) (permission.Rule, error) {
	var found *Entry
	for _, e := range s.Entries(permission.LevelSession) {
		if e.Rule.ID == id {
			found = &e
			break
		}
	}
	if found == nil {
		return permission.Rule{}, fmt.Errorf("session rule %q: %w", id, ErrNotFound)
	}
	r, _ := found.Effective()
	if err := s.Remove(permission.LevelSession, id); err != nil {
		return permission.Rule{}, err
	}
	return r, nil
}
