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
	"github.com/custom-agent/custom-agent/permission/risk"
)

// Approval is one prior approval of the session: a call a person allowed,
// which the session allows again unasked (spec §3 step 5).
type Approval struct {
	// Seq is the seq of the permission.resolved that made it, which names
	// it (RevokeApproval).
	Seq  uint64
	Tool string
	// Args are the call's arguments masked of the secrets they held, for
	// display; never matched.
	Args json.RawMessage
	Risk risk.Level
}

// approval is a prior approval as the session keeps it: what the engine
// matches (prior, whose arguments may hold a secret in clear) and what
// may be shown or recorded (Approval).
type approval struct {
	Approval
	prior permission.Prior
}

// Approvals returns the calls a person approved in this session that are
// allowed again without asking (prior approvals, spec §3 step 5), oldest
// first: those made in the directory the session runs in. A destructive
// call is never among them.
func (s *Session) Approvals() []Approval {
	out := make([]Approval, len(s.history))
	for i, a := range s.history {
		out[i] = a.Approval
	}
	return out
}

// priors is the history the engine is given.
func (s *Session) priors() []permission.Prior {
	out := make([]permission.Prior, len(s.history))
	for i, a := range s.history {
		out[i] = a.prior
	}
	return out
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

// RevokeApproval drops the prior approval made by the permission.resolved
// at seq (Approval.Seq), so that the same call is asked again, and records
// it as policy.changed {level session, op revoke_approval, rule {seq,
// tool, args masked}, cwd} between turns, which a resumed session, a
// replay and the web's index apply by seq too. The arguments recorded are
// the masked ones the log already holds: a secret the call held is never
// written again.
func (s *Session) RevokeApproval(ctx context.Context, seq uint64) error {
	i := slices.IndexFunc(s.history, func(a approval) bool { return a.Seq == seq })
	if seq == 0 || i < 0 {
		return ErrNoApproval
	}
	a := s.history[i]
	s.history = slices.Delete(s.history, i, i+1)
	raw, err := json.Marshal(event.RevokedApproval{Seq: a.Seq, Tool: a.Tool, Args: a.Args})
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

// forgetPriors drops the prior approvals of a tool (a glob, as in a rule):
// more is asked, never less.
func (s *Session) forgetPriors(toolGlob string) {
	s.history = slices.DeleteFunc(s.history, func(a approval) bool {
		ok, err := path.Match(toolGlob, a.Tool)
		return ok || err != nil || toolGlob == a.Tool
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
