package web

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strconv"
	"time"

	"github.com/custom-agent/custom-agent/artifact"
	"github.com/custom-agent/custom-agent/event"
	"github.com/custom-agent/custom-agent/eventlog"
	"github.com/custom-agent/custom-agent/secrets"
)

// sse starts a server-sent event stream.
func sse(w http.ResponseWriter) (http.Flusher, bool) {
	f, ok := w.(http.Flusher)
	if !ok {
		http.Error(w, "streaming unsupported", http.StatusInternalServerError)
		return nil, false
	}
	w.Header().Set("Content-Type", "text/event-stream")
	w.Header().Set("X-Accel-Buffering", "no")
	w.WriteHeader(http.StatusOK)
	f.Flush()
	return f, true
}

// writeSSE writes one event; data is JSON (one line).
func writeSSE(w io.Writer, id, name string, data any) error {
	b, err := json.Marshal(data)
	if err != nil {
		return err
	}
	var buf bytes.Buffer
	if id != "" {
		fmt.Fprintf(&buf, "id: %s\n", id)
	}
	fmt.Fprintf(&buf, "event: %s\ndata: %s\n\n", name, b)
	_, err = w.Write(buf.Bytes())
	return err
}

// queueItem is a question as the queue stream announces it: no args, no
// reason, nothing from the call but its tool and risk, so a notification
// built from it holds no secret.
type queueItem struct {
	SessionID  string `json:"sessionId"`
	Seq        uint64 `json:"seq"`
	ToolCallID string `json:"toolCallId"`
	Tool       string `json:"tool"`
	Risk       string `json:"risk"`
	AskedMs    int64  `json:"askedMs"`
	DeadlineMs int64  `json:"deadlineMs,omitempty"`
	URL        string `json:"url"`
}

// queueEvents streams the whole queue each time it changes.
func (s *Server) queueEvents(w http.ResponseWriter, r *http.Request) {
	f, ok := sse(w)
	if !ok {
		return
	}
	ctx := r.Context()
	keepAlive := time.NewTicker(15 * time.Second)
	defer keepAlive.Stop()
	for {
		changed := s.index.Changed()
		items := []queueItem{}
		for _, a := range s.index.Queue() {
			it := queueItem{SessionID: a.SessionID, Seq: a.Seq, ToolCallID: clean(a.Req.ToolCallID), Tool: clean(a.Req.Tool),
				Risk: riskName(a.Req.RiskAtDecision), AskedMs: a.At.UnixMilli(), URL: fmt.Sprintf("/session/%s/ask/%d", a.SessionID, a.Seq)}
			if dl := a.Deadline(); !dl.IsZero() {
				it.DeadlineMs = dl.UnixMilli()
			}
			items = append(items, it)
		}
		if writeSSE(w, "", "queue", items) != nil {
			return
		}
		f.Flush()
	wait:
		select {
		case <-ctx.Done():
			return
		case <-changed:
		case <-keepAlive.C:
			if _, err := io.WriteString(w, ": keep-alive\n\n"); err != nil {
				return
			}
			f.Flush()
			goto wait
		}
	}
}

// eventView is one event of a timeline.
type eventView struct {
	Seq       uint64         `json:"seq"`
	TS        string         `json:"ts"`
	Type      string         `json:"type"`
	Actor     string         `json:"actor"`
	Summary   string         `json:"summary"`
	JSON      string         `json:"json"`
	Risk      string         `json:"risk,omitempty"`
	Artifacts []artifactView `json:"artifacts,omitempty"`
	AskURL    string         `json:"askUrl,omitempty"`
}

type artifactView struct {
	Name  string `json:"name"`
	Bytes int64  `json:"bytes"`
	URL   string `json:"url"`
	Note  string `json:"note,omitempty"`
}

func viewEvent(e event.Event) eventView {
	v := eventView{Seq: e.Seq, TS: e.TS.UTC().Format("2006-01-02T15:04:05.000Z"), Type: clean(string(e.Type)),
		Actor: string(e.Actor()), Summary: clean(e.Summary())}
	var pretty bytes.Buffer
	masked := secrets.MaskJSON(e.Payload)
	if json.Indent(&pretty, masked, "", "  ") == nil {
		v.JSON = cleanText(pretty.String())
	} else {
		v.JSON = cleanText(string(masked))
	}
	switch e.Type {
	case event.PermissionRequested:
		var p event.PermissionRequestedPayload
		if json.Unmarshal(e.Payload, &p) == nil {
			v.Risk = riskName(p.RiskAtDecision)
			v.AskURL = fmt.Sprintf("/session/%s/ask/%d", e.SessionID, e.Seq)
		}
	case event.PermissionResolved:
		var p event.PermissionResolvedPayload
		if json.Unmarshal(e.Payload, &p) == nil {
			v.Risk = riskName(p.RiskAtDecision)
		}
	case event.ToolCompleted:
		var p event.ToolCompletedPayload
		if json.Unmarshal(e.Payload, &p) == nil {
			for _, a := range p.Artifacts {
				av := artifactView{Name: clean(a.Name), Bytes: a.Bytes}
				if a.InEvent {
					av.URL = fmt.Sprintf("/session/%s/output/%d/%s", e.SessionID, e.Seq, a.Name)
					av.Note = "whole in the event"
				} else {
					av.URL = "/artifact/" + a.Digest
					if a.Truncated {
						av.Note = "the start of a longer output"
					}
				}
				v.Artifacts = append(v.Artifacts, av)
			}
		}
	}
	return v
}

