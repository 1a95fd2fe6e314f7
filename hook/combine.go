package hook

import (
	"github.com/custom-agent/custom-agent/permission"
)

// Combine folds the decisions of the calls one agent call maps onto: the
// strictest wins (deny beats ask beats allow; unset is deny), and its
// reason and risk are the answer's. The risk is the highest of all. No
// decisions is unset.
func Combine(ds []permission.Decision) permission.Decision {
	var out permission.Decision
	for i, d := range ds {
		if !d.Decision.Valid() {
			d.Decision = permission.Deny
		}
		if i == 0 || rank(d.Decision) > rank(out.Decision) {
			r := max(out.RiskAtDecision, d.RiskAtDecision)
			out = d
			out.RiskAtDecision = r
		} else if d.RiskAtDecision > out.RiskAtDecision {
			out.RiskAtDecision = d.RiskAtDecision
		}
	}
	return out
}

func rank(v permission.Verdict) int {
	switch v {
	case permission.Allow:
		return 1
	case permission.Ask:
		return 2
	}
	return 3
}
