package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"github.com/custom-agent/custom-agent/app/logstore"
	"io"
	"os"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/custom-agent/custom-agent/event"
	"github.com/custom-agent/custom-agent/permission"
	"github.com/custom-agent/custom-agent/policy"
	"github.com/custom-agent/custom-agent/replay"
	"github.com/custom-agent/custom-agent/support/termtext"
)

func newReplayCmd(g *globalFlags) *cobra.Command {
	var (
		asJSON, all bool
		files       []string
		since       string
	)
	cmd := &cobra.Command{
		Use:   "replay SESSION | --all [--since DATE]",
		Short: "Decide every recorded call again: under the recorded policy, or under a candidate one (--policy)",
		Long: `Decide every recorded call of a session again, from the event log alone, on
this build's engine, and print the calls that come out otherwise.

Each decision is recorded with what it was made from: the policy in force
(policy.snapshot events), the request the engine was given (the resolved
paths, glob expansions, scanned trees, repositories and git configuration,
sandbox facts, mode and a skill's allowed tools), and the engine's version.
The prior approvals a call was given are rebuilt from the log in order.

Without --policy, the recorded policy is used: a call that comes out
otherwise shows what this build's engine changed (a newer analyser, new
built-in rules), naming the rule or the finding.

--policy FILE (repeatable) is a candidate policy, in the policy file format.
Its rules take the place of the recorded user and project rules: every rule
recorded at those two levels is dropped, and the candidate's rules count, at
level flag, trusted (you named the files), as with check --policy. The
session's own rules (granted by answers during the session), rules given
with --policy when it ran, and the built-in rules stay. The answers people
gave stay as recorded, and so do the prior approvals they made.

A call a person answered is shown as "asked → the person answered X"
beside what the candidate policy would do.

SESSION is a session id, or "last" for the most recently updated session.
--all replays every session, --since DATE (YYYY-MM-DD, UTC, or RFC 3339)
only the calls decided since then: "what would this new rule have allowed
last month?"

Sessions recorded before decisions were recorded with their facts, and hook
sessions of other agents, are reported as not replayable, and so is a call
whose arguments held a secret (the log keeps it masked).

Exit status: 0 when every call comes out as recorded, 1 when some differ,
2 on an error: among them a session whose hash chain does not verify (its
first bad seq is named).`,
		Args:              cobra.MaximumNArgs(1),
		ValidArgsFunction: completeSessions(g),
		RunE: func(cmd *cobra.Command, args []string) error {
			switch {
			case all && len(args) > 0:
				return replayErr(errors.New("give a SESSION or --all, not both"))
			case !all && len(args) == 0:
				return replayErr(errors.New("give a SESSION (an id, or \"last\") or --all"))
			case since != "" && !all:
				return replayErr(errors.New("--since goes with --all"))
			}
			var opts replay.Options
			if since != "" {
				t, err := parseSince(since)
				if err != nil {
					return replayErr(err)
				}
				opts.Since = t
			}
			if len(files) > 0 {
				rules, err := candidateRules(files)
				if err != nil {
					return replayErr(err)
				}
				opts.Candidate = rules
			}
			r := replayRun{out: cmd.OutOrStdout(), errOut: cmd.ErrOrStderr(), json: asJSON, candidate: opts.Candidate != nil}
			if all {
				return r.all(cmd.Context(), g, opts)
			}
			return r.one(cmd.Context(), g, args[0], opts)
		},
	}
	cmd.Flags().BoolVar(&asJSON, "json", false, "print the replay as JSON (an array with --all), every call included")
	cmd.Flags().BoolVar(&all, "all", false, "replay every recorded session")
	cmd.Flags().StringVar(&since, "since", "", "with --all: only the calls decided since DATE (YYYY-MM-DD or RFC 3339)")
	cmd.Flags().StringArrayVar(&files, "policy", nil, "a candidate policy file, in place of the recorded user and project rules (repeatable)")
	return cmd
}

// replayErr is an error of replay: exit status 2.
func replayErr(err error) error {
	var ee *exitError
	if errors.As(err, &ee) {
		return &exitError{code: 2, msg: ee.msg, err: ee.err}
	}
	return &exitError{code: 2, msg: "custom-agent: replay: " + termtext.Line(err.Error()), err: err}
}

