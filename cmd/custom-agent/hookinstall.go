package main

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"strings"

	"github.com/spf13/cobra"

	"github.com/custom-agent/custom-agent/hook"
	"github.com/custom-agent/custom-agent/hook/settings"
	"github.com/custom-agent/custom-agent/support/termtext"
)

// hookInstallFlags are install's and uninstall's flags.
type hookInstallFlags struct {
	project, user, dryRun bool
	command               string
}

func newHookInstallCmd(install bool) *cobra.Command {
	var f hookInstallFlags
	use, short := "install", "Add custom-agent's hook to Claude Code's or Gemini CLI's settings"
	if !install {
		use, short = "uninstall", "Take custom-agent's hook out of Claude Code's or Gemini CLI's settings"
	}
	cmd := &cobra.Command{
		Use:   use + " claude-code|gemini-cli",
		Short: short,
		Long: short + `: the project's settings file
(.claude/settings.json or .gemini/settings.json at the repository root, else
the current directory) with --project, the default, or the user's
(~/.claude/settings.json, ~/.gemini/settings.json) with --user.

The change is shown before the file is written (--dry-run shows it only).
Every other key and every other hook is kept; uninstall takes out only the
hooks whose command runs custom-agent's hook for that agent.

install adds the hook to the agent's before and after tool events
(PreToolUse and PostToolUse; BeforeTool and AfterTool) for every tool. The
command is custom-agent-gate hook <agent>, with custom-agent-gate found
beside this program or on PATH, else this program's hook command; --command
sets another (it must run custom-agent's hook for that agent).`,
		Example: `  custom-agent hook install claude-code
  custom-agent hook install gemini-cli --user --dry-run
  custom-agent hook uninstall claude-code --user`,
		Args:      cobra.ExactArgs(1),
		ValidArgs: []string{string(hook.ClaudeCode), string(hook.GeminiCLI)},
		RunE: func(cmd *cobra.Command, args []string) error {
			a, err := hook.ParseAgent(args[0])
			if err != nil {
				return err
			}
			return runHookInstall(cmd.OutOrStdout(), a, install, f)
		},
	}
	fl := cmd.Flags()
	fl.BoolVar(&f.project, "project", false, "the project's settings file (the default)")
	fl.BoolVar(&f.user, "user", false, "the user's settings file")
	fl.BoolVar(&f.dryRun, "dry-run", false, "show the change and write nothing")
	cmd.MarkFlagsMutuallyExclusive("project", "user")
	if install {
		fl.StringVar(&f.command, "command", "", "the hook's command (default custom-agent-gate hook <agent>)")
	}
	return cmd
}

func runHookInstall(out io.Writer, a hook.Agent, install bool, f hookInstallFlags) error {
	scope := settings.Project
	if f.user {
		scope = settings.User
	}
	home, err := os.UserHomeDir()
	if err != nil && scope == settings.User {
		return fmt.Errorf("finding the user's settings: %w", err)
	}
	wd, err := os.Getwd()
	if err != nil {
		return err
	}
	path := settings.Path(a, scope, repoRoot(wd), home)
	before, err := os.ReadFile(path)
	if err != nil && !errors.Is(err, fs.ErrNotExist) {
		return err
	}
	var after []byte
	if install {
		command := f.command
		if command == "" {
			if command, err = hookCommand(a); err != nil {
				return err
			}
		}
		if after, err = settings.Install(before, a, command); err != nil {
			return fmt.Errorf("%s: %w", path, err)
		}
	} else {
		n := 0
		if after, n, err = settings.Uninstall(before, a); err != nil {
			return fmt.Errorf("%s: %w", path, err)
		}
		if n == 0 {
			_, err := fmt.Fprintf(out, "%s holds no hook of custom-agent's for %s; nothing to change.\n", termtext.Line(path), a)
			return err
		}
	}
	if string(after) == string(before) {
		_, err := fmt.Fprintf(out, "%s already runs custom-agent's hook for %s; nothing to change.\n", termtext.Line(path), a)
		return err
	}
	verb := "will change"
	if f.dryRun {
		verb = "would change"
	}
	// The diff is against the settings as they will be formatted, so that
	// it shows what changes, not the indentation.
	shown, reformatted := settings.Formatted(before)
	fmt.Fprintf(out, "custom-agent %s %s:\n%s", verb, termtext.Line(path), termtext.Escape(settings.Diff(shown, after)))
	if reformatted {
		fmt.Fprintln(out, "(the rest of the file is rewritten with two-space indentation, as the agent writes it; no other value changes)")
	}
	var off error
	if install {
		off = hooksOff(out, a, path, after, home, f)
	}
	if f.dryRun {
		return off
	}
	if err := writeFileAtomic(path, after); err != nil {
		return err
	}
	fmt.Fprintf(out, "Wrote %s.\n", termtext.Line(path))
	if install && a == hook.GeminiCLI && off == nil {
		fmt.Fprintln(out, "Gemini CLI runs hooks only where they are enabled; /hooks in Gemini CLI lists the hooks it runs.")
	}
	return off
}

