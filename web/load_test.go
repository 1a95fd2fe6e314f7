package web

import (
	"bufio"
	"context"
	"fmt"
	"net/http"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/custom-agent/custom-agent/approval"
	"github.com/custom-agent/custom-agent/event"
	"github.com/custom-agent/custom-agent/eventlog/sqlitestore"
	"github.com/custom-agent/custom-agent/executor"
	"github.com/custom-agent/custom-agent/permission"
	"github.com/custom-agent/custom-agent/permission/risk"
)

// follow reads a timeline stream from after lastID and sends each event's
// seq on got, until ctx ends or the stream closes.
func follow(ctx context.Context, base, session string, lastID uint64, got func(seq uint64) bool) error {
	req, err := http.NewRequestWithContext(ctx, "GET", base+"/session/"+session+"/events", nil)
	if err != nil {
		return err
	}
	req.Header.Set("Authorization", "Bearer "+testScriptToken)
	if lastID > 0 {
		req.Header.Set("Last-Event-ID", strconv.FormatUint(lastID, 10))
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	if resp.StatusCode != 200 {
		return fmt.Errorf("status %d", resp.StatusCode)
	}
	sc := bufio.NewScanner(resp.Body)
	sc.Buffer(make([]byte, 1<<20), 1<<20)
	for sc.Scan() {
		if id, ok := strings.CutPrefix(sc.Text(), "id: "); ok {
			n, err := strconv.ParseUint(id, 10, 64)
			if err != nil {
				return err
			}
			if !got(n) {
				return nil
			}
		}
	}
	return sc.Err()
}

// TestLoadTwentySessionsFivePages streams 20 sessions, appended to at once,
// to 5 pages each following every session (100 streams); two of the pages
// drop every stream halfway and reconnect with Last-Event-ID. Every stream
// must see every seq exactly once, in order.
func TestLoadTwentySessionsFivePages(t *testing.T) {
	if testing.Short() {
		t.Skip("load test")
	}
	const sessions, perSession, pages = 20, 40, 5
	log, err := sqlitestore.Open(t.Context(), filepath.Join(t.TempDir(), "log.db"), nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { log.Close() })
	ids := make([]string, sessions)
	for i := range ids {
		ids[i] = fmt.Sprintf("load-%02d", i)
		startSession(t, log, ids[i]) // seq 1 and 2
	}
	l := serveLogPoll(t, log, nil, 250*time.Millisecond)
	total := uint64(2 + perSession)

	ctx, cancel := context.WithTimeout(t.Context(), 90*time.Second)
	defer cancel()
	type key struct {
		page int
		sess string
	}
	var mu sync.Mutex
	seen := map[key][]uint64{}
	var wg sync.WaitGroup
	for p := range pages {
		for _, id := range ids {
			wg.Add(1)
			go func() {
				defer wg.Done()
				k := key{p, id}
				var last uint64
				reconnect := p < 2
				for last < total && ctx.Err() == nil {
					sctx, scancel := context.WithCancel(ctx)
					err := follow(sctx, l.api, id, last, func(seq uint64) bool {
						mu.Lock()
						seen[k] = append(seen[k], seq)
						mu.Unlock()
						last = seq
						if reconnect && seq == total/2 {
							reconnect = false
							return false // drop the connection
						}
						return seq < total
					})
					scancel()
					if err != nil && ctx.Err() == nil {
						t.Errorf("page %d, %s: %v", p, id, err)
						return
					}
				}
			}()
		}
	}
	// 20 writers at once.
	var wwg sync.WaitGroup
	for _, id := range ids {
		wwg.Add(1)
		go func() {
			defer wwg.Done()
			for i := range perSession {
				appendEvent(t, log, id, event.ModelDeltaPayload{Text: fmt.Sprintf("%s delta %d", id, i)})
			}
		}()
	}
	wwg.Wait()
	wg.Wait()
	want := make([]uint64, total)
	for i := range want {
		want[i] = uint64(i + 1)
	}
	for p := range pages {
		for _, id := range ids {
			if got := seen[key{p, id}]; !slices.Equal(got, want) {
				t.Errorf("page %d, %s: saw %d events %v, want 1..%d once each", p, id, len(got), got, total)
			}
		}
	}
}

// BenchmarkAnswerToToolStart measures the time from an answer posted to the
// page's API to the moment the asking side records tool.started, through
// the whole path: the server's checks, the store's inbox, the asking
// process's relay (approval.Relay) and broker, and the log. The asking side
// records what the executor records around a question (requested,
// resolved, started), here in the same process.
func BenchmarkAnswerToToolStart(b *testing.B) {
	log, err := sqlitestore.Open(b.Context(), filepath.Join(b.TempDir(), "log.db"), nil)
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { log.Close() })
	startSession(b, log, "bench")
	l := serveLog(b, log, nil)
	broker := approval.New(nil)
	ctx, cancel := context.WithCancel(b.Context())
	defer cancel()
	go func() { _ = approval.Relay(ctx, log, log, broker, "bench", nil) }()

	var lat []time.Duration
	for i := 0; b.Loop(); i++ {
		tc := fmt.Sprintf("tc_%d", i)
		req := askPayload(tc, "write_file", risk.Write, `{"path":"a.txt","content":"x"}`)
		e := appendEvent(b, log, "bench", req)
		started := make(chan time.Time, 1)
		go func() {
			ans, _ := broker.Ask(ctx, executor.Question{SessionID: "bench", ToolCallID: tc,
				Tool:     permission.ToolInfo{Name: "write_file"},
				Decision: permission.Decision{RiskAtDecision: risk.Write}, Options: req.Options, Timeout: time.Minute})
			appendEvent(b, log, "bench", event.PermissionResolvedPayload{ToolCallID: tc, Decision: "allow", Reason: ans.Reason,
				Actor: ans.Actor, RiskAtDecision: risk.Write, SourcedFrom: "default", Option: ans.Option, UI: ans.UI})
			appendEvent(b, log, "bench", event.ToolStartedPayload{ToolCallID: tc, Tool: "write_file", Args: req.Args})
			started <- time.Now()
		}()
		body := fmt.Sprintf(`{"sessionId":"bench","seq":%d,"toolCallId":%q,"option":"allow_once"}`, e.Seq, tc)
		hr, _ := http.NewRequest("POST", l.api+"/api/answer", strings.NewReader(body))
		hr.Header.Set("Authorization", "Bearer "+testScriptToken)
		hr.Header.Set("Origin", l.api)
		hr.Header.Set("Content-Type", "application/json")
		hr.Header.Set(HeaderCSRF, "1")
		t0 := time.Now()
		resp, err := http.DefaultClient.Do(hr)
		if err != nil {
			b.Fatal(err)
		}
		resp.Body.Close()
		if resp.StatusCode != 200 {
			b.Fatalf("answer: %d", resp.StatusCode)
		}
		lat = append(lat, (<-started).Sub(t0))
	}
	slices.Sort(lat)
	b.ReportMetric(float64(lat[len(lat)/2].Microseconds())/1000, "p50-ms")
	b.ReportMetric(float64(lat[(len(lat)*99)/100].Microseconds())/1000, "p99-ms")
}
