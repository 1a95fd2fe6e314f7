package main

import (
	"context"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"time"

	"github.com/spf13/cobra"

	"github.com/custom-agent/custom-agent/approval"
	"github.com/custom-agent/custom-agent/event"
	"github.com/custom-agent/custom-agent/executor"
	"github.com/custom-agent/custom-agent/model/script"
	"github.com/custom-agent/custom-agent/support/termtext"
)

// The demo project: a Go package with a passing test.
var demoFiles = map[string]string{
	"go.mod":       "module demo\n\ngo 1.22\n",
	"calc.go":      "// Package calc adds.\npackage calc\n\n// Add returns a + b.\nfunc Add(a, b int) int { return a + b }\n",
	"calc_test.go": "package calc\n\nimport \"testing\"\n\nfunc TestAdd(t *testing.T) {\n\tif got := Add(2, 3); got != 5 {\n\t\tt.Fatalf(\"Add(2, 3) = %d, want 5\", got)\n\t}\n}\n\nfunc TestAddNegative(t *testing.T) {\n\tif got := Add(-2, -3); got != -5 {\n\t\tt.Fatalf(\"Add(-2, -3) = %d, want -5\", got)\n\t}\n}\n",
}

// demoScript is the scripted model: it asks to run the tests, then reports.
const demoScript = `{"text": "I'll run the tests.", "toolCalls": [{"id": "tc_1", "name": "shell", "args": {"command": "go test -v ./..."}}]}
{"text": "Done. If you allowed the call, the tests ran and their output is above; if you denied it, nothing ran. Nothing else was touched."}
`

func newDemoCmd(g *globalFlags) *cobra.Command {
	var yes bool
	var keep, noBuiltin bool
	var maxOutput sizeFlag
	var timeout time.Duration
	var mode string
	cmd := &cobra.Command{
		Use:   "demo",
		Short: "See the permission gate work, offline: a scripted model runs a project's tests",
		Long: `demo plays the specification's worked example (§5) for real and offline: it
makes a small Go project with tests in a temporary directory, a scripted model
asks to run them, you are asked in the terminal (allow once / deny), the tests
really run, the model reports, and the session's audit trail is printed and
verified. --yes answers "allow once" for you, recorded with actor "auto". Needs
go on PATH.

The demo changes nothing of yours but the session it records in the event log:
its project and its configuration (the policy, the trusted projects) are in a
temporary directory, removed at the end unless --keep, so your own rules do not
apply to it and a rule you make while it asks ("always allow in this project")
goes there. --mode dont-ask shows the call denied at once instead of asked;
--mode plan denies it as more than a read.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if _, err := exec.LookPath("go"); err != nil {
				return fmt.Errorf("the demo runs `go test`, and go is not on PATH: install Go 1.22 or newer")
			}
			base, err := os.MkdirTemp("", "custom-agent-demo-")
			if err != nil {
				return err
			}
			if !keep {
				defer os.RemoveAll(base)
			}
			dir, configHome := filepath.Join(base, "project"), filepath.Join(base, "config")
			for _, d := range []string{dir, configHome} {
				if err := os.Mkdir(d, 0o700); err != nil {
					return err
				}
			}
			for name, content := range demoFiles {
				if err := os.WriteFile(filepath.Join(dir, name), []byte(content), 0o644); err != nil {
					return err
				}
			}
			scriptPath := filepath.Join(base, "demo-model.jsonl")
			if err := os.WriteFile(scriptPath, []byte(demoScript), 0o644); err != nil {
				return err
			}
			m, err := script.Load(scriptPath)
			if err != nil {
				return err
			}
			errOut := cmd.ErrOrStderr()
			fmt.Fprint(errOut, fitLine("demo project: "+dir, columns(errOut), "  ")+"\n")
			newUI := uiFor(cmd)
			if yes {
				newUI = func(b *approval.Broker, _ context.CancelFunc) approvalUI { return autoApprover{b: b, out: errOut} }
			}
			f := &runFlags{cwd: dir, mode: mode, approvalTimeout: timeout, configHome: configHome, maxSteps: 5, maxOutput: maxOutput, noBuiltin: noBuiltin}
			const prompt = "Run the tests."
			fmt.Fprintf(cmd.OutOrStdout(), "you> %s\n", prompt)
			id, turnErr := runTurn(cmd, g, f, m, prompt, newUI)
			if id == "" {
				return turnErr
			}
			if err := printAudit(cmd, g, id); err != nil {
				return err
			}
			return turnErr
		},
	}
	cmd.Flags().BoolVar(&yes, "yes", false, `answer "allow once" to the question instead of asking`)
	cmd.Flags().BoolVar(&keep, "keep", false, "keep the demo project directory")
	addModeFlag(cmd.Flags(), &mode)
	cmd.Flags().BoolVar(&noBuiltin, "no-builtin-rules", false, noBuiltinRulesUsage)
	cmd.Flags().Var(&maxOutput, "max-output-bytes", maxOutputUsage)
	addApprovalTimeoutFlag(cmd, &timeout)
	return cmd
}

// printAudit prints the session's timeline and verifies its chain.
func printAudit(cmd *cobra.Command, g *globalFlags, id string) error {
	ctx := cmd.Context()
	s, err := g.openLog(ctx, true)
	if err != nil {
		return err
	}
	defer s.Close()
	// At a terminal each event's line is wrapped at words to its width,
	// the summary under the time; to a file or a pipe it stays whole.
	fw := &fitWriter{w: cmd.OutOrStdout(), cols: columns(cmd.OutOrStdout())}
	defer fw.Flush()
	out := io.Writer(fw)
	fmt.Fprintf(out, "\naudit trail of session %s:\n", id)
	n := 0
	for e, err := range s.Read(ctx, id, 1) {
		if err != nil {
			return err
		}
		n++
		if err := writeTimeline(out, e); err != nil {
			return err
		}
	}
	if err := s.Verify(ctx, id); err != nil {
		return &exitError{code: 1, msg: "audit: " + err.Error()}
	}
	fmt.Fprintf(out, "\naudit: %d events, hash chain intact (custom-agent audit verify %s)\n", n, id)
	return nil
}

// autoApprover answers every question "allow once" (demo --yes), as actor
// auto: the log must not say a person approved what nobody saw.
type autoApprover struct {
	b   *approval.Broker
	out io.Writer
}

func (a autoApprover) Run(ctx context.Context) error {
	for n := range a.b.Subscribe(ctx) {
		if n.Kind != approval.NoticeAsked {
			continue
		}
		q := n.Pending.Question
		line := fmt.Sprintf("? %s wants to run %s (risk %s): %s", q.Tool.Name, termtext.Line(string(q.Args)), q.Decision.RiskAtDecision, termtext.Line(q.Decision.Reason))
		fmt.Fprint(a.out, fitLine(line, columns(a.out), "  "))
		fmt.Fprint(a.out, fitLine("  answered allow once automatically (--yes)", columns(a.out), "    "))
		if err := a.b.Answer(n.Pending.ID, executor.OptionAllowOnce, event.ActorAuto); err != nil {
			fmt.Fprintf(a.out, "  could not answer: %v\n", err)
		}
	}
	return nil
}
