package executor

import (
	"strings"
	"unicode/utf8"

	"github.com/custom-agent/custom-agent/artifact"
	"github.com/custom-agent/custom-agent/event"
	"github.com/custom-agent/custom-agent/secrets"
)

// PreviewBytes is how much of each stream an event carries (spec §5: the
// log keeps a preview, the artifact store keeps all).
const PreviewBytes = 4 << 10

// TailBytes is how much of the end of each stream an event carries beside
// the preview, so that what a long output ends with (a test failure, an
// error) reaches the model and the person too.
const TailBytes = 6 << 10

// maskMargin is how much of the stream beyond the preview, and before the
// tail, is kept to mask them in context: a secret the preview's end or the
// tail's start cuts through is found in the text around the cut and
// hidden whole, not shown in halves the scanner cannot recognise.
const maskMargin = 8 << 10

// DefaultMaxStored is how much of one stream is kept in the artifact store
// (2 GiB); beyond it output is counted but not stored, so a tool that prints
// without end cannot fill the disk. Options.MaxStored changes it (the CLI's
// --max-output-bytes).
const DefaultMaxStored = 2 << 30

// stream receives one output stream of a running tool: it keeps the first
// PreviewBytes in memory, streams up to maxStored into an artifact, and
// counts everything. Memory use is constant whatever the tool prints. A
// stream no longer than its preview is only kept in memory: when it is
// also valid UTF-8 and holds nothing to mask, the event's preview is the
// whole stream and no artifact is written (see inEvent).
type stream struct {
	store     *artifact.Store
	w         *artifact.Writer // created once the stream outgrows its preview, or at commit
	head      []byte           // the first PreviewBytes+maskMargin bytes
	tail      []byte           // the last bytes written: at least TailBytes+maskMargin+utf8.UTFMax once that many were
	total     int64
	maxStored int64
	err       error // first artifact write error; output is still counted
	// keys follows the armored private keys in the stream, so that a
	// tail starting inside one whose BEGIN line is beyond maskMargin is
	// masked too.
	keys secrets.KeyBlocks
}

func newStream(store *artifact.Store, maxStored int64) *stream {
	return &stream{store: store, head: make([]byte, 0, PreviewBytes+maskMargin), maxStored: maxStored}
}

// Write never fails, so a tool is never killed by the store: a failure to
// store is reported when the call completes.
func (s *stream) Write(p []byte) (int, error) {
	n := len(p)
	if n == 0 {
		return 0, nil // no artifact for an empty write (and none to size yet)
	}
	if room := cap(s.head) - len(s.head); room > 0 {
		s.head = append(s.head, p[:min(room, len(p))]...)
	}
	if s.w == nil && s.err == nil && s.total+int64(n) > PreviewBytes {
		s.spill(s.head[:s.total]) // what came before p; head holds all of it
	}
	if s.w != nil {
		s.save(p)
	}
	s.keepTail(p)
	s.keys.Write(p)
	s.total += int64(n)
	return n, nil
}

// spill starts the stream's artifact with the bytes before, which head kept.
func (s *stream) spill(before []byte) {
	if s.err == nil {
		s.w, s.err = s.store.Create()
	}
	if s.err == nil {
		s.save(before)
	}
}

// save writes to the artifact what of p is within maxStored.
func (s *stream) save(p []byte) {
	if s.err == nil && s.w.Size() < s.maxStored {
		keep := p[:min(int64(len(p)), s.maxStored-s.w.Size())]
		if _, err := s.w.Write(keep); err != nil {
			s.err = err
		}
	}
}

// inEvent reports whether the event's preview, masked by mask, is the
// whole stream byte for byte: it fits the preview, is valid UTF-8 (so the
// preview replaced nothing), mask changed nothing, and the output cap
// would have stored it all. Then the event holds the output and the
// artifact store needs no copy (nor an fsync).
func (s *stream) inEvent(mask func(string) string) bool {
	if s.w != nil || s.err != nil || s.total == 0 || s.total > PreviewBytes || s.total > s.maxStored {
		return false
	}
	if !utf8.Valid(s.head) {
		return false
	}
	text := string(s.head)
	return mask(text) == text
}

