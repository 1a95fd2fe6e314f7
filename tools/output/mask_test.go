package output

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"testing"

	"github.com/custom-agent/custom-agent/secrets"
	"github.com/custom-agent/custom-agent/tool"
)

// readWith runs read_output over o with args and the call's secrets sec.
func readWith(t *testing.T, o tool.Outputs, sec *secrets.Set, args string) string {
	t.Helper()
	var m map[string]any
	if err := json.Unmarshal([]byte(args), &m); err != nil {
		t.Fatal(err)
	}
	var out, errOut bytes.Buffer
	if _, err := New().Run(context.Background(), tool.Call{ID: "tc_2", Args: m, Outputs: o, Secrets: sec}, tool.Output{Stdout: &out, Stderr: &errOut}); err != nil {
		t.Fatalf("%s: %v", args, err)
	}
	return out.String()
}

// TestReadOutputMasksInContext (fourth serve review, finding 2): the store
// keeps outputs raw, and the executor masks what a tool prints of whole
// secrets and of runs of a known secret FragmentLen bytes long. A model
// that asks read_output for ranges shorter than that, one after the other,
// used to reassemble serve's script token from the raw artifact. Every
// range, of every length up to past the secret, at every offset, now shows
// no byte of a known secret, of a secret the patterns recognise, or of a
// private key whose BEGIN line is far before the range.
func TestReadOutputMasksInContext(t *testing.T) {
	t.Parallel()
	const token = "5f0c2d9e8b7a6f5e4d3c2b1a09f8e7d6c5b4a3928170f6e5d4c3b2a190807060"
	const ghp = "ghp_Abcdefghijklmnopqrstuvwxyz0123456789"
	keyBody := strings.Repeat("MIIEvQIBADANBgkqhkiG9w0BAQEFAASCBKcwggSjAgEAAoIBAQC7\n", 400) // ~21 KiB, longer than MaskMargin
	data := "copied: " + token + "\nGH=" + ghp + "\n" + strings.Repeat("filler\n", 100) +
		"-----BEGIN PRIVATE KEY-----\n" + keyBody + "-----END PRIVATE KEY-----\nafter the key\n"
	o := &fakeOutputs{data: data, total: int64(len(data))}
	sec := secrets.Collect(nil).With(token)

	check := func(what, secret string) {
		at := strings.Index(data, secret)
		for _, limit := range []int{1, 2, 7, 8, 20} {
			var got strings.Builder
			for off := max(0, at-limit); off < at+len(secret); off += limit {
				piece := readWith(t, o, sec, fmt.Sprintf(`{"toolCallId":"tc_1","offset":%d,"limit":%d}`, off, limit))
				// A range that cuts into the secret shows Redacted for that part.
				if off+limit > at && !strings.Contains(piece, secrets.Redacted) {
					t.Errorf("%s, limit %d, offset %d: %q shows part of the secret", what, limit, off, piece)
				}
				got.WriteString(piece)
			}
			if strings.Contains(got.String(), secret[:len(secret)/2]) || strings.Contains(got.String(), secret[len(secret)/2:]) {
				t.Errorf("%s, limit %d: reassembled %q", what, limit, got.String())
			}
		}
	}
	check("known token", token)
	check("pattern secret", ghp)

	// Deep in the key, far past MaskMargin from its BEGIN line.
	mid := strings.Index(data, keyBody) + len(keyBody)/2
	if got := readWith(t, o, sec, fmt.Sprintf(`{"toolCallId":"tc_1","offset":%d,"limit":7}`, mid)); got != secrets.Redacted {
		t.Errorf("7 bytes in the middle of a private key: %q, want %q", got, secrets.Redacted)
	}
	end := strings.Index(data, "-----END PRIVATE KEY-----\n") + len("-----END PRIVATE KEY-----\n")
	if got := readWith(t, o, sec, fmt.Sprintf(`{"toolCallId":"tc_1","offset":%d,"limit":40}`, end-10)); got != secrets.Redacted+"\nafter the key\n" {
		t.Errorf("a range across the key's end: %q", got)
	}
	// Text with no secret reads unchanged, byte for byte.
	at := strings.Index(data, "filler")
	if got := readWith(t, o, sec, fmt.Sprintf(`{"toolCallId":"tc_1","offset":%d,"limit":14}`, at)); got != "filler\nfiller\n" {
		t.Errorf("plain text: %q", got)
	}
}

// BenchmarkReadOutputDeep: a 7-byte read at the end of a 16 MiB output,
// which follows the key markers from the start (maskedRange).
func BenchmarkReadOutputDeep(b *testing.B) {
	data := strings.Repeat("some ordinary build output line, no secrets\n", 16<<20/44)
	o := &fakeOutputs{data: data, total: int64(len(data))}
	sec := secrets.Collect(nil).With("5f0c2d9e8b7a6f5e4d3c2b1a09f8e7d6c5b4a3928170f6e5d4c3b2a190807060")
	args := map[string]any{"toolCallId": "tc_1", "offset": float64(len(data) - 100), "limit": float64(7)}
	b.SetBytes(int64(len(data)))
	for b.Loop() {
		var out bytes.Buffer
		if _, err := New().Run(context.Background(), tool.Call{ID: "tc_2", Args: args, Outputs: o, Secrets: sec}, tool.Output{Stdout: &out, Stderr: &out}); err != nil {
			b.Fatal(err)
		}
	}
}
