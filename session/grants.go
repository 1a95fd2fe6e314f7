package session

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"path"
	"slices"

	"github.com/custom-agent/custom-agent/event"
	"github.com/custom-agent/custom-agent/permission"
)

// Approvals returns the calls a person approved in this session that are
// allowed again without asking (prior approvals, spec §3 step 5), oldest
// first: those made in the directory the session runs in. A destructive
// call is never among them.
func (s *Session) Approvals() []permission.Prior {
	return append([]permission.Prior(nil), s.history...)
}

// SessionRuleRemover is what Revoke needs of the session's Rules
// (policy.Store has it).
type SessionRuleRemover interface {
	RemoveSession(id string) (permission.Rule, error)
}

// ErrCannotRevoke is returned by Revoke when the session's Rules cannot
// remove a session rule.
var ErrCannotRevoke = errors.New("this session's rules cannot be revoked")

// Revoke removes the session rule with the given id and records the
// removal as policy.changed {level session, op remove, rule, cwd} between
// turns (its turn id is empty), so that a replay, and a resumed session,
// no longer have it. The prior approvals of the rule's tool go with it
// (forgetPriors): the answer that made the rule also approved its call, and
// a revoked grant must not live on as an approval. Everything is asked
// again from the next call on. It must not be called while a turn runs.
func (s *Session) Revoke(ctx context.Context, id string) (permission.Rule, error) {
	rm, ok := s.info.Rules.(SessionRuleRemover)
	if !ok {
		return permission.Rule{}, ErrCannotRevoke
	}
	r, err := rm.RemoveSession(id)
	if err != nil {
		return permission.Rule{}, err
	}
	s.forgetPriors(r.Tool)
	if err := s.refreshPolicy(); err != nil {
		return r, err
	}
	raw, err := json.Marshal(r)
	if err != nil {
		return r, fmt.Errorf("recording the revoked rule: %w", err)
	}
	d, err := event.NewDraft(s.id, "", s.cfg.Now(), event.PolicyChangedPayload{Level: string(permission.LevelSession), Op: opRemove, Rule: raw, Cwd: s.info.Cwd})
	if err != nil {
		return r, fmt.Errorf("recording the revoked rule: %w", err)
	}
	if _, err := s.cfg.Log.Append(context.WithoutCancel(ctx), d); err != nil {
		return r, fmt.Errorf("recording the revoked rule: %w", err)
	}
	return r, nil
}

// forgetPriors drops the prior approvals of a tool (a glob, as in a rule):
// more is asked, never less.
func (s *Session) forgetPriors(toolGlob string) {
	s.history = slices.DeleteFunc(s.history, func(p permission.Prior) bool {
		ok, err := path.Match(toolGlob, p.Tool)
		return ok || err != nil || toolGlob == p.Tool
	})
}

// opRemove is the op of policy.changed for a rule removed.
const opRemove = "remove"

// revoked is the id and tool of the rule a policy.changed op remove names.
func revoked(p *event.PolicyChangedPayload) (id, tool string, ok bool) {
	if p.Op != opRemove {
		return "", "", false
	}
	var r struct {
		ID   string `json:"id"`
		Tool string `json:"tool"`
	}
	if json.Unmarshal(p.Rule, &r) != nil || r.ID == "" {
		return "", "", false
	}
	return r.ID, r.Tool, true
}