// parseSince reads --since: a date (midnight UTC) or an RFC 3339 time.
func parseSince(s string) (time.Time, error) {
	if t, err := time.Parse("2006-01-02", s); err == nil {
		return t, nil
	}
	if t, err := time.Parse(time.RFC3339, s); err == nil {
		return t, nil
	}
	return time.Time{}, fmt.Errorf("--since %q: not a date (YYYY-MM-DD) or an RFC 3339 time", s)
}

// candidateRules reads the --policy files, strictly, as check --policy does.
func candidateRules(files []string) ([]permission.Rule, error) {
	cfg, err := policy.ConfigHome(os.Getenv)
	if err != nil {
		return nil, err
	}
	wd, err := os.Getwd()
	if err != nil {
		return nil, err
	}
	env := policy.Env{Cwd: wd, Home: os.Getenv("HOME"), ConfigHome: cfg}
	rules := []permission.Rule{}
	for _, f := range files {
		rs, err := policy.ReadFile(f, permission.LevelFlag, env)
		if err != nil {
			return nil, fmt.Errorf("candidate policy: %w", err)
		}
		rules = append(rules, rs...)
	}
	return rules, nil
}

// replayRun prints replays.
type replayRun struct {
	out, errOut io.Writer
	json        bool
	candidate   bool
}

func (r *replayRun) one(ctx context.Context, g *globalFlags, arg string, opts replay.Options) error {
	s, id, err := g.openLogForSession(ctx, arg)
	if err != nil {
		return replayErr(err)
	}
	defer s.Close()
	res, err := replay.Replay(ctx, s, id, opts)
	if err != nil {
		return replayErr(err)
	}
	if r.json {
		if err := writeJSON(r.out, res); err != nil {
			return err
		}
	} else if err := r.write(res); err != nil {
		return err
	}
	return differStatus(res.Differences)
}

func (r *replayRun) all(ctx context.Context, g *globalFlags, opts replay.Options) error {
	s, err := g.openLog(ctx, true)
	if logstore.IsNoLog(err) {
		if r.json {
			_, err := fmt.Fprintln(r.out, "[]")
			return err
		}
		fmt.Fprintln(r.errOut, "no sessions yet:", err)
		return nil
	}
	if err != nil {
		return replayErr(err)
	}
	defer s.Close()
	list, err := s.Sessions(ctx)
	if err != nil {
		return replayErr(err)
	}
	results := []*replay.Session{}
	var errs []error
	differ := 0
	// Oldest first, as the calls happened.
	for i := len(list) - 1; i >= 0; i-- {
		si := list[i]
		if !opts.Since.IsZero() && si.UpdatedAt.Before(opts.Since) {
			continue
		}
		res, err := replay.Replay(ctx, s, si.ID, opts)
		if err != nil {
			errs = append(errs, err)
			fmt.Fprintf(r.errOut, "custom-agent: replay: %s\n", termtext.Line(err.Error()))
			continue
		}
		differ += res.Differences
		if !opts.Since.IsZero() && len(res.Calls) == 0 {
			continue
		}
		results = append(results, res)
		if !r.json {
			if err := r.write(res); err != nil {
				return err
			}
		}
	}
	if r.json {
		if err := writeJSON(r.out, results); err != nil {
			return err
		}
	} else {
		fmt.Fprintf(r.out, "%s replayed, %s\n", count(len(results), "session"), differWords(differ))
	}
	if len(errs) > 0 {
		return &exitError{code: 2, err: errors.Join(errs...), msg: fmt.Sprintf("custom-agent: replay: %s could not be replayed (above)", count(len(errs), "session"))}
	}
	return differStatus(differ)
}

func differStatus(n int) error {
	if n == 0 {
		return nil
	}
	return &exitError{code: 1, msg: fmt.Sprintf("custom-agent: replay: %s otherwise", count(n, "call")+map[bool]string{true: " comes out", false: " come out"}[n == 1])}
}

