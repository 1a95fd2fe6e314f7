package ingest_test

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/custom-agent/custom-agent/hook"
	"github.com/custom-agent/custom-agent/hook/ingest"
	"github.com/custom-agent/custom-agent/hook/journal"
)

// One replayed line (a copy of the record last folded) appended to the
// journal makes ingest take every earlier record of the session in the
// file as "appended by a fold that did not finish": real decisions (here a
// deny of ~/.ssh/id_rsa and an allow) vanish from the log, and the file
// is removed.
func TestReplayedLineKeepsNewRecords(t *testing.T) {
	setEnv(t)
	data := t.TempDir()
	dir := filepath.Join(data, journal.Dir)
	t0 := time.Date(2026, 12, 1, 10, 0, 0, 0, time.UTC)
	hookCall(t, data, hook.ClaudeCode, pre("Read", `{"file_path":"/home/user/proj/a"}`, "t1"), t0)
	paths, _ := journal.List(dir)
	saved, err := os.ReadFile(paths[0])
	if err != nil {
		t.Fatal(err)
	}
	s := openLog(t, data)
	if _, err := ingest.Ingest(context.Background(), s, dir); err != nil {
		t.Fatal(err)
	}
	before := len(types(t, s, "claude-code-s1"))
	hookCall(t, data, hook.ClaudeCode, pre("Read", `{"file_path":"/home/user/.ssh/id_rsa"}`, "t2"), t0.Add(time.Second))
	hookCall(t, data, hook.ClaudeCode, pre("Read", `{"file_path":"/home/user/proj/b"}`, "t3"), t0.Add(2*time.Second))
	paths, _ = journal.List(dir)
	f, err := os.OpenFile(paths[0], os.O_WRONLY|os.O_APPEND, 0)
	if err != nil {
		t.Fatal(err)
	}
	f.Write(saved) // the replayed line
	f.Close()
	res, err := ingest.Ingest(context.Background(), s, dir)
	if err != nil {
		t.Fatal(err)
	}
	after := types(t, s, "claude-code-s1")
	if len(after)-before != 4 {
		t.Errorf("2 new calls (4 events) expected in the log, got %d new (res %+v):\n%s", len(after)-before, res, strings.Join(after, "\n"))
	}
}

// TestReplayAfterFoldThatDied: a fold that died mid-file and a replayed
// line in the same file: the records the fold appended are recognised
// (a leading run of the session's records), the rest is appended, and the
// replayed line is reported as broken, never appended twice nor dropped
// silently.
func TestReplayAfterFoldThatDied(t *testing.T) {
	setEnv(t)
	data := t.TempDir()
	dir := filepath.Join(data, journal.Dir)
	t0 := time.Date(2026, 12, 1, 10, 0, 0, 0, time.UTC)
	call := func(id string, at time.Duration) {
		hookCall(t, data, hook.ClaudeCode, pre("LS", `{"path":"/home/user/proj"}`, id), t0.Add(at))
	}
	call("a1", 0)
	call("a2", 1)
	paths, _ := journal.List(dir)
	first, _ := os.ReadFile(paths[0])
	call("a3", 2)
	paths, _ = journal.List(dir)
	all, _ := os.ReadFile(paths[0])
	s := openLog(t, data)
	// The fold that died had appended a1 and a2.
	if err := os.WriteFile(paths[0], first, 0o600); err != nil {
		t.Fatal(err)
	}
	if res, err := ingest.Ingest(context.Background(), s, dir); err != nil || res.Appended != 2 {
		t.Fatalf("first fold: %+v, %v", res, err)
	}
	// The file as it was, and a1's line replayed at its end.
	a1, _, _ := strings.Cut(strings.TrimPrefix(string(first), "\n"), "\n")
	if err := os.WriteFile(paths[0], []byte(string(all)+"\n"+a1+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	res, err := ingest.Ingest(context.Background(), s, dir)
	if err != nil || res.Appended != 1 || len(res.Broken) != 1 || !strings.Contains(res.Broken[0].Error(), "replayed") {
		t.Fatalf("second fold: %+v, %v", res, err)
	}
	if n := len(types(t, s, "claude-code-s1")); n != 1+2*3 {
		t.Errorf("%d events, want %d", n, 1+2*3)
	}
	broken, _ := filepath.Glob(filepath.Join(dir, "*.broken"))
	if len(broken) != 1 {
		t.Fatalf("set aside: %v, want one file", broken)
	}
	if b, _ := os.ReadFile(broken[0]); string(b) != a1+"\n" {
		t.Errorf("set aside %q, want the replayed line", b)
	}
	if err := s.Verify(context.Background(), "claude-code-s1"); err != nil {
		t.Error(err)
	}
}

// TestPlantedDayFileSetAside: a day file planted as a symlink is never
// read through: ingest reports it (journal.ErrNotRegular), renames the
// link aside and leaves what it points to alone, and the records of the
// other files are folded.
func TestPlantedDayFileSetAside(t *testing.T) {
	setEnv(t)
	data := t.TempDir()
	dir := filepath.Join(data, journal.Dir)
	t0 := time.Date(2026, 12, 1, 10, 0, 0, 0, time.UTC)
	hookCall(t, data, hook.ClaudeCode, pre("Read", `{"file_path":"/home/user/proj/a"}`, "t1"), t0)
	target := filepath.Join(data, "rc")
	if err := os.WriteFile(target, []byte("# rc\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	link := filepath.Join(dir, "day-2026-12-02.jsonl")
	if err := os.Symlink(target, link); err != nil {
		t.Fatal(err)
	}
	s := openLog(t, data)
	res, err := ingest.Ingest(context.Background(), s, dir)
	if err != nil || res.Appended != 1 || len(res.Broken) != 1 || !errors.Is(res.Broken[0], journal.ErrNotRegular) {
		t.Fatalf("fold: %+v, %v", res, err)
	}
	if b, _ := os.ReadFile(target); string(b) != "# rc\n" {
		t.Errorf("the link's target changed: %q", b)
	}
	if ingest.Pending(dir) {
		ps, _ := journal.List(dir)
		t.Errorf("still pending after the fold: %v", ps)
	}
	es, _ := os.ReadDir(dir)
	var aside bool
	for _, e := range es {
		aside = aside || (strings.HasSuffix(e.Name(), ".broken") && e.Type()&os.ModeSymlink != 0)
	}
	if !aside {
		t.Errorf("the link was not set aside: %v", es)
	}
}

// TestSymlinkedJournalDirReported: a journal directory that is a symlink
// is pending (so that custom-agent folds and warns) and Ingest refuses
// it with journal.ErrNotRegular, taking no lock and reading nothing where
// it points.
func TestSymlinkedJournalDirReported(t *testing.T) {
	root := t.TempDir()
	elsewhere := filepath.Join(root, "elsewhere")
	if err := os.MkdirAll(elsewhere, 0o700); err != nil {
		t.Fatal(err)
	}
	dir := filepath.Join(root, journal.Dir)
	if err := os.Symlink(elsewhere, dir); err != nil {
		t.Fatal(err)
	}
	if !ingest.Pending(dir) {
		t.Errorf("a symlinked journal directory is not pending: nobody would say why")
	}
	if _, err := ingest.Ingest(context.Background(), openLog(t, t.TempDir()), dir); !errors.Is(err, journal.ErrNotRegular) {
		t.Errorf("Ingest: %v, want journal.ErrNotRegular", err)
	}
	if es, _ := os.ReadDir(elsewhere); len(es) > 0 {
		t.Errorf("written where the link points: %v", es)
	}
}
