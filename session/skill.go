package session

import (
	"context"
	"encoding/json"
	"slices"

	"github.com/custom-agent/custom-agent/event"
	"github.com/custom-agent/custom-agent/executor"
	"github.com/custom-agent/custom-agent/permission"
	"github.com/custom-agent/custom-agent/skill"
	"github.com/custom-agent/custom-agent/tool"
)

// activeSkill is the skill narrowing the session's calls (spec §10: the
// skill's allowed_tools is one of the engine's inputs).
//
// Its life: a use_skill call that was allowed and completed activates it
// (skill.activated, after that call's tool.completed); from the next call
// on, tools is the engine's AllowedTools. It ends when the turn ends
// (skill.ended, before turn.completed), so a skill never outlives the
// request it was used for, and a resumed session starts with none. Using
// another skill while one is active ends the first and narrows further:
// the new list is the intersection of both, so a skill can never widen
// what the one before it left (and use_skill itself is denied unless the
// active skill lists it).
type activeSkill struct {
	name string
	// tools is nil when the skill does not narrow (no allowed-tools).
	tools []string
}

// catalogTool is what the session needs of the use_skill tool
// (skilltool.Tool satisfies it): the very catalog whose body the model
// was given.
type catalogTool interface {
	Catalog() *skill.Catalog
}

// allowedTools is the engine's AllowedTools input: the session's own list
// (Info.AllowedTools) narrowed by the active skill's. Nil: nothing narrows.
func (s *Session) allowedTools() []string {
	if s.skill == nil || s.skill.tools == nil {
		return s.info.AllowedTools
	}
	return s.narrow(s.info.AllowedTools, s.skill.tools)
}

// narrow returns b narrowed by a (nil: no narrowing). Globs in one list
// cannot in general be intersected with globs in another, so two real
// lists give the router's tool names that both allow.
func (s *Session) narrow(a, b []string) []string {
	switch {
	case a == nil:
		return b
	case b == nil:
		return a
	}
	out := []string{}
	for _, n := range s.cfg.Router.Names() {
		if permission.ToolListed(a, n) && permission.ToolListed(b, n) {
			out = append(out, n)
		}
	}
	return out
}

// skillUsed activates the skill a completed use_skill call returned. It is
// called after every call; it does nothing for other calls.
func (t *turn) skillUsed(ctx context.Context, c executor.Call, out executor.Outcome, router *tool.Router) error {
	if c.Tool != skill.ToolName || out.Status != executor.Completed {
		return nil
	}
	rt, err := router.Resolve(c.Tool)
	if err != nil {
		return nil
	}
	ct, ok := rt.(catalogTool)
	if !ok {
		return nil
	}
	var args struct {
		Name string `json:"name"`
	}
	if json.Unmarshal(c.Args, &args) != nil {
		return nil
	}
	sk, ok := ct.Catalog().Lookup(args.Name)
	if !ok {
		return nil
	}
	s := t.s
	var tools []string
	if sk.Narrows() {
		tools = slices.Clone(sk.AllowedTools)
	}
	if s.skill != nil {
		tools = s.narrow(s.skill.tools, tools)
		if err := t.endSkill(ctx, "the skill "+sk.Name+" was used, which narrows further"); err != nil {
			return err
		}
	}
	recorded := tools
	if recorded == nil {
		recorded = []string{"*"}
	}
	if err := t.emit(context.WithoutCancel(ctx), event.SkillActivatedPayload{
		ToolCallID: c.ID, Name: sk.Name, Source: string(sk.Source), Path: sk.Path,
		AllowedTools: recorded, Digest: sk.Digest,
	}); err != nil {
		return err
	}
	s.skill = &activeSkill{name: sk.Name, tools: tools}
	return nil
}

// endSkill records that the active skill ended, if one is active.
func (t *turn) endSkill(ctx context.Context, reason string) error {
	s := t.s
	if s.skill == nil {
		return nil
	}
	name := s.skill.name
	s.skill = nil
	return t.emit(context.WithoutCancel(ctx), event.SkillEndedPayload{Name: name, Reason: reason})
}
