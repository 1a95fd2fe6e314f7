package main

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"slices"
	"strconv"
	"strings"
	"text/tabwriter"

	"github.com/spf13/cobra"

	"github.com/custom-agent/custom-agent/app/checkcmd"
	"github.com/custom-agent/custom-agent/app/gateconf"
	"github.com/custom-agent/custom-agent/permission"
	"github.com/custom-agent/custom-agent/policy"
)

// builtinRulesEnv turns the built-in rules off (gateconf.BuiltinRulesEnv).
const builtinRulesEnv = gateconf.BuiltinRulesEnv

// noBuiltinRulesUsage is the help of --no-builtin-rules.
const noBuiltinRulesUsage = gateconf.NoBuiltinRulesUsage

// openPolicy opens the policy store for cwd the way run and check do.
func openPolicy(cwd string, files []string) (*policy.Store, error) {
	return openPolicyIn(cwd, "", files...)
}

// openPolicyIn is openPolicy with the user's configuration (user policy,
// trusted projects) in configHome instead of the environment's, unless it
// is "". demo gives itself one, so that it changes nothing of the user's.
func openPolicyIn(cwd, configHome string, files ...string) (*policy.Store, error) {
	return openPolicyWith(cwd, configHome, false, files...)
}

// openPolicyWith is openPolicyIn that also leaves the built-in rules out
// when noBuiltin is set (--no-builtin-rules).
func openPolicyWith(cwd, configHome string, noBuiltin bool, files ...string) (*policy.Store, error) {
	return gateconf.OpenPolicy(cwd, configHome, noBuiltin, files...)
}

func newPolicyCmd(g *globalFlags) *cobra.Command {
	var cwd string
	cmd := &cobra.Command{
		Use:   "policy",
		Short: "List, add, remove, test and explain permission rules",
		Long: `Permission rules live at three levels (docs/reference/policy.md):
  user     $XDG_CONFIG_HOME/custom-agent/policy.json (default ~/.config/custom-agent/)
  project  .custom-agent/policy.json, the nearest from the working directory up to
           the repository root
  session  rules made by "allow for this session" answers, in memory

Among all matching rules of all levels deny beats ask beats allow. A project's
allow rules count only once you trust the project (custom-agent trust); until
then its ask rules count as deny.`,
		Args: cobra.NoArgs,
	}
	cmd.PersistentFlags().StringVar(&cwd, "cwd", "", "working directory whose project policy is used (default the current directory)")
	cmd.AddCommand(newPolicyListCmd(&cwd), newPolicyAddCmd(&cwd), newPolicyRmCmd(&cwd), newPolicyTestCmd(&cwd), newPolicyExplainCmd(&cwd, g), newPolicyImportCmd(&cwd))
	return cmd
}

func parseLevel(s string, allowed ...permission.RuleLevel) (permission.RuleLevel, error) {
	for _, l := range allowed {
		if string(l) == s {
			return l, nil
		}
	}
	names := make([]string, len(allowed))
	for i, l := range allowed {
		names[i] = string(l)
	}
	if s == string(permission.LevelSession) {
		return "", errors.New("session rules live inside one running session: answer \"allow for this session\" when run asks; here use --level project or --level user")
	}
	return "", fmt.Errorf("unknown level %q (want %s)", s, strings.Join(names, " or "))
}

func newPolicyListCmd(cwd *string) *cobra.Command {
	var level string
	var asJSON bool
	cmd := &cobra.Command{
		Use:   "list",
		Short: "List the rules of every level, with their files and trust",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			lv := permission.RuleLevel(level)
			switch lv {
			case "", permission.LevelSession, permission.LevelProject, permission.LevelUser, permission.LevelBuiltin:
			default:
				return fmt.Errorf("unknown level %q (want session, project, user or builtin)", level)
			}
			s, err := openPolicy(*cwd, nil)
			if err != nil {
				return err
			}
			entries := s.Entries(lv)
			out := cmd.OutOrStdout()
			if asJSON {
				if entries == nil {
					entries = []policy.Entry{}
				}
				enc := json.NewEncoder(out)
				enc.SetEscapeHTML(false)
				enc.SetIndent("", "  ")
				return enc.Encode(entries)
			}
			proj, trusted := s.Project()
			state := "not trusted"
			if trusted {
				state = "trusted"
			}
			fmt.Fprintf(out, "project %s (%s)\n", proj.Root, state)
			if len(entries) == 0 {
				_, err := fmt.Fprintln(out, "no rules")
				return err
			}
			tw := tabwriter.NewWriter(out, 0, 4, 2, ' ', 0)
			fmt.Fprintln(tw, "LEVEL\tID\tDECISION\tTOOL\tMATCHES\tFILE\tNOTE")
			for _, e := range entries {
				file, note := entryFileNote(e)
				fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\t%s\t%s\n", e.Level, e.Rule.ID, e.Rule.Decision, e.Rule.Tool, matcherText(&e.Rule), file, note)
			}
			return tw.Flush()
		},
	}
	cmd.Flags().StringVar(&level, "level", "", "only this level: session, project, user or builtin")
	cmd.Flags().BoolVar(&asJSON, "json", false, "print the rules as a JSON array")
	return cmd
}

