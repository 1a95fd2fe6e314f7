// Command custom-agent-gate is the permission gate of custom-agent alone,
// for hooks that ask it about every tool call of another agent: `check`
// (the same command, flags, output and exit statuses as custom-agent
// check, from app/checkcmd), `hook claude-code|gemini-cli` (those
// agents' hook formats, from app/hookcmd) and `version`. It links no
// model SDK, no MCP or ACP SDK, no event store, and no cobra or pflag (its
// command line is read by support/flagspec, from the flag definitions
// custom-agent's commands use too), so it starts in a few milliseconds;
// deps_test.go keeps it so.
package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/signal"
	"slices"
	"strings"
	"syscall"

	"github.com/custom-agent/custom-agent/app/checkcmd"
	"github.com/custom-agent/custom-agent/app/hookcmd"
	"github.com/custom-agent/custom-agent/hook"
	"github.com/custom-agent/custom-agent/support/buildinfo"
	"github.com/custom-agent/custom-agent/support/flagspec"
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	os.Exit(run(ctx, os.Args[1:], os.Stdin, os.Stdout, os.Stderr))
}

const prog = "custom-agent-gate"

const long = `custom-agent-gate decides tool calls as custom-agent's PermissionEngine does,
without the rest of custom-agent: no model, no event log, no MCP servers. It
starts in a few milliseconds, for a hook called before every tool call of
another agent.

  custom-agent-gate check …   is custom-agent check …: the same flags, the same
                              output byte for byte, the same exit statuses
  custom-agent-gate hook claude-code|gemini-cli
                              answers one Claude Code or Gemini CLI hook
                              event on standard input in that agent's format,
                              and records the decision (see docs/hooks.md)
  custom-agent-gate version   prints its version`

// run runs the command line args and returns the exit status: what
// custom-agent would exit with for the same check.
func run(ctx context.Context, args []string, stdin io.Reader, stdout, stderr io.Writer) int {
	err := dispatch(ctx, args, stdin, stdout, stderr)
	if err == nil {
		return 0
	}
	if ex, ok := errors.AsType[*checkcmd.ExitError](err); ok {
		if ex.Msg != "" {
			fmt.Fprintln(stderr, ex.Msg)
		}
		return ex.Code
	}
	fmt.Fprintln(stderr, "custom-agent:", err)
	return 2
}

// globals are the flags every command takes: custom-agent's global flag,
// accepted so that a command line written for custom-agent runs here
// unchanged.
type globals struct {
	dataDir string
	set     flagspec.Set
}

func newGlobals() *globals {
	g := &globals{}
	g.set.String(&g.dataDir, "data-dir", "", "where hook records its decisions (the hook journal); no call may read or write it")
	return g
}

// dispatch splits args at the command's name (the first argument that is
// neither a flag nor a global flag's value) and runs that command. As
// cobra does, the flags before the name are the command's: its own flag
// set reads them with the rest, so `--help=false hook claude-code` asks no
// help, and the last help flag of the line decides.
func dispatch(ctx context.Context, args []string, stdin io.Reader, stdout, stderr io.Writer) error {
	g := newGlobals()
	i := 0
	for i < len(args) && strings.HasPrefix(args[i], "-") && args[i] != "--" && args[i] != "-" {
		if args[i] == "--data-dir" {
			i++
		}
		i++
	}
	var root flagspec.Set
	var version bool
	root.Merge(&g.set)
	root.Bool(&version, "version", false, "version for "+prog)
	lead := slices.Clone(args[:min(i, len(args))])
	rest := slices.Clone(args[min(i, len(args)):])
	if len(rest) > 0 && rest[0] == "--" {
		rest = rest[1:]
	}
	if len(rest) == 0 || rest[0] == "help" {
		for j, a := range lead {
			if a == "-v" { // cobra's shorthand of --version
				lead[j] = "--version"
			}
		}
		extra, err := root.Parse(lead)
		switch {
		case errors.Is(err, flagspec.ErrHelp):
			return rootHelp(stdout, &root)
		case err != nil:
			return err
		case version:
			_, err := fmt.Fprintln(stdout, prog, buildinfo.Version())
			return err
		case len(rest) > 0:
			return runHelp(g, append(extra, rest[1:]...), stdout, &root)
		}
		return rootHelp(stdout, &root)
	}
	name, rest := rest[0], rest[1:]
	switch name {
	case "check":
		return runCheck(g, append(lead, rest...), stdin, stdout, stderr)
	case "hook":
		return runHook(ctx, g, lead, rest, stdin, stdout, stderr)
	case "version":
		var s flagspec.Set
		s.Merge(&g.set)
		extra, err := s.Parse(append(lead, rest...))
		switch {
		case errors.Is(err, flagspec.ErrHelp):
			return help(stdout, "Print the version of "+prog, prog+" version", "", nil, "version", &g.set)
		case err != nil:
			return err
		case len(extra) > 0:
			return fmt.Errorf("unknown command %q for %q", extra[0], prog+" version")
		}
		_, err = fmt.Fprintln(stdout, prog, buildinfo.Version())
		return err
	}
	return fmt.Errorf("unknown command %q for %q (its commands are check, hook and version; the others are custom-agent's)", name, prog)
}

