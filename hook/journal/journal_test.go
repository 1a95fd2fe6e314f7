package journal

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"
)

func rec(ts time.Time, id string) *Record {
	return &Record{V: Version, Source: "claude-code", SessionID: "claude-code-s", TS: ts,
		Cwd: "/p", Mode: "default", Events: []Entry{{Type: "tool.completed", Payload: []byte(`{"toolCallId":"` + id + `"}`)}}}
}

func ids(t *testing.T, lines []Line) string {
	t.Helper()
	var out []string
	for _, l := range lines {
		if l.Err != nil {
			out = append(out, "error")
			continue
		}
		out = append(out, strings.TrimSuffix(strings.TrimPrefix(string(l.Record.Events[0].Payload), `{"toolCallId":"`), `"}`))
	}
	return strings.Join(out, " ")
}

// TestWriteListRead: records come back in the order written, whole, one
// day file a day; files being created and lines of another version are
// not records.
func TestWriteListRead(t *testing.T) {
	t.Parallel()
	dir := filepath.Join(t.TempDir(), Dir)
	t0 := time.Date(2026, 12, 1, 10, 0, 0, 0, time.UTC)
	for i, ts := range []time.Time{t0.Add(2 * time.Second), t0, t0.Add(24 * time.Hour)} {
		if err := Write(dir, rec(ts, fmt.Sprint(i))); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.WriteFile(filepath.Join(dir, ".tmp-123"), []byte("{"), 0o600); err != nil {
		t.Fatal(err)
	}
	paths, err := List(dir)
	if err != nil || len(paths) != 2 || filepath.Base(paths[0]) != "day-2026-12-01.jsonl" || filepath.Base(paths[1]) != "day-2026-12-02.jsonl" {
		t.Fatalf("List: %v, %v", paths, err)
	}
	lines, err := ReadFile(paths[0])
	if err != nil || ids(t, lines) != "0 1" {
		t.Fatalf("ReadFile: %s, %v", ids(t, lines), err)
	}
	if fi, _ := os.Stat(paths[0]); fi.Mode().Perm() != 0o600 {
		t.Errorf("%s has mode %v", paths[0], fi.Mode().Perm())
	}
	if fi, _ := os.Stat(dir); fi.Mode().Perm() != 0o700 {
		t.Errorf("the journal has mode %v", fi.Mode().Perm())
	}
	f, _ := os.OpenFile(paths[0], os.O_APPEND|os.O_WRONLY, 0)
	f.WriteString(`{"v":2}` + "\n")
	f.Close()
	if lines, err := ReadFile(paths[0]); err != nil || len(lines) != 3 || lines[2].Err == nil || !strings.Contains(lines[2].Err.Error(), "version 2") {
		t.Errorf("another version: %v", err)
	}
	if ps, err := List(filepath.Join(dir, "missing")); err != nil || len(ps) != 0 {
		t.Errorf("a missing journal: %v, %v", ps, err)
	}
}

// TestTornLine: a record whose write did not finish (a crash) is
// reported as torn when it is the last line, and does not take the
// record written after it along when a hook appended after the crash.
func TestTornLine(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	t0 := time.Date(2026, 12, 1, 10, 0, 0, 0, time.UTC)
	if err := Write(dir, rec(t0, "a")); err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(dir, dayName(t0))
	whole, _ := os.ReadFile(path)
	torn := func() {
		f, _ := os.OpenFile(path, os.O_APPEND|os.O_WRONLY, 0)
		f.Write(whole[:len(whole)/2]) // as a hook killed mid-write leaves it
		f.Close()
	}
	torn()
	lines, err := ReadFile(path)
	if err != nil || ids(t, lines) != "a error" || !errors.Is(lines[1].Err, ErrTorn) {
		t.Fatalf("a torn last line: %s, %v", ids(t, lines), err)
	}
	if err := Write(dir, rec(t0, "b")); err != nil {
		t.Fatal(err)
	}
	torn()
	lines, err = ReadFile(path)
	if err != nil || ids(t, lines) != "a error b error" || errors.Is(lines[1].Err, ErrTorn) || !errors.Is(lines[3].Err, ErrTorn) {
		t.Fatalf("a torn line, a record, a torn line: %s, %v", ids(t, lines), err)
	}
}

// TestTakeWhileWriting: hooks appending while folds take the day file
// away: every record is read by exactly one fold, none lost, none twice.
func TestTakeWhileWriting(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	const writers, each = 8, 25
	var wg sync.WaitGroup
	for w := range writers {
		wg.Go(func() {
			for i := range each {
				if err := Write(dir, rec(time.Now(), fmt.Sprintf("%d-%d", w, i))); err != nil {
					t.Error(err)
				}
			}
		})
	}
	seen := map[string]int{}
	fold := func() {
		paths, err := Take(dir)
		if err != nil {
			t.Fatal(err)
		}
		for _, p := range paths {
			lines, err := ReadFile(p)
			if err != nil {
				t.Fatal(err)
			}
			for _, id := range strings.Fields(ids(t, lines)) {
				seen[id]++
			}
			os.Remove(p)
		}
	}
	done := make(chan struct{})
	go func() { wg.Wait(); close(done) }()
	for running := true; running; {
		select {
		case <-done:
			running = false
		default:
		}
		fold()
		time.Sleep(time.Millisecond) // folds are far apart in life; here as close as can be
	}
	fold()
	if len(seen) != writers*each {
		t.Errorf("%d records read, want %d", len(seen), writers*each)
	}
	for id, n := range seen {
		if n != 1 || id == "error" {
			t.Errorf("%s read %d times", id, n)
		}
	}
}
