// Package checkcmd is the check command: it decides tool calls as a fresh
// session would, one from flags or one per line of standard input
// (--jsonl), and prints each decision. custom-agent and the small
// custom-agent-gate binary both offer it from here, so their output is the
// same byte for byte; it links no model, store or protocol SDK.
package checkcmd

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strconv"
	"strings"

	"golang.org/x/text/width"

	"github.com/custom-agent/custom-agent/app/gateconf"
	"github.com/custom-agent/custom-agent/config"
	"github.com/custom-agent/custom-agent/permission"
	"github.com/custom-agent/custom-agent/permission/risk"
	"github.com/custom-agent/custom-agent/policy"
	"github.com/custom-agent/custom-agent/skill/toolinfo"
	"github.com/custom-agent/custom-agent/support/datadir"
	"github.com/custom-agent/custom-agent/support/flagspec"
	"github.com/custom-agent/custom-agent/support/resolve"
	"github.com/custom-agent/custom-agent/support/termtext"
)

// Options are check's flags.
type Options struct {
	Tool     string
	Args     string
	Cwd      string
	Mode     string
	Policies []string
	JSONL    bool
	JSON     bool
	// NoBuiltin leaves the built-in rules out (--no-builtin-rules).
	NoBuiltin bool
	// ModeSet: --mode was given, so it beats the configuration's mode.
	ModeSet bool
	// Warn receives the configuration's warnings; nil drops them.
	Warn io.Writer
	// DataDir is --data-dir ("" is the environment's or the default):
	// the engine is told where custom-agent's data is, so that a read of
	// its event log or serve's token there is judged a credential read.
	DataDir string
	// Getenv reads the environment for the data directory; nil is
	// os.Getenv.
	Getenv func(string) string
}

// ExitError is an error whose exit status is the answer: 1 when a request
// could not be decided. Msg, when not empty, is what to print on standard
// error, whole; an empty Msg means the output already said it.
type ExitError struct {
	Code int
	Msg  string
}

func (e *ExitError) Error() string { return e.Msg }

// Short and Long are check's help; Example its examples. custom-agent
// and custom-agent-gate both show them.
const (
	Short = "Decide a tool call as a fresh session would, and print the decision"
	Long  = `check runs the PermissionEngine on one tool call and prints its decision:
allow, ask or deny, the risk it was judged at, where the decision came from,
the reason, and the findings that raised the risk, each with the part of the
argument it is about underlined. With --json it prints the decision as one
JSON object instead (the fields of docs/reference/event-schema.md's
permission events: decision, reason, riskAtDecision, sourcedFrom, findings,
rule).

With --jsonl it reads one request per line from standard input,
  {"tool": "shell", "args": {"command": "npm test"}, "cwd": "/abs/dir"}
and prints one decision per line in the same order. A line that cannot be
decided prints {"error": "..."} and the rest go on; the exit status is then 1.

The rules are those run uses: the user policy, the project policy found from
--cwd (its allow rules only if the project is trusted), and any --policy files.
A policy file that does not load stops check with its file, line and column.
The configuration files are read as run reads them: their mode (unless --mode)
and builtinRules apply.

Paths need not exist. Symbolic links in the paths a call touches are resolved
the way the executor resolves them. HOME and XDG_CONFIG_HOME come from the
environment.`
	Example = `  custom-agent check --tool read_file --args '{"path":"~/.ssh/id_rsa"}'
  custom-agent check --tool shell --args '{"command":"rm -rf dist"}' --policy team.json
  custom-agent check --json --tool shell --args '{"command":"npm test"}' | jq -r .decision
  printf '%s\n' '{"tool":"shell","args":{"command":"ls"}}' | custom-agent check --jsonl`
)

