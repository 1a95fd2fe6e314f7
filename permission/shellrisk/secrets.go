package shellrisk

import (
	"strings"

	"mvdan.cc/sh/v3/syntax"

	"github.com/custom-agent/custom-agent/permission/risk"
)

// Expanding a variable whose name says it holds a secret ($GITHUB_TOKEN,
// "${AWS_SECRET_ACCESS_KEY}") in a command's arguments, a redirection or a
// here-document puts the secret where the model can read it: in the
// command's output, in a file, in another program's arguments.

// secretParts are the words of a variable name, split at "_", that mark it
// as a secret; secretInfixes mark it wherever they appear in the name.
var (
	secretParts = [...]string{"KEY", "KEYS", "TOKEN", "TOKENS", "SECRET", "SECRETS", "PASSWORD", "PASSWORDS",
		"PASSWD", "PASS", "PAT", "CREDENTIAL", "CREDENTIALS", "CREDS", "APIKEY", "PASSPHRASE"}
	secretInfixes = [...]string{"SECRET", "PASSWORD", "PASSWD", "CREDENTIAL", "APIKEY", "ACCESSKEY",
		"PRIVATEKEY", "AUTHTOKEN", "ACCESSTOKEN", "APITOKEN", "PASSPHRASE"}
)

// secretName reports whether a variable's name says it holds a secret,
// without regard to case: GITHUB_TOKEN, OPENAI_API_KEY, db_password, GH_PAT.
// Names such as HOME, PWD, KEYBOARD_LAYOUT or TOKENIZERS_PARALLELISM do not.
func secretName(name string) bool {
	if hasPrefixFold(name, "PASSWORD_STORE_") { // pass's settings, not a password
		return false
	}
	for _, in := range secretInfixes {
		if containsFold(name, in) {
			return true
		}
	}
	for rest := name; rest != ""; {
		part := rest
		if i := strings.IndexByte(rest, '_'); i >= 0 {
			part, rest = rest[:i], rest[i+1:]
		} else {
			rest = ""
		}
		for _, p := range secretParts {
			if strings.EqualFold(part, p) {
				return true
			}
		}
	}
	return false
}

func hasPrefixFold(s, prefix string) bool {
	return len(s) >= len(prefix) && strings.EqualFold(s[:len(prefix)], prefix)
}

func containsFold(s, sub string) bool {
	for i := 0; i+len(sub) <= len(s); i++ {
		if strings.EqualFold(s[i:i+len(sub)], sub) {
			return true
		}
	}
	return false
}

// isSecretVar reports whether expanding the variable gives a secret: a
// variable assigned in the command is one when its value came from a secret;
// any other comes from the environment and is judged by its name.
func (a *analyzer) isSecretVar(name string) bool {
	for i := len(a.vars) - 1; i >= 0; i-- {
		if a.vars[i].name == name {
			return a.vars[i].secret
		}
	}
	return secretName(name)
}

// secretIn returns the name of a secret variable the word parts expand, or "".
func (a *analyzer) secretIn(ps []syntax.WordPart) string {
	for _, p := range ps {
		switch p := p.(type) {
		case *syntax.DblQuoted:
			if n := a.secretIn(p.Parts); n != "" {
				return n
			}
		case *syntax.ParamExp:
			if n := a.secretParam(p); n != "" {
				return n
			}
		}
	}
	return ""
}

func (a *analyzer) secretParam(p *syntax.ParamExp) string {
	printsValue := !p.Length && !p.Excl && p.Names == 0
	if p.Exp != nil && (p.Exp.Op == syntax.AlternateUnset || p.Exp.Op == syntax.AlternateUnsetOrNull) {
		printsValue = false // ${X:+word} gives word, not X
	}
	if printsValue && p.Param != nil && a.isSecretVar(p.Param.Value) {
		return p.Param.Value
	}
	if p.Exp != nil && p.Exp.Word != nil {
		return a.secretIn(p.Exp.Word.Parts)
	}
	return ""
}

// wordSecret is secretIn for a whole word, nil included.
func (a *analyzer) wordSecret(w *syntax.Word) string {
	if w == nil {
		return ""
	}
	return a.secretIn(w.Parts)
}

// secretExpanded records the expansion of a secret variable in a word.
func (a *analyzer) secretExpanded(w *syntax.Word, name, where string) {
	sp := a.span(w)
	a.credSource(sp, "the variable $"+name)
	a.find(risk.Credential, sp, where+" expands $"+name+", whose name says it holds a secret, so the secret can reach the output the model reads")
}

// argSecrets judges the arguments of a simple command. test and [ only
// compare their arguments and print none of them.
func (a *analyzer) argSecrets(ws []*syntax.Word, args []arg) {
	if len(args) > 0 && !args[0].dyn && (args[0].s == "[" || args[0].s == "test") {
		return
	}
	for _, w := range ws {
		if n := a.wordSecret(w); n != "" {
			a.secretExpanded(w, n, "the command")
		}
	}
}

// ruleReadVars: read, mapfile and readarray set the variables they name
// from standard input; their values are the input's, not the environment's.
func ruleReadVars(a *analyzer, c *call) {
	if c.cwd != a.cwd {
		return // inside a wrapper: not this shell's variables
	}
	isRead := programName(c.args[0].s) == "read"
	o := opts{short: "dnOsuCc"}
	if isRead {
		o = opts{short: "adinNptu"}
	}
	os, ops := a.scan(o, c.args)
	if cb, ok := val(os, "-C"); ok && !isRead {
		// The callback is evaluated as shell code every -c lines, with
		// the index and the line (text from the input) appended.
		a.opaque(cb.sp, "mapfile -C runs "+quote(cb.s)+" as shell code with each line read appended, which cannot be checked before it runs")
	}
	if v, ok := val(os, "-a"); ok && isRead {
		ops = append(ops, v)
	}
	for _, x := range ops {
		if !x.dyn && isName(x.s) {
			a.setVar(x.s, "", false)
		}
	}
	switch {
	case len(ops) > 0:
	case isRead:
		a.setVar("REPLY", "", false)
	default:
		a.setVar("MAPFILE", "", false)
	}
}

func isName(s string) bool {
	return s != "" && isAssignment(s+"=")
}
