package secrets

import (
	"bytes"
	"regexp"
	"sync"
)

// keyMarker is the first or last line of a private key, the bounds of the
// "private key" patterns: PEM and OpenPGP armor (PGP 2's SECRET KEY
// BLOCK too), OpenVPN static keys, RFC 4716, and PuTTY's
// .ppk (from its first line to its Private-MAC line). Group 1 is set for
// a first line, group 2 for a last one.
// Compiled on first use, as the patterns are: a one-shot check never
// masks anything.
var keyMarker = sync.OnceValue(func() *regexp.Regexp {
	return regexp.MustCompile(`(-----BEGIN[ A-Z0-9]*(?:PRIVATE|SECRET) KEY(?: BLOCK)?-----|-----BEGIN OpenVPN Static key V\d+-----|---- BEGIN SSH2 (?:ENCRYPTED )?PRIVATE KEY ----|PuTTY-User-Key-File-\d+:)|(-----END[ A-Z0-9]*(?:PRIVATE|SECRET) KEY(?: BLOCK)?-----|-----END OpenVPN Static key V\d+-----|---- END SSH2 (?:ENCRYPTED )?PRIVATE KEY ----|Private-MAC:[^\r\n]*)`)
})

// keyHint is in every marker: the cheap test before the regexp.
func keyHint(b []byte) bool {
	return bytes.Contains(b, []byte("----")) || bytes.Contains(b, []byte("PuTTY-")) || bytes.Contains(b, []byte("Private-MAC:"))
}

// keyMarkerMax bounds a marker's length, for markers a write cuts in two.
const keyMarkerMax = 128

// maxKeyEvents bounds the markers a KeyBlocks remembers; older ones are
// folded into the state before the oldest kept.
const maxKeyEvents = 1024

// KeyBlocks follows a stream written in pieces and remembers where armored
// private keys begin and end in it, so that a slice of the stream (a tail)
// that starts inside a key whose BEGIN line lies before the slice, beyond
// any context kept, is still known to start inside a secret. Mask and
// MaskSpan find a key only from its BEGIN line. The zero value is ready.
type KeyBlocks struct {
	carry  []byte // the last bytes written, a marker's length at most
	total  int64  // bytes written
	base   bool   // a key is open before the first event kept
	events []keyEvent
}

type keyEvent struct {
	at    int64 // offset of the marker's first byte
	begin bool
}

// Write notes the markers in p, the next bytes of the stream.
func (k *KeyBlocks) Write(p []byte) {
	start := k.total - int64(len(k.carry))
	window := p
	if len(k.carry) > 0 {
		window = append(append([]byte(nil), k.carry...), p...)
	}
	if keyHint(window) {
		for _, m := range keyMarker().FindAllSubmatchIndex(window, -1) {
			if m[1] <= len(k.carry) {
				continue // inside the carry: seen with the last write
			}
			k.add(keyEvent{at: start + int64(m[0]), begin: m[2] >= 0})
		}
	}
	k.total += int64(len(p))
	if len(window) > keyMarkerMax {
		window = window[len(window)-keyMarkerMax:]
	}
	k.carry = append(k.carry[:0], window...)
}

func (k *KeyBlocks) add(e keyEvent) {
	if len(k.events) >= maxKeyEvents {
		k.base = k.events[0].begin
		k.events = k.events[1:]
	}
	k.events = append(k.events, e)
}

// OpenAt reports whether the stream's byte at offset off lies inside a
// private key: after a BEGIN line with no END line between.
func (k *KeyBlocks) OpenAt(off int64) bool {
	open := k.base
	for _, e := range k.events {
		if e.at >= off {
			break
		}
		open = e.begin
	}
	return open
}

// KeyEnd returns how much of b, which starts inside a private key, is the
// rest of the key: up to the end of its END line, or all of b.
func KeyEnd(b []byte) int {
	for _, m := range keyMarker().FindAllSubmatchIndex(b, -1) {
		if m[4] >= 0 {
			return m[1]
		}
	}
	return len(b)
}
