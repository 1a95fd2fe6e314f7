package executor_test

import (
	"bytes"
	"context"
	"io"
	"testing"

	"github.com/custom-agent/custom-agent/event"
	"github.com/custom-agent/custom-agent/executor"
	"github.com/custom-agent/custom-agent/tool"
)

// TestKnownSecretsAreMasked: a secret the runner knows of (serve's script
// token, Options.Known) is hidden in what a tool printed and in the
// recorded arguments, though the call names no secret. It does not make
// every call "hold a secret": a call without it is still offered rules,
// and one whose arguments show it is not.
func TestKnownSecretsAreMasked(t *testing.T) {
	t.Parallel()
	const token = "5f0c2d9e8b7a6f5e4d3c2b1a09f8e7d6c5b4a3928170f6e5d4c3b2a190807060"
	for _, tc := range []struct {
		name, cmd string
		rules     bool
	}{
		{"a call without it", "make build", true},
		{"a call showing it", "echo " + token + " > t", false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			var q executor.Question
			approver := approverFunc(func(_ context.Context, got executor.Question) (executor.Answer, error) {
				q = got
				return executor.Answer{Allow: true, Option: executor.OptionAllowOnce, Actor: event.ActorUser}, nil
			})
			f := newFixture(t, approver, map[string]func(context.Context, tool.Call, tool.Output) (tool.Result, error){
				"shell": func(_ context.Context, _ tool.Call, out tool.Output) (tool.Result, error) {
					io.WriteString(out.Stdout, "the token is "+token+"\n")
					return tool.Result{}, nil
				},
			})
			f.opts.Known = func() []string { return []string{token} }
			f.x = executor.New(f.router, f.rec, f.arts, approver, f.opts)
			f.sess.Rules = &fakeRules{}
			if _, err := f.x.Execute(context.Background(), f.sess, call("shell", `{"command":"`+tc.cmd+`"}`)); err != nil {
				t.Fatal(err)
			}
			if got := q.SessionRule != nil; got != tc.rules {
				t.Errorf("a session rule offered: %v, want %v (%+v)", got, tc.rules, q)
			}
			var printed bool
			for _, e := range f.events(t) {
				raw, _ := e.MarshalJSON()
				if bytes.Contains(raw, []byte(token[:16])) {
					t.Errorf("seq %d %s shows the token: %s", e.Seq, e.Type, raw)
				}
				if e.Type == event.ToolCompleted && bytes.Contains(e.Payload, []byte("the token is [REDACTED]")) {
					printed = true
				}
			}
			if !printed {
				t.Error("tool.completed does not show the output masked")
			}
		})
	}
}
