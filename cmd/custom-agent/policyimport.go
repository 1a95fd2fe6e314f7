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
	"github.com/custom-agent/custom-agent/internal/termtext"
	"github.com/custom-agent/custom-agent/permission"
	"github.com/custom-agent/custom-agent/policy"
)

func newPolicyImportCmd(cwd *string) *cobra.Command {
	var level string
	var dryRun bool
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
importing again adds nothing twice.`,
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
			return runPolicyImport(cmd.OutOrStdout(), *cwd, lv, res, dryRun)
		},
	}
	cmd.Flags().StringVar(&level, "level", string(permission.LevelProject), "project or user")
	cmd.Flags().BoolVar(&dryRun, "dry-run", false, "print the rules and write nothing")
	return cmd
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

func runPolicyImport(out io.Writer, cwd string, lv permission.RuleLevel, res *ruleimport.Result, dryRun bool) error {
	if dryRun {
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
	} else {
		s, err := openPolicy(cwd, nil)
		if err != nil {
			return err
		}
		file := policy.UserFile(s.Env().ConfigHome)
		proj, trusted := s.Project()
		if lv == permission.LevelProject {
			file = proj.File
		}
		if allows := countAllows(res); allows > 0 && lv == permission.LevelProject && !trusted {
			// The agent's project settings come with the repository, as ours
			// do: an imported allow rule is trusted on its own.
			fmt.Fprintf(out, "note: %d allow rules are imported and trusted as you add them, though this project is not trusted: see them first with --dry-run, and remove any with custom-agent policy rm.\n", allows)
		}
		for _, r := range res.Rules {
			if err := s.Add(lv, r.Rule); err != nil {
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

func countAllows(res *ruleimport.Result) int {
	n := 0
	for _, r := range res.Rules {
		if r.Rule.Decision == permission.Allow {
			n++
		}
	}
	return n
}
