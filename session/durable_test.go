package session_test

import (
	"context"
	"encoding/hex"
	"errors"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/custom-agent/custom-agent/artifact"
	"github.com/custom-agent/custom-agent/event"
	"github.com/custom-agent/custom-agent/eventlog/sqlitestore"
	"github.com/custom-agent/custom-agent/executor"
	"github.com/custom-agent/custom-agent/permission"
	"github.com/custom-agent/custom-agent/permission/risk"
	"github.com/custom-agent/custom-agent/session"
	"github.com/custom-agent/custom-agent/tool"
)

// gateTool checks, as it runs, what the log holds: its permission.resolved
// must be durable already (the gate), its tool.started may not be yet.
type gateTool struct {
	t     *testing.T
	store *sqlitestore.Store
	sid   func() string
	runs  int
}

func (g *gateTool) Info() permission.ToolInfo {
	return permission.ToolInfo{Name: "probe", Risk: risk.Read, Schema: `{"type":"object"}`}
}

func (g *gateTool) Run(_ context.Context, c tool.Call, out tool.Output) (tool.Result, error) {
	g.runs++
	resolved := false
	for e, err := range g.store.Read(context.Background(), g.sid(), 1) {
		if err != nil {
			g.t.Error(err)
			break
		}
		if e.Type == event.PermissionResolved {
			p, _ := e.Decode()
			if r := p.(*event.PermissionResolvedPayload); r.ToolCallID == c.ID && r.Decision == "allow" {
				resolved = true
			}
		}
	}
	if !resolved {
		g.t.Errorf("call %s runs before its permission.resolved is in the log", c.ID)
	}
	text := "output of " + c.ID + "\n"
	if g.runs == 2 { // longer than a preview: into the artifact store
		text = strings.Repeat(text, executor.PreviewBytes/len(text)+1)
	}
	_, _ = io.WriteString(out.Stdout, text)
	return tool.Result{}, nil
}

// TestDeferredEventsAreShownOnlyOnceDurable: during a turn of three calls,
// a tool runs only once its permission.resolved is durable; every event the
// turn yields is already in the log, byte for byte; the artifact a
// tool.completed names is there; and the commits are fewer than the events
// (deferred events joined durable commits), with nothing left behind at the
// turn's end.
func TestDeferredEventsAreShownOnlyOnceDurable(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	store, err := sqlitestore.Open(context.Background(), filepath.Join(dir, "events.db"), nil)
	if err != nil {
		t.Fatal(err)
	}
	defer store.Close()
	arts, _ := artifact.Open(filepath.Join(dir, "artifacts"))
	var s *session.Session
	probe := &gateTool{t: t, store: store, sid: func() string { return s.ID() }}
	router := tool.NewRouter()
	router.Register(probe)
	s = session.New(session.Config{Log: store, Model: callsOf("probe", 3), Router: router, Artifacts: arts},
		session.Info{Cwd: dir, Home: os.TempDir(), Mode: permission.ModeDefault})
	yielded, storedOutputs := 0, 0
	for e, err := range s.RunTurn(context.Background(), "probe three times") {
		if err != nil {
			t.Fatal(err)
		}
		yielded++
		if e.Seq == 0 || e.Hash == "" {
			t.Fatalf("the turn yielded an unsealed %s", e.Type)
		}
		var stored event.Event
		for got, err := range store.Read(context.Background(), s.ID(), e.Seq) {
			if err != nil {
				t.Fatal(err)
			}
			stored = got
			break
		}
		if stored.Hash != e.Hash {
			t.Fatalf("the turn yielded seq %d (%s) before it was in the log", e.Seq, e.Type)
		}
		if e.Type == event.ToolCompleted {
			p, _ := e.Decode()
			for _, a := range p.(*event.ToolCompletedPayload).Artifacts {
				if a.InEvent { // the output is the event's preview, which must hash to the digest
					if err := p.(*event.ToolCompletedPayload).Validate(); err != nil {
						t.Fatal(err)
					}
					continue
				}
				storedOutputs++
				// A clean output of at most 64 KiB is carried in the
				// commit of the event that names it: it is in the log
				// once the event is, and not in the artifact files.
				if err := arts.WithSource(store).Verify(a.Digest); err != nil {
					t.Fatalf("tool.completed names %s: %v", a.Digest, err)
				}
				if _, found, err := store.Blob(context.Background(), sumOf(t, a.Digest)); err != nil || !found {
					t.Fatalf("the output %s is not in the log with the event naming it (found %v, %v)", a.Digest, found, err)
				}
				if err := arts.Verify(a.Digest); !errors.Is(err, artifact.ErrNotFound) {
					t.Fatalf("the carried output %s is in the artifact files too (%v)", a.Digest, err)
				}
			}
		}
	}
	if storedOutputs != 1 {
		t.Fatalf("%d outputs were named in the artifact store, want 1 (the long one)", storedOutputs)
	}
	if probe.runs != 3 {
		t.Fatalf("the probe ran %d times, want 3", probe.runs)
	}
	stored := 0
	var last event.Type
	for e, err := range store.Read(context.Background(), s.ID(), 1) {
		if err != nil {
			t.Fatal(err)
		}
		stored++
		last = e.Type
	}
	if stored != yielded || last != event.TurnCompleted {
		t.Fatalf("log holds %d events ending with %s; the turn yielded %d", stored, last, yielded)
	}
	if st := store.Stats(); st.Commits >= uint64(stored) {
		t.Fatalf("%d commits for %d events: nothing was deferred", st.Commits, stored)
	}
	if err := store.Verify(context.Background(), s.ID()); err != nil {
		t.Fatal(err)
	}
}

// sumOf is a digest's SHA-256.
func sumOf(t *testing.T, digest string) (sum [32]byte) {
	t.Helper()
	h, err := artifact.ParseDigest(digest)
	if err == nil {
		_, err = hex.Decode(sum[:], []byte(h))
	}
	if err != nil {
		t.Fatal(err)
	}
	return sum
}