// Flags defines check's flags, which set o.
func Flags(o *Options) *flagspec.Set {
	var f flagspec.Set
	f.String(&o.Tool, "tool", "", "name of the tool called, e.g. read_file or shell")
	f.String(&o.Args, "args", "{}", "the call's arguments as a JSON object")
	f.String(&o.Cwd, "cwd", "", "the session's working directory (default the current directory)")
	gateconf.AddModeFlag(&f, &o.Mode)
	f.StringArray(&o.Policies, "policy", `a policy file {"version":1,"rules":[...]} (repeatable)`)
	f.Bool(&o.JSONL, "jsonl", false, "read one request per line from standard input, print one JSON decision per line")
	f.Bool(&o.JSON, "json", false, "print the decision as one JSON object")
	f.Bool(&o.NoBuiltin, "no-builtin-rules", false, gateconf.NoBuiltinRulesUsage)
	return &f
}

// Exec is check once its flags (Flags) are parsed into o: args are the
// arguments left, and changed reports whether a flag was given. Its
// errors other than *ExitError are to be printed as "custom-agent: " and
// the error, with exit status 2.
func Exec(o Options, args []string, changed func(string) bool, in io.Reader, out, errOut io.Writer) error {
	if len(args) > 0 {
		// A message that names no program, so that custom-agent and
		// custom-agent-gate print the same.
		return fmt.Errorf("check: unexpected argument %q: the call is given with --tool and --args (or one per line of standard input with --jsonl)", args[0])
	}
	if o.JSON && o.JSONL {
		return errors.New("check: --jsonl already prints JSON, one decision per line; drop --json")
	}
	o.ModeSet, o.Warn = changed(gateconf.ModeFlag), errOut
	return Run(in, out, o)
}

// Line is one --jsonl request.
type Line struct {
	Tool string          `json:"tool"`
	Args json.RawMessage `json:"args"`
	Cwd  string          `json:"cwd"`
	Mode string          `json:"mode"`
}

// Checker holds what every request of one check run shares.
type Checker struct {
	cwd, home, configHome string
	dataDir               string
	mode                  permission.Mode
	policy                *permission.Policy
	engine                permission.Engine
	// ignored are the untrusted project's allow rules (not in policy).
	ignored policy.Ignored
}

// Run is check with its flags in o: it decides o's call, or with o.JSONL
// each line of in, and prints the decisions to out.
func Run(in io.Reader, out io.Writer, o Options) error {
	c, err := NewChecker(o)
	if err != nil {
		return err
	}
	enc := json.NewEncoder(out)
	enc.SetEscapeHTML(false)
	if !o.JSONL {
		if o.Tool == "" {
			return errors.New("check: --tool is required (or use --jsonl)")
		}
		req, err := c.Request(Line{Tool: o.Tool, Args: json.RawMessage(o.Args)})
		if err != nil {
			if !o.JSON {
				return &ExitError{Code: 1, Msg: "custom-agent: check: " + err.Error()}
			}
			if werr := enc.Encode(errorLine{Error: err.Error()}); werr != nil {
				return werr
			}
			return &ExitError{Code: 1}
		}
		d := c.check(req)
		if o.JSON {
			return enc.Encode(d)
		}
		return writeDecision(out, &req, &d)
	}
	failed := 0
	r := bufio.NewReader(in)
	for n := 1; ; n++ {
		line, rerr := r.ReadBytes('\n')
		if len(bytes.TrimSpace(line)) > 0 {
			if err := c.line(enc, line, n); err != nil {
				if !isDecideError(err) {
					return err
				}
				failed++
			}
		}
		if rerr == io.EOF {
			break
		}
		if rerr != nil {
			return fmt.Errorf("reading requests: %w", rerr)
		}
	}
	if failed > 0 {
		return &ExitError{Code: 1, Msg: fmt.Sprintf("check: %d of the requests could not be decided", failed)}
	}
	return nil
}

type errorLine struct {
	Error string `json:"error"`
}

// decideError marks a request that could not be decided, as opposed to
// output that could not be written.
type decideError struct{ error }

func isDecideError(err error) bool {
	var de decideError
	return errors.As(err, &de)
}

