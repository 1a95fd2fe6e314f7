package session

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"github.com/custom-agent/custom-agent/artifact"
	"github.com/custom-agent/custom-agent/event"
	"github.com/custom-agent/custom-agent/tool"
)

// outputs opens the outputs a session's tool.completed events name, for
// read_output: a call's stream by its toolCallId, or an artifact by digest
// when this session recorded it. Artifacts of other sessions are not
// reachable through it, even by digest.
type outputs struct {
	log  Log
	id   string
	arts *artifact.Store
}

var _ tool.Outputs = (*outputs)(nil)

func (o *outputs) OpenOutput(ctx context.Context, ref tool.OutputRef) (*tool.RecordedOutput, error) {
	if ref.Stream == "" {
		ref.Stream = "stdout"
	}
	var norm string
	if ref.Digest != "" {
		d, err := artifact.NormalizeDigest(ref.Digest)
		if err != nil {
			return nil, err
		}
		norm = d
	}
	var found *tool.RecordedOutput
	var inEvent *inEventRead // the found stream, when the event holds it
	callSeen := false
	for e, err := range o.log.Read(ctx, o.id, 1) {
		if err != nil {
			return nil, err
		}
		if e.Type != event.ToolCompleted {
			continue
		}
		p, err := e.Decode()
		if err != nil {
			return nil, err
		}
		c := p.(*event.ToolCompletedPayload)
		if ref.Digest == "" && c.ToolCallID != ref.ToolCallID {
			continue
		}
		callSeen = callSeen || c.ToolCallID == ref.ToolCallID
		for _, a := range c.Artifacts {
			switch {
			case ref.Digest != "" && a.Digest != norm && a.Digest != ref.Digest:
				continue
			case ref.Digest == "" && a.Name != ref.Stream:
				continue
			}
			total := c.StdoutBytes
			if a.Name == "stderr" {
				total = c.StderrBytes
			}
			found = &tool.RecordedOutput{
				OutputRef: tool.OutputRef{ToolCallID: c.ToolCallID, Stream: a.Name, Digest: a.Digest},
				Stored:    a.Bytes, Total: total,
			}
			inEvent = nil
			if a.InEvent { // the event's preview is the whole stream
				text, err := c.InEventOutput(a)
				inEvent = &inEventRead{text, err}
			}
		}
	}
	switch {
	case found == nil && ref.Digest != "":
		return nil, fmt.Errorf("no output of this session has digest %s", ref.Digest)
	case found == nil && callSeen:
		return nil, fmt.Errorf("call %s printed nothing on %s, or it was not stored", ref.ToolCallID, ref.Stream)
	case found == nil:
		return nil, fmt.Errorf("no completed call %q in this session", ref.ToolCallID)
	}
	if inEvent != nil {
		// Checked against its digest (by InEventOutput): an event read
		// back from the log was not validated by Decode.
		if inEvent.err != nil {
			return nil, fmt.Errorf("call %s: %w", found.ToolCallID, inEvent.err)
		}
		found.Content = nopCloser{strings.NewReader(inEvent.text)}
		return found, nil
	}
	if o.arts == nil {
		return nil, errors.New("this session has no artifact store, so no stored output can be read")
	}
	f, err := o.arts.Open(found.Digest)
	if err != nil {
		return nil, err
	}
	found.Content = f
	return found, nil
}

// nopCloser is an output read from an event, which holds nothing to close.
type nopCloser struct{ *strings.Reader }

func (nopCloser) Close() error { return nil }

// inEventRead is an output read from its event, or why it could not be.
type inEventRead struct {
	text string
	err  error
}
