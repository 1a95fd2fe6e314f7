package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"strings"

	"github.com/spf13/cobra"
	"golang.org/x/term"

	"github.com/custom-agent/custom-agent/event"
)

func newChatCmd(g *globalFlags) *cobra.Command {
	f := &runFlags{}
	cmd := &cobra.Command{
		Use:   "chat [flags]",
		Short: "Talk with the agent in your repository, turn after turn",
		Long: `Open a conversation in the working directory: type a prompt, watch the
model's answer stream and each tool call with its decision and result, answer
its questions in place, and type the next prompt. Every turn is a turn of one
session in the event log, as with run --session; the session id is printed
when chat ends, and --session continues one (an id, or "last").

At a terminal: Enter sends the prompt; Alt-Enter, Ctrl-J or a backslash at the
end of the line adds a newline, and pasted text stays one prompt. Up and Down
recall earlier prompts (kept in the data directory, never a prompt that looks
like it holds a secret). Ctrl-C cancels a running turn (it is recorded as
cancelled and the conversation goes on), clears a prompt being typed, and at
an empty prompt, pressed twice, ends chat; so does Ctrl-D at an empty prompt.
Running "custom-agent" with no command at a terminal opens chat.

Without a terminal on stdin, chat reads one prompt per line (a line ending in
a backslash continues on the next; a line """ starts a prompt that runs to the
next line """), and the answers to questions from the same input, one per line
as run reads them: allow_once, allow_session, allow_project or deny, and a
second line confirm for a destructive call. End of input ends chat.

Slash commands: /help, /mode [NAME], /permissions [revoke ID], /log, /verify,
/new, /exit (docs/chat.md). A line starting with // is sent with one slash
removed, and a line starting with a space is sent as it is.`,
		Example: `  custom-agent chat --model openai:gpt-4.1
  custom-agent chat --session last
  printf 'list the files\nallow_once\n/exit\n' | custom-agent chat --model script:s.jsonl`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error { return runChat(cmd, g, f) },
	}
	addTurnFlags(cmd, f)
	return cmd
}

// runChat opens the session and talks: at a terminal with the line editor,
// otherwise with the line protocol.
func runChat(cmd *cobra.Command, g *globalFlags, f *runFlags) error {
	m, err := turnModel(cmd, f)
	if err != nil {
		return err
	}
	r, err := openRunner(cmd, g, f, m)
	if err != nil {
		return err
	}
	defer r.close()
	// Ctrl-C cancels a turn, not the conversation: chat handles the
	// signals itself (chat_tty.go), so the command's context, which the
	// first SIGINT cancels, is not the conversation's.
	ctx, cancel := context.WithCancel(context.WithoutCancel(cmd.Context()))
	defer cancel()
	if err := r.start(ctx, f.sessionID); err != nil {
		return err
	}
	c := &chat{r: r, out: cmd.OutOrStdout(), info: cmd.ErrOrStderr(), json: f.json}
	if cmd.InOrStdin() == os.Stdin && term.IsTerminal(int(os.Stdin.Fd())) && !f.json {
		err = c.terminal(ctx)
	} else {
		err = c.lines(ctx, cmd.InOrStdin())
	}
	c.ended()
	return err
}

// chat is one conversation: its session runner and where it writes.
type chat struct {
	r    *sessionRunner
	out  io.Writer // the turns, as run prints them (or their events, with json)
	info io.Writer // what chat itself says: slash commands, notes
	json bool
	// cols is the width of the terminal info writes to, 0 (or nil) when
	// it is none: what the slash commands print is wrapped to it.
	cols func() int
}

// width is the terminal's width for the slash commands' lines, 0 when
// unknown.
func (c *chat) width() int {
	if c.cols == nil {
		return 0
	}
	return c.cols()
}

// ended says which session the conversation was, as run does.
func (c *chat) ended() {
	if c.r.s != nil && c.r.s.Started() {
		errOut := c.r.cmd.ErrOrStderr()
		fmt.Fprint(errOut, fitLine(fmt.Sprintf("session %s (custom-agent log %s)", c.r.s.ID(), c.r.s.ID()), columns(errOut), "  "))
	}
}

// prompt is what a line of input asks for.
type prompt struct {
	text      string // the prompt to send, when not a command
	isCommand bool
	command   string // a slash command's line, without its slash
}

// parseInput tells a prompt from a slash command: a line starting with one
// slash is a command, with two it is a prompt with one slash removed, and
// a line starting with a space is a prompt as it is. Blank input is
// neither.
func parseInput(line string) (prompt, bool) {
	switch {
	case strings.TrimSpace(line) == "":
		return prompt{}, false
	case strings.HasPrefix(line, "//"):
		return prompt{text: line[1:]}, true
	case strings.HasPrefix(line, "/"):
		return prompt{isCommand: true, command: strings.TrimSpace(line[1:])}, true
	}
	return prompt{text: line}, true
}

// turnEnded says how a turn that did not end with a final answer ended,
// beyond what the renderer printed.
func (c *chat) turnEnded(last event.TurnCompletedPayload) {
	if last.StopReason == event.StopCancelled {
		fmt.Fprint(c.info, fitLine("turn cancelled; the conversation goes on (Ctrl-D or /exit ends it)", c.width(), "  "))
	}
}

// errExit ends the conversation (/exit, Ctrl-D).
var errExit = errors.New("exit")
