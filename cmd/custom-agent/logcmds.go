package main

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/custom-agent/custom-agent/event"
	"github.com/custom-agent/custom-agent/eventlog"
	"github.com/custom-agent/custom-agent/eventlog/sqlitestore"
)

func newSessionsCmd(g *globalFlags) *cobra.Command {
	var asJSON bool
	cmd := &cobra.Command{
		Use:   "sessions",
		Short: "List recorded sessions, newest first",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			ctx := cmd.Context()
			s, err := g.openLog(ctx, true)
			if errors.Is(err, sqlitestore.ErrNoLog) {
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
			out := cmd.OutOrStdout()
			if asJSON {
				if list == nil {
					list = []eventlog.SessionInfo{}
				}
				enc := json.NewEncoder(out)
				enc.SetIndent("", "  ")
				return enc.Encode(list)
			}
			if len(list) == 0 {
				fmt.Fprintln(cmd.ErrOrStderr(), "no sessions yet")
				return nil
			}
			fmt.Fprintf(out, "%-36s  %-20s  %-20s  %6s\n", "SESSION", "CREATED", "UPDATED", "EVENTS")
			for _, si := range list {
				fmt.Fprintf(out, "%-36s  %-20s  %-20s  %6d\n", si.ID, stamp(si.CreatedAt), stamp(si.UpdatedAt), si.Events)
			}
			return nil
		},
	}
	cmd.Flags().BoolVar(&asJSON, "json", false, "print the sessions as a JSON array")
	return cmd
}

func stamp(t time.Time) string { return t.UTC().Format("2006-01-02 15:04:05Z") }

func newLogCmd(g *globalFlags) *cobra.Command {
	var asJSON, follow bool
	var from uint64
	cmd := &cobra.Command{
		Use:   "log SESSION",
		Short: "Show a session's events as a timeline, or as JSONL",
		Long: `Show a session's events: seq, time (UTC), type, actor and a one-line summary.
With --json, print each event exactly as stored, one JSON object per line.
With --follow, keep printing new events as they are appended (Ctrl-C stops).`,
		Args:              cobra.ExactArgs(1),
		ValidArgsFunction: completeSessions(g),
		RunE: func(cmd *cobra.Command, args []string) error {
			ctx := cmd.Context()
			s, err := g.openLog(ctx, true)
			if err != nil {
				return err
			}
			defer s.Close()
			id := args[0]
			out := cmd.OutOrStdout()
			print := func(e event.Event) error {
				if asJSON {
					b, err := json.Marshal(e)
					if err != nil {
						return err
					}
					_, err = fmt.Fprintf(out, "%s\n", b)
					return err
				}
				return writeTimelineLine(out, e)
			}
			if follow {
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
			if n == 0 {
				return &exitError{code: 1, msg: fmt.Sprintf("no events for session %q with seq ≥ %d (see `custom-agent sessions`)", id, max(from, 1))}
			}
			return nil
		},
	}
	cmd.Flags().BoolVar(&asJSON, "json", false, "print raw events as JSON lines")
	cmd.Flags().BoolVarP(&follow, "follow", "f", false, "keep printing events as they are appended")
	cmd.Flags().Uint64Var(&from, "from", 1, "start at this seq")
	return cmd
}

func writeTimelineLine(w io.Writer, e event.Event) error {
	line := fmt.Sprintf("%5d  %s  %-25s  %-6s  %s", e.Seq, e.TS.UTC().Format("2006-01-02T15:04:05.000Z"), e.Type, e.Actor(), e.Summary())
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
			s, err := g.openLog(ctx, true)
			if err != nil {
				return err
			}
			defer s.Close()
			ids := args
			if all {
				list, err := s.Sessions(ctx)
				if err != nil {
					return err
				}
				for _, si := range list {
					ids = append(ids, si.ID)
				}
			}
			out := cmd.OutOrStdout()
			bad := 0
			for _, id := range ids {
				err := s.Verify(ctx, id)
				var ce *eventlog.ChainError
				switch {
				case err == nil:
					fmt.Fprintf(out, "ok        %s\n", id)
				case errors.As(err, &ce):
					bad++
					fmt.Fprintf(out, "TAMPERED  %s  first bad seq %d: %s\n", id, ce.Seq, ce.Problem)
				default:
					return err
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
		ids := make([]string, 0, len(list))
		for _, si := range list {
			ids = append(ids, si.ID)
		}
		return ids, cobra.ShellCompDirectiveNoFileComp
	}
}
