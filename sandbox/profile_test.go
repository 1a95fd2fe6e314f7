package sandbox

import (
	"testing"

	"github.com/custom-agent/custom-agent/permission"
	"github.com/custom-agent/custom-agent/permission/risk"
)

func TestKindFor(t *testing.T) {
	for _, tc := range []struct {
		name    string
		d       permission.Decision
		kind    Kind
		network bool
	}{
		{"a read", permission.Decision{RiskAtDecision: risk.Read}, ReadOnly, false},
		{"a command of read-only forms, whatever allowed it", permission.Decision{RiskAtDecision: risk.Execute, ReadOnly: true}, ReadOnly, false},
		{"a command", permission.Decision{RiskAtDecision: risk.Execute}, Workspace, false},
		{"read-only forms with a network finding stay read-only", permission.Decision{RiskAtDecision: risk.Network, ReadOnly: true, Findings: []risk.Finding{{Risk: risk.Network}}}, ReadOnly, false},
		{"a write", permission.Decision{RiskAtDecision: risk.Write}, Workspace, false},
		{"judged network", permission.Decision{RiskAtDecision: risk.Network}, Workspace, true},
		{"a network finding under a destructive risk", permission.Decision{RiskAtDecision: risk.Destructive, Findings: []risk.Finding{{Risk: risk.Network}}}, Workspace, true},
		{"destructive", permission.Decision{RiskAtDecision: risk.Destructive}, Workspace, false},
		{"unknown risk", permission.Decision{}, Workspace, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			k, n := KindFor(tc.d)
			if k != tc.kind || n != tc.network {
				t.Fatalf("KindFor = %s, %v; want %s, %v", k, n, tc.kind, tc.network)
			}
		})
	}
}

func TestDigestIgnoresOrder(t *testing.T) {
	a := Profile{Kind: Workspace, Cwd: "/p", Hidden: []string{"/a", "/b"}, Protected: []string{"/p/.git/hooks"}}
	b := Profile{Kind: Workspace, Cwd: "/p", Hidden: []string{"/b", "/a", "/a"}, Protected: []string{"/p/.git/hooks"}}
	if a.Digest() != b.Digest() {
		t.Fatal("the same profile in another order has another digest")
	}
	c := b
	c.Network = true
	if c.Digest() == b.Digest() {
		t.Fatal("the network changed nothing in the digest")
	}
	if got := a.As(ReadOnly, true); got.Network || got.Writable != nil || got.Protected != nil {
		t.Fatalf("As(read-only) = %+v", got)
	}
}
