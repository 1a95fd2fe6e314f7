package injection

import "testing"

// TestWordEnd: the eight-bytes-at-a-time word end is the byte loop's, for
// every byte value at every place of a word.
func TestWordEnd(t *testing.T) {
	t.Parallel()
	slow := func(b []byte, i int) int {
		for i < len(b) && kind[b[i]] == kLetter {
			i++
		}
		return i
	}
	for c := 0; c < 256; c++ {
		for pos := 0; pos < 20; pos++ {
			b := []byte("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ")
			b[pos+1] = byte(c)
			for start := 0; start <= pos; start++ {
				if got, want := wordEnd(b, start), slow(b, start); got != want {
					t.Fatalf("byte %#x at %d, from %d: wordEnd %d, want %d", c, pos+1, start, got, want)
				}
			}
		}
	}
}

func FuzzWordEnd(f *testing.F) {
	f.Add([]byte("hello world"), 0)
	f.Fuzz(func(t *testing.T, b []byte, i int) {
		if i < 0 || i > len(b) {
			return
		}
		want := i
		for want < len(b) && kind[b[want]] == kLetter {
			want++
		}
		if got := wordEnd(b, i); got != want {
			t.Fatalf("wordEnd(%q, %d) = %d, want %d", b, i, got, want)
		}
	})
}