// line decides one --jsonl line and writes the decision or the error.
func (c *Checker) line(enc *json.Encoder, b []byte, n int) error {
	var req Line
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.DisallowUnknownFields()
	err := dec.Decode(&req)
	if err == nil && dec.More() {
		err = errors.New("more than one JSON value")
	}
	var d permission.Decision
	if err == nil {
		d, err = c.decide(req)
	}
	if err != nil {
		if werr := enc.Encode(errorLine{Error: fmt.Sprintf("line %d: %v", n, err)}); werr != nil {
			return werr
		}
		return decideError{err}
	}
	return enc.Encode(d)
}

// NewChecker reads what o's requests share: the working directory, the
// configuration, the mode and the policy.
func NewChecker(o Options) (*Checker, error) {
	c := &Checker{home: os.Getenv("HOME"), configHome: os.Getenv("XDG_CONFIG_HOME")}
	var err error
	if c.mode, err = gateconf.ParseMode(o.Mode); err != nil {
		return nil, fmt.Errorf("check: %w", err)
	}
	noBuiltin := o.NoBuiltin
	cwd := o.Cwd
	if cwd == "" {
		wd, err := os.Getwd()
		if err != nil {
			return nil, fmt.Errorf("check: %w", err)
		}
		cwd = wd
	}
	abs, err := filepath.Abs(cwd)
	if err != nil {
		return nil, fmt.Errorf("check: --cwd: %w", err)
	}
	c.cwd = abs
	if c.home != "" {
		c.home = filepath.Clean(c.home)
	}
	if c.configHome != "" {
		c.configHome = filepath.Clean(c.configHome)
	}
	getenv := o.Getenv
	if getenv == nil {
		getenv = os.Getenv
	}
	// No data directory (no HOME, nothing set) leaves only the default
	// location known, as before.
	if d, err := datadir.Resolve(o.DataDir, getenv, os.UserHomeDir); err == nil {
		c.dataDir = datadir.Real(d)
	}
	// The configuration files, read as run reads them: their mode (unless
	// --mode) and builtinRules: false decide here too.
	fl := config.Flags{NoBuiltinRules: o.NoBuiltin}
	if o.ModeSet {
		fl.Mode = o.Mode
	}
	conf, err := gateconf.LoadConfig(c.cwd, "", os.Getenv, fl)
	if err != nil {
		return nil, fmt.Errorf("check: %w", err)
	}
	for _, w := range conf.Warnings {
		if o.Warn != nil {
			fmt.Fprintln(o.Warn, "warning: "+w)
		}
	}
	if c.mode, err = gateconf.ModeOf(o.Mode, conf.Mode); err != nil {
		return nil, fmt.Errorf("check: %w", err)
	}
	noBuiltin = noBuiltin || conf.BuiltinRules != nil && !*conf.BuiltinRules
	store, err := gateconf.OpenPolicy(c.cwd, "", noBuiltin, o.Policies...)
	if err != nil {
		return nil, fmt.Errorf("check: %w", err)
	}
	if c.policy, err = store.Policy(); err != nil {
		return nil, fmt.Errorf("check: %w", err)
	}
	c.ignored = store.Ignored()
	return c, nil
}

// decide builds a Request as a fresh session would and checks it.
func (c *Checker) decide(l Line) (permission.Decision, error) {
	req, err := c.Request(l)
	if err != nil {
		return permission.Decision{}, err
	}
	return c.check(req), nil
}

// check decides req; Findings is never nil, so that JSON shows []. When
// the call is not allowed and an allow rule of the untrusted project would
// allow it, the reason says so, with the command that trusts the project.
func (c *Checker) check(req permission.Request) permission.Decision {
	d := c.engine.Check(req)
	if !d.Allowed() {
		if ids := c.IgnoredWould(req); len(ids) > 0 {
			d.Reason += " " + IgnoredNote(ids, c.ignored.Root)
		}
	}
	if d.Findings == nil {
		d.Findings = []risk.Finding{}
	}
	return d
}

