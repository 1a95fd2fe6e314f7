package main

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"text/tabwriter"

	"github.com/spf13/cobra"

	"github.com/custom-agent/custom-agent/event"
	"github.com/custom-agent/custom-agent/permission"
	"github.com/custom-agent/custom-agent/policy"
	"github.com/custom-agent/custom-agent/support/termtext"
)

// slashCommand is one of chat's commands.
type slashCommand struct {
	name, args, help string
	run              func(c *chat, ctx context.Context, args []string) error
}

var slashCommands []slashCommand

func init() {
	// Set here, not in the declaration: /help lists slashCommands.
	slashCommands = []slashCommand{
		{"help", "", "these commands", (*chat).help},
		{"mode", "[NAME]", "show the mode and the modes; with NAME, change it from the next turn on", (*chat).mode},
		{"permissions", "[revoke ID | unapprove N]", "the rules in force by level, with their sources, and the calls approved in this session; revoke ID removes a session rule, unapprove N one approved call", (*chat).permissions},
		{"log", "", "this session's timeline, as custom-agent log prints it", (*chat).log},
		{"verify", "", "walk this session's hash chain, as custom-agent audit verify does", (*chat).verify},
		{"new", "", "start a new session in the same directory", (*chat).newSession},
		{"exit", "", "end chat (so do Ctrl-D and Ctrl-C twice at an empty prompt)", func(*chat, context.Context, []string) error { return errExit }},
	}
}

// command runs a slash command's line (without its slash). errExit ends
// the conversation; other errors are shown and the conversation goes on,
// except a failure of the event log.
func (c *chat) command(ctx context.Context, line string) (err error) {
	// What a command prints fits the terminal: each line is wrapped at
	// words, lined up with its second column (/help, /permissions, /log).
	info := c.info
	fw := &fitWriter{w: info, cols: c.width()}
	c.info = fw
	defer func() {
		c.info = info
		err = errors.Join(err, fw.Flush())
	}()
	fields := strings.Fields(line)
	if len(fields) == 0 {
		fmt.Fprintln(c.info, "a lone / is no command; /help lists them (a line starting with // is sent as a prompt)")
		return nil
	}
	name, args := fields[0], fields[1:]
	if name == "quit" {
		name = "exit"
	}
	i := slices.IndexFunc(slashCommands, func(s slashCommand) bool { return s.name == name })
	if i < 0 {
		fmt.Fprintln(c.info, unknownSlash(name))
		return nil
	}
	err = slashCommands[i].run(c, ctx, args)
	if err == nil || errors.Is(err, errExit) {
		return err
	}
	fmt.Fprintln(c.info, "/"+name+": "+err.Error())
	return nil
}

// unknownSlash is the message for a command chat does not have, with a
// suggestion as cobra makes them for mistyped commands.
func unknownSlash(name string) string {
	root := &cobra.Command{Use: "chat", SuggestionsMinimumDistance: 2}
	for _, s := range slashCommands {
		root.AddCommand(&cobra.Command{Use: s.name, Run: func(*cobra.Command, []string) {}})
	}
	root.AddCommand(&cobra.Command{Use: "quit", Run: func(*cobra.Command, []string) {}})
	msg := fmt.Sprintf("unknown command /%s", termtext.Line(name))
	if s := root.SuggestionsFor(name); len(s) > 0 {
		return msg + "; did you mean /" + strings.Join(s, " or /") + "?"
	}
	return msg + " (/help lists the commands; a line starting with // is sent as a prompt)"
}

func (c *chat) help(_ context.Context, _ []string) error {
	tw := tabwriter.NewWriter(c.info, 0, 4, 2, ' ', 0)
	for _, s := range slashCommands {
		fmt.Fprintf(tw, "/%s %s\t%s\n", s.name, s.args, s.help)
	}
	fmt.Fprintln(tw, "//…\ta prompt starting with / (one slash is removed)")
	return tw.Flush()
}

// modeWords say what each mode does, for /mode.
var modeWords = map[permission.Mode]string{
	permission.ModeDefault:     "writes, commands and network calls are asked",
	permission.ModePlan:        "only reads run; anything else is denied",
	permission.ModeAcceptEdits: "edits inside the working directory run without asking; the rest as default",
	permission.ModeDontAsk:     "every question is a denial at once (for CI and headless use)",
}

func (c *chat) mode(ctx context.Context, args []string) error {
	s := c.r.s
	cur := s.Mode()
	if cur == "" {
		cur = permission.ModeDefault
	}
	if len(args) == 0 {
		fmt.Fprintf(c.info, "mode: %s\n", cur)
		for _, m := range permission.Modes {
			mark := " "
			if m == cur {
				mark = "*"
			}
			fmt.Fprintf(c.info, " %s %-13s %s\n", mark, m, modeWords[m])
		}
		fmt.Fprintln(c.info, "/mode NAME changes it from the next turn on")
		return nil
	}
	if len(args) > 1 {
		return errors.New("give one mode: /mode " + permission.ModeNames)
	}
	m, err := permission.ParseMode(args[0])
	if err != nil {
		return err
	}
	if m == cur {
		fmt.Fprintf(c.info, "the mode is %s already\n", m)
		return nil
	}
	if err := s.ChangeMode(ctx, m, event.ActorUser); err != nil {
		return err
	}
	// A later /new starts in the mode chosen last.
	c.r.mode = m
	fmt.Fprintf(c.info, "mode: %s (was %s): %s\n", m, cur, modeWords[m])
	return nil
}

