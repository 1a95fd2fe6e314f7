package session

import (
	"encoding/json"
	"testing"

	"github.com/custom-agent/custom-agent/event"
	"github.com/custom-agent/custom-agent/executor"
	"github.com/custom-agent/custom-agent/permission/risk"
)

// TestPriorOf: which recorded answers a resumed session takes as prior
// approvals. Running one call without the sandbox is never one.
func TestPriorOf(t *testing.T) {
	call := &event.ModelToolCallRequestedPayload{Tool: "shell", Args: json.RawMessage(`{"command":"make"}`)}
	tests := []struct {
		name string
		r    event.PermissionResolvedPayload
		want bool
	}{
		{"a person's allow once", event.PermissionResolvedPayload{Decision: "allow", Actor: event.ActorUser, RiskAtDecision: risk.Execute, Option: executor.OptionAllowOnce}, true},
		{"without the sandbox", event.PermissionResolvedPayload{Decision: "allow", Actor: event.ActorUser, RiskAtDecision: risk.Execute, Option: executor.OptionAllowUnsandboxed}, false},
		{"destructive", event.PermissionResolvedPayload{Decision: "allow", Actor: event.ActorUser, RiskAtDecision: risk.Destructive, Option: executor.OptionAllowOnce}, false},
		{"the policy's allow", event.PermissionResolvedPayload{Decision: "allow", Actor: event.ActorPolicy, RiskAtDecision: risk.Execute}, false},
		{"a deny", event.PermissionResolvedPayload{Decision: "deny", Actor: event.ActorUser, RiskAtDecision: risk.Execute, Option: executor.OptionDeny}, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if _, got := priorOf(call, &tt.r); got != tt.want {
				t.Errorf("priorOf = %v, want %v", got, tt.want)
			}
		})
	}
}
