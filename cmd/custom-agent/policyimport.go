package main

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"

	"github.com/spf13/cobra"

	"github.com/custom-agent/custom-agent/hook"
	"github.com/custom-agent/custom-agent/hook/ruleimport"
	"github.com/custom-agent/custom-agent/hook/settings"
	"github.com/custom-agent/custom-agent/permission"
	"github.com/custom-agent/custom-agent/policy"
	"github.com/custom-agent/custom-agent/support/termtext"
)

func newPolicyImportCmd(cwd *string) *cobra.Command {
	var level string
	var dryRun, trust bool
	cmd := &cobra.Command{
		Use:   "import claude-code|gemini-cli [FILE]",
		Short: "Translate Claude Code's or Gemini CLI's permission rules into custom-agent rules",
		Long: `import reads the permission rules of Claude Code (permissions.allow, ask and
deny of a settings.json) or Gemini CLI (tools.allowed and tools.exclude) and
adds them, translated, to the project policy (--level project, the default)
or the user policy (--level user). FILE defaults to the project's
.claude/settings.json, or .gemini/settings.json and the policy-engine files
in .gemini/policies/*.toml; a FILE ending in .toml is read as a Gemini CLI
policy-engine file ([[rule]] tables: toolName, mcpName, commandPrefix,
decision; priorities are dropped, since among custom-agent's rules the
strictest decides).

An allow is never widened: one custom-agent cannot express exactly or more
narrowly is left out. A deny or ask that can only be expressed more broadly
is translated broadly, with a note. Every rule left out is listed with why.
--dry-run prints the rules that would be added, as a policy file, and the
rules left out, and writes nothing. Each rule's id names its origin, so
importing again adds nothing twice.

With --level user, FILE must be named and must not lie inside the current
project (the user's own ~/.claude/settings.json or ~/.gemini/settings.json
is fine): a repository's settings come with the repository, and importing
them as user rules would make its allow rules global.

In a project that is not trusted (custom-agent trust), the imported allow
and ask rules are written to the project policy but not trusted: like the
file's other rules they count once the project is trusted. --trust trusts
these rules on their own; they are listed first.`,
		Example: `  custom-agent policy import claude-code --dry-run
  custom-agent policy import claude-code ~/.claude/settings.json --level user
  custom-agent policy import gemini-cli`,
		Args: cobra.RangeArgs(1, 2),
		RunE: func(cmd *cobra.Command, args []string) error {
			a, err := hook.ParseAgent(args[0])
			if err != nil {
				return err
			}
			lv, err := parseLevel(level, permission.LevelProject, permission.LevelUser)
			if err != nil {
				return err
			}
			dir := *cwd
			if dir == "" {
				if dir, err = os.Getwd(); err != nil {
					return err
				}
			}
			root := repoRoot(dir)
			files := []string{settings.Path(a, settings.Project, root, "")}
			if lv == permission.LevelUser {
				if err := userImportFile(a, args[1:], root); err != nil {
					return err
				}
			}
			if len(args) == 2 {
				files = []string{args[1]}
			} else if a == hook.GeminiCLI {
				// The project's policy-engine files, beside its settings.
				tomls, _ := filepath.Glob(filepath.Join(root, ".gemini", "policies", "*.toml"))
				files = append(files, tomls...)
			}
			res := &ruleimport.Result{}
			for _, file := range files {
				r, err := translateFile(a, file)
				if err != nil {
					return err
				}
				res.Merge(r)
			}
			return runPolicyImport(cmd.OutOrStdout(), *cwd, lv, res, importOptions{dryRun: dryRun, trust: trust})
		},
	}
	cmd.Flags().StringVar(&level, "level", string(permission.LevelProject), "project or user")
	cmd.Flags().BoolVar(&dryRun, "dry-run", false, "print the rules and write nothing")
	cmd.Flags().BoolVar(&trust, "trust", false, "trust the imported allow and ask rules of a project that is not trusted")
	return cmd
}

// userImportFile checks the FILE of an import at the user level: it must
// be named, and must not lie inside the project (the repository holding
// the working directory), whose files come with the repository. The
// user's own settings file of the agent is always fine.
func userImportFile(a hook.Agent, args []string, root string) error {
	if len(args) == 0 {
		return fmt.Errorf("--level user needs the settings FILE to import (e.g. ~/%s): the default, the project's %s, comes with the repository, and its allow rules would become global",
			userSettingsName(a), filepath.Join(filepath.Base(filepath.Dir(settings.Path(a, settings.Project, "/", ""))), "settings.json"))
	}
	file, err := realPath(args[0])
	if err != nil {
		return err
	}
	if home, err := os.UserHomeDir(); err == nil {
		if own, err := realPath(settings.Path(a, settings.User, "", home)); err == nil && own == file {
			return nil
		}
	}
	proj, err := realPath(settings.Path(a, settings.Project, root, ""))
	if err != nil {
		return err
	}
	_, gitErr := os.Lstat(filepath.Join(root, ".git"))
	r, err := realPath(root)
	if err != nil {
		return err
	}
	if file == proj || gitErr == nil && (file == r || strings.HasPrefix(file, strings.TrimSuffix(r, "/")+"/")) {
		return fmt.Errorf("--level user will not import %s: it lies inside the project %s, whose files come with the repository, and its allow rules would become global; import it at --level project, or copy the rules you trust into your own settings", args[0], root)
	}
	return nil
}

