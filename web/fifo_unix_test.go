//go:build unix

package web

import (
	"context"
	"net/http/httptest"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/custom-agent/custom-agent/eventlog/sqlitestore"
	"github.com/custom-agent/custom-agent/permission/risk"
)

// The dialog of a write_file question whose path is a FIFO comes at once
// and says why there is no diff (the reviewer's finding 7: serve read the
// path with os.ReadFile and the page never came).
func TestAskDialogOfAFIFOComes(t *testing.T) {
	dir := t.TempDir()
	fifo := filepath.Join(dir, "pipe")
	if err := syscall.Mkfifo(fifo, 0o600); err != nil {
		t.Fatal(err)
	}
	log, err := sqlitestore.Open(context.Background(), filepath.Join(dir, "log.db"), nil)
	if err != nil {
		t.Fatal(err)
	}
	defer log.Close()
	startSession(t, log, "s1")
	e := appendEvent(t, log, "s1", askPayload("tc", "write_file", risk.Write, `{"path":"`+fifo+`","content":"x"}`))
	s, err := New(Options{Log: log, Token: testToken, ScriptToken: testScriptToken, UIHost: testHost})
	if err != nil {
		t.Fatal(err)
	}
	done := make(chan *httptest.ResponseRecorder, 1)
	go func() {
		r := httptest.NewRequest("GET", "/session/s1/ask/"+strconv.FormatUint(e.Seq, 10), nil)
		r.Host = testHost
		r.Header.Set("Authorization", "Bearer "+testScriptToken)
		w := httptest.NewRecorder()
		s.Handler().ServeHTTP(w, r)
		done <- w
	}()
	select {
	case w := <-done:
		if w.Code != 200 || !strings.Contains(w.Body.String(), "named pipe") {
			t.Errorf("the dialog: %d, does not say the path is a named pipe:\n%s", w.Code, w.Body.String())
		}
	case <-time.After(20 * time.Second):
		t.Fatal("the dialog of a write_file to a FIFO never came")
	}
}
