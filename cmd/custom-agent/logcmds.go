package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/spf13/cobra"

	"github.com/custom-agent/custom-agent/app/logstore"
	"github.com/custom-agent/custom-agent/event"
	"github.com/custom-agent/custom-agent/eventlog"
	"github.com/custom-agent/custom-agent/support/termtext"
)

func newSessionsCmd(g *globalFlags) *cobra.Command {
	var asJSON bool
	cmd := &cobra.Command{
		Use:   "sessions",
		Short: "List recorded sessions, newest first, with their state and whether their chain verifies",
		Long: `List recorded sessions, newest first: when each was last updated, its events,
the state of its last turn, whether its hash chain verifies, and the model,
working directory and first prompt (of its latest turn where a session was
continued elsewhere).

States: open (a turn is running, or none was started), completed (the last
turn ended with the model's final answer), cancelled, error (the turn failed
or ran out of steps; the stop reason is shown).

A session id may be given as "last" to log, audit verify and run --session:
the first session listed here.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			ctx := cmd.Context()
			s, err := g.openLog(ctx, true)
			if logstore.IsNoLog(err) {
				if asJSON {
					_, err := fmt.Fprintln(cmd.OutOrStdout(), "[]")
					return err
				}
				fmt.Fprintln(cmd.ErrOrStderr(), "no sessions yet:", err)
				return nil
			}
			if err != nil {
				return err
			}
			defer s.Close()
			list, err := s.Sessions(ctx)
			if err != nil {
				return err
			}
			sums := make([]sessionSummary, 0, len(list))
			for _, si := range list {
				sum, err := summarizeSession(ctx, s, si)
				if err != nil {
					return err
				}
				sums = append(sums, sum)
			}
			out := cmd.OutOrStdout()
			if asJSON {
				enc := json.NewEncoder(out)
				enc.SetEscapeHTML(false)
				enc.SetIndent("", "  ")
				return enc.Encode(sums)
			}
			if len(sums) == 0 {
				fmt.Fprintln(cmd.ErrOrStderr(), "no sessions yet")
				return nil
			}
			return writeSessions(out, cmd.ErrOrStderr(), sums, os.Getenv("HOME"))
		},
	}
	cmd.Flags().BoolVar(&asJSON, "json", false, "print the sessions as a JSON array")
	return cmd
}

// Session states, as sessions shows them.
const (
	StateOpen      = "open"
	StateCompleted = "completed"
	StateCancelled = "cancelled"
	StateError     = "error"
)

// sessionSummary is one session as sessions lists it.
type sessionSummary struct {
	eventlog.SessionInfo
	Cwd   string `json:"cwd"`
	Model string `json:"model"`
	Mode  string `json:"mode"`
	// Source is the agent whose hook decisions the session records
	// (claude-code, gemini-cli); empty for custom-agent's own.
	Source      string `json:"source,omitempty"`
	FirstPrompt string `json:"firstPrompt"`
	// State is the state of the last turn: open, completed, cancelled or
	// error; StopReason is that turn's stop reason, when it ended.
	State      string `json:"state"`
	StopReason string `json:"stopReason,omitempty"`
	// Verified says whether the session's hash chain verifies; ChainError
	// says why not.
	Verified   bool   `json:"verified"`
	ChainError string `json:"chainError,omitempty"`
}

// summarizeSession reads a session's events for sessions.
func summarizeSession(ctx context.Context, s logstore.Log, si eventlog.SessionInfo) (sessionSummary, error) {
	sum := sessionSummary{SessionInfo: si, State: StateOpen}
	prompted := false
	for e, err := range s.Read(ctx, si.ID, 1) {
		if err != nil {
			return sum, err
		}
		p, err := e.Decode()
		if err != nil {
			continue // the chain check below says what is wrong
		}
		switch p := p.(type) {
		case *event.SessionStartedPayload:
			sum.Cwd, sum.Model, sum.Mode, sum.Source = p.Cwd, p.Model, p.Mode, p.SessionSource
		case *event.TurnStartedPayload:
			sum.State, sum.StopReason = StateOpen, ""
			// Turns record where they ran since sessions can be continued
			// elsewhere; older logs have "{}".
			if p.Cwd != "" {
				sum.Cwd = p.Cwd
			}
			if p.Model != "" {
				sum.Model = p.Model
			}
			if p.Mode != "" {
				sum.Mode = p.Mode
			}
		case *event.UserMessagePayload:
			if !prompted {
				sum.FirstPrompt, prompted = p.Content, true
			}
		case *event.TurnCompletedPayload:
			sum.StopReason = p.StopReason
			switch p.StopReason {
			case event.StopFinal:
				sum.State = StateCompleted
			case event.StopCancelled:
				sum.State = StateCancelled
			default:
				sum.State = StateError
			}
		}
	}
	switch err := s.Verify(ctx, si.ID); {
	case err == nil:
		sum.Verified = true
	case isChainError(err):
		sum.ChainError = err.Error()
	default:
		return sum, err
	}
	return sum, nil
}

func isChainError(err error) bool {
	var ce *eventlog.ChainError
	return errors.As(err, &ce)
}

// writeSessions prints the sessions table. Text from the log (paths, the
// prompt) is escaped: it may hold anything a model or a person typed.
// Warnings about chains that do not verify go to warn.
func writeSessions(w, warn io.Writer, sums []sessionSummary, home string) error {
	tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "SESSION\tUPDATED\tEVENTS\tSTATE\tCHAIN\tMODEL\tCWD\tFIRST PROMPT")
	for _, s := range sums {
		state := s.State
		if s.State == StateError && s.StopReason != "" && s.StopReason != event.StopError {
			state += " (" + s.StopReason + ")"
		}
		chain := "ok"
		if !s.Verified {
			chain = "BROKEN"
		}
		model := s.Model
		if model == "" && s.Source != "" {
			model = s.Source + " (hook)"
		}
		fmt.Fprintf(tw, "%s\t%s\t%d\t%s\t%s\t%s\t%s\t%s\n", termtext.Line(s.ID), stamp(s.UpdatedAt), s.Events, state, chain,
			cell(model, 30), cell(tildePath(s.Cwd, home), 50), cell(s.FirstPrompt, 50))
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	for _, s := range sums {
		if !s.Verified {
			fmt.Fprintf(warn, "custom-agent: warning: the hash chain of session %s does not verify: %s (custom-agent audit verify %s)\n",
				termtext.Line(s.ID), termtext.Line(s.ChainError), termtext.Line(s.ID))
		}
	}
	return nil
}

// cell makes text one escaped table cell of at most max runes, "-" when
// empty.
func cell(s string, max int) string {
	s = strings.Join(strings.Fields(s), " ")
	if s == "" {
		return "-"
	}
	if r := []rune(s); len(r) > max {
		s = string(r[:max-1]) + "…"
	}
	return termtext.Line(s)
}

// tildePath shows a path under home as ~/….
func tildePath(p, home string) string {
	home = strings.TrimRight(home, "/")
	if home == "" || p == "" {
		return p
	}
	if p == home {
		return "~"
	}
	if strings.HasPrefix(p, home+"/") {
		return "~" + p[len(home):]
	}
	return p
}

func stamp(t time.Time) string { return t.UTC().Format("2006-01-02 15:04:05Z") }

func newLogCmd(g *globalFlags) *cobra.Command {
	var asJSON, follow bool
	var from uint64
	cmd := &cobra.Command{
		Use:   "log SESSION",
		Short: "Show a session's events as a timeline, or as JSONL",
		Long: `Show a session's events: seq, time (UTC), type, actor and a one-line summary;
under a tool.completed event, the digests of the artifacts that hold the
tool's whole output (custom-agent artifact cat DIGEST prints one).
SESSION is a session id, or "last" for the most recently updated session.
With --json, print each event exactly as stored, one JSON object per line.
With --follow, keep printing new events as they are appended (Ctrl-C stops).

When the session's hash chain does not verify (an event was edited, deleted
or inserted), the events are still shown and a warning says so on stderr.`,
		Args:              cobra.ExactArgs(1),
		ValidArgsFunction: completeSessions(g),
		RunE: func(cmd *cobra.Command, args []string) error {
			ctx := cmd.Context()
			s, id, err := g.openLogForSession(ctx, args[0])
			if err != nil {
				return err
			}
			defer s.Close()
			out, errOut := cmd.OutOrStdout(), cmd.ErrOrStderr()
			if !asJSON {
				// At a terminal each line is wrapped at words to its
				// width; to a file or a pipe it stays whole.
				fw := &fitWriter{w: out, cols: columns(out)}
				defer fw.Flush()
				out = fw
			}
			print := func(e event.Event) error {
				if asJSON {
					b, err := json.Marshal(e)
					if err != nil {
						return err
					}
					_, err = fmt.Fprintf(out, "%s\n", b)
					return err
				}
				return writeTimeline(out, e)
			}
			if follow {
				if err := warnUnverified(ctx, s, errOut, id); err != nil {
					return err
				}
				for e, err := range eventlog.Follow(ctx, s, id, from, 0) {
					if err != nil {
						return err
					}
					if err := print(e); err != nil {
						return err
					}
				}
				return nil
			}
			n := 0
			for e, err := range s.Read(ctx, id, from) {
				if err != nil {
					return err
				}
				if err := print(e); err != nil {
					return err
				}
				n++
			}
			if err := warnUnverified(ctx, s, errOut, id); err != nil {
				return err
			}
			if n == 0 {
				return &exitError{code: 1, msg: fmt.Sprintf("custom-agent: session %s has no events with seq ≥ %d", id, max(from, 1))}
			}
			return nil
		},
	}
	cmd.Flags().BoolVar(&asJSON, "json", false, "print raw events as JSON lines")
	cmd.Flags().BoolVarP(&follow, "follow", "f", false, "keep printing events as they are appended")
	cmd.Flags().Uint64Var(&from, "from", 1, "start at this seq")
	return cmd
}

// warnUnverified says on w when the session's hash chain does not verify:
// what was printed may have been edited.
func warnUnverified(ctx context.Context, s logstore.Log, w io.Writer, id string) error {
	err := s.Verify(ctx, id)
	var ce *eventlog.ChainError
	if err == nil || !errors.As(err, &ce) {
		return err
	}
	_, werr := fmt.Fprintf(w, "custom-agent: warning: the hash chain of session %s does not verify: first bad seq %d: %s; what is shown may have been edited (custom-agent audit verify %s)\n",
		id, ce.Seq, termtext.Line(ce.Problem), id)
	return werr
}

// writeTimeline prints one event of a timeline: its line, and for a
// tool.completed event one line per artifact naming its digest.
func writeTimeline(w io.Writer, e event.Event) error {
	if err := writeTimelineLine(w, e); err != nil {
		return err
	}
	return writeArtifactLines(w, e)
}

// artifactIndent lines artifact lines up with the summary column of
// writeTimelineLine.
var artifactIndent = strings.Repeat(" ", 5+2+24+2+25+2+6+2)

// writeArtifactLines prints the artifacts a tool.completed event names.
func writeArtifactLines(w io.Writer, e event.Event) error {
	if e.Type != event.ToolCompleted {
		return nil
	}
	var p event.ToolCompletedPayload
	if json.Unmarshal(e.Payload, &p) != nil {
		return nil // the timeline line already says it is undecodable
	}
	for _, a := range p.Artifacts {
		cut := ""
		if a.Truncated {
			cut = ", the start of a longer output"
		}
		if a.InEvent {
			cut = ", whole in this event"
		}
		if _, err := fmt.Fprintf(w, "%sartifact %s %s (%dB%s)\n", artifactIndent, termtext.Line(a.Name), termtext.Line(a.Digest), a.Bytes, cut); err != nil {
			return err
		}
	}
	return nil
}

// writeTimelineLine prints one event of the log timeline; its summary
// (model text, args, reasons) is shown with control characters escaped.
func writeTimelineLine(w io.Writer, e event.Event) error {
	line := fmt.Sprintf("%5d  %s  %-25s  %-6s  %s", e.Seq, e.TS.UTC().Format("2006-01-02T15:04:05.000Z"),
		termtext.Line(string(e.Type)), e.Actor(), termtext.Line(e.Summary()))
	_, err := fmt.Fprintln(w, strings.TrimRight(line, " "))
	return err
}

func newAuditCmd(g *globalFlags) *cobra.Command {
	audit := &cobra.Command{
		Use:   "audit",
		Short: "Check the integrity of the event log",
	}
	var all bool
	verify := &cobra.Command{
		Use:   "verify [SESSION | --all]",
		Short: "Verify sessions' hash chains; exit 1 naming the first bad seq",
		Long: `Walk each session's hash chain and check every event against its hash, the
hash of the event before it and the session's recorded head. Exit 0 when every
chain is intact; exit 1 naming the session and the first bad seq when one is
not (an edited, deleted, reordered or inserted event).`,
		Args:              cobra.MaximumNArgs(1),
		ValidArgsFunction: completeSessions(g),
		RunE: func(cmd *cobra.Command, args []string) error {
			if all == (len(args) == 1) {
				return errors.New("name one SESSION or pass --all")
			}
			ctx := cmd.Context()
			var s logstore.Log
			var ids []string
			if all {
				var err error
				s, err = g.openLog(ctx, true)
				if logstore.IsNoLog(err) {
					fmt.Fprintln(cmd.ErrOrStderr(), "no sessions to verify:", err)
					return nil
				}
				if err != nil {
					return err
				}
				list, err := s.Sessions(ctx)
				if err != nil {
					s.Close()
					return err
				}
				for _, si := range list {
					ids = append(ids, si.ID)
				}
			} else {
				var id string
				var err error
				if s, id, err = g.openLogForSession(ctx, args[0]); err != nil {
					return err
				}
				ids = []string{id}
			}
			defer s.Close()
			out := cmd.OutOrStdout()
			bad := 0
			for _, id := range ids {
				ok, err := writeVerified(ctx, s, out, id)
				if err != nil {
					return err
				}
				if !ok {
					bad++
				}
			}
			if bad > 0 {
				return &exitError{code: 1, msg: fmt.Sprintf("%d of %d sessions failed verification", bad, len(ids))}
			}
			if len(ids) == 0 {
				fmt.Fprintln(cmd.ErrOrStderr(), "no sessions to verify")
			}
			return nil
		},
	}
	verify.Flags().BoolVar(&all, "all", false, "verify every session")
	audit.AddCommand(verify)
	return audit
}

// writeVerified walks one session's hash chain and prints the result as
// audit verify does ("ok" or "TAMPERED" with the first bad seq); it reports
// whether the chain verified. An error is a failure to read the log.
func writeVerified(ctx context.Context, s interface {
	Verify(context.Context, string) error
}, out io.Writer, id string) (bool, error) {
	err := s.Verify(ctx, id)
	var ce *eventlog.ChainError
	switch {
	case err == nil:
		_, err := fmt.Fprintf(out, "ok        %s\n", id)
		return true, err
	case errors.As(err, &ce):
		_, err := fmt.Fprintf(out, "TAMPERED  %s  first bad seq %d: %s\n", id, ce.Seq, termtext.Line(ce.Problem))
		return false, err
	default:
		return false, err
	}
}

// completeSessions offers recorded session ids to shell completion.
func completeSessions(g *globalFlags) func(*cobra.Command, []string, string) ([]string, cobra.ShellCompDirective) {
	return func(cmd *cobra.Command, args []string, _ string) ([]string, cobra.ShellCompDirective) {
		if len(args) > 0 {
			return nil, cobra.ShellCompDirectiveNoFileComp
		}
		s, err := g.openLog(cmd.Context(), true)
		if err != nil {
			return nil, cobra.ShellCompDirectiveNoFileComp
		}
		defer s.Close()
		list, _ := s.Sessions(cmd.Context())
		ids := make([]string, 0, len(list)+1)
		ids = append(ids, LastSession)
		for _, si := range list {
			ids = append(ids, si.ID)
		}
		return ids, cobra.ShellCompDirectiveNoFileComp
	}
}
