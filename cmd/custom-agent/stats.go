package main

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"strings"
	"text/tabwriter"

	"github.com/spf13/cobra"

	"github.com/custom-agent/custom-agent/app/logstore"
	"github.com/custom-agent/custom-agent/event"
	"github.com/custom-agent/custom-agent/eventlog"
	"github.com/custom-agent/custom-agent/injection"
	"github.com/custom-agent/custom-agent/permission"
)

// injectionStats are the prompt-injection scanner's counters, folded from
// recorded events.
type injectionStats struct {
	Sessions int `json:"sessions"`
	// Scanned counts tool results (tool.completed, and tool.failed after
	// the tool ran); Flagged those the scanner flagged.
	Scanned int `json:"scanned"`
	Flagged int `json:"flagged"`
	// TaintAsked counts decisions the taint rule turned from allow into a
	// question (or, in dont-ask mode, a denial).
	TaintAsked int `json:"taintAsked"`
	// Classes has one entry per class, in the scanner's order: results
	// flagged with it and its spans.
	Classes []classCount `json:"classes"`
}

type classCount struct {
	Class   string `json:"class"`
	Results int    `json:"results"`
	Spans   int    `json:"spans"`
}

func newInjectionStats() injectionStats {
	var st injectionStats
	for _, c := range injection.AllClasses() {
		st.Classes = append(st.Classes, classCount{Class: string(c)})
	}
	return st
}

// add folds one event into the counters.
func (st *injectionStats) add(e event.Event) error {
	var in *event.Injection
	switch e.Type {
	case event.ToolCompleted:
		var p event.ToolCompletedPayload
		if err := json.Unmarshal(e.Payload, &p); err != nil {
			return fmt.Errorf("seq %d: %w", e.Seq, err)
		}
		in = p.Injection
	case event.ToolFailed:
		var p event.ToolFailedPayload
		if err := json.Unmarshal(e.Payload, &p); err != nil {
			return fmt.Errorf("seq %d: %w", e.Seq, err)
		}
		if p.Stage != event.StageExecute {
			return nil
		}
		in = p.Injection
	case event.PermissionResolved:
		var p event.PermissionResolvedPayload
		if err := json.Unmarshal(e.Payload, &p); err != nil {
			return fmt.Errorf("seq %d: %w", e.Seq, err)
		}
		if p.SourcedFrom == string(permission.FromTaint) || p.SourcedFrom == string(permission.FromMode) && p.Actor == event.ActorPolicy && containsTaint(p.Reason) {
			st.TaintAsked++
		}
		return nil
	default:
		return nil
	}
	st.Scanned++
	if in == nil {
		return nil
	}
	st.Flagged++
	for i := range st.Classes {
		c := &st.Classes[i]
		for _, k := range in.Classes {
			if k == c.Class {
				c.Results++
			}
		}
		for _, sp := range in.Spans {
			if sp.Class == c.Class {
				c.Spans++
			}
		}
	}
	return nil
}

// containsTaint reports whether a dont-ask denial was a tainted question.
func containsTaint(reason string) bool {
	return strings.Contains(reason, "holds text that tries to give instructions")
}

func newStatsCmd(g *globalFlags) *cobra.Command {
	var asJSON bool
	var sessionArg string
	cmd := &cobra.Command{
		Use:   "stats",
		Short: "Show the prompt-injection scanner's counters per class, from the event log",
		Long: `Show what the prompt-injection scanner found in tool results, per class, read
from the event log: how many tool results were scanned and flagged, how many
results and spans each class was found in, and how many calls the taint rule
asked about (a call that would have been allowed, after a flagged result in
the same turn). The classes are described in docs/injection.md.

By default every recorded session is counted; --session counts one ("last" is
the most recent).`,
		Example: `  custom-agent stats
  custom-agent stats --session last --json`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			ctx := cmd.Context()
			st := newInjectionStats()
			var err error
			if sessionArg != "" {
				err = statsOfSession(ctx, g, sessionArg, &st)
			} else {
				err = statsOfAll(ctx, g, &st)
			}
			if err != nil {
				return err
			}
			return writeStats(cmd.OutOrStdout(), st, asJSON)
		},
	}
	cmd.Flags().BoolVar(&asJSON, "json", false, "print the counters as a JSON object")
	cmd.Flags().StringVar(&sessionArg, "session", "", "count one session (an id, or \"last\")")
	return cmd
}

func statsOfSession(ctx context.Context, g *globalFlags, arg string, st *injectionStats) error {
	s, id, err := g.openLogForSession(ctx, arg)
	if err != nil {
		return err
	}
	defer s.Close()
	return foldSession(ctx, s, id, st)
}

func statsOfAll(ctx context.Context, g *globalFlags, st *injectionStats) error {
	s, err := g.openLog(ctx, true)
	if logstore.IsNoLog(err) {
		return nil // no sessions yet: every counter is zero
	}
	if err != nil {
		return err
	}
	defer s.Close()
	list, err := s.Sessions(ctx)
	if err != nil {
		return err
	}
	for _, si := range list {
		if err := foldSession(ctx, s, si.ID, st); err != nil {
			return err
		}
	}
	return nil
}

func foldSession(ctx context.Context, s eventlog.Store, id string, st *injectionStats) error {
	st.Sessions++
	for e, err := range s.Read(ctx, id, 1) {
		if err != nil {
			return fmt.Errorf("reading session %s: %w", id, err)
		}
		if err := st.add(e); err != nil {
			return fmt.Errorf("session %s: %w", id, err)
		}
	}
	return nil
}

func writeStats(out io.Writer, st injectionStats, asJSON bool) error {
	if asJSON {
		enc := json.NewEncoder(out)
		enc.SetIndent("", "  ")
		return enc.Encode(st)
	}
	fmt.Fprintf(out, "prompt-injection scanner, %d session(s)\n", st.Sessions)
	fmt.Fprintf(out, "  tool results scanned  %d\n", st.Scanned)
	fmt.Fprintf(out, "  flagged               %d\n", st.Flagged)
	fmt.Fprintf(out, "  asked by taint        %d\n\n", st.TaintAsked)
	tw := tabwriter.NewWriter(out, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "class\tresults\tspans")
	for _, c := range st.Classes {
		fmt.Fprintf(tw, "%s\t%d\t%d\n", c.Class, c.Results, c.Spans)
	}
	return tw.Flush()
}
