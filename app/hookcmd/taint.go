package hookcmd

import (
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"

	"github.com/custom-agent/custom-agent/hook"
	"github.com/custom-agent/custom-agent/hook/journal"
	"github.com/custom-agent/custom-agent/permission"
	"github.com/custom-agent/custom-agent/support/datadir"
)

// taintDir is where the hook keeps, per session, the first tool result of
// that session the injection scanner flagged: the journal's records are
// folded into the event log and removed (hook/ingest), and the hook links
// no store, so the PreToolUse/BeforeTool hooks that come after a flagged
// PostToolUse/AfterTool read it here. It is a copy of what the log holds
// (the flagged tool.completed, recorded by the same hook call), kept only
// so that later decisions of the session can depend on it, as the
// executor's do (permission step 9, Request.Taint).
const taintDir = "taint"

// taintMark is a session's taint file.
type taintMark struct {
	ToolCallID string   `json:"toolCallId"`
	Classes    []string `json:"classes"`
	// Unscanned: the result could not be scanned (an after event too
	// large to read whole), so it may hold such text.
	Unscanned bool `json:"unscanned,omitempty"`
}

func (o *Options) taintPath(in *hook.Input) (string, error) {
	dir, err := datadir.Resolve(o.DataDir, o.Getenv, os.UserHomeDir)
	if err != nil {
		return "", err
	}
	return filepath.Join(dir, journal.Dir, taintDir, hook.SessionID(in.Agent, in.SessionID)+".json"), nil
}

// taintOf reads the session's taint: nil when no result of the session
// was flagged. A taint file that cannot be read is an error, never "no
// taint": the call is then blocked.
func (o *Options) taintOf(in *hook.Input) (*permission.Taint, error) {
	p, err := o.taintPath(in)
	if err != nil {
		return nil, fmt.Errorf("reading the session's injection flag: %w", err)
	}
	b, err := os.ReadFile(p)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("reading the session's injection flag: %w", err)
	}
	var m taintMark
	if err := json.Unmarshal(b, &m); err != nil || m.ToolCallID == "" {
		return nil, fmt.Errorf("reading the session's injection flag %s: not a taint record", p)
	}
	return &permission.Taint{ToolCallID: m.ToolCallID, Classes: m.Classes, Unscanned: m.Unscanned}, nil
}

// markTaint records that the session's call id returned flagged output
// (or output that could not be scanned: unscanned), unless an earlier
// result of the session already did (the first one names the taint, as
// session.TaintOf does). It is durable before the
// journal record that holds the flag is written: should the hook die in
// between, later calls are asked for a flag the log does not show, never
// allowed despite one it does.
func (o *Options) markTaint(in *hook.Input, id string, classes []string, unscanned bool) error {
	p, err := o.taintPath(in)
	if err != nil {
		return fmt.Errorf("recording the injection flag: %w", err)
	}
	if _, err := os.Stat(p); err == nil {
		return nil
	}
	dir := filepath.Dir(p)
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return fmt.Errorf("recording the injection flag: %w", err)
	}
	b, _ := json.Marshal(taintMark{ToolCallID: id, Classes: classes, Unscanned: unscanned}) // plain fields: cannot fail
	f, err := os.CreateTemp(dir, ".tmp-*")
	if err != nil {
		return fmt.Errorf("recording the injection flag: %w", err)
	}
	tmp := f.Name()
	_, werr := f.Write(b)
	if werr == nil {
		werr = f.Sync()
	}
	if cerr := f.Close(); werr == nil {
		werr = cerr
	}
	if werr == nil {
		werr = os.Rename(tmp, p)
	}
	if werr != nil {
		os.Remove(tmp)
		return fmt.Errorf("recording the injection flag: %w", werr)
	}
	d, err := os.Open(dir)
	if err != nil {
		return fmt.Errorf("recording the injection flag: %w", err)
	}
	defer d.Close()
	if err := d.Sync(); err != nil {
		return fmt.Errorf("recording the injection flag: %w", err)
	}
	return nil
}