// hooksOff checks the settings just made (and the user's, which apply
// over a project's) for a key that turns every hook off: then the hook
// will not run, which is said loudly, and install fails rather than
// report success.
func hooksOff(out io.Writer, a hook.Agent, path string, after []byte, home string, f hookInstallFlags) error {
	command := f.command
	if command == "" {
		command, _ = hookCommand(a)
	}
	paths, files := []string{path}, [][]byte{after}
	if home != "" {
		if user := settings.Path(a, settings.User, "", home); user != path {
			if b, err := os.ReadFile(user); err == nil {
				paths, files = append(paths, user), append(files, b)
			}
		}
	}
	for i, p := range paths {
		if why := settings.Disabled(a, files[i], command); why != "" {
			fmt.Fprintf(out, "WARNING: in %s, %s: %s will NOT run custom-agent's hook until that is changed.\n", termtext.Line(p), why, a)
			return &exitError{code: 1, err: errors.New("hooks are turned off"), msg: fmt.Sprintf(
				"custom-agent: the hook is in %s but will not run: in %s, %s (change that setting to turn hooks on)", path, p, why)}
		}
	}
	return nil
}

// repoRoot is the repository holding dir (the first directory upwards with
// a .git entry), else dir: where the agents keep a project's settings.
func repoRoot(dir string) string {
	for d := dir; ; d = filepath.Dir(d) {
		if _, err := os.Lstat(filepath.Join(d, ".git")); err == nil {
			return d
		}
		if filepath.Dir(d) == d {
			return dir
		}
	}
}

// hookCommand is the command the agent is to run: custom-agent-gate beside
// this program or on PATH (it starts in milliseconds), else this program.
func hookCommand(a hook.Agent) (string, error) {
	self, err := os.Executable()
	if err != nil {
		return "", err
	}
	prog := self
	if p := filepath.Join(filepath.Dir(self), "custom-agent-gate"); isExecutable(p) {
		prog = p
	} else if p, err := exec.LookPath("custom-agent-gate"); err == nil {
		if abs, err := filepath.Abs(p); err == nil {
			prog = abs
		}
	}
	return shellQuote(prog) + " hook " + string(a), nil
}

func isExecutable(p string) bool {
	fi, err := os.Stat(p)
	return err == nil && fi.Mode().IsRegular() && fi.Mode()&0o111 != 0
}

// shellQuote quotes s for a POSIX shell when it needs it.
func shellQuote(s string) string {
	if s != "" && strings.Trim(s, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789/._-+") == "" {
		return s
	}
	return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'"
}

// writeFileAtomic replaces path with b (its mode kept, 0644 when new):
// a reader sees the old file or the new, never half of one.
func writeFileAtomic(path string, b []byte) error {
	mode := fs.FileMode(0o644)
	if fi, err := os.Stat(path); err == nil {
		mode = fi.Mode().Perm()
	}
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		return err
	}
	f, err := os.CreateTemp(filepath.Dir(path), ".settings-*.json")
	if err != nil {
		return err
	}
	_, werr := f.Write(b)
	if werr == nil {
		werr = f.Chmod(mode)
	}
	if werr == nil {
		werr = f.Sync()
	}
	if cerr := f.Close(); werr == nil {
		werr = cerr
	}
	if werr == nil {
		werr = os.Rename(f.Name(), path)
	}
	if werr != nil {
		os.Remove(f.Name())
		return fmt.Errorf("writing %s: %w", path, werr)
	}
	return nil
}
