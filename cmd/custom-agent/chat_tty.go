package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/signal"
	"path/filepath"
	"slices"
	"sync"
	"syscall"

	"golang.org/x/term"

	"github.com/custom-agent/custom-agent/approval"
	"github.com/custom-agent/custom-agent/approval/cli"
	"github.com/custom-agent/custom-agent/support/lineedit"
)

// historyFile is the prompt history's file in the data directory.
const historyFile = "chat_history"

// Bracketed paste on and off: while a prompt is read, pasted text comes
// marked, so that its newlines do not send it.
const (
	pasteOn  = "\x1b[?2004h"
	pasteOff = "\x1b[?2004l"
)

// terminal runs the conversation with a person at the terminal on stdin.
// The terminal has three states: raw while a prompt is read (the line
// editor), "turn mode" while a turn runs (no echo, keys one by one, Ctrl-C
// sends SIGINT, which cancels the turn), and raw again while a question is
// shown (the approval UI, whose Ctrl-C denies and cancels the turn). It is
// restored as it was when chat ends.
func (c *chat) terminal(ctx context.Context) error {
	ctx, quit := context.WithCancel(ctx)
	defer quit()
	fd := int(os.Stdin.Fd())
	orig, err := term.GetState(fd)
	if err != nil {
		return fmt.Errorf("reading the terminal's state: %w", err)
	}
	defer func() { _ = term.Restore(fd, orig) }()

	// The prompt, the questions and chat's own messages go to the
	// controlling terminal, so they are seen even when stdout or stderr
	// is redirected; the turns go to stdout, as with run.
	var tty io.Writer = os.Stderr
	ttyFD := int(os.Stderr.Fd())
	if f, err := os.OpenFile("/dev/tty", os.O_WRONLY, 0); err == nil {
		defer f.Close()
		tty, ttyFD = f, int(f.Fd())
	}
	c.info = tty
	defer io.WriteString(tty, pasteOff)
	noColor := os.Getenv("NO_COLOR") != "" || os.Getenv("TERM") == "dumb"

	// One goroutine reads the keys, for the line editor and, during a
	// turn, the approval UI.
	keys := make(chan []byte)
	go func() {
		defer close(keys)
		buf := make([]byte, 512)
		for {
			n, err := os.Stdin.Read(buf)
			if n > 0 {
				keys <- slices.Clone(buf[:n])
			}
			if err != nil {
				return
			}
		}
	}()

	// Signals: SIGINT (Ctrl-C in turn mode) cancels the running turn;
	// SIGTERM and SIGHUP cancel it and end chat.
	var mu sync.Mutex
	var cancelTurn context.CancelFunc
	setCancel := func(f context.CancelFunc) { mu.Lock(); cancelTurn = f; mu.Unlock() }
	sigs := make(chan os.Signal, 4)
	signal.Notify(sigs, os.Interrupt, syscall.SIGTERM, syscall.SIGHUP)
	defer signal.Stop(sigs)
	winch := make(chan os.Signal, 1)
	signal.Notify(winch, syscall.SIGWINCH)
	defer signal.Stop(winch)
	resize := make(chan struct{}, 1)
	go func() {
		for {
			select {
			case <-ctx.Done():
				return
			case <-winch:
				select {
				case resize <- struct{}{}:
				default:
				}
			case s := <-sigs:
				mu.Lock()
				if cancelTurn != nil {
					cancelTurn()
				}
				mu.Unlock()
				if s != os.Interrupt {
					quit()
				}
			}
		}
	}()

	hist, err := lineedit.OpenHistory(filepath.Join(c.r.dataDir, historyFile), 0)
	if err != nil {
		fmt.Fprintf(tty, "custom-agent: %v; prompts are not kept this time\r\n", err)
		hist, _ = lineedit.OpenHistory("", 0)
	}
	width := func() int {
		w, _, err := term.GetSize(ttyFD)
		if err != nil {
			return 0
		}
		return w
	}
	c.cols = width
	ed := lineedit.New(keys, tty, &lineedit.Options{Width: width, History: hist})
	c.greet(tty)

	armed := false // Ctrl-C was pressed at an empty prompt
	for {
		line, err := c.readPrompt(ctx, fd, tty, ed, resize)
		switch {
		case errors.Is(err, lineedit.ErrInterrupt):
			if armed {
				return nil
			}
			armed = true
			fmt.Fprintln(tty, "(press Ctrl-C again to exit, or Ctrl-D)")
			continue
		case errors.Is(err, io.EOF), ctx.Err() != nil:
			return nil
		case err != nil:
			return err
		}
		armed = false
		p, ok := parseInput(line)
		if !ok {
			continue
		}
		if added, err := hist.Add(line); err != nil {
			fmt.Fprintln(tty, "custom-agent: "+err.Error())
		} else if !added && !lineedit.Keepable(line) {
			fmt.Fprintln(tty, "(not kept in the prompt history: it looks like it holds a secret)")
		}
		if p.isCommand {
			if err := c.command(ctx, p.command); errors.Is(err, errExit) {
				return nil
			} else if err != nil {
				return err
			}
			continue
		}
		includes, err := turnIncludes(nil, p.text, c.r.conf)
		if err != nil {
			fmt.Fprintln(tty, "custom-agent: "+err.Error())
			continue
		}
		restore, err := turnMode(fd)
		if err != nil {
			return fmt.Errorf("setting the terminal for the turn: %w", err)
		}
		in := &turnInput{keys: keys, done: make(chan struct{})}
		last, err := c.r.turn(ctx, p.text, turnOptions{
			includes: includes, out: c.out, cancel: setCancel,
			newUI: func(b *approval.Broker, cancel context.CancelFunc) approvalUI {
				return cli.New(b, in, tty, &cli.Options{
					IsTTY: true, NoColor: noColor, Interrupt: cancel,
					MakeRaw: func() (func(), error) {
						st, err := term.MakeRaw(fd)
						if err != nil {
							return nil, err
						}
						return func() { _ = term.Restore(fd, st) }, nil
					},
					// What the terminal holds, and what was read and
					// not handed over, is discarded when a question
					// is drawn.
					Flush: func() error { in.drain(); return flushTerminal(fd) },
					Size:  func() (int, int, error) { return term.GetSize(ttyFD) },
					// A question is drawn again when the terminal
					// is resized; no prompt is read meanwhile.
					Resized: resize,
				})
			},
		})
		in.close()
		restore()
		if err != nil {
			return err
		}
		c.turnEnded(last)
	}
}

