package session

import (
	"bytes"
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

// ErrNoApproval is returned by RevokeApproval when the session holds no
// prior approval of that call.
var ErrNoApproval = errors.New("no such prior approval in this session")

// RevokeApproval drops the prior approval of one call (tool and
// arguments), so that the same call is asked again, and records it as
// policy.changed {level session, op revoke_approval, rule {tool, args},
// cwd} between turns, which a resumed session and a replay apply too.
func (s *Session) RevokeApproval(ctx context.Context, tool string, args json.RawMessage) error {
	canon, err := canonicalOf(args)
	if err != nil {
		return fmt.Errorf("revoking a prior approval: %w", err)
	}
	ra := event.RevokedApproval{Tool: tool, Args: canon}
	n := len(s.history)
	s.history = slices.DeleteFunc(s.history, func(p permission.Prior) bool { return approvalIs(p, ra) })
	if len(s.history) == n {
		return ErrNoApproval
	}
	raw, err := json.Marshal(ra)
	if err != nil {
		return fmt.Errorf("recording the revoked approval: %w", err)
	}
	d, err := event.NewDraft(s.id, "", s.cfg.Now(), event.PolicyChangedPayload{Level: string(permission.LevelSession), Op: event.PolicyOpRevokeApproval, Rule: raw, Cwd: s.info.Cwd})
	if err != nil {
		return fmt.Errorf("recording the revoked approval: %w", err)
	}
	if _, err := s.cfg.Log.Append(context.WithoutCancel(ctx), d); err != nil {
		return fmt.Errorf("recording the revoked approval: %w", err)
	}
	return nil
}

// canonicalOf is CanonicalArgs of a call's JSON arguments.
func canonicalOf(args json.RawMessage) (json.RawMessage, error) {
	var m map[string]any
	if err := json.Unmarshal(args, &m); err != nil {
		return nil, fmt.Errorf("the arguments are not a JSON object: %w", err)
	}
	return permission.CanonicalArgs(m)
}

// approvalIs reports whether p is the approval ra names.
func approvalIs(p permission.Prior, ra event.RevokedApproval) bool {
	return p.Tool == ra.Tool && bytes.Equal(p.Args, ra.Args)
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
