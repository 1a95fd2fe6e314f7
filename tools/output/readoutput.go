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
	"github.com/custom-agent/custom-agent/secrets"
	"github.com/custom-agent/custom-agent/tool"
)

// MaskMargin is how much of the stored output before and after the asked
// range is read to mask the range in context (at least the longest secret
// the call knows of, when that is longer): a secret the range cuts through
// is recognised in the text around the cut and hidden, so that no choice
// of offset and limit shows a part of one, down to a single byte.
const MaskMargin = 8 << 10

// MaxLimit is the most bytes one call reads: what a tool result shows whole
// (its ~4 KiB preview and ~6 KiB tail), so nothing read is cut again.
const MaxLimit = 10 << 10

// DefaultLimit is what a call without limit reads.
const DefaultLimit = 8 << 10

// ReadOutput is the read_output tool. It is a read: the engine judges it by
// its base risk alone, so it runs without asking, in plan mode too. It
// reads only outputs the session's own events name (tool.Call.Outputs).
//
// The store keeps outputs as the tools printed them, secrets included, so
// what it returns is masked in context (see MaskMargin): of what the
// patterns recognise, of the call's known secrets (tool.Call.Secrets:
// serve's tokens), and of an armored private key that began before the
// range. Offsets and byte counts are those of the stored output; a masked
// range reads shorter or longer than limit.
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
	text, n, err := maskedRange(rec.Content, offset, min(limit, rec.Stored-offset), rec.Stored, call.Secrets)
	if err != nil {
		return tool.Result{}, fmt.Errorf("reading %s: %w", rec.Digest, err)
	}
	if _, err := io.WriteString(out.Stdout, text); err != nil {
		return tool.Result{}, err
	}
	b, _ := json.Marshal(summary{
		ToolCallID: rec.ToolCallID, Stream: rec.Stream, Digest: rec.Digest,
		Offset: offset, Bytes: n, Stored: rec.Stored, Total: rec.Total, More: offset+n < rec.Stored,
	})
	return tool.Result{Summary: b}, nil
}

// maskedRange returns bytes [offset, offset+limit) of the stored content
// (stored bytes long), masked of sec's secrets and of what the patterns
// recognise as if the whole content had been masked, and how many stored
// bytes the range is. The range is masked in the context of MaskMargin
// bytes (or sec's longest secret) on each side; an armored private key
// whose BEGIN line lies before that context is found by following the key
// markers from the start of the content (secrets.KeyBlocks), which reads
// every byte before the range once.
func maskedRange(content io.ReadSeeker, offset, limit, stored int64, sec *secrets.Set) (string, int64, error) {
	pad := max(int64(MaskMargin), int64(sec.Longest()))
	from := max(0, offset-pad)
	to := min(stored, offset+limit+pad)
	if _, err := content.Seek(0, io.SeekStart); err != nil {
		return "", 0, err
	}
	var keys secrets.KeyBlocks
	if from > 0 {
		if _, err := io.Copy(keyWriter{&keys}, io.LimitReader(content, from)); err != nil {
			return "", 0, err
		}
	}
	buf := make([]byte, to-from)
	m, err := io.ReadFull(content, buf)
	if err != nil && !errors.Is(err, io.ErrUnexpectedEOF) {
		return "", 0, err
	}
	buf = buf[:m]
	text := string(buf)
	start := int(min(offset-from, int64(len(text))))
	end := int(min(offset+limit-from, int64(len(text))))
	if !keys.OpenAt(from) {
		return sec.MaskSpan(text, start, end), int64(end - start), nil
	}
	// The context starts inside a private key: its body and END line are
	// hidden as if its BEGIN line were in sight.
	kend := secrets.KeyEnd(buf)
	shown := ""
	if start < kend {
		shown = secrets.Redacted
	}
	return shown + sec.MaskSpan(text, max(start, kend), max(end, kend)), int64(end - start), nil
}

// keyWriter feeds a KeyBlocks from io.Copy.
type keyWriter struct{ k *secrets.KeyBlocks }

func (w keyWriter) Write(p []byte) (int, error) {
	w.k.Write(p)
	return len(p), nil
}