// count is "1 call", "2 calls".
func count(n int, noun string) string {
	if n == 1 {
		return "1 " + noun
	}
	return fmt.Sprintf("%d %ss", n, noun)
}

// differWords is "no call differs", "1 call differs", "2 calls differ".
func differWords(n int) string {
	switch n {
	case 0:
		return "no call differs"
	case 1:
		return "1 call differs"
	}
	return fmt.Sprintf("%d calls differ", n)
}

func writeJSON(w io.Writer, v any) error {
	enc := json.NewEncoder(w)
	enc.SetEscapeHTML(false)
	enc.SetIndent("", "  ")
	return enc.Encode(v)
}

// write prints one session's replay: a summary line, then each call that
// differs or could not be decided again.
func (r *replayRun) write(s *replay.Session) error {
	w := r.out
	where := ""
	if s.Cwd != "" {
		where = " in " + termtext.Line(s.Cwd)
	}
	if s.Why != "" {
		_, err := fmt.Fprintf(w, "session %s%s: %s\n", s.ID, where, s.Why)
		return err
	}
	fmt.Fprintf(w, "session %s%s: %s decided again, %d differ, %d not replayable\n", s.ID, where, count(len(s.Calls), "call"), s.Differences, s.NotReplayable)
	if s.BuiltinChanged {
		fmt.Fprintln(w, "  the built-in rules of this build are not the session's: today's are used")
	}
	for i := range s.Calls {
		c := &s.Calls[i]
		if !c.Differs && c.NotReplayable == "" {
			continue
		}
		fmt.Fprintf(w, "  seq %d %s %s %s\n", c.Seq, termtext.Line(c.ToolCallID), termtext.Line(c.Tool), clipArgs(c.Args))
		if c.NotReplayable != "" {
			fmt.Fprintf(w, "    %s\n", c.NotReplayable)
			continue
		}
		fmt.Fprintf(w, "    recorded:  %s\n", recordedWords(c))
		if c.Taint != "" {
			fmt.Fprintf(w, "    the taint does not match the log: %s\n", termtext.Line(c.Taint))
		}
		if c.History != "" {
			fmt.Fprintf(w, "    the prior approvals do not match the log: %s\n", termtext.Line(c.History))
		}
		if c.Today != nil {
			fmt.Fprintf(w, "    today:     %s\n", outcomeWords(c.Today))
			if c.Taint == "" && c.History == "" {
				fmt.Fprintf(w, "    the engine changed: %s\n", termtext.Line(c.Change))
			}
		}
		if c.Candidate != nil {
			fmt.Fprintf(w, "    candidate: %s\n", outcomeWords(c.Candidate))
		}
	}
	return nil
}

// recordedWords says what was decided then, and who answered a question.
func recordedWords(c *replay.Call) string {
	s := outcomeWords(&c.Recorded)
	a := c.Answer
	if a == nil {
		return s
	}
	s = "asked" + strings.TrimPrefix(s, "ask")
	switch a.Actor {
	case event.ActorUser:
		answer := a.Option
		if answer == "" {
			answer = a.Decision
		}
		return s + " → the person answered " + answer
	case event.ActorAuto:
		return s + " → answered automatically: " + a.Decision + " (" + a.Option + ")"
	}
	return s + " → " + a.Decision + " by the system: " + termtext.Line(a.Reason)
}

// outcomeWords: "allow (execute; rule shell-go-env, session)".
func outcomeWords(o *replay.Outcome) string {
	s := o.Decision + " (" + o.Risk.String() + "; "
	if o.Rule != nil {
		s += "rule " + termtext.Line(o.Rule.ID) + ", " + string(o.Rule.Level)
		if o.Rule.Source != "" && o.Rule.Level != permission.LevelBuiltin {
			s += ", " + termtext.Line(o.Rule.Source)
		}
	} else {
		s += o.SourcedFrom
	}
	if o.Sandbox != "" {
		s += "; " + o.Sandbox + " sandbox"
	}
	return s + ")"
}

func clipArgs(args json.RawMessage) string {
	s := termtext.Line(string(args))
	if r := []rune(s); len(r) > 120 {
		s = string(r[:120]) + "…"
	}
	return s
}