// entryFileNote is where a rule comes from (file:line) and what its trust
// makes of it, as policy list and the web's policy page show them.
func entryFileNote(e policy.Entry) (file, note string) {
	file = e.File
	if e.Line > 0 {
		file += ":" + strconv.Itoa(e.Line)
	}
	if e.Untrusted {
		note = "untrusted: ignored"
		if e.Rule.Decision == permission.Ask {
			note = "untrusted: counts as deny"
		}
	}
	if e.Level == permission.LevelBuiltin {
		file, note = permission.BuiltinSource, "read-only form only: "+e.Rule.Comment
	}
	return file, note
}

// matcherText shows a rule's matchers in one cell.
func matcherText(r *policy.Rule) string {
	var parts []string
	if r.Command != "" {
		parts = append(parts, "command "+strconv.Quote(r.Command))
	}
	if r.Path != "" {
		parts = append(parts, "path "+r.Path)
	}
	if r.URL != "" {
		parts = append(parts, "url "+r.URL)
	}
	if len(r.Args) > 0 {
		b, _ := json.Marshal(r.Args)
		parts = append(parts, "args "+string(b))
	}
	if len(parts) == 0 {
		return "(every call)"
	}
	return strings.Join(parts, ", ")
}

func newPolicyAddCmd(cwd *string) *cobra.Command {
	var level, decision, id, comment string
	var session bool
	var r policy.Rule
	var args []string
	cmd := &cobra.Command{
		Use:   "add --level project|user --tool T [--command C | --path P | --url U | --arg k=glob] --decision allow|ask|deny",
		Short: "Add a rule to the project or user policy file",
		Long: `add writes one rule to the project policy (.custom-agent/policy.json) or the
user policy, checked as the files are. The write is atomic and made under a
lock, so concurrent writers lose nothing. A rule added to an untrusted project
is trusted on its own; the project's other allow rules still do not count.

Session rules cannot be added here: they live inside one running session and
are made by answering "allow for this session" when run asks.`,
		Example: `  custom-agent policy add --level project --tool shell --command "npm test" --decision allow
  custom-agent policy add --level user --tool shell --command "git push --force" --decision deny --comment "never"
  custom-agent policy add --level user --tool read_file --path "~/.aws/**" --decision deny`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if session {
				return errors.New("--session is meaningless here: session rules live inside one running session; answer \"allow for this session\" when run asks")
			}
			if level == "" {
				return errors.New("--level is required: project (this repository's .custom-agent/policy.json) or user (every project)")
			}
			lv, err := parseLevel(level, permission.LevelProject, permission.LevelUser)
			if err != nil {
				return err
			}
			if r.Tool == "" {
				return errors.New("--tool is required (a tool name such as shell, or a glob such as \"*\")")
			}
			if decision == "" {
				return errors.New("--decision is required: allow, ask or deny")
			}
			r.Decision = permission.Verdict(decision)
			if !r.Decision.Valid() {
				return fmt.Errorf("--decision %q: want allow, ask or deny", decision)
			}
			for _, a := range args {
				k, v, ok := strings.Cut(a, "=")
				if !ok || k == "" {
					return fmt.Errorf("--arg %q: want name=glob", a)
				}
				if r.Args == nil {
					r.Args = map[string]string{}
				}
				r.Args[k] = v
			}
			r.ID, r.Comment = id, comment
			if r.ID == "" {
				r.ID = policy.SuggestID(r)
			}
			s, err := openPolicy(*cwd, nil)
			if err != nil {
				return err
			}
			file := policy.UserFile(s.Env().ConfigHome)
			proj, trusted := s.Project()
			if lv == permission.LevelProject {
				file = proj.File
			}
			out, warn := cmd.OutOrStdout(), cmd.ErrOrStderr()
			same := sameID(s, r.ID)
			if err := s.Add(lv, r); err != nil {
				if errors.Is(err, policy.ErrExists) {
					return fmt.Errorf("%w\nthe %s policy already has a rule %q that matches differently: choose another id with --id, or remove that one first (custom-agent policy rm %s --level %s)", err, lv, r.ID, r.ID, lv)
				}
				return err
			}
			if slices.Contains(same, lv) {
				fmt.Fprintf(warn, "warning: the %s policy (%s) already has rule %q, the same as this one: nothing changed\n", lv, file, r.ID)
				return nil
			}
			fmt.Fprintf(out, "added rule %q (%s %s) to %s\n", r.ID, r.Decision, r.Tool, file)
			for _, other := range same {
				fmt.Fprintf(warn, "warning: the %s policy also has a rule %q: policy rm %s now needs --level, and decisions name the id of either\n", other, r.ID, r.ID)
			}
			if r.Decision == permission.Allow && !hasMatcher(&r) {
				fmt.Fprintf(warn, "warning: rule %q allows every call of %s: it names no %s, so it allows whatever arguments a model gives (destructive calls are still asked)\n", r.ID, r.Tool, missingMatcher(r.Tool))
			}
			if lv == permission.LevelProject && !trusted && r.Decision != permission.Deny {
				fmt.Fprintf(out, "the project is not trusted: this rule is trusted on its own, the file's other allow rules still do not count\n")
			}
			return nil
		},
	}
	f := cmd.Flags()
	f.StringVar(&level, "level", "", "project or user (required)")
	f.StringVar(&r.Tool, "tool", "", "tool name or glob, e.g. shell, read_file, mcp__github__*")
	f.StringVar(&r.Command, "command", "", "shell command prefix, whole words, e.g. \"npm test\"")
	f.StringVar(&r.Path, "path", "", "path glob: /abs/**, ~/rel/**, or relative to the working directory")
	f.StringVar(&r.URL, "url", "", "URL pattern [scheme://]host[:port][/path-glob]")
	f.StringArrayVar(&args, "arg", nil, "argument glob name=glob (repeatable)")
	f.StringVar(&decision, "decision", "", "allow, ask or deny (required)")
	f.StringVar(&id, "id", "", "rule id (default made from the tool and matcher)")
	f.StringVar(&comment, "comment", "", "why the rule exists, for people")
	f.BoolVar(&session, "session", false, "not supported: see above")
	_ = f.MarkHidden("session")
	return cmd
}