// timelineEvents streams a session's events from the seq after
// Last-Event-ID (a reconnect) or ?from=, then live.
func (s *Server) timelineEvents(w http.ResponseWriter, r *http.Request) {
	id := r.PathValue("id")
	if _, ok := s.index.Session(id); !ok {
		s.refresh(r.Context())
		if _, ok := s.index.Session(id); !ok {
			http.Error(w, "no such session", http.StatusNotFound)
			return
		}
	}
	var from uint64 = 1
	if last := r.Header.Get("Last-Event-ID"); last != "" {
		n, err := strconv.ParseUint(last, 10, 64)
		if err != nil {
			http.Error(w, "Last-Event-ID is not a seq", http.StatusBadRequest)
			return
		}
		from = n + 1
	} else if q := r.URL.Query().Get("from"); q != "" {
		n, err := strconv.ParseUint(q, 10, 64)
		if err != nil || n == 0 {
			http.Error(w, "from is not a seq", http.StatusBadRequest)
			return
		}
		from = n
	}
	f, ok := sse(w)
	if !ok {
		return
	}
	if _, err := io.WriteString(w, "retry: 1000\n\n"); err != nil {
		return
	}
	for e, err := range eventlog.Follow(r.Context(), s.opts.Log, id, from, s.opts.Poll) {
		if err != nil {
			_ = writeSSE(w, "", "failure", map[string]string{"message": clean(err.Error())})
			f.Flush()
			return
		}
		if writeSSE(w, strconv.FormatUint(e.Seq, 10), "ev", viewEvent(e)) != nil {
			return
		}
		f.Flush()
	}
}

// download sends stored output as an attachment, never as a page.
func download(w http.ResponseWriter, name string, size int64, body io.Reader) {
	w.Header().Set("Content-Type", "application/octet-stream")
	w.Header().Set("Content-Disposition", fmt.Sprintf("attachment; filename=%q", name))
	w.Header().Set("Content-Length", strconv.FormatInt(size, 10))
	_, _ = io.Copy(w, body)
}

func (s *Server) artifactDownload(w http.ResponseWriter, r *http.Request) {
	if s.opts.Artifacts == nil {
		http.Error(w, "no artifact store", http.StatusNotFound)
		return
	}
	digest, err := artifact.NormalizeDigest(r.PathValue("digest"))
	if err != nil {
		http.Error(w, "not a digest", http.StatusBadRequest)
		return
	}
	b, err := s.opts.Artifacts.Open(digest)
	if errors.Is(err, artifact.ErrNotFound) {
		http.Error(w, "no such output", http.StatusNotFound)
		return
	}
	if err != nil {
		http.Error(w, "the output cannot be read", http.StatusInternalServerError)
		return
	}
	defer b.Close()
	hexd, _ := artifact.ParseDigest(digest)
	download(w, hexd+".out", b.Size(), b)
}

// inEventOutput serves an output a tool.completed event holds whole.
func (s *Server) inEventOutput(w http.ResponseWriter, r *http.Request) {
	id, name := r.PathValue("id"), r.PathValue("name")
	seq, err := strconv.ParseUint(r.PathValue("seq"), 10, 64)
	if err != nil || (name != "stdout" && name != "stderr") {
		http.Error(w, "no such output", http.StatusNotFound)
		return
	}
	for e, err := range s.opts.Log.Read(r.Context(), id, seq) {
		if err != nil || e.Seq != seq || e.Type != event.ToolCompleted {
			break
		}
		var p event.ToolCompletedPayload
		if json.Unmarshal(e.Payload, &p) != nil {
			break
		}
		for _, a := range p.Artifacts {
			if a.Name == name && a.InEvent {
				text, err := p.InEventOutput(a)
				if err != nil {
					http.Error(w, "the output does not match its digest", http.StatusConflict)
					return
				}
				download(w, fmt.Sprintf("%s-%d-%s.out", id, seq, name), int64(len(text)), bytes.NewReader([]byte(text)))
				return
			}
		}
		break
	}
	http.Error(w, "no such output", http.StatusNotFound)
}