func runCheck(g *globals, args []string, stdin io.Reader, stdout, stderr io.Writer) error {
	var o checkcmd.Options
	s := checkcmd.Flags(&o)
	s.Merge(&g.set)
	rest, err := s.Parse(args)
	if errors.Is(err, flagspec.ErrHelp) {
		return checkHelp(stdout, g)
	}
	if err != nil {
		return err
	}
	o.DataDir = g.dataDir
	return checkcmd.Exec(o, rest, s.Changed, stdin, stdout, stderr)
}

// runHook answers one hook event; lead are the flags given before
// "hook", args the words after it. It returns nil (exit status 0) in
// two ways only:
//   - help, when a help flag ends true as pflag reads it (-h, --help,
//     --help=true; never --help=false, --help=0 or -h=false, and -hx is
//     an error);
//   - hookcmd.Exec's answer to the event, which it records.
//
// Whatever else happens blocks the call (exit status 2, the reason on
// standard error): settings that name no agent, or one this build does
// not know, or a command line that does not parse, never print help and
// exit 0, which Claude Code reads as "go ahead" with nothing recorded.
// TestHookExitPaths runs every path.
func runHook(ctx context.Context, g *globals, lead, args []string, stdin io.Reader, stdout, stderr io.Writer) error {
	var a hook.Agent
	if len(args) > 0 {
		if p, err := hook.ParseAgent(args[0]); err == nil {
			a = p
		}
	}
	if a == "" {
		// No agent: only a help flag of hook itself shows hook's help.
		if len(args) == 0 || strings.HasPrefix(args[0], "-") {
			var s flagspec.Set
			s.Merge(&g.set)
			if _, err := s.Parse(append(slices.Clone(lead), args...)); errors.Is(err, flagspec.ErrHelp) {
				return hookHelp(stdout, g)
			}
		}
		return hookcmd.NoAgent(args)
	}
	var o hookcmd.Options
	s := hookcmd.Flags(a, &o)
	s.Merge(&g.set)
	rest, err := s.Parse(append(slices.Clone(lead), args[1:]...))
	switch {
	case errors.Is(err, flagspec.ErrHelp):
		return agentHelp(stdout, a, g)
	case err != nil:
		return err
	case len(rest) > 0:
		return fmt.Errorf("unknown command %q for %q", rest[0], prog+" hook "+string(a))
	}
	return hookcmd.Exec(ctx, a, o, g.dataDir, stdin, stdout, stderr)
}

func runHelp(g *globals, args []string, stdout io.Writer, root *flagspec.Set) error {
	if len(args) == 0 {
		return rootHelp(stdout, root)
	}
	switch args[0] {
	case "check":
		return checkHelp(stdout, g)
	case "hook":
		if len(args) > 1 {
			if a, err := hook.ParseAgent(args[1]); err == nil {
				return agentHelp(stdout, a, g)
			}
		}
		return hookHelp(stdout, g)
	case "version":
		return help(stdout, "Print the version of "+prog, prog+" version", "", nil, "version", &g.set)
	}
	return fmt.Errorf("unknown help topic %q (the commands are check, hook and version)", args[0])
}

func rootHelp(w io.Writer, root *flagspec.Set) error {
	return help(w, long, prog+" [command]", "", root, prog)
}

func checkHelp(w io.Writer, g *globals) error {
	var o checkcmd.Options
	ex := strings.ReplaceAll(checkcmd.Example, "custom-agent check", prog+" check")
	return help(w, checkcmd.Long, prog+" check [flags]", ex, checkcmd.Flags(&o), "check", &g.set)
}

func hookHelp(w io.Writer, g *globals) error {
	var b strings.Builder
	b.WriteString(hookcmd.Long + "\n\nAgents:")
	for _, a := range hook.Agents {
		fmt.Fprintf(&b, "\n  %-12s %s", a, hookcmd.AgentShort(a))
	}
	return help(w, b.String(), prog+" hook claude-code|gemini-cli [flags]", "", nil, "hook", &g.set)
}

func agentHelp(w io.Writer, a hook.Agent, g *globals) error {
	var o hookcmd.Options
	return help(w, hookcmd.AgentShort(a), prog+" hook "+string(a)+" [flags]", "", hookcmd.Flags(a, &o), string(a), &g.set)
}

// help writes a command's help as cobra lays it out: what it does, how it
// is called, examples, its flags and the global flags.
func help(w io.Writer, what, usage, example string, flags *flagspec.Set, name string, global ...*flagspec.Set) error {
	var b strings.Builder
	b.WriteString(what + "\n\nUsage:\n  " + usage + "\n")
	if example != "" {
		b.WriteString("\nExamples:\n" + example + "\n")
	}
	if flags == nil {
		flags = &flagspec.Set{}
	}
	b.WriteString("\nFlags:\n")
	_ = flags.PrintDefaults(&b, name)
	for _, g := range global {
		b.WriteString("\nGlobal Flags:\n")
		_ = g.PrintDefaults(&b, "")
	}
	_, err := io.WriteString(w, b.String())
	return err
}
