package main

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"slices"
	"strings"
	"sync"

	"github.com/custom-agent/custom-agent/approval"
	"github.com/custom-agent/custom-agent/approval/cli"
	"github.com/custom-agent/custom-agent/executor"
)

// lines runs the conversation on a line protocol: prompts, slash commands
// and the answers to questions all come from in, one per line, so that
// chat can be scripted. A question takes the next line(s) as its answer
// (the approval UI's line protocol); every other line is a prompt or a
// command. End of input ends the conversation, and so does the command's
// context ending (SIGINT, SIGTERM), after the running turn is closed.
func (c *chat) lines(ctx context.Context, in io.Reader) error {
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	stop := context.AfterFunc(c.r.cmd.Context(), cancel)
	defer stop()
	src := newLineSource(in)
	for {
		text, err := src.prompt(ctx)
		if err != nil {
			return nil // end of input, or the process was told to stop
		}
		p, ok := parseInput(text)
		if !ok {
			continue
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
			fmt.Fprintln(c.info, "custom-agent: "+err.Error())
			continue
		}
		gate := newAnswerGate(ctx, src.ch, c.r.rt.Broker)
		last, err := c.r.turn(ctx, p.text, turnOptions{
			includes: includes, out: c.out, json: c.json,
			newUI: func(b *approval.Broker, _ context.CancelFunc) approvalUI {
				return cli.New(b, gate, c.info, nil)
			},
		})
		gate.close()
		if err != nil {
			return err
		}
		c.turnEnded(last)
	}
}

// lineSource reads in line by line, from one goroutine, for the prompts
// and for the answer gate of the running turn.
type lineSource struct {
	ch <-chan string // closed at the end of input
}

func newLineSource(in io.Reader) *lineSource {
	ch := make(chan string)
	go func() {
		defer close(ch)
		br := bufio.NewReader(in)
		for {
			line, err := br.ReadString('\n')
			if line != "" || err == nil {
				ch <- strings.TrimSuffix(strings.TrimSuffix(line, "\n"), "\r")
			}
			if err != nil {
				return
			}
		}
	}()
	return &lineSource{ch: ch}
}

// blockQuote starts and ends a prompt of several lines.
const blockQuote = `"""`

// prompt reads the next prompt: one line; a line ending in a backslash
// continues on the next (the backslash becomes a newline); a line """
// starts a prompt that runs to the next line """. io.EOF at the end of
// input (a prompt cut off by it is still returned first).
func (s *lineSource) prompt(ctx context.Context) (string, error) {
	next := func() (string, error) {
		select {
		case <-ctx.Done():
			return "", ctx.Err()
		case l, ok := <-s.ch:
			if !ok {
				return "", io.EOF
			}
			return l, nil
		}
	}
	line, err := next()
	if err != nil {
		return "", err
	}
	if line == blockQuote {
		var parts []string
		for {
			l, err := next()
			if err != nil || l == blockQuote {
				if err != nil && len(parts) == 0 {
					return "", err
				}
				return strings.Join(parts, "\n"), nil
			}
			parts = append(parts, l)
		}
	}
	for strings.HasSuffix(line, `\`) {
		l, err := next()
		if err != nil {
			return strings.TrimSuffix(line, `\`), nil
		}
		line = strings.TrimSuffix(line, `\`) + "\n" + l
	}
	return line, nil
}

// answerGate is the approval UI's input during one turn: it hands over a
// line only while a question is pending, and only as many as the question
// takes, following the line protocol's rules (approval/cli): a line that is
// one of the options offered answers it, except allow_once for a
// destructive call, which takes one more line (confirm, or anything else
// to deny); a line that is no option is refused and the next one is given.
// So a turn takes exactly the lines its questions need, and the line after
// an answer is still there for the next prompt.
type answerGate struct {
	lines <-chan string
	b     *approval.Broker
	done  chan struct{}
	once  sync.Once

	mu      sync.Mutex
	changed chan struct{} // closed and replaced when an ask comes or goes

	// Used by Read only.
	buf        []byte          // the rest of the line being read
	fed        map[string]bool // asks given every line they take
	confirming map[string]bool // destructive asks given allow_once or allow_unsandboxed
}

func newAnswerGate(ctx context.Context, lines <-chan string, b *approval.Broker) *answerGate {
	g := &answerGate{lines: lines, b: b, done: make(chan struct{}), changed: make(chan struct{}),
		fed: map[string]bool{}, confirming: map[string]bool{}}
	sctx, cancel := context.WithCancel(ctx)
	notes := b.Subscribe(sctx)
	go func() {
		defer cancel()
		for {
			select {
			case <-g.done:
				return
			case _, ok := <-notes:
				if !ok {
					return
				}
				g.mu.Lock()
				close(g.changed)
				g.changed = make(chan struct{})
				g.mu.Unlock()
			}
		}
	}()
	return g
}

// close ends the gate: a Read waiting returns io.EOF, and no line is taken
// from the source again.
func (g *answerGate) close() { g.once.Do(func() { close(g.done) }) }

// hungry returns the oldest pending ask that may take a line.
func (g *answerGate) hungry() (approval.Pending, bool) {
	for _, p := range g.b.Pending() {
		if !g.fed[p.ID] {
			return p, true
		}
	}
	return approval.Pending{}, false
}

func (g *answerGate) Read(p []byte) (int, error) {
	if len(g.buf) > 0 {
		n := copy(p, g.buf)
		g.buf = g.buf[n:]
		return n, nil
	}
	var ask approval.Pending
	for {
		g.mu.Lock()
		ch := g.changed
		g.mu.Unlock()
		var ok bool
		if ask, ok = g.hungry(); ok {
			break
		}
		select {
		case <-ch:
		case <-g.done:
			return 0, io.EOF
		}
	}
	var line string
	select {
	case <-g.done:
		return 0, io.EOF
	case l, ok := <-g.lines:
		if !ok {
			return 0, io.EOF
		}
		line = l
	}
	word := strings.TrimSpace(line)
	switch {
	case g.confirming[ask.ID]:
		g.fed[ask.ID] = true
	case slices.Contains(ask.Options, word) && (word == executor.OptionAllowOnce || word == executor.OptionAllowUnsandboxed) && ask.Destructive():
		g.confirming[ask.ID] = true
	case slices.Contains(ask.Options, word):
		g.fed[ask.ID] = true
	}
	g.buf = []byte(line + "\n")
	n := copy(p, g.buf)
	g.buf = g.buf[n:]
	return n, nil
}