// keepTail keeps the last TailBytes+maskMargin+utf8.UTFMax bytes of the
// stream, in a buffer of bounded size.
func (s *stream) keepTail(p []byte) {
	const keep = TailBytes + maskMargin + utf8.UTFMax
	if len(p) >= keep {
		s.tail = append(s.tail[:0], p[len(p)-keep:]...)
		return
	}
	if len(s.tail)+len(p) > 2*keep {
		s.tail = append(s.tail[:0], s.tail[len(s.tail)-(keep-len(p)):]...)
	}
	s.tail = append(s.tail, p...)
}

// tailAt finds the end of the stream the preview does not hold: at most
// TailBytes, starting on a character boundary. The tail is s.tail[at:],
// which starts at byte from of the stream; omitted is how many bytes lie
// between the preview and it. ok is false when the preview holds the
// whole stream.
func (s *stream) tailAt() (at int, from, omitted int64, ok bool) {
	headLen := int64(len(cutUTF8(s.head, PreviewBytes)))
	if s.total <= headLen {
		return 0, 0, 0, false
	}
	from = max(headLen, s.total-TailBytes)
	at = len(s.tail) - int(s.total-from)
	if from > headLen {
		for i := 0; i < utf8.UTFMax && at < len(s.tail) && !utf8.RuneStart(s.tail[at]); i++ {
			at++
			from++
		}
	}
	return at, from, from - headLen, true
}

// maskedTail is the tail (tailAt) as valid UTF-8, masked in the context
// of the maskMargin bytes before it.
func (s *stream) maskedTail(sec *secrets.Set) (text string, from, omitted int64, ok bool) {
	at, from, omitted, ok := s.tailAt()
	if !ok {
		return "", 0, 0, false
	}
	if s.keys.OpenAt(from) {
		// Inside a private key that began before any context kept: its
		// body and END line are hidden as if its BEGIN were in sight.
		end := at + secrets.KeyEnd(s.tail[at:])
		return secrets.Redacted + strings.ToValidUTF8(sec.MaskSpan(string(s.tail), end, len(s.tail)), "\uFFFD"), from, omitted, true
	}
	return strings.ToValidUTF8(sec.MaskSpan(string(s.tail), at, len(s.tail)), "\uFFFD"), from, omitted, true
}

// maskedPreview is the first PreviewBytes of the stream, cut on a
// character boundary, as valid UTF-8 (invalid bytes replaced), masked in
// the context of the maskMargin bytes after it that head holds.
func (s *stream) maskedPreview(sec *secrets.Set) string {
	cut := cutUTF8(s.head, PreviewBytes)
	return strings.ToValidUTF8(sec.MaskSpan(string(s.head), 0, len(cut)), "\uFFFD")
}

// truncated reports whether part of the output was not stored.
func (s *stream) truncated() bool { return s.total > s.stored() }

func (s *stream) stored() int64 {
	if s.w == nil {
		return 0
	}
	return s.w.Size()
}

// notStored returns how many bytes of each stream are not in the artifact
// store, given the artifacts that were committed: the bytes past the cap, or
// the whole stream when it could not be stored. Nil when nothing was lost.
func notStored(stdout, stderr *stream, committed []event.Artifact) *event.StreamBytes {
	kept := map[string]int64{}
	for _, a := range committed {
		kept[a.Name] += a.Bytes
	}
	d := event.StreamBytes{Stdout: stdout.total - kept["stdout"], Stderr: stderr.total - kept["stderr"]}
	if d.Stdout <= 0 && d.Stderr <= 0 {
		return nil
	}
	d.Stdout, d.Stderr = max(d.Stdout, 0), max(d.Stderr, 0)
	return &d
}

// abort discards the artifact.
func (s *stream) abort() {
	if s.w != nil {
		s.w.Abort()
	}
}

// cutUTF8 returns at most n bytes of b, backing up over a character the cut
// would split.
func cutUTF8(b []byte, n int) []byte {
	if len(b) <= n {
		return b
	}
	b = b[:n]
	for i := len(b) - 1; i >= 0 && i >= len(b)-utf8.UTFMax; i-- {
		if utf8.RuneStart(b[i]) {
			if !utf8.FullRune(b[i:]) {
				b = b[:i]
			}
			break
		}
	}
	return b
}
