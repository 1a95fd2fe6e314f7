package permission

import (
	"slices"

	"github.com/custom-agent/custom-agent/permission/shellrisk"
)

// Explanation is Check's decision with the facts it was made on and every
// policy rule's part in it, for a person asking why (custom-agent policy
// explain). It is diagnostic output: its shape may grow.
type Explanation struct {
	// Decision is exactly what Check returns for the same Request.
	Decision Decision `json:"decision"`
	// Opaque is set when the call could not be judged statically, so no
	// allow rule may allow it.
	Opaque bool `json:"opaque,omitempty"`
	// Commands are the simple commands of a shell call.
	Commands []shellrisk.Command `json:"commands,omitempty"`
	// Paths are the locations the call touches.
	Paths []ExplainedPath `json:"paths,omitempty"`
	// URL is the URL the call fetches, if any.
	URL string `json:"url,omitempty"`
	// Rules has one entry per policy rule, in policy order.
	Rules []RuleTrace `json:"rules"`
}

// ExplainedPath is one location a call touches.
type ExplainedPath struct {
	Arg       string `json:"arg"`
	Raw       string `json:"raw"`
	Canonical string `json:"canonical,omitempty"` // "" when unknown
	Resolved  string `json:"resolved,omitempty"`  // with symbolic links resolved
	Write     bool   `json:"write,omitempty"`
	Recursive bool   `json:"recursive,omitempty"`
	// Tracked is set for a read of what the git repository holding the
	// location tracks (git diff, git log -p, git show).
	Tracked bool `json:"tracked,omitempty"`
	Glob    bool `json:"glob,omitempty"`
	// MustBeNamed is set when an allow rule covers the call only if it
	// names this location (credential, protected, or a write outside the
	// working directory).
	MustBeNamed bool `json:"mustBeNamed,omitempty"`
}

// Outcome is what one rule did for a call.
type Outcome string

const (
	// OutcomeOtherTool: the rule's tool glob does not match the tool.
	OutcomeOtherTool Outcome = "other-tool"
	// OutcomeNoMatch: a matcher of the rule does not match the arguments.
	OutcomeNoMatch Outcome = "no-match"
	// OutcomeUnfit: an allow rule matches but may not loosen this call.
	OutcomeUnfit Outcome = "unfit"
	// OutcomeMatch: the rule matches; Decides says whether it won.
	OutcomeMatch Outcome = "match"
)

// RuleTrace is one rule's part in a decision.
type RuleTrace struct {
	Rule    RuleRef `json:"rule"`
	Tool    string  `json:"tool"`
	Outcome Outcome `json:"outcome"`
	// Why says, for every outcome but a match, which matcher failed or why
	// an allow rule could not loosen the call.
	Why string `json:"why,omitempty"`
	// Decides is set on the rule the decision came from.
	Decides bool `json:"decides,omitempty"`
}

// Explain decides req as Check does and says why. It is pure, like Check,
// and Explanation.Decision always equals Check(req).
func Explain(req Request) Explanation {
	var j judge
	j.run(&req)
	x := Explanation{Decision: decide(&j.req, &j), Opaque: j.opaque}
	if j.shell && len(j.commands) > 0 {
		// A copy: the commands may belong to a shared Analysis.
		x.Commands = make([]shellrisk.Command, len(j.commands))
		for i, c := range j.commands {
			c.Argv = slices.Clone(c.Argv)
			x.Commands[i] = c
		}
	}
	if j.url != nil {
		x.URL = j.url.String()
	}
	for i := range j.paths {
		p := &j.paths[i]
		x.Paths = append(x.Paths, ExplainedPath{Arg: p.arg, Raw: p.raw, Canonical: p.canon, Resolved: p.resolved,
			Write: p.write, Recursive: p.deep, Tracked: p.tracked, Glob: p.glob, MustBeNamed: p.need})
	}
	if req.Policy == nil {
		return x
	}
	name := j.req.Tool.Name
	for _, c := range req.Policy.rules {
		t := RuleTrace{Rule: *c.rule.ref(), Tool: c.rule.Tool}
		switch {
		case !c.tool.match(name):
			t.Outcome, t.Why = OutcomeOtherTool, "its tool "+quoteText(c.rule.Tool)+" does not match "+quoteText(name)
		case c.rule.Level == LevelBuiltin:
			switch c.builtinMatches(&j, req.Policy) {
			case matchYes:
				t.Outcome = OutcomeMatch
				if d := x.Decision.Rule; d != nil && *d == t.Rule && x.Decision.SourcedFrom == FromOverride {
					t.Decides = true
				} else {
					t.Why = "another rule decides (a deny or ask of any level, an allow of another level, or the built-in rule of the first command)"
				}
			case matchUnfit:
				t.Outcome, t.Why = OutcomeUnfit, "built-in rules cover only plain reads inside the working directory: "+req.Policy.builtinWhy(&j)
			default:
				t.Outcome, t.Why = OutcomeNoMatch, "no simple command is a read-only "+quoteText(c.rule.Command)
			}
		default:
			switch c.matches(&j) {
			case matchYes:
				t.Outcome = OutcomeMatch
				if d := x.Decision.Rule; d != nil && *d == t.Rule && x.Decision.SourcedFrom == FromOverride {
					t.Decides = true
				} else {
					t.Why = "a rule at least as strict, or earlier, decides"
				}
			case matchUnfit:
				t.Outcome, t.Why = OutcomeUnfit, c.unfitWhy(&j)
			default:
				t.Outcome, t.Why = OutcomeNoMatch, c.noMatchWhy(&j)
			}
		}
		x.Rules = append(x.Rules, t)
	}
	return x
}

// noMatchWhy names the first matcher that does not match, in the order
// matches tries them.
func (c *compiled) noMatchWhy(j *judge) string {
	allow := c.rule.Decision == Allow
	switch {
	case allow && j.shell && len(c.cmd) == 0 && (c.rule.Path != "" || len(c.args) > 0):
		return "an allow rule with a path or args matcher but no command never matches a shell call"
	case len(c.cmd) > 0 && !c.matchCommand(j, allow):
		switch {
		case !j.shell:
			return "it has a command matcher and the call runs no shell command"
		case allow:
			return "an allow rule needs every simple command to start with " + quoteText(c.rule.Command) + " and be known before it runs"
		}
		return "no simple command starts with " + quoteText(c.rule.Command)
	case c.rule.Path != "" && !c.matchPaths(j, allow):
		switch {
		case len(j.paths) == 0:
			return "it has a path matcher and the call touches no path"
		case allow:
			return "an allow rule needs every path, in both its written and its resolved form, to match " + quoteText(c.rule.Path)
		}
		return "no path matches " + quoteText(c.rule.Path)
	case c.url != nil && (j.url == nil || !c.url.match(j.url)):
		if j.url == nil {
			return "it has a url matcher and the call has no URL"
		}
		return "the URL does not match " + quoteText(c.rule.URL)
	}
	for i := range c.args {
		if !c.matchArg(j, &c.args[i]) {
			return "the argument " + quoteText(c.args[i].name) + " does not match " + quoteText(c.rule.Args[c.args[i].name])
		}
	}
	return "it does not match"
}

// unfitWhy says why a matching allow rule may not loosen the call.
func (c *compiled) unfitWhy(j *judge) string {
	switch {
	case j.opaque:
		return "what the call does cannot be judged statically, and no allow rule allows that"
	case !c.coversPaths(j):
		return "the call touches a credential or protected location, or writes outside the working directory, and the rule does not name it"
	}
	return "the call is judged credential or writes where code runs later, and the rule does not name its arguments"
}
