// Package output is the read_output tool: it reads a byte range of an
// output recorded in the session, so that the model can see any part of a
// long output it was shown only the start and end of.
package output

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"

	"github.com/custom-agent/custom-agent/permission"
	"github.com/custom-agent/custom-agent/tool"
)

// MaxLimit is the most bytes one call reads: what a tool result shows whole
// (its ~4 KiB preview and ~6 KiB tail), so nothing read is cut again.
const MaxLimit = 10 << 10

// DefaultLimit is what a call without limit reads.
const DefaultLimit = 8 << 10

// ReadOutput is the read_output tool. It is a read: the engine judges it by
// its base risk alone, so it runs without asking, in plan mode too. It
// reads only outputs the session's own events name (tool.Call.Outputs).
type ReadOutput struct{}

var _ tool.Tool = ReadOutput{}

// New returns the read_output tool.
func New() ReadOutput { return ReadOutput{} }

// Info returns read_output's metadata from the built-in table.
func (ReadOutput) Info() permission.ToolInfo {
	info, ok := permission.Builtin("read_output")
	if !ok {
		panic("output: read_output is not in permission's built-in table")
	}
	return info
}

type summary struct {
	ToolCallID string `json:"toolCallId"`
	Stream     string `json:"stream"`
	Digest     string `json:"digest"`
	Offset     int64  `json:"offset"`
	Bytes      int64  `json:"bytes"`
	Stored     int64  `json:"stored"`
	Total      int64  `json:"total"`
	More       bool   `json:"more,omitempty"`
}

// Run prints bytes [offset, offset+limit) of the output.
func (ReadOutput) Run(ctx context.Context, call tool.Call, out tool.Output) (tool.Result, error) {
	ref := tool.OutputRef{ToolCallID: call.String("toolCallId"), Stream: call.String("stream"), Digest: call.String("digest")}
	switch {
	case (ref.ToolCallID == "") == (ref.Digest == ""):
		return tool.Result{}, errors.New("give either toolCallId (with stream, default stdout) or digest, not both and not neither")
	case ref.Digest != "" && ref.Stream != "":
		return tool.Result{}, errors.New("stream goes with toolCallId; a digest names one output already")
	}
	if call.Outputs == nil {
		return tool.Result{}, errors.New("no recorded outputs are available to this call")
	}
	offset := int64(call.Int("offset", 0))
	limit := int64(call.Int("limit", DefaultLimit))
	if offset < 0 || limit < 1 {
		return tool.Result{}, errors.New("offset must be 0 or more and limit 1 or more")
	}
	limit = min(limit, MaxLimit)
	rec, err := call.Outputs.OpenOutput(ctx, ref)
	if err != nil {
		return tool.Result{}, err
	}
	defer rec.Content.Close()
	if offset >= rec.Stored {
		msg := fmt.Sprintf("offset %d is past the end: %d bytes of %s of %s are stored", offset, rec.Stored, rec.Stream, rec.ToolCallID)
		if rec.Total > rec.Stored {
			msg += fmt.Sprintf(" (it printed %d; the rest was over the output cap and not kept)", rec.Total)
		}
		return tool.Result{}, errors.New(msg)
	}
	if _, err := rec.Content.Seek(offset, io.SeekStart); err != nil {
		return tool.Result{}, err
	}
	n, err := io.Copy(out.Stdout, io.LimitReader(rec.Content, limit))
	if err != nil {
		return tool.Result{}, fmt.Errorf("reading %s: %w", rec.Digest, err)
	}
	b, _ := json.Marshal(summary{
		ToolCallID: rec.ToolCallID, Stream: rec.Stream, Digest: rec.Digest,
		Offset: offset, Bytes: n, Stored: rec.Stored, Total: rec.Total, More: offset+n < rec.Stored,
	})
	return tool.Result{Summary: b}, nil
}