func userSettingsName(a hook.Agent) string {
	return filepath.Join(filepath.Base(filepath.Dir(settings.Path(a, settings.User, "", "/"))), "settings.json")
}

// realPath is path absolute and with its symbolic links resolved, as far
// as they exist (a missing file is resolved through its directory).
func realPath(path string) (string, error) {
	abs, err := filepath.Abs(path)
	if err != nil {
		return "", err
	}
	if r, err := filepath.EvalSymlinks(abs); err == nil {
		return r, nil
	}
	if d, err := filepath.EvalSymlinks(filepath.Dir(abs)); err == nil {
		return filepath.Join(d, filepath.Base(abs)), nil
	}
	return abs, nil
}

// importOptions are import's flags that change what is written.
type importOptions struct {
	dryRun bool
	// trust trusts the imported allow and ask rules of a project that is
	// not trusted.
	trust bool
}

// translateFile translates one file of the agent's rules: a settings.json,
// or for Gemini CLI a policy-engine file (.toml).
func translateFile(a hook.Agent, file string) (*ruleimport.Result, error) {
	abs, err := filepath.Abs(file)
	if err != nil {
		return nil, err
	}
	b, err := os.ReadFile(abs)
	if err != nil {
		return nil, fmt.Errorf("reading %s's rules: %w", a, err)
	}
	var res *ruleimport.Result
	if a == hook.GeminiCLI && strings.HasSuffix(abs, ".toml") {
		res, err = ruleimport.TranslateGeminiPolicy(b, filepath.Base(abs))
	} else {
		res, err = ruleimport.Translate(a, b, ruleimport.Options{SettingsDir: filepath.Dir(abs)})
	}
	if err != nil {
		return nil, fmt.Errorf("%s: %w", abs, err)
	}
	return res, nil
}

func runPolicyImport(out io.Writer, cwd string, lv permission.RuleLevel, res *ruleimport.Result, o importOptions) error {
	s, err := openPolicy(cwd, nil)
	if err != nil {
		return err
	}
	proj, trusted := s.Project()
	// The rules a project that is not trusted would trust on their own:
	// allow and ask rules (an ask can turn a deny into a question).
	var loosening []ruleimport.Translated
	if lv == permission.LevelProject && !trusted {
		for _, r := range res.Rules {
			if r.Rule.Decision != permission.Deny {
				loosening = append(loosening, r)
			}
		}
	}
	if o.dryRun {
		rules := make([]policy.Rule, 0, len(res.Rules))
		for _, r := range res.Rules {
			rules = append(rules, r.Rule)
		}
		b, err := json.MarshalIndent(struct {
			Version int           `json:"version"`
			Rules   []policy.Rule `json:"rules"`
		}{1, rules}, "", "  ")
		if err != nil {
			return err
		}
		fmt.Fprintf(out, "%s\n", b)
		if len(loosening) > 0 {
			how := "would be written untrusted: they count only once you trust the project (custom-agent trust); --trust would trust them on their own"
			if o.trust {
				how = "would be trusted on their own (--trust), though this project is not trusted"
			}
			listLoosening(out, loosening, how)
		}
	} else {
		file := policy.UserFile(s.Env().ConfigHome)
		if lv == permission.LevelProject {
			file = proj.File
		}
		if len(loosening) > 0 {
			how := "are written untrusted, since this project is not trusted: they count only once you trust it (custom-agent trust), or import again with --trust to trust them on their own"
			if o.trust {
				how = "are trusted on their own (--trust), though this project is not trusted"
			}
			listLoosening(out, loosening, how)
		}
		for _, r := range res.Rules {
			add := s.Add
			if len(loosening) > 0 && !o.trust {
				add = s.AddUntrusted
			}
			if err := add(lv, r.Rule); err != nil {
				if errors.Is(err, policy.ErrExists) {
					return fmt.Errorf("%w (the %s policy has a rule %q that matches differently; remove it to import this one)", err, lv, r.Rule.ID)
				}
				return fmt.Errorf("adding %s: %w", r.From, err)
			}
		}
		fmt.Fprintf(out, "%d rules added to %s (rules already there unchanged).\n", len(res.Rules), termtext.Line(file))
	}
	for _, r := range res.Rules {
		if r.Note != "" {
			fmt.Fprintf(out, "note: %s: %s\n", termtext.Line(r.From), termtext.Line(r.Note))
		}
	}
	if len(res.Skipped) > 0 {
		fmt.Fprintf(out, "%d rules not imported:\n", len(res.Skipped))
	}
	for _, r := range res.Skipped {
		fmt.Fprintf(out, "  %s: %s\n", termtext.Line(r.From), termtext.Line(r.Why))
	}
	return nil
}

// listLoosening prints the allow and ask rules of a project that is not
// trusted, and what becomes of them.
func listLoosening(out io.Writer, rules []ruleimport.Translated, how string) {
	fmt.Fprintf(out, "%d allow and ask rules %s:\n", len(rules), how)
	for _, r := range rules {
		fmt.Fprintf(out, "  %s %s\n", r.Rule.Decision, termtext.Line(r.From))
	}
}
