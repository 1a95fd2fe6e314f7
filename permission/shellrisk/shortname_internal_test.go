package shellrisk

import "testing"

// TestShortName: the table gives "-" and the byte for every byte value.
func TestShortName(t *testing.T) {
	t.Parallel()
	for i := range 256 {
		if got, want := shortName(byte(i)), "-"+string([]byte{byte(i)}); got != want {
			t.Fatalf("shortName(%#x) = %q, want %q", i, got, want)
		}
	}
}
