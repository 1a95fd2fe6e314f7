package lineedit

import (
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

func TestHistoryKeepsPromptsAcrossOpens(t *testing.T) {
	t.Parallel()
	path := filepath.Join(t.TempDir(), "sub", "chat_history")
	h, err := OpenHistory(path, 0)
	if err != nil {
		t.Fatal(err)
	}
	for _, l := range []string{"run the tests", "fix it\nand explain", "fix it\nand explain", "  "} {
		if _, err := h.Add(l); err != nil {
			t.Fatal(err)
		}
	}
	st, err := os.Stat(path)
	if err != nil {
		t.Fatal(err)
	}
	if st.Mode().Perm() != 0o600 {
		t.Errorf("the history file has mode %v, want 0600", st.Mode().Perm())
	}
	again, err := OpenHistory(path, 0)
	if err != nil {
		t.Fatal(err)
	}
	want := []string{"run the tests", "fix it\nand explain"} // the repeat and the blank line are not kept
	if d := cmp.Diff(want, again.Entries()); d != "" {
		t.Errorf("entries (-want +got):\n%s", d)
	}
}

// A prompt the secrets detector flags never reaches the file.
func TestHistoryNeverStoresASecret(t *testing.T) {
	t.Parallel()
	path := filepath.Join(t.TempDir(), "chat_history")
	h, err := OpenHistory(path, 0)
	if err != nil {
		t.Fatal(err)
	}
	for _, l := range []string{
		"use the key sk-proj-abcdefghijklmnopqrstuvwxyz0123456789ABCD to call it",
		"export GITHUB_TOKEN=ghp_abcdefghijklmnopqrstuvwxyz0123456789",
		"password: hunter2hunter2",
	} {
		added, err := h.Add(l)
		if err != nil {
			t.Fatal(err)
		}
		if added {
			t.Errorf("%q was kept", l)
		}
	}
	if added, _ := h.Add(strings.Repeat("a long paste ", 2000)); added {
		t.Error("a prompt over MaxEntryBytes was kept")
	}
	if _, err := h.Add("list the files"); err != nil {
		t.Fatal(err)
	}
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if got := string(b); got != "\"list the files\"\n" {
		t.Errorf("the file holds %q", got)
	}
}

// A file with wider rights is narrowed to 0600 when written.
func TestHistoryNarrowsAWideFile(t *testing.T) {
	t.Parallel()
	path := filepath.Join(t.TempDir(), "chat_history")
	if err := os.WriteFile(path, []byte("\"old\"\nnot json\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	h, err := OpenHistory(path, 0)
	if err != nil {
		t.Fatal(err)
	}
	if d := cmp.Diff([]string{"old"}, h.Entries()); d != "" {
		t.Errorf("entries (-want +got):\n%s", d)
	}
	if _, err := h.Add("new"); err != nil {
		t.Fatal(err)
	}
	st, err := os.Stat(path)
	if err != nil {
		t.Fatal(err)
	}
	if st.Mode().Perm() != 0o600 {
		t.Errorf("mode %v, want 0600", st.Mode().Perm())
	}
}

// The file is cut to the newest Max entries, and what another process
// appended meanwhile is kept.
func TestHistoryIsCapped(t *testing.T) {
	t.Parallel()
	path := filepath.Join(t.TempDir(), "chat_history")
	a, err := OpenHistory(path, 8)
	if err != nil {
		t.Fatal(err)
	}
	b, err := OpenHistory(path, 8)
	if err != nil {
		t.Fatal(err)
	}
	for i := range 30 {
		h := a
		if i%3 == 0 {
			h = b
		}
		if _, err := h.Add("prompt " + strconv.Itoa(i)); err != nil {
			t.Fatal(err)
		}
	}
	raw, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if n := strings.Count(string(raw), "\n"); n > 10 {
		t.Errorf("the file holds %d lines, want at most 8 + 8/4", n)
	}
	again, err := OpenHistory(path, 8)
	if err != nil {
		t.Fatal(err)
	}
	got := again.Entries()
	if len(got) != 8 || got[7] != "prompt 29" {
		t.Errorf("entries %q, want the newest 8 ending with prompt 29", got)
	}
	if len(a.Entries()) != 8 {
		t.Errorf("memory holds %d entries, want 8", len(a.Entries()))
	}
}
