package session_test

import (
	"context"
	"errors"
	"path/filepath"
	"testing"
	"time"

	"github.com/custom-agent/custom-agent/event"
	"github.com/custom-agent/custom-agent/eventlog/sqlitestore"
	"github.com/custom-agent/custom-agent/session"
)

// TestResumeRefusesHookSession: a session custom-agent hook recorded (its
// session.started names a sessionSource) is never continued, whoever asks
// (run, chat, ACP's session/load): its tool output was another agent's.
func TestResumeRefusesHookSession(t *testing.T) {
	ctx := context.Background()
	store, err := sqlitestore.Open(ctx, filepath.Join(t.TempDir(), "events.db"), nil)
	if err != nil {
		t.Fatal(err)
	}
	defer store.Close()
	d, err := event.NewDraft("claude-code-x", "", time.Now(), &event.SessionStartedPayload{Cwd: "/p", Mode: "default", SessionSource: "claude-code"})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := store.AppendBatch(ctx, []event.Draft{d}); err != nil {
		t.Fatal(err)
	}
	_, err = session.Resume(ctx, session.Config{Log: store}, "claude-code-x", session.Info{Cwd: "/p"})
	if !errors.Is(err, session.ErrHookSession) {
		t.Fatalf("Resume: %v, want ErrHookSession", err)
	}
}
