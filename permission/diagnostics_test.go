package permission_test

import (
	"testing"

	"github.com/custom-agent/custom-agent/permission"
	"github.com/custom-agent/custom-agent/permission/risk"
)

// TestDiagnosticsIsExecute is white-box review A7: get_diagnostics runs
// checkers the project controls, so it is asked by default and denied in
// plan mode.
func TestDiagnosticsIsExecute(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name string
		req  permission.Request
		want outcome
	}{
		{"default mode asks", newReq(t, "get_diagnostics", args{}),
			outcome{permission.Ask, risk.Execute, permission.FromDefault, ""}},
		{"a path asks", newReq(t, "get_diagnostics", args{"path": "src"}),
			outcome{permission.Ask, risk.Execute, permission.FromDefault, ""}},
		{"plan mode denies", newReq(t, "get_diagnostics", args{}, withMode(permission.ModePlan)),
			outcome{permission.Deny, risk.Execute, permission.FromMode, ""}},
		{"plan mode beats an allow rule", newReq(t, "get_diagnostics", args{}, withMode(permission.ModePlan),
			withRules(t, permission.Rule{ID: "diag", Tool: "get_diagnostics", Decision: permission.Allow})),
			outcome{permission.Deny, risk.Execute, permission.FromMode, ""}},
		{"an allow rule allows it", newReq(t, "get_diagnostics", args{},
			withRules(t, permission.Rule{ID: "diag", Tool: "get_diagnostics", Decision: permission.Allow})),
			outcome{permission.Allow, risk.Execute, permission.FromOverride, "diag"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			d := permission.Engine{}.Check(tt.req)
			if got := outcomeOf(d); got != tt.want {
				t.Errorf("got %+v, want %+v (reason %q)", got, tt.want, d.Reason)
			}
		})
	}
	info, _ := permission.Builtin("get_diagnostics")
	if info.AllowsMode(permission.ModePlan) || info.Kind != permission.KindExecute {
		t.Errorf("get_diagnostics: AllowsMode(plan) = %v, kind %q; want false, execute", info.AllowsMode(permission.ModePlan), info.Kind)
	}
}
