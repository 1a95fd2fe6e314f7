package event

import (
	"testing"

	"github.com/custom-agent/custom-agent/permission/risk"
)

func TestPermissionResolvedActors(t *testing.T) {
	for actor, ok := range map[Actor]bool{ActorUser: true, ActorPolicy: true, ActorSystem: true, ActorAuto: true, ActorModel: false, "robot": false, "": false} {
		p := PermissionResolvedPayload{ToolCallID: "tc_1", Decision: "allow", Reason: "r", Actor: actor, RiskAtDecision: risk.Execute, SourcedFrom: "default"}
		if err := p.Validate(); (err == nil) != ok {
			t.Errorf("actor %q: Validate() = %v, want ok=%v", actor, err, ok)
		}
	}
}
