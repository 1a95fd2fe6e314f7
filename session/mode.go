package session

import (
	"context"
	"encoding/json"
	"fmt"

	"github.com/custom-agent/custom-agent/event"
	"github.com/custom-agent/custom-agent/permission"
)

// ChangeMode sets the mode the session's next turn runs in and records the
// change as session.mode_changed (between turns: its turn id is empty), by
// the given actor (event.ActorUser for /mode, the editor's
// session/set_mode and --mode on a resumed session; event.ActorSystem for a
// change nobody asked for). Nothing is recorded when m is the mode already
// in force, nor before the session's first turn: session.started records
// the mode then. The empty mode means default.
//
// ChangeMode must not be called while a turn runs (the turn's calls are
// decided in the mode it started in, and its events would interleave); the
// caller serialises it with RunTurn. An unknown mode is an error wrapping
// permission.ErrUnknownMode, and nothing changes.
func (s *Session) ChangeMode(ctx context.Context, m permission.Mode, by event.Actor) error {
	if m == "" {
		m = permission.ModeDefault
	}
	if _, err := permission.ParseMode(string(m)); err != nil {
		return err
	}
	from := s.Mode()
	if from == "" {
		from = permission.ModeDefault
	}
	if from == m {
		return nil
	}
	if s.started {
		d, err := event.NewDraft(s.id, "", s.cfg.Now(), event.ModeChangedPayload{From: string(from), To: string(m), By: by})
		if err != nil {
			return fmt.Errorf("recording the mode change: %w", err)
		}
		if _, err := s.cfg.Log.Append(context.WithoutCancel(ctx), d); err != nil {
			return fmt.Errorf("recording the mode change: %w", err)
		}
	}
	s.info.Mode = m
	return nil
}

// opSetMode is the op of the policy.changed event custom-agent acp wrote
// for session/set_mode before session.mode_changed existed; Resume still
// reads it.
const opSetMode = "set_mode"

// recordedMode returns the mode an event records the session in from then
// on: session.started and turn.started (the mode a turn ran in),
// session.mode_changed, and the older policy.changed op set_mode.
func recordedMode(p event.Payload) (permission.Mode, bool) {
	var m string
	switch p := p.(type) {
	case *event.SessionStartedPayload:
		m = p.Mode
	case *event.TurnStartedPayload:
		m = p.Mode
	case *event.ModeChangedPayload:
		m = p.To
	case *event.PolicyChangedPayload:
		if p.Op == opSetMode {
			var c struct {
				Mode string `json:"mode"`
			}
			if json.Unmarshal(p.Rule, &c) == nil {
				m = c.Mode
			}
		}
	}
	if m == "" || !permission.Mode(m).Valid() {
		return "", false
	}
	return permission.Mode(m), true
}
