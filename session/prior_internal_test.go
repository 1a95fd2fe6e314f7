package session

import (
	"encoding/json"
	"testing"

	"github.com/custom-agent/custom-agent/event"
	"github.com/custom-agent/custom-agent/executor"
	"github.com/custom-agent/custom-agent/permission/risk"
)

// TestPriorOf: which recorded answers a resumed session takes as prior
// approvals. Running one call without the sandbox is never one, nor is a
// call whose arguments held a secret (the log has them masked only).
func TestPriorOf(t *testing.T) {
	plain := &event.PermissionRequestedPayload{Tool: "shell", Args: json.RawMessage(`{"command":"make"}`), Facts: &event.DecisionFacts{}}
	allowOnce := event.PermissionResolvedPayload{Decision: "allow", Actor: event.ActorUser, RiskAtDecision: risk.Execute, Option: executor.OptionAllowOnce}
	tests := []struct {
		name string
		q    *event.PermissionRequestedPayload
		r    event.PermissionResolvedPayload
		want bool
	}{
		{"masked by its facts", &event.PermissionRequestedPayload{Tool: "shell", Args: json.RawMessage(`{"command":"curl -H 'Authorization: Bearer [REDACTED]' x"}`), Facts: &event.DecisionFacts{Masked: true}}, allowOnce, false},
		{"masked, a log without facts", &event.PermissionRequestedPayload{Tool: "shell", Args: json.RawMessage(`{"command":"GH_TOKEN=[REDACTED] gh pr list"}`)}, allowOnce, false},
		{"a person's allow once", plain, event.PermissionResolvedPayload{Decision: "allow", Actor: event.ActorUser, RiskAtDecision: risk.Execute, Option: executor.OptionAllowOnce}, true},
		{"without the sandbox", plain, event.PermissionResolvedPayload{Decision: "allow", Actor: event.ActorUser, RiskAtDecision: risk.Execute, Option: executor.OptionAllowUnsandboxed}, false},
		{"destructive", plain, event.PermissionResolvedPayload{Decision: "allow", Actor: event.ActorUser, RiskAtDecision: risk.Destructive, Option: executor.OptionAllowOnce}, false},
		{"the policy's allow", plain, event.PermissionResolvedPayload{Decision: "allow", Actor: event.ActorPolicy, RiskAtDecision: risk.Execute}, false},
		{"a deny", plain, event.PermissionResolvedPayload{Decision: "deny", Actor: event.ActorUser, RiskAtDecision: risk.Execute, Option: executor.OptionDeny}, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if _, got := priorOf(tt.q, &tt.r); got != tt.want {
				t.Errorf("priorOf = %v, want %v", got, tt.want)
			}
		})
	}
}
