package ruleimport

import (
	"fmt"
	"slices"
	"strings"

	"github.com/custom-agent/custom-agent/hook"
	"github.com/custom-agent/custom-agent/permission"
	"github.com/custom-agent/custom-agent/policy"
)

// TranslateGeminiPolicy translates the [[rule]] tables of a Gemini CLI
// policy-engine file (TOML): toolName (one or a list), mcpName,
// commandPrefix (one or a list) and decision (allow, deny, ask_user).
//
// Gemini CLI lets the matching rule of highest priority decide; among
// custom-agent's rules the strictest decides, so priorities are dropped:
// that never lets through what Gemini CLI would refuse. A rule limited to
// some approval modes (modes) or matching arguments by a regular
// expression (argsPattern, commandRegex) has no counterpart: a rule with
// a regular expression is left out, whatever its decision (applied to
// every call of the tool it would go far beyond its author's meaning); a
// rule for some modes is left out when it allows, and kept for every mode,
// with a note, when it denies or asks.
//
// file names the file in what is shown ("" for none).
func TranslateGeminiPolicy(src []byte, file string) (*Result, error) {
	rules, err := parseRules(src)
	if err != nil {
		return nil, fmt.Errorf("reading the Gemini CLI policy: %w", err)
	}
	res := &Result{Rules: []Translated{}, Skipped: []Skipped{}}
	for _, r := range rules {
		policyRule(res, r, file)
	}
	return res, nil
}

// harmless are keys that change nothing a rule matches.
var harmless = []string{"priority", "name", "denyMessage", "description", "source", "toolName", "mcpName", "commandPrefix", "decision", "modes", "argsPattern", "commandRegex"}

func policyRule(res *Result, r tomlRule, file string) {
	from := fmt.Sprintf("[[rule]] at line %d", r.line)
	if file != "" {
		from = file + " " + from
	}
	skip := func(v permission.Verdict, why string) { res.skip(v, from, why) }
	var v permission.Verdict
	switch d, _ := r.keys["decision"].(string); d {
	case "allow":
		v = permission.Allow
	case "deny":
		v = permission.Deny
	case "ask_user":
		v = permission.Ask
	default:
		skip("", fmt.Sprintf("decision %q is not allow, deny or ask_user", d))
		return
	}
	for k := range r.keys {
		if !slices.Contains(harmless, k) {
			skip(v, "the key "+k+" is not understood, so what the rule matches is not known")
			return
		}
	}
	var notes []string
	if _, ok := r.keys["modes"]; ok {
		if v == permission.Allow {
			skip(v, "a rule for some approval modes only; custom-agent's rules hold in every mode, so the allow would be wider")
			return
		}
		notes = append(notes, "it holds in every mode, not only the rule's modes")
	}
	for _, k := range []string{"argsPattern", "commandRegex"} {
		if _, ok := r.keys[k]; ok {
			if v == permission.Allow {
				skip(v, k+" (a regular expression) has no counterpart, and an allow is never widened")
			} else {
				// Every call of the tool would be far more than the rule
				// meant: left out, for a person to write as a path or
				// command rule.
				skip(v, k+" (a regular expression) has no counterpart; a "+string(v)+" of every call of the tool would go far beyond it, so write it as a path or command rule (custom-agent policy add)")
			}
			return
		}
	}
	tools, err := stringsOf(r.keys, "toolName")
	if err != nil {
		skip(v, err.Error())
		return
	}
	prefixes, err := stringsOf(r.keys, "commandPrefix")
	if err != nil {
		skip(v, err.Error())
		return
	}
	server, _ := r.keys["mcpName"].(string)
	if _, ok := r.keys["mcpName"]; ok && server == "" {
		skip(v, "mcpName is not a server name")
		return
	}
	if len(tools) == 0 {
		tools = []string{"*"}
	}
	for _, name := range tools {
		t, broader, why := policyTool(name, server)
		if why != "" {
			skip(v, why)
			continue
		}
		if server != "" {
			name = t
		}
		note := slices.Clone(notes)
		if broader != "" {
			if v == permission.Allow {
				skip(v, "custom-agent judges "+name+" as "+t+", which would allow more: "+broader)
				continue
			}
			note = append(note, broader)
		}
		if len(prefixes) == 0 {
			res.addAs(hook.GeminiCLI, v, from+": "+name, "policy "+t, policy.Rule{Tool: t}, strings.Join(note, "; "))
			continue
		}
		if t != "shell" {
			skip(v, "commandPrefix on "+name+", which runs no command")
			continue
		}
		for _, p := range prefixes {
			p = strings.TrimSpace(p)
			if p == "" || strings.ContainsAny(p, "*?") {
				skip(v, fmt.Sprintf("the command prefix %q has no counterpart", p))
				continue
			}
			n := append(slices.Clone(note), "custom-agent's prefix is whole words: "+code(p)+" does not cover "+code(p+"x"))
			if v != permission.Allow {
				n[len(n)-1] += ", so this " + string(v) + " covers less than Gemini CLI's (the engine still asks before any destructive command)"
			}
			res.addAs(hook.GeminiCLI, v, from+": "+name+" "+p, "policy shell "+p, policy.Rule{Tool: "shell", Command: p}, strings.Join(n, "; "))
		}
	}
}

// policyTool is our tool glob for a policy rule's toolName (and mcpName).
func policyTool(name, server string) (tool, broader, why string) {
	switch {
	case server != "" && name == "*":
		return "mcp__" + server + "__*", "", ""
	case server != "":
		return "mcp__" + server + "__" + name, "", ""
	case name == "*":
		return "*", "", ""
	case strings.HasPrefix(name, "mcp__"):
		return name, "", ""
	}
	if t, ok := geminiTools[name]; ok {
		return t.tool, t.broader, ""
	}
	if name == "ShellTool" {
		return "shell", "", ""
	}
	return "", "", "custom-agent has no tool that " + name + " maps onto"
}

// stringsOf reads a key that is one string or a list of strings.
func stringsOf(keys map[string]any, k string) ([]string, error) {
	switch v := keys[k].(type) {
	case nil:
		return nil, nil
	case string:
		return []string{v}, nil
	case []string:
		return v, nil
	}
	return nil, fmt.Errorf("%s is not a string or a list of strings", k)
}