// readPrompt reads one prompt with the terminal raw and bracketed paste on.
func (c *chat) readPrompt(ctx context.Context, fd int, tty io.Writer, ed *lineedit.Editor, resize <-chan struct{}) (string, error) {
	st, err := term.MakeRaw(fd)
	if err != nil {
		return "", fmt.Errorf("the terminal cannot read single keys: %w", err)
	}
	defer func() { _ = term.Restore(fd, st) }()
	_, _ = io.WriteString(tty, pasteOn)
	defer io.WriteString(tty, pasteOff)
	return ed.ReadLine(ctx, resize)
}

// greet says where the conversation is and how to leave it.
func (c *chat) greet(w io.Writer) {
	s := c.r.s
	what := "new session"
	if s.Started() {
		what = "session " + s.ID()
	}
	mode := s.Mode()
	if mode == "" {
		mode = "default"
	}
	line := fmt.Sprintf("custom-agent chat · %s · %s · model %s · mode %s", what, c.r.cwd, c.r.m.Name(), mode)
	fmt.Fprint(w, fitLine(line, c.width(), "  "))
	fmt.Fprint(w, fitLine("/help lists the commands; Ctrl-D or /exit ends chat", c.width(), "  "))
}

// turnInput is the approval UI's input during one turn: the keys, until
// the turn ends. Then Read returns io.EOF without taking a key, so the
// UI's reader, which outlives the UI, leaves the next keys to the line
// editor.
type turnInput struct {
	keys <-chan []byte
	done chan struct{}
	once sync.Once
	rest []byte
}

func (t *turnInput) Read(p []byte) (int, error) {
	if len(t.rest) > 0 {
		n := copy(p, t.rest)
		t.rest = t.rest[n:]
		return n, nil
	}
	select {
	case <-t.done:
		return 0, io.EOF
	default:
	}
	select {
	case <-t.done:
		return 0, io.EOF
	case b, ok := <-t.keys:
		if !ok {
			return 0, io.EOF
		}
		n := copy(p, b)
		t.rest = b[n:]
		return n, nil
	}
}

// drain drops the keys read and not handed over yet.
func (t *turnInput) drain() {
	for {
		select {
		case _, ok := <-t.keys:
			if !ok {
				return
			}
		default:
			return
		}
	}
}

func (t *turnInput) close() { t.once.Do(func() { close(t.done) }) }