// IgnoredWould returns the ids of the untrusted project's allow rules that
// would allow req, were the project trusted.
func (c *Checker) IgnoredWould(req permission.Request) []string { return c.ignored.Would(req) }

// IgnoredRoot is the project whose allow rules do not count.
func (c *Checker) IgnoredRoot() string { return c.ignored.Root }

// IgnoredNote says that the rules ids of the project at root would allow
// the call, were it trusted.
func IgnoredNote(ids []string, root string) string {
	s := "rule"
	if len(ids) > 1 {
		s = "rules"
	}
	return fmt.Sprintf("The project's %s %s would allow it, but the project is not trusted, so its allow rules do not count (custom-agent trust %s).", s, strings.Join(ids, ", "), root)
}

// writeDecision prints a decision for a person: the verdict, risk and
// source, the reason, and each finding with the bytes it is about
// underlined in its argument. Text from the arguments is escaped.
func writeDecision(w io.Writer, req *permission.Request, d *permission.Decision) error {
	var b strings.Builder
	from := string(d.SourcedFrom)
	switch {
	case d.Rule != nil && d.Rule.Level == permission.LevelBuiltin:
		from = "the built-in rule " + strconv.Quote(d.Rule.ID)
	case d.Rule != nil:
		from += ", rule " + strconv.Quote(d.Rule.ID) + " (" + string(d.Rule.Level)
		if d.Rule.Source != "" {
			from += ", " + d.Rule.Source
		}
		from += ")"
	}
	// The judged risk of a read-only shell command is the shell tool's own
	// (execute); the header says that it only reads, lest it read as a
	// command that runs something.
	level := "risk " + d.RiskAtDecision.String()
	if d.ReadOnly && d.RiskAtDecision > risk.Read {
		level = "read-only (the tool's own risk is " + d.RiskAtDecision.String() + ")"
	}
	fmt.Fprintf(&b, "%s  %s, %s, from %s\n", strings.ToUpper(string(d.Decision)), req.Tool.Name, level, termtext.Line(from))
	fmt.Fprintf(&b, "reason: %s\n", termtext.Line(d.Reason))
	if len(d.Findings) > 0 {
		b.WriteString("findings:\n")
	}
	for _, f := range d.Findings {
		fmt.Fprintf(&b, "  %-11s  %s: %s\n", f.Risk, termtext.Line(f.Arg), termtext.Line(f.Why))
		if v, ok := req.Args[f.Arg].(string); ok {
			if line, mark, ok := underline(v, f.Span); ok {
				fmt.Fprintf(&b, "    %s\n    %s\n", line, mark)
			}
		}
	}
	_, err := io.WriteString(w, b.String())
	return err
}

// underlineMax is the widest piece of an argument shown under a finding.
const underlineMax = 100

// underline returns the line of v that holds span, escaped, and a line of
// carets under the span's bytes. A long line is cut around the span. ok is
// false when the span is not within v.
func underline(v string, sp risk.Span) (line, mark string, ok bool) {
	if sp.Start < 0 || sp.End < sp.Start || sp.End > len(v) {
		return "", "", false
	}
	// The line holding the start of the span; a span over several lines is
	// underlined to the end of its first.
	ls := strings.LastIndexByte(v[:sp.Start], '\n') + 1
	le := len(v)
	if i := strings.IndexByte(v[sp.Start:], '\n'); i >= 0 {
		le = sp.Start + i
	}
	end := min(sp.End, le)
	pre, in, post := termtext.Line(v[ls:sp.Start]), termtext.Line(v[sp.Start:end]), termtext.Line(v[end:le])
	if in == "" {
		in = " " // an empty span (a missing argument) still gets a caret
	}
	// Cut to fit: keep the span, then context on each side.
	if n := displayWidth(pre) + displayWidth(in) + displayWidth(post); n > underlineMax {
		room := max(underlineMax-displayWidth(in), 20)
		if displayWidth(pre) > room/2 {
			pre = "…" + lastWidth(pre, room/2-1)
		}
		if displayWidth(post) > room-displayWidth(pre) {
			post = firstWidth(post, max(room-displayWidth(pre)-1, 0)) + "…"
		}
	}
	line = pre + in + post
	mark = strings.Repeat(" ", displayWidth(pre)) + strings.Repeat("^", max(displayWidth(in), 1))
	return strings.TrimRight(line, " "), mark, true
}

