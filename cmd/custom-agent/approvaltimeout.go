package main

import (
	"errors"
	"os"
	"time"

	"github.com/spf13/cobra"
	"golang.org/x/term"

	"github.com/custom-agent/custom-agent/approval"
	"github.com/custom-agent/custom-agent/executor"
)

const approvalTimeoutFlag = "approval-timeout"

// addApprovalTimeoutFlag registers --approval-timeout. Unset, a person at a
// terminal gets as long as they take (a first demo may compile for minutes
// before they have read the question), and answers read from stdin keep
// the 30 s default, so that a script never hangs on a question.
func addApprovalTimeoutFlag(cmd *cobra.Command, p *time.Duration) {
	cmd.Flags().DurationVar(p, approvalTimeoutFlag, 0, "how long a question waits for an answer before it is denied, e.g. 2m (default: no limit when you answer at a terminal, "+approval.DefaultTimeout.String()+" when answers are read from stdin)")
}

// chooseApprovalTimeout returns the approval timeout of a run:
// --approval-timeout when given (changed), else none when the questions
// are put to a person at a terminal, else approval.DefaultTimeout.
func chooseApprovalTimeout(changed bool, flag time.Duration, terminal bool) (time.Duration, error) {
	switch {
	case changed && flag <= 0:
		return 0, errors.New("--approval-timeout must be positive")
	case changed:
		return flag, nil
	case terminal:
		return executor.NoApprovalTimeout, nil
	}
	return approval.DefaultTimeout, nil
}

// questionsAtTerminal reports whether uiFor puts the questions to a person
// at a terminal: the command reads the process's stdin, and it is one.
func questionsAtTerminal(cmd *cobra.Command) bool {
	return cmd.InOrStdin() == os.Stdin && term.IsTerminal(int(os.Stdin.Fd()))
}
