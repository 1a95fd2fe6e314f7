package eventlog_test

import (
	"testing"

	"github.com/custom-agent/custom-agent/event"
	"github.com/custom-agent/custom-agent/eventlog"
)

func TestMayDefer(t *testing.T) {
	for _, c := range []struct {
		typ      event.Type
		deferred bool
		why      string
	}{
		{event.PermissionResolved, false, "the tool starts only after its decision is durable"},
		{event.PermissionRequested, false, "a question shown to a person is an acknowledgement"},
		{event.TurnCompleted, false, "a turn is reported ended only once its end is durable"},
		{event.PolicyChanged, false, "a rule is used only once its change is durable"},
		{event.UserMessage, false, "a person's words are durable before the model sees them"},
		{event.ToolDefinitionChanged, false, "recorded before the ask it explains"},
		{event.ModeChanged, false, "changes what is decided"},
		{event.SkillActivated, false, "changes what is decided"},
		{"some.future_type", false, "unknown types are durable: the safe default"},
		{event.ModelDelta, true, "gates nothing"},
		{event.ContextBuilt, true, "gates nothing"},
		{event.ModelToolCallRequested, true, "the decision after it is what gates"},
		{event.ToolStarted, true, "its permission.resolved is already durable"},
		{event.ToolCompleted, true, "gates nothing; its artifacts are synced before its commit"},
		{event.ToolFailed, true, "gates nothing"},
	} {
		if got := eventlog.MayDefer(c.typ); got != c.deferred {
			t.Errorf("MayDefer(%s) = %v, want %v: %s", c.typ, got, c.deferred, c.why)
		}
	}
}
