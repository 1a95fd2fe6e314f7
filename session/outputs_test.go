package session

import (
	"context"
	"io"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/custom-agent/custom-agent/artifact"
	"github.com/custom-agent/custom-agent/event"
	"github.com/custom-agent/custom-agent/eventlog/sqlitestore"
	"github.com/custom-agent/custom-agent/tool"
)

// TestOutputsOnlyOfThisSession: read_output reaches the outputs the
// session's own events name, by call or digest, and no other session's,
// even by digest.
func TestOutputsOnlyOfThisSession(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	store, err := sqlitestore.Open(ctx, filepath.Join(dir, "events.db"), nil)
	if err != nil {
		t.Fatal(err)
	}
	defer store.Close()
	arts, _ := artifact.Open(filepath.Join(dir, "artifacts"))
	digest, err := arts.Put([]byte("hello from A\n"))
	if err != nil {
		t.Fatal(err)
	}
	d, err := event.NewDraft("A", "turn-1", time.Now(), event.ToolCompletedPayload{ToolCallID: "tc_1", StdoutBytes: 13, StdoutPreview: "hello from A\n",
		Artifacts: []event.Artifact{{Name: "stdout", Digest: digest, Bytes: 13}}})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := store.Append(ctx, d); err != nil {
		t.Fatal(err)
	}
	a := &outputs{log: store, id: "A", arts: arts}
	for _, ref := range []tool.OutputRef{{ToolCallID: "tc_1"}, {Digest: digest}, {Digest: strings.ToUpper(strings.TrimPrefix(digest, "sha256:"))}} {
		rec, err := a.OpenOutput(ctx, ref)
		if err != nil {
			t.Fatalf("%+v: %v", ref, err)
		}
		b, _ := io.ReadAll(rec.Content)
		rec.Content.Close()
		if string(b) != "hello from A\n" || rec.ToolCallID != "tc_1" || rec.Stored != 13 {
			t.Fatalf("%+v: %+v %q", ref, rec, b)
		}
	}
	if _, err := a.OpenOutput(ctx, tool.OutputRef{ToolCallID: "tc_1", Stream: "stderr"}); err == nil || !strings.Contains(err.Error(), "printed nothing on stderr") {
		t.Fatalf("stderr of a call that printed none: %v", err)
	}
	b := &outputs{log: store, id: "B", arts: arts}
	if _, err := b.OpenOutput(ctx, tool.OutputRef{Digest: digest}); err == nil {
		t.Fatal("session B read session A's output by digest")
	}
}

// TestOutputKeptInItsEvent: an output the event holds whole (inEvent) is
// read from the event, by call or digest, with no artifact store copy.
func TestOutputKeptInItsEvent(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	store, err := sqlitestore.Open(ctx, filepath.Join(dir, "events.db"), nil)
	if err != nil {
		t.Fatal(err)
	}
	defer store.Close()
	arts, _ := artifact.Open(filepath.Join(dir, "artifacts"))
	const text, digest = "ok\n", "sha256:dc51b8c96c2d745df3bd5590d990230a482fd247123599548e0632fdbf97fc22"
	d, err := event.NewDraft("A", "turn-1", time.Now(), event.ToolCompletedPayload{ToolCallID: "tc_1", StdoutBytes: 3, StdoutPreview: text,
		Artifacts: []event.Artifact{{Name: "stdout", Digest: digest, Bytes: 3, InEvent: true}}})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := store.Append(ctx, d); err != nil {
		t.Fatal(err)
	}
	a := &outputs{log: store, id: "A", arts: arts}
	for _, ref := range []tool.OutputRef{{ToolCallID: "tc_1"}, {Digest: digest}} {
		rec, err := a.OpenOutput(ctx, ref)
		if err != nil {
			t.Fatalf("%+v: %v", ref, err)
		}
		b, _ := io.ReadAll(rec.Content)
		rec.Content.Close()
		if string(b) != text || rec.Stored != 3 || rec.Total != 3 || rec.Digest != digest {
			t.Fatalf("%+v: %+v %q", ref, rec, b)
		}
	}
	// An event written without NewDraft's check, whose preview is not
	// what its digest names, is not served under that digest.
	forged := event.Draft{SessionID: "A", TurnID: "turn-1", TS: time.Now(), Type: event.ToolCompleted,
		Payload: []byte(`{"artifacts":[{"bytes":3,"digest":"` + digest + `","inEvent":true,"name":"stdout"}],"durationMs":0,"stderrBytes":0,"stdoutBytes":3,"stdoutPreview":"no\n","toolCallId":"tc_2"}`)}
	if _, err := store.Append(ctx, forged); err != nil {
		t.Fatal(err)
	}
	if _, err := a.OpenOutput(ctx, tool.OutputRef{ToolCallID: "tc_2"}); err == nil || !strings.Contains(err.Error(), "does not hash to its digest") {
		t.Fatalf("a forged in-event output was served: %v", err)
	}
}
