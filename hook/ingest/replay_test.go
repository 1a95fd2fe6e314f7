package ingest_test

import (
	"context"
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