// levelOrder is the order /permissions lists the levels in: from the rules
// that come with custom-agent to the ones made in this conversation.
var levelOrder = []permission.RuleLevel{permission.LevelBuiltin, permission.LevelUser, permission.LevelProject, permission.LevelFlag, permission.LevelSession}

func (c *chat) permissions(ctx context.Context, args []string) error {
	if len(args) == 2 && args[0] == "unapprove" {
		prior := c.r.s.Approvals()
		n, err := strconv.Atoi(args[1])
		if err != nil || n < 1 || n > len(prior) {
			return fmt.Errorf("no approved call numbered %q: /permissions lists %d", termtext.Line(args[1]), len(prior))
		}
		p := prior[n-1]
		if err := c.r.s.RevokeApproval(ctx, p.Seq); err != nil {
			return err
		}
		fmt.Fprintf(c.info, "revoked the approval of %s %s: the same call is asked again\n", termtext.Line(p.Tool), clip(string(p.Args), 160))
		return nil
	}
	if len(args) > 0 {
		if args[0] != "revoke" || len(args) != 2 {
			return errors.New("usage: /permissions, /permissions revoke ID (a session rule's id, as /permissions lists it), or /permissions unapprove N (an approved call's number)")
		}
		r, err := c.r.s.Revoke(ctx, args[1])
		if errors.Is(err, policy.ErrNotFound) {
			return fmt.Errorf("no session rule has id %q; only session rules can be revoked here (custom-agent policy rm removes a user or project rule)", termtext.Line(args[1]))
		}
		if err != nil {
			return err
		}
		fmt.Fprintf(c.info, "revoked session rule %s (%s %s): its calls are asked again\n", termtext.Line(r.ID), r.Decision, termtext.Line(r.Tool))
		return nil
	}
	rules := c.r.rules
	proj, trusted := rules.Project()
	state := "not trusted: its allow rules do not count (custom-agent trust)"
	if trusted {
		state = "trusted"
	}
	fmt.Fprintf(c.info, "project %s (%s)\n", termtext.Line(proj.Root), state)
	entries := rules.Entries("")
	tw := tabwriter.NewWriter(c.info, 0, 4, 2, ' ', 0)
	for _, lv := range levelOrder {
		var of []policy.Entry
		for _, e := range entries {
			if e.Level == lv {
				of = append(of, e)
			}
		}
		if len(of) == 0 && lv == permission.LevelFlag {
			continue
		}
		fmt.Fprintf(tw, "%s rules (%d)\n", lv, len(of))
		if lv == permission.LevelBuiltin && len(of) > 0 {
			// Many, and all of one kind: named, not listed.
			var names []string
			for _, e := range of[:min(len(of), 12)] {
				names = append(names, strings.TrimPrefix(e.Rule.ID, "builtin:"))
			}
			fmt.Fprintf(tw, "  read-only commands, allowed in their read-only form (%s): %s, … (custom-agent policy list --level builtin lists them)\n",
				permission.BuiltinSource, strings.Join(names, ", "))
			continue
		}
		for _, e := range of {
			src := e.File
			if e.Line > 0 {
				src += ":" + strconv.Itoa(e.Line)
			}
			switch e.Level {
			case permission.LevelBuiltin:
				src = permission.BuiltinSource
			case permission.LevelSession:
				src = "this session (/permissions revoke " + e.Rule.ID + ")"
			}
			note := ""
			if e.Untrusted {
				note = " · untrusted: ignored"
				if e.Rule.Decision == permission.Ask {
					note = " · untrusted: counts as deny"
				}
			}
			fmt.Fprintf(tw, "  %s\t%s\t%s\t%s\t%s%s\n", termtext.Line(e.Rule.ID), e.Rule.Decision, termtext.Line(e.Rule.Tool),
				termtext.Line(matcherText(&e.Rule)), termtext.Line(src), note)
		}
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	prior := c.r.s.Approvals()
	fmt.Fprintf(c.info, "approved in this session, allowed again when identical (%d)\n", len(prior))
	for i, p := range prior {
		fmt.Fprintf(c.info, "  %d. %s %s · risk %s (/permissions unapprove %d)\n", i+1, termtext.Line(p.Tool), clip(string(p.Args), 160), p.Risk, i+1)
	}
	return nil
}

func (c *chat) log(ctx context.Context, _ []string) error {
	id := c.r.s.ID()
	n := 0
	for e, err := range c.r.rt.Store.Read(ctx, id, 1) {
		if err != nil {
			return err
		}
		if err := writeTimeline(c.info, e); err != nil {
			return err
		}
		n++
	}
	if n == 0 {
		fmt.Fprintf(c.info, "session %s has no events yet: it is recorded with its first turn\n", id)
		return nil
	}
	return warnUnverified(ctx, c.r.rt.Store, c.info, id)
}

func (c *chat) verify(ctx context.Context, _ []string) error {
	if !c.r.s.Started() {
		fmt.Fprintf(c.info, "session %s has no events yet: it is recorded with its first turn\n", c.r.s.ID())
		return nil
	}
	_, err := writeVerified(ctx, c.r.rt.Store, c.info, c.r.s.ID())
	return err
}

func (c *chat) newSession(ctx context.Context, _ []string) error {
	old := c.r.s
	if err := c.r.start(ctx, ""); err != nil {
		return err
	}
	if old.Started() {
		fmt.Fprintf(c.info, "new session; the last one was %s (custom-agent log %s)\n", old.ID(), old.ID())
	} else {
		fmt.Fprintln(c.info, "new session")
	}
	return nil
}