// displayWidth is how many terminal columns s takes: East Asian wide and
// fullwidth characters take two.
func displayWidth(s string) int {
	n := 0
	for _, r := range s {
		n += runeWidth(r)
	}
	return n
}

func runeWidth(r rune) int {
	switch width.LookupRune(r).Kind() {
	case width.EastAsianWide, width.EastAsianFullwidth:
		return 2
	}
	return 1
}

// firstWidth is the longest start of s at most n columns wide.
func firstWidth(s string, n int) string {
	w := 0
	for i, r := range s {
		if w+runeWidth(r) > n {
			return s[:i]
		}
		w += runeWidth(r)
	}
	return s
}

// lastWidth is the longest end of s at most n columns wide.
func lastWidth(s string, n int) string {
	rs := []rune(s)
	w := 0
	for i := len(rs) - 1; i >= 0; i-- {
		if w+runeWidth(rs[i]) > n {
			return string(rs[i+1:])
		}
		w += runeWidth(rs[i])
	}
	return s
}

// Request builds the Request a fresh session would give the engine.
func (c *Checker) Request(l Line) (permission.Request, error) {
	t, ok := permission.Builtin(l.Tool)
	if !ok && l.Tool == toolinfo.Name {
		t, ok = toolinfo.Info(), true
	}
	if !ok {
		if l.Tool == "" {
			return permission.Request{}, errors.New(`missing "tool"`)
		}
		return permission.Request{}, fmt.Errorf("unknown tool %q (built-in tools: %s)", l.Tool, builtinNames())
	}
	var args map[string]any
	if len(l.Args) > 0 {
		if err := json.Unmarshal(l.Args, &args); err != nil {
			return permission.Request{}, fmt.Errorf("args must be a JSON object: %w", err)
		}
	}
	if args == nil {
		args = map[string]any{}
	}
	if l.Cwd != "" && !filepath.IsAbs(l.Cwd) {
		return permission.Request{}, fmt.Errorf("cwd %q is not absolute", l.Cwd)
	}
	mode := c.mode
	if l.Mode != "" {
		var err error
		if mode, err = gateconf.ParseMode(l.Mode); err != nil {
			return permission.Request{}, err
		}
	}
	return c.RequestFor(t, args, l.Cwd, mode), nil
}

// RequestFor builds the Request a fresh session would give the engine for
// a call of t, a built-in tool or another (a hook's MCP or web tool), with
// args, in cwd (absolute; "" is the checker's) and mode. Paths are
// resolved and the command analysed, as the executor does.
func (c *Checker) RequestFor(t permission.ToolInfo, args map[string]any, cwd string, mode permission.Mode) permission.Request {
	if cwd == "" {
		cwd = c.cwd
	}
	req := permission.Request{
		Tool: t, Args: args, Cwd: filepath.Clean(cwd), Home: c.home, ConfigHome: c.configHome, DataDir: c.dataDir,
		Mode: mode, Policy: c.policy,
	}
	resolve.Fill(&req) // one analysis of the command, each path resolved once
	return req
}

// Mode is the mode the checker decides in: --mode, else the
// configuration's.
func (c *Checker) Mode() permission.Mode { return c.mode }

// Decide decides req as check does, with the note on an untrusted
// project's allow rules in the reason.
func (c *Checker) Decide(req permission.Request) permission.Decision { return c.check(req) }

func builtinNames() string {
	var b bytes.Buffer
	for i, t := range permission.Builtins() {
		if i > 0 {
			b.WriteString(", ")
		}
		b.WriteString(t.Name)
	}
	b.WriteString(", " + toolinfo.Name)
	return b.String()
}
