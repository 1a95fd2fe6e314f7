package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"maps"
	"path/filepath"
	"slices"
	"strings"

	"github.com/spf13/cobra"

	"github.com/custom-agent/custom-agent/app"
	"github.com/custom-agent/custom-agent/app/logstore"
	"github.com/custom-agent/custom-agent/artifact"
	"github.com/custom-agent/custom-agent/event"
)

func newArtifactCmd(g *globalFlags) *cobra.Command {
	cmd := &cobra.Command{
		Use:   "artifact",
		Short: "Read the full outputs of tool calls",
	}
	cat := &cobra.Command{
		Use:   "cat DIGEST|PREFIX",
		Short: "Print an artifact (a tool call's whole output) by its digest",
		Long: `Print an artifact by the digest a tool.completed event names
(sha256:… or the 64 hex digits alone, or a prefix of at least 4 of them
that names one recorded artifact, as git takes). The artifact is checked against its
digest first, then streamed to stdout: memory use does not grow with its size.
A short output (at most 4 KiB, valid UTF-8, nothing masked) is kept whole in
its event instead of the artifact store, and one of at most 64 KiB with
nothing masked in the event log beside it; each is printed from there,
after the same check.

When the event log records that the artifact is only the start of a stream
(the rest was over the output cap, --max-output-bytes on run), stderr says
how many bytes were dropped; stdout still holds exactly the stored bytes.`,
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			digest, full, err := artifact.NormalizePrefix(args[0])
			if err != nil {
				return err
			}
			if !full {
				if digest, err = uniqueDigest(cmd.Context(), g, digest); err != nil {
					return err
				}
			}
			dir, err := g.resolveDataDir()
			if err != nil {
				return err
			}
			s, err := artifact.Open(filepath.Join(dir, "artifacts"))
			if err != nil {
				return err
			}
			// Outputs of up to 64 KiB are kept in the event log, in the
			// commit of the event naming them.
			switch log, err := g.openLog(cmd.Context(), true); {
			case err == nil:
				defer log.Close()
				s = s.WithSource(log)
			case !logstore.IsNoLog(err):
				return err
			}
			if err := s.Verify(digest); err != nil {
				if errors.Is(err, artifact.ErrNotFound) {
					// A short output is kept only in its event.
					text, ok, lerr := inEventOutput(cmd.Context(), g, digest)
					if ok {
						_, err := io.WriteString(cmd.OutOrStdout(), text)
						return err
					}
					msg := err.Error() + " in " + s.Dir()
					if lerr != nil {
						msg += fmt.Sprintf(" (the event log, where a short output is kept, could not be read: %v)", lerr)
					}
					return &exitError{code: 1, msg: msg}
				}
				return err
			}
			f, err := s.Open(digest)
			if err != nil {
				return err
			}
			defer f.Close()
			if _, err := io.Copy(cmd.OutOrStdout(), f); err != nil {
				return err
			}
			cuts, err := cutsOf(cmd.Context(), g, digest)
			errOut := cmd.ErrOrStderr()
			for _, c := range cuts {
				fmt.Fprintf(errOut, "custom-agent: this artifact is not the whole output: it holds the first %d bytes of the %s of tool call %s (session %s), which printed %d; %d bytes were dropped by the output cap (raise it with run --max-output-bytes or %s)\n",
					c.stored, c.stream, c.toolCallID, c.sessionID, c.printed, c.printed-c.stored, app.MaxOutputEnv)
			}
			if err != nil {
				fmt.Fprintf(errOut, "custom-agent: could not check in the event log whether this artifact is a whole output: %v\n", err)
			}
			return nil
		},
	}
	cmd.AddCommand(cat)
	return cmd
}

// cut is a tool.completed event naming an artifact that holds only the
// start of its stream.
type cut struct {
	sessionID, toolCallID, stream string
	stored, printed               int64
}

// maxCutsShown bounds what artifact cat prints about one digest (the same
// bytes may be the start of many outputs).
const maxCutsShown = 3

