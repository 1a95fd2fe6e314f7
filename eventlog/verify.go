package eventlog

import (
	"bytes"
	"fmt"

	"github.com/custom-agent/custom-agent/event"
)

// ChainChecker walks one session's events in stored order and reports the
// first break. Backends feed it rows and the session's recorded head; it does
// no I/O. The zero value is not usable: use NewChainChecker.
type ChainChecker struct {
	session  string
	next     uint64
	prevHash string
	err      *ChainError
}

// NewChainChecker starts a walk of the session's chain at seq 1.
func NewChainChecker(sessionID string) *ChainChecker {
	return &ChainChecker{session: sessionID, next: 1, prevHash: event.GenesisHash}
}

func (c *ChainChecker) fail(seq uint64, format string, args ...any) *ChainError {
	c.err = &ChainError{SessionID: c.session, Seq: seq, Problem: fmt.Sprintf(format, args...)}
	return c.err
}

// Next checks the next stored event. It returns the first break found so far
// (and keeps returning it).
func (c *ChainChecker) Next(e event.Event) *ChainError {
	if c.err != nil {
		return c.err
	}
	switch {
	case e.Seq < c.next:
		return c.fail(e.Seq, "seq %d appears again or out of order after seq %d", e.Seq, c.next-1)
	case e.Seq > c.next:
		return c.fail(c.next, "seq %d is missing (next stored is %d)", c.next, e.Seq)
	}
	if e.SessionID != c.session {
		return c.fail(e.Seq, "row belongs to session %q", e.SessionID)
	}
	if e.V != event.Version {
		return c.fail(e.Seq, "envelope version %d is not %d", e.V, event.Version)
	}
	if e.PrevHash != c.prevHash {
		return c.fail(e.Seq, "prevHash does not match the hash of seq %d", e.Seq-1)
	}
	if can, err := event.Canonical(e.Payload); err != nil || !bytes.Equal(can, e.Payload) {
		return c.fail(e.Seq, "payload is not stored in canonical form (edited)")
	}
	if got := e.ComputeHash(); got != e.Hash {
		return c.fail(e.Seq, "content does not match its hash (edited)")
	}
	c.prevHash = e.Hash
	c.next++
	return nil
}

// BadRow records a stored row that could not even be decoded.
func (c *ChainChecker) BadRow(seq uint64, err error) *ChainError {
	if c.err != nil {
		return c.err
	}
	if seq == 0 {
		seq = c.next // the row was too damaged to read even its seq
	}
	if seq > c.next {
		return c.fail(c.next, "seq %d is missing (next stored is %d)", c.next, seq)
	}
	return c.fail(seq, "row cannot be decoded: %v", err)
}

// End checks the walk against the session's recorded head.
func (c *ChainChecker) End(headSeq uint64, headHash string) *ChainError {
	if c.err != nil {
		return c.err
	}
	last := c.next - 1
	switch {
	case last < headSeq:
		return c.fail(last+1, "seq %d is missing: the session's head is seq %d", last+1, headSeq)
	case last > headSeq:
		return c.fail(headSeq+1, "seq %d was inserted after the session's head seq %d", headSeq+1, headSeq)
	case last > 0 && c.prevHash != headHash:
		return c.fail(last, "hash does not match the session's recorded head")
	}
	return nil
}
