package main

import (
	"fmt"
	"io"
	"sync"
	"time"
)

// statusLine is the renderer's "something is happening" line on a
// terminal: a spinner, what is awaited and the time elapsed, redrawn in
// place while the model has not started answering or a tool runs, and
// erased before anything else is printed. It is only made for a terminal;
// a pipe gets nothing.
type statusLine struct {
	w     io.Writer
	every time.Duration
	now   func() time.Time

	mu    sync.Mutex
	what  string    // "" when idle
	since time.Time // when what began
	shown bool      // a status is on the screen
	stop  chan struct{}
	done  chan struct{}
}

var spinner = []string{"⠋", "⠙", "⠹", "⠸", "⠼", "⠴", "⠦", "⠧", "⠇", "⠏"}

func newStatusLine(w io.Writer) *statusLine {
	s := &statusLine{w: w, every: 100 * time.Millisecond, now: time.Now, stop: make(chan struct{}), done: make(chan struct{})}
	go s.loop()
	return s
}

func (s *statusLine) loop() {
	defer close(s.done)
	t := time.NewTicker(s.every)
	defer t.Stop()
	for i := 0; ; i++ {
		select {
		case <-s.stop:
			return
		case <-t.C:
		}
		s.mu.Lock()
		if s.what != "" {
			el := s.now().Sub(s.since).Truncate(time.Second)
			fmt.Fprintf(s.w, "\r\x1b[K%s %s · %s", spinner[i%len(spinner)], s.what, el)
			s.shown = true
		}
		s.mu.Unlock()
	}
}

// set shows what is awaited from now on ("" to show nothing).
func (s *statusLine) set(what string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.clearLocked()
	s.what, s.since = what, s.now()
}

// clear erases the line and shows nothing until the next set.
func (s *statusLine) clear() { s.set("") }

func (s *statusLine) clearLocked() {
	if s.shown {
		fmt.Fprint(s.w, "\r\x1b[K")
		s.shown = false
	}
}

// close erases the line and stops redrawing.
func (s *statusLine) close() {
	s.clear()
	close(s.stop)
	<-s.done
}
