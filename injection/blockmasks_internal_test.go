package injection

import (
	"math/rand/v2"
	"testing"
)

// TestBlockMasks: the masks of a whole block, made by transposing, are
// those of the byte-by-byte loop, for every class and random bytes
// (ASCII and not).
func TestBlockMasks(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	text := make([]byte, 64*4096)
	for k := range text {
		if r.IntN(4) == 0 {
			text[k] = byte(r.IntN(256))
		} else {
			const pick = " <[#!`-abcXYZ019&%\\*_+/=\n\xe2\x80\x8b#``"
			text[k] = pick[r.IntN(len(pick))]
		}
	}
	for base := 0; base < len(text); base += 64 {
		L, D, S, F, B, H, T, X := blockMasks(text, base)
		got := [8]uint64{L, D, S, F, B, H, T, X}
		var want [8]uint64
		for k, c := range text[base : base+64] {
			for m := range want {
				want[m] |= (cls[c] >> (8 * m) & 1) << k
			}
		}
		if got != want {
			t.Fatalf("block at %d: masks %x, want %x", base, got, want)
		}
	}
}