// cutsOf finds the tool.completed events that name digest as a truncated
// artifact. It opens the log read-only and finds nothing when there is no
// log yet.
func cutsOf(ctx context.Context, g *globalFlags, digest string) ([]cut, error) {
	var cuts []cut
	err := eachNaming(ctx, g, digest, func(session string, p *event.ToolCompletedPayload, a event.Artifact) bool {
		if !a.Truncated {
			return true
		}
		printed := p.StdoutBytes
		if a.Name == "stderr" {
			printed = p.StderrBytes
		}
		cuts = append(cuts, cut{sessionID: session, toolCallID: p.ToolCallID, stream: a.Name, stored: a.Bytes, printed: printed})
		return len(cuts) < maxCutsShown
	})
	return cuts, err
}

// inEventOutput finds a tool.completed event that holds the output with
// that digest in its preview (an artifact marked inEvent) and returns the
// output, checked against the digest. It opens the log read-only.
func inEventOutput(ctx context.Context, g *globalFlags, digest string) (text string, found bool, err error) {
	err = eachNaming(ctx, g, digest, func(_ string, p *event.ToolCompletedPayload, a event.Artifact) bool {
		if t, err := p.InEventOutput(a); a.InEvent && err == nil {
			text, found = t, true
		}
		return !found
	})
	return text, found, err
}

// eachNaming calls visit with every artifact entry of a tool.completed
// event that names digest, in every session, until visit returns false.
// It opens the log read-only and visits nothing when there is no log yet.
func eachNaming(ctx context.Context, g *globalFlags, digest string, visit func(session string, p *event.ToolCompletedPayload, a event.Artifact) bool) error {
	return eachArtifact(ctx, g, []byte(digest), func(session string, p *event.ToolCompletedPayload, a event.Artifact) bool {
		return a.Digest != digest || visit(session, p, a)
	})
}

// uniqueDigest returns the one digest a tool.completed event names that
// starts with prefix ("sha256:" and hex digits), or says why there is none.
func uniqueDigest(ctx context.Context, g *globalFlags, prefix string) (string, error) {
	found := map[string]bool{}
	err := eachArtifact(ctx, g, []byte(prefix), func(_ string, _ *event.ToolCompletedPayload, a event.Artifact) bool {
		if strings.HasPrefix(a.Digest, prefix) {
			found[a.Digest] = true
		}
		return true
	})
	if err != nil {
		return "", err
	}
	switch len(found) {
	case 0:
		return "", &exitError{code: 1, msg: fmt.Sprintf("no recorded artifact starts with %s", prefix)}
	case 1:
		for d := range found {
			return d, nil
		}
	}
	list := slices.Sorted(maps.Keys(found))
	return "", &exitError{code: 1, msg: fmt.Sprintf("%s is ambiguous: %d recorded artifacts start with it:\n  %s", prefix, len(list), strings.Join(list, "\n  "))}
}

// eachArtifact calls visit with every artifact entry of a tool.completed
// event whose payload holds needle, in every session, until visit returns
// false. It opens the log read-only and visits nothing when there is no
// log yet.
func eachArtifact(ctx context.Context, g *globalFlags, needle []byte, visit func(session string, p *event.ToolCompletedPayload, a event.Artifact) bool) error {
	log, err := g.openLog(ctx, true)
	if logstore.IsNoLog(err) {
		return nil
	}
	if err != nil {
		return err
	}
	defer log.Close()
	sessions, err := log.Sessions(ctx)
	if err != nil {
		return err
	}
	for _, si := range sessions {
		for e, err := range log.Read(ctx, si.ID, 1) {
			if err != nil {
				return err
			}
			if e.Type != event.ToolCompleted || !bytes.Contains(e.Payload, needle) {
				continue
			}
			var p event.ToolCompletedPayload
			if err := json.Unmarshal(e.Payload, &p); err != nil {
				return fmt.Errorf("session %s seq %d: %w", si.ID, e.Seq, err)
			}
			for _, a := range p.Artifacts {
				if !visit(si.ID, &p, a) {
					return nil
				}
			}
		}
	}
	return nil
}