// sameID returns the file levels whose policy holds a rule with this id.
func sameID(s *policy.Store, id string) []permission.RuleLevel {
	var levels []permission.RuleLevel
	for _, lv := range []permission.RuleLevel{permission.LevelProject, permission.LevelUser} {
		for _, e := range s.Entries(lv) {
			if e.Rule.ID == id {
				levels = append(levels, lv)
				break
			}
		}
	}
	return levels
}

func hasMatcher(r *policy.Rule) bool {
	return r.Command != "" || r.Path != "" || r.URL != "" || len(r.Args) > 0
}

// missingMatcher names the flag that would narrow a rule for tool: the
// matcher its arguments are judged by.
func missingMatcher(tool string) string {
	t, ok := permission.Builtin(tool)
	switch {
	case !ok:
		return "--command, --path, --url or --arg"
	case t.CommandArg != "":
		return "--command (e.g. --command \"npm test\")"
	case t.URLArg != "":
		return "--url (e.g. --url api.github.com/repos/**)"
	case len(t.PathArgs) > 0 || t.PatchArg != "":
		return "--path (e.g. --path \"src/**\")"
	}
	return "--arg name=glob"
}

func newPolicyRmCmd(cwd *string) *cobra.Command {
	var level string
	cmd := &cobra.Command{
		Use:   "rm ID",
		Short: "Remove a rule from the project or user policy file",
		Args:  cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, a []string) error {
			var lv permission.RuleLevel
			if level != "" {
				var err error
				if lv, err = parseLevel(level, permission.LevelProject, permission.LevelUser); err != nil {
					return err
				}
			}
			s, err := openPolicy(*cwd, nil)
			if err != nil {
				return err
			}
			if err := s.Remove(lv, a[0]); err != nil {
				return err
			}
			_, err = fmt.Fprintf(cmd.OutOrStdout(), "removed rule %q\n", a[0])
			return err
		},
	}
	cmd.Flags().StringVar(&level, "level", "", "project or user (needed when both hold the id)")
	return cmd
}

