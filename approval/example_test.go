package approval_test

import (
	"context"
	"fmt"

	"github.com/custom-agent/custom-agent/approval"
	"github.com/custom-agent/custom-agent/event"
	"github.com/custom-agent/custom-agent/executor"
	"github.com/custom-agent/custom-agent/permission"
	"github.com/custom-agent/custom-agent/permission/risk"
)

// A UI subscribes, sees the ask and answers it; the executor's Ask returns
// the answer. A destructive call offers only allow once and deny.
func ExampleBroker() {
	b := approval.New(nil)
	ctx, stop := context.WithCancel(context.Background())
	defer stop()

	notices := b.Subscribe(ctx)
	go func() { // the UI
		for n := range notices {
			if n.Kind != approval.NoticeAsked {
				continue
			}
			fmt.Println("asked:", n.Pending.Question.Tool.Name, n.Pending.Options)
			if err := b.Answer(n.Pending.ID, executor.OptionAllowSession, event.ActorUser); err != nil {
				fmt.Println("refused:", err)
			}
			if err := b.Answer(n.Pending.ID, executor.OptionAllowOnce, event.ActorUser); err != nil {
				fmt.Println("refused:", err)
			}
		}
	}()

	d := permission.Decision{Decision: permission.Ask, RiskAtDecision: risk.Destructive, Reason: "rm -r"}
	ans, err := b.Ask(ctx, executor.Question{
		SessionID: "s1", ToolCallID: "tc_1", Tool: permission.ToolInfo{Name: "shell"},
		Decision: d, Options: executor.OfferedOptions(d, true, true),
	})
	fmt.Println(ans.Allow, ans.Option, ans.Actor, ans.Reason, err)
	// Output:
	// asked: shell [allow_once deny]
	// refused: ask-1: option not offered for this ask: "allow_session" (offered: [allow_once deny])
	// true allow_once user user approved (allow_once) <nil>
}
