package openai_test

import (
	"context"
	"errors"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/custom-agent/custom-agent/model"
	"github.com/custom-agent/custom-agent/model/openai"
)

func sse(delta, finish string) string {
	fin := "null"
	if finish != "" {
		fin = `"` + finish + `"`
	}
	return `data: {"id":"c","object":"chat.completion.chunk","created":1,"model":"m","choices":[{"index":0,"delta":` + delta + `,"finish_reason":` + fin + `}]}` + "\n\n"
}

func streamErr(t *testing.T, url string, timeout time.Duration) (string, error) {
	t.Helper()
	p, err := openai.New(openai.Options{Model: "m", BaseURL: url, MaxRetries: -1, Timeout: timeout})
	if err != nil {
		t.Fatal(err)
	}
	var text string
	for c, err := range p.Stream(context.Background(), model.Request{Messages: []model.Message{{Role: model.RoleUser, Content: "hi"}}}) {
		if err != nil {
			return text, err
		}
		text += c.Text
	}
	return text, nil
}

// TestTimeoutBeforeTheFirstByte: a server that accepts and never answers
// fails the call after the timeout, naming the base URL.
func TestTimeoutBeforeTheFirstByte(t *testing.T) {
	t.Parallel()
	release := make(chan struct{})
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		select {
		case <-r.Context().Done():
		case <-release:
		}
	}))
	defer srv.Close()
	defer close(release)
	start := time.Now()
	_, err := streamErr(t, srv.URL+"/v1", 200*time.Millisecond)
	var te *model.TimeoutError
	if !errors.As(err, &te) || !te.FirstByte || !errors.Is(err, model.ErrTimeout) {
		t.Fatalf("error %v, want a first-byte timeout", err)
	}
	if !strings.Contains(err.Error(), srv.URL+"/v1") || !strings.Contains(err.Error(), "--model-timeout") {
		t.Fatalf("error %q does not name the base URL and the setting", err)
	}
	if d := time.Since(start); d > 5*time.Second {
		t.Fatalf("took %s", d)
	}
}

// TestTimeoutBetweenChunks: a stream that stalls after it began fails too;
// one that keeps sending, each piece within the timeout, does not, however
// long it takes in all.
func TestTimeoutBetweenChunks(t *testing.T) {
	t.Parallel()
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/event-stream")
		for i := 0; i < 6; i++ {
			io.WriteString(w, sse(`{"content":"x"}`, ""))
			w.(http.Flusher).Flush()
			time.Sleep(80 * time.Millisecond)
		}
		if r.URL.Query().Get("stall") != "" || strings.Contains(r.Header.Get("Authorization"), "stall") {
			<-r.Context().Done()
			return
		}
		io.WriteString(w, sse(`{}`, "stop"))
		io.WriteString(w, "data: [DONE]\n\n")
	}))
	defer srv.Close()
	text, err := streamErr(t, srv.URL+"/v1", 300*time.Millisecond)
	if err != nil || text != "xxxxxx" {
		t.Fatalf("a steady stream of 480ms under a 300ms timeout: %q, %v", text, err)
	}
	p, _ := openai.New(openai.Options{Model: "m", BaseURL: srv.URL + "/v1", APIKey: "stall", MaxRetries: -1, Timeout: 300 * time.Millisecond})
	var last error
	for _, err := range p.Stream(context.Background(), model.Request{Messages: []model.Message{{Role: model.RoleUser, Content: "hi"}}}) {
		last = err
	}
	var te *model.TimeoutError
	if !errors.As(last, &te) || te.FirstByte || !strings.Contains(last.Error(), "stopped sending") {
		t.Fatalf("error %v, want a timeout between chunks", last)
	}
}

// TestConnectionRefused says what to check.
func TestConnectionRefused(t *testing.T) {
	t.Parallel()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	url := "http://" + l.Addr().String() + "/v1"
	l.Close()
	_, err = streamErr(t, url, time.Second)
	if err == nil || !strings.Contains(err.Error(), "is the server at "+url+" running?") {
		t.Fatalf("error %v", err)
	}
}