func newPolicyTestCmd(cwd *string) *cobra.Command {
	var asJSON bool
	var files []string
	cmd := &cobra.Command{
		Use:   "test",
		Short: "Run every rule's examples and lint the rules",
		Long: `test loads the user and project policy files (and --policy files), runs every
rule's examples, and warns about rules that are shadowed by a rule that decides
first, allow rules made dead by a stricter rule, rules that can never match, and
rules of an untrusted project that do not count as written.

The exit status is 1 when a file does not load or an example fails; warnings
alone exit 0.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			o, err := gateconf.PolicyOptions(*cwd, files)
			if err != nil {
				return err
			}
			fs, err := policy.Test(o)
			if err != nil {
				return err
			}
			out := cmd.OutOrStdout()
			failed := 0
			for _, f := range fs {
				if f.Severity == policy.SevError {
					failed++
				}
			}
			if asJSON {
				if fs == nil {
					fs = []policy.Finding{}
				}
				enc := json.NewEncoder(out)
				enc.SetEscapeHTML(false)
				if err := enc.Encode(fs); err != nil {
					return err
				}
			} else {
				for _, f := range fs {
					fmt.Fprintln(out, f)
				}
				fmt.Fprintf(out, "%d error(s), %d warning(s)\n", failed, len(fs)-failed)
			}
			if failed > 0 {
				return &exitError{code: 1}
			}
			return nil
		},
	}
	cmd.Flags().BoolVar(&asJSON, "json", false, "print the findings as a JSON array")
	cmd.Flags().StringArrayVar(&files, "policy", nil, "an extra policy file to test (repeatable)")
	return cmd
}

func newPolicyExplainCmd(cwd *string, g *globalFlags) *cobra.Command {
	var o checkcmd.Options
	var asJSON bool
	cmd := &cobra.Command{
		Use:   "explain --tool T --args JSON",
		Short: "Explain a decision step by step, with every rule considered",
		Example: `  custom-agent policy explain --tool shell --args '{"command":"npm test && rm -rf dist"}'
  custom-agent policy explain --tool read_file --args '{"path":"~/.ssh/id_rsa"}' --json`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if o.Tool == "" {
				return errors.New("--tool is required")
			}
			// The data dir as check takes it (--data-dir, else the
			// environment's, else the default): its files are the
			// agent's own, denied to the model.
			o.Cwd, o.DataDir = *cwd, g.dataDir
			return explainCall(cmd.OutOrStdout(), o, asJSON)
		},
	}
	f := cmd.Flags()
	f.StringVar(&o.Tool, "tool", "", "name of the tool called")
	f.StringVar(&o.Args, "args", "{}", "the call's arguments as a JSON object")
	addModeFlag(f, &o.Mode)
	f.StringArrayVar(&o.Policies, "policy", nil, "an extra policy file (repeatable)")
	f.BoolVar(&o.NoBuiltin, "no-builtin-rules", false, noBuiltinRulesUsage)
	f.BoolVar(&asJSON, "json", false, "print the explanation as JSON")
	return cmd
}

// explainCall writes what policy explain prints for the call o names.
func explainCall(w io.Writer, o checkcmd.Options, asJSON bool) error {
	c, err := checkcmd.NewChecker(o)
	if err != nil {
		return err
	}
	req, err := c.Request(checkcmd.Line{Tool: o.Tool, Args: json.RawMessage(o.Args)})
	if err != nil {
		return err
	}
	x := permission.Explain(req)
	var ignored []string
	if !x.Decision.Allowed() {
		ignored = c.IgnoredWould(req)
		if len(ignored) > 0 {
			x.Decision.Reason += " " + checkcmd.IgnoredNote(ignored, c.IgnoredRoot())
		}
	}
	if asJSON {
		enc := json.NewEncoder(w)
		enc.SetEscapeHTML(false)
		enc.SetIndent("", "  ")
		return enc.Encode(x)
	}
	return writeExplanation(w, &req, &x, ignored, c.IgnoredRoot())
}

// writeExplanation prints the decision tree of Engine.Check, step by step.
func writeExplanation(w io.Writer, req *permission.Request, x *permission.Explanation, ignored []string, root string) error {
	d := &x.Decision
	args, _ := permission.CanonicalArgs(req.Args)
	p := func(format string, a ...any) { fmt.Fprintf(w, format+"\n", a...) }
	p("call: %s %s", req.Tool.Name, args)
	p("  in %s, mode %s", req.Cwd, modeName(req.Mode))
	p("")
	p("1. risk: %s (base %s)", d.RiskAtDecision, req.Tool.Risk)
	for _, f := range d.Findings {
		text := ""
		if f.Text != "" {
			text = " `" + f.Text + "`"
		}
		p("   - %s, %s%s: %s", f.Risk, f.Arg, text, f.Why)
	}
	for _, c := range x.Commands {
		dyn := ""
		if c.Dynamic {
			dyn = " (words known only at run time)"
		}
		p("   command: %s%s", strings.Join(c.Argv, " "), dyn)
	}
	for _, pa := range x.Paths {
		line := "   path " + pa.Arg + ": " + pa.Raw
		if pa.Canonical != "" && pa.Canonical != pa.Raw {
			line += " = " + pa.Canonical
		}
		if pa.Resolved != "" && pa.Resolved != pa.Canonical {
			line += " -> " + pa.Resolved
		}
		var tags []string
		for _, t := range []struct {
			on   bool
			name string
		}{{pa.Write, "write"}, {pa.Recursive, "recursive"}, {pa.Glob, "glob"}, {pa.MustBeNamed, "an allow rule must name it"}} {
			if t.on {
				tags = append(tags, t.name)
			}
		}
		if len(tags) > 0 {
			line += " (" + strings.Join(tags, ", ") + ")"
		}
		p("%s", line)
	}
	if x.URL != "" {
		p("   url: %s", x.URL)
	}
	if x.Opaque {
		p("   opaque: the call cannot be judged statically; no allow rule may allow it")
	}
	step := func(n int, from permission.Source, what string) {
		mark := ""
		if d.SourcedFrom == from {
			mark = "  <- decides"
		}
		p("%d. %s%s", n, what, mark)
	}
	step(2, permission.FromSkill, "skill: no skill is active")
	step(3, permission.FromMode, "mode: "+modeStep(req.Mode))
	others := 0
	mark := ""
	if d.SourcedFrom == permission.FromOverride {
		mark = "  <- decides"
	}
	p("4. rules: %d in the policy%s", len(x.Rules), mark)
	quietBuiltin := 0
	for _, t := range x.Rules {
		if t.Outcome == permission.OutcomeOtherTool {
			others++
			continue
		}
		if t.Rule.Level == permission.LevelBuiltin && t.Outcome == permission.OutcomeNoMatch {
			quietBuiltin++ // the built-in rules for other commands
			continue
		}
		where := string(t.Rule.Level)
		if t.Rule.Source != "" {
			where += ", " + t.Rule.Source
		}
		res := string(t.Outcome)
		if t.Decides {
			res += ", decides"
		}
		if t.Why != "" {
			res += ": " + t.Why
		}
		p("   - %q (%s %s; %s): %s", t.Rule.ID, t.Rule.Decision, t.Tool, where, res)
	}
	if others > 0 {
		p("   (%d rule(s) are for other tools)", others)
	}
	if quietBuiltin > 0 {
		p("   (%d built-in rule(s) are for other read-only commands; policy list --level builtin lists them)", quietBuiltin)
	}
	for _, id := range ignored {
		p("   - %q (allow, project): ignored: it would allow this call, but the project is not trusted (custom-agent trust %s)", id, root)
	}
	step(5, permission.FromPrior, "prior approvals: none (a fresh session)")
	step(6, permission.FromDefault, "default table: read allow; write, execute, network ask; credential deny; destructive ask")
	p("")
	p("decision: %s (from %s)", d.Decision, d.SourcedFrom)
	p("reason: %s", d.Reason)
	return nil
}

func modeName(m permission.Mode) string {
	if m == "" {
		return string(permission.ModeDefault)
	}
	return string(m)
}
