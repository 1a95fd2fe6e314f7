package shellrisk

import (
	"regexp"
	"slices"
	"strings"
	"sync"

	"github.com/custom-agent/custom-agent/permission/risk"
)

// shredOpts are the options of shred, wipe and srm that take a value. A
// package variable: a table written in the call would be allocated at
// every rm, since scan's options escape.
var shredOpts = opts{long: []string{"interactive", "preserve-root", "one-file-system", "iterations", "size", "remove", "random-source"}, short: "ns"}

// ruleRm: deleting is irreversible, whatever the flags.
func ruleRm(a *analyzer, c *call) {
	name := programName(c.args[0].s)
	o := opts{} // rm, unlink and rmdir take no option values
	if name == "shred" || name == "wipe" || name == "srm" {
		o = shredOpts
	}
	os, ops := a.scan(o, c.args)
	recursive := name == "rimraf" || name == "del" || name == "del-cli" // always recursive
	for _, o := range os {
		if o.name == "-r" || o.name == "-R" || (strings.HasPrefix(o.name, "--") && longOpt(o.name, "--recursive", 5)) {
			recursive = true
		}
	}
	del := name != "shred" || has(os, "-u", "--remove") || hasPrefixOpt(os, "--remove")
	for _, x := range ops {
		a.access(x, c.cwd, !del, del)
	}
	// Each sentence is one concatenation: rm is the commonest escalation.
	q, t, more := a.operandWords(ops)
	var why string
	switch {
	case name == "shred" || name == "wipe" || name == "srm":
		why = name + " overwrites " + q + t + q + more + " so it can never be recovered"
	case recursive && name != "rm":
		why = name + " deletes " + q + t + q + more + " and everything below, which cannot be undone"
	case recursive:
		why = "rm -r deletes " + q + t + q + more + " and everything below, which cannot be undone"
	case name == "rmdir":
		why = "rmdir deletes the directory " + q + t + q + more + ", which cannot be undone"
	default:
		why = name + " deletes " + q + t + q + more + ", which cannot be undone"
	}
	a.find(risk.Destructive, c.sp, why)
}

// operandWords is operandText in pieces, q+t+q+more, for callers that build
// their sentence in one concatenation.
func (a *analyzer) operandWords(ops []arg) (q, t, more string) {
	if len(ops) == 0 {
		return "", "files", ""
	}
	t = a.text(ops[0].sp)
	if len(t) > 60 {
		t = t[:57] + "..."
	}
	if len(ops) > 1 {
		more = " and other files"
	}
	return "`", t, more
}

func hasPrefixOpt(os []opt, prefix string) bool {
	for _, o := range os {
		if strings.HasPrefix(o.name, prefix) {
			return true
		}
	}
	return false
}

// operandText names the operands of a command for a Why sentence.
func (a *analyzer) operandText(ops []arg) string {
	switch len(ops) {
	case 0:
		return "files"
	case 1:
		return quote(a.text(ops[0].sp))
	}
	return quote(a.text(ops[0].sp)) + " and other files"
}

// ruleFind: -delete deletes, -exec runs a command, -fprint writes.
func ruleFind(a *analyzer, c *call) {
	args := c.args[1:]
	// Leading -H -L -P -O3 -D opts, then start points up to the expression.
	follows := false // -L, -H or -follow: links are followed, out of the roots too
	for len(args) > 0 && (args[0].s == "-H" || args[0].s == "-L" || args[0].s == "-P" || strings.HasPrefix(args[0].s, "-O")) {
		if args[0].s == "-H" || args[0].s == "-L" {
			follows = true
		}
		args = args[1:]
	}
	if len(args) > 0 && args[0].s == "-D" {
		args = args[min(2, len(args)):]
	}
	var roots []arg
	for len(args) > 0 && !args[0].dyn && !isFindExpr(args[0].s) {
		roots = append(roots, args[0])
		args = args[1:]
	}
	if len(roots) == 0 {
		roots = []arg{{s: ".", sp: c.args[0].sp}}
	}
	for i := 0; i < len(args); i++ {
		x := args[i]
		switch x.s {
		case "-delete":
			for _, r := range roots {
				a.access(r, c.cwd, false, true)
			}
			a.find(risk.Destructive, x.sp, "find -delete deletes every file it matches under "+a.operandText(roots)+", which cannot be undone")
		case "-exec", "-execdir", "-ok", "-okdir":
			j := i + 1
			for j < len(args) && args[j].s != ";" && args[j].s != "+" {
				j++
			}
			cwd := c.cwd
			if x.s == "-execdir" || x.s == "-okdir" {
				cwd = "" // the directory of each match
			}
			a.inner(c, markDyn(args[i+1:j], "{}"), cwd, true)
			i = j
		case "-fprint", "-fprint0", "-fls", "-fprintf":
			if i+1 < len(args) {
				a.access(args[i+1], c.cwd, true, false)
				i++
			}
		case "-newer", "-anewer", "-cnewer", "-samefile":
			// A file find stats, to compare: a read of that path.
			if i+1 < len(args) {
				a.access(args[i+1], c.cwd, false, false)
				i++
			}
		case "-follow":
			follows = true
		default:
			if strings.HasPrefix(x.s, "-newer") && len(x.s) == 8 && x.s[7] != 't' && i+1 < len(args) {
				a.access(args[i+1], c.cwd, false, false) // -newerXY, Y a file's time
				i++
			}
		}
	}
	// With -exec, -ok or -print0 (for xargs) the matches are handed to
	// another program, which may read them: the roots are read
	// recursively.
	// Following links, find lists (and -printf describes) what lies
	// beyond one, outside the project: the roots are scanned, and a link
	// beneath makes the call asked.
	deep := follows
	for _, x := range args {
		switch x.s {
		case "-exec", "-execdir", "-ok", "-okdir", "-print0", "-fprint0", "-fprint", "-fprintf", "-fls":
			deep = true
		}
	}
	for _, r := range roots {
		switch {
		case has1(args, "-delete"):
		case deep:
			a.accessDeep(r, c.cwd)
		default:
			a.access(r, c.cwd, false, false)
		}
	}
}

func has1(args []arg, s string) bool {
	for _, x := range args {
		if x.s == s {
			return true
		}
	}
	return false
}

func isFindExpr(s string) bool {
	return strings.HasPrefix(s, "-") || s == "(" || s == "!" || s == ")" || s == ","
}

// ruleSed: -i edits files in place; the script's e command and e flag run
// shell commands, its w command and w flag write files.
func ruleSed(a *analyzer, c *call) {
	os, ops := a.scan(opts{short: "efl", long: []string{"expression", "file", "line-length"}}, c.args)
	inPlace := false
	var scripts []arg
	for _, o := range os {
		switch {
		case o.name == "-i" || strings.HasPrefix(o.name, "--in-place") || (strings.HasPrefix(o.name, "--") && longOpt(o.name, "--in-place", 4)):
			inPlace = true
		case o.name == "-e" || o.name == "--expression":
			scripts = append(scripts, o.val)
		case o.name == "-f" || o.name == "--file":
			a.access(o.val, c.cwd, false, false)
			a.find(risk.Execute, o.val.sp, "sed runs a script from a file, which may run commands")
		}
	}
	if len(scripts) == 0 && len(ops) > 0 {
		scripts, ops = ops[:1], ops[1:]
	}
	for _, s := range scripts {
		if s.dyn {
			a.opaque(s.sp, "the sed script is built at run time and may run commands")
			continue
		}
		a.sedScript(s, c.cwd)
	}
	for _, x := range ops {
		a.access(x, c.cwd, inPlace, false)
	}
}

// sedScript finds the commands of a sed script that run code or write.
func (a *analyzer) sedScript(s arg, cwd string) {
	for _, cmd := range sedCommands(s.s) {
		switch cmd.op {
		case 'e':
			a.find(risk.Execute, s.sp, "the sed script runs shell commands (e)")
			if cmd.arg != "" {
				a.reparse(cmd.arg, s.sp, false)
			} else {
				a.res.Opaque = true
			}
		case 'w', 'W':
			if isHarmlessDevice(cmd.arg) {
				continue
			}
			a.access(arg{s: cmd.arg, sp: s.sp}, cwd, true, false)
			a.find(risk.Write, s.sp, "the sed script writes to the file "+quote(cmd.arg))
		case 'r', 'R':
			if cmd.arg == "" || cmd.arg == "-" || cmd.arg == "/dev/stdin" {
				continue
			}
			a.access(arg{s: cmd.arg, sp: s.sp}, cwd, false, false)
		}
	}
}

// sedCmd is a sed command that matters: e, w or W, or s/// with the e or w
// flag (reported as 'e' or 'w').
type sedCmd struct {
	op  byte
	arg string
}

// sedCommands scans a sed script well enough to find e and w. It errs towards
// finding them: a letter it cannot place is looked at as a command.
func sedCommands(s string) []sedCmd {
	var out []sedCmd
	i := 0
	skipAddr := func() {
		for i < len(s) {
			switch ch := s[i]; {
			case ch >= '0' && ch <= '9', ch == '$', ch == ',', ch == '~', ch == '+', ch == ' ', ch == '\t', ch == '!':
				i++
			case ch == '/' || ch == '\\':
				delim := byte('/')
				if ch == '\\' && i+1 < len(s) {
					i++
					delim = s[i]
				}
				i++
				for i < len(s) && s[i] != delim {
					if s[i] == '\\' {
						i++
					}
					i++
				}
				i++
				for i < len(s) && (s[i] == 'I' || s[i] == 'M') {
					i++
				}
			default:
				return
			}
		}
	}
	restOfLine := func() string {
		j := strings.IndexByte(s[i:], '\n')
		if j < 0 {
			j = len(s) - i
		}
		v := strings.TrimSpace(s[i : i+j])
		i += j
		return v
	}
	for i < len(s) {
		skipAddr()
		if i >= len(s) {
			break
		}
		ch := s[i]
		i++
		switch ch {
		case 'e', 'w', 'W':
			out = append(out, sedCmd{op: ch, arg: restOfLine()})
		case 'r', 'R':
			// r FILE and R FILE read a file into the output.
			out = append(out, sedCmd{op: ch, arg: restOfLine()})
		case 'a', 'i', 'c', 'b', 't', 'T', ':', '#', 'q', 'Q', 'l', 'L':
			if ch == 'a' || ch == 'i' || ch == 'c' || ch == ':' || ch == '#' || ch == 'b' || ch == 't' || ch == 'T' {
				restOfLine()
			}
		case 's', 'y':
			if i >= len(s) {
				break
			}
			delim := s[i]
			i++
			for part := 0; part < 2 && i < len(s); part++ {
				for i < len(s) && s[i] != delim {
					if s[i] == '\\' {
						i++
					}
					i++
				}
				i++
			}
			if ch == 'y' {
				break
			}
			for i < len(s) && s[i] != ';' && s[i] != '\n' && s[i] != '}' {
				f := s[i]
				i++
				if f == 'e' {
					out = append(out, sedCmd{op: 'e'})
				}
				if f == 'w' || f == 'W' {
					out = append(out, sedCmd{op: 'w', arg: restOfLine()})
				}
			}
		}
	}
	return out
}

// ruleAwk: system(), pipes to commands and output redirection inside the
// program cannot be judged without an awk parser; the program is Opaque.
func ruleAwk(a *analyzer, c *call) {
	os, ops := a.scan(opts{short: "fvFE", long: []string{"file", "assign", "field-separator", "exec", "include", "load"}}, c.args)
	name := programName(c.args[0].s)
	if f, ok := val(os, "-f", "--file", "-E", "--exec", "--include", "-i"); ok {
		a.access(f, c.cwd, false, false)
		a.find(risk.Execute, f.sp, name+" runs a program from a file, which may run commands")
		for _, x := range ops {
			a.awkOperand(x, c.cwd)
		}
		return
	}
	if len(ops) == 0 {
		return
	}
	prog := ops[0]
	switch {
	case prog.dyn:
		a.opaque(prog.sp, "the "+name+" program is built at run time and may run commands")
	case awkRuns(prog.s) || awkWrites(prog.s):
		a.opaque(prog.sp, "the "+name+" program runs commands or writes files (system, pipes or redirection), which is not analysed")
		a.awkProgram(prog, c.cwd) // what it runs and writes, when literal (langs_edit.go)
	default:
		// getline < FILE reads a file the program names.
		files, ok := awkGetlineFiles(prog.s)
		if !ok {
			a.opaque(prog.sp, "the "+name+" program reads with getline from a file named at run time, which is not analysed")
		}
		for _, f := range files {
			a.access(arg{s: f, sp: prog.sp}, c.cwd, false, false)
		}
	}
	for _, x := range ops[1:] {
		a.awkOperand(x, c.cwd)
	}
}

func (a *analyzer) awkOperand(x arg, cwd string) {
	if !x.dyn && isAssignment(x.s) {
		return
	}
	a.access(x, cwd, false, false)
}

// awkGetline matches getline [var] < "literal". It is compiled when an awk
// program is first judged, not at every start of the binary.
var awkGetline = sync.OnceValue(func() *regexp.Regexp {
	return regexp.MustCompile(`getline\s*[A-Za-z_][A-Za-z_0-9]*(\[[^]]*\])?\s*<\s*"((?:[^"\\]|\\.)*)"|getline\s*<\s*"((?:[^"\\]|\\.)*)"`)
})

// awkGetlineFiles returns the files an awk program reads with getline <
// "file"; ok is false when a getline reads from an expression it cannot
// name statically.
func awkGetlineFiles(p string) ([]string, bool) {
	n := strings.Count(p, "getline")
	if n == 0 {
		return nil, true
	}
	var files []string
	for _, m := range awkGetline().FindAllStringSubmatch(p, -1) {
		f := m[2]
		if f == "" {
			f = m[3]
		}
		files = append(files, f)
	}
	// A getline not followed by < reads the input (fine); one followed by
	// < and no literal cannot be named.
	rest := awkGetline().ReplaceAllString(p, "")
	for i := strings.Index(rest, "getline"); i >= 0; i = strings.Index(rest, "getline") {
		tail := strings.TrimLeft(rest[i+len("getline"):], " \t")
		j := strings.IndexAny(tail, ";})\n")
		if j < 0 {
			j = len(tail)
		}
		if strings.Contains(tail[:j], "<") {
			return files, false
		}
		rest = tail
	}
	return files, true
}

// awkRuns reports whether an awk program may run commands or write files.
// It looks for system, getline from a command, and print/printf redirected
// with > or |, outside string literals.
func awkRuns(p string) bool {
	inStr := false
	for i := 0; i < len(p); i++ {
		ch := p[i]
		if inStr {
			if ch == '\\' {
				i++
			} else if ch == '"' {
				inStr = false
			}
			continue
		}
		switch ch {
		case '"':
			inStr = true
		case '|':
			if i+1 < len(p) && p[i+1] == '|' {
				i++
				continue
			}
			return true
		case '>':
			if i+1 < len(p) && p[i+1] == '=' {
				continue
			}
			if awkInPrint(p[:i]) {
				return true
			}
		}
	}
	return strings.Contains(p, "system") || strings.Contains(p, "@load") || strings.Contains(p, "ENVIRON") && strings.Contains(p, "getline")
}

// awkInPrint reports whether a > is inside a print or printf statement, where
// it redirects output instead of comparing.
func awkInPrint(before string) bool {
	j := strings.LastIndexAny(before, ";{}\n")
	stmt := strings.TrimSpace(before[j+1:])
	return strings.HasPrefix(stmt, "print")
}

// ruleWrite: programs whose operands or of= are written.
func ruleWrite(a *analyzer, c *call) {
	name := programName(c.args[0].s)
	switch name {
	case "dd":
		for _, x := range c.args[1:] {
			k, v, ok := strings.Cut(x.s, "=")
			if !ok {
				continue
			}
			y := arg{s: v, dyn: x.dyn, sp: x.sp, w: x.w}
			switch k {
			case "if":
				a.access(y, c.cwd, false, false)
			case "of":
				a.access(y, c.cwd, true, false)
				p := resolve(v, c.cwd)
				_, isFd := fdNumber(p)
				switch {
				case isHarmlessDevice(p), isTerminal(p, true), isFd:
					// No file is overwritten in place: the terminal is
					// judged by the access, an open descriptor by the
					// redirection that opened it.
				case isBlockDevice(p) && !x.dyn:
					a.find(risk.Destructive, x.sp, "dd writes straight to the disk "+p+", destroying what is on it")
				default:
					a.find(risk.Destructive, x.sp, "dd overwrites "+quote(v)+" in place, destroying what was in it")
				}
			}
		}
		return
	case "truncate":
		os, ops := a.scan(opts{short: "sr", long: []string{"size", "reference"}}, c.args)
		for _, x := range ops {
			a.access(x, c.cwd, true, false)
		}
		if s, ok := val(os, "-s", "--size"); ok && (s.s == "0" || strings.HasPrefix(s.s, "-") || strings.HasPrefix(s.s, "<") || strings.HasPrefix(s.s, "/")) {
			a.find(risk.Destructive, c.sp, "truncate empties or shortens "+a.operandText(ops)+", losing the data cut off")
		}
		return
	case "tee":
		_, ops := a.scan(opts{long: []string{"output-error"}}, c.args)
		for _, x := range ops {
			a.access(x, c.cwd, true, false)
		}
		return
	case "touch", "mkdir":
		_, ops := a.scan(opts{short: "rdtm", long: []string{"reference", "date", "time", "mode", "context"}}, c.args)
		for _, x := range ops {
			a.access(x, c.cwd, true, false)
		}
		return
	case "patch":
		os, ops := a.scan(opts{short: "pdDiorBbFVYzgx", long: []string{"input", "output", "directory", "strip", "reject-file", "prefix"}}, c.args)
		if f, ok := val(os, "-i", "--input"); ok {
			a.access(f, c.cwd, false, false)
		}
		for _, x := range ops {
			a.access(x, c.cwd, true, false)
		}
		strip := -1 // without -p, patch may use the path whole or not
		if p, ok := val(os, "-p", "--strip"); ok && len(p.s) == 1 && isDigits(p.s) {
			strip = int(p.s[0] - '0')
		}
		if _, ok := val(os, "-i", "--input"); !ok {
			a.patchTargets(c, c.cwd, strip)
		}
		a.find(risk.Write, c.sp, "patch modifies files in the working tree")
		return
	}
	// cp, mv, ln, install: the last operand (or -t DIR) is written; mv also
	// removes its sources. cp -r/-a and install -D... read sources
	// recursively. GNU getopt accepts unique abbreviations of long options
	// (--target-dir is --target-directory).
	os, ops := a.scan(opts{short: "tSmogZ", long: []string{"target-directory", "suffix", "mode", "owner", "group", "sparse", "no-preserve", "strip-program"}, abbrev: cpLongOpts}, c.args)
	if p, ok := val(os, "--strip-program"); ok && name == "install" {
		a.find(risk.Execute, p.sp, "install --strip-program runs the given program on the installed files")
		a.runValue(p, "install --strip-program", true)
	}
	deep := name == "cp" && has(os, "-r", "-R", "-a", "--recursive", "--archive")
	target, hasT := val(os, "-t", "--target-directory")
	if !hasT {
		if len(ops) == 0 {
			return
		}
		target, ops = ops[len(ops)-1], ops[:len(ops)-1]
	}
	for _, x := range ops {
		if deep {
			a.accessDeep(x, c.cwd)
			continue
		}
		a.access(x, c.cwd, name == "mv", name == "mv")
	}
	a.access(target, c.cwd, true, false)
}

// cpLongOpts are the long options of GNU cp, mv, ln and install, against
// which abbreviations are resolved.
var cpLongOpts = []string{"archive", "attributes-only", "backup", "copy-contents", "debug", "dereference", "force",
	"interactive", "link", "no-dereference", "preserve", "no-preserve", "parents", "recursive", "reflink",
	"remove-destination", "sparse", "strip-trailing-slashes", "symbolic-link", "suffix", "target-directory",
	"no-target-directory", "update", "verbose", "one-file-system", "context", "keep-directory-symlink", "no-clobber",
	"exchange", "logical", "physical", "relative", "directory", "mode", "owner", "group", "strip", "strip-program",
	"preserve-timestamps", "preserve-context", "compare", "no-copy", "help", "version"}

// ruleChmod: recursive permission changes on a home or root directory are
// hard to undo; any change is a write.
func ruleChmod(a *analyzer, c *call) {
	name := programName(c.args[0].s)
	os, ops := a.scan(opts{long: []string{"reference", "from"}}, c.args)
	if name != "chattr" && name != "setfacl" && len(ops) > 0 {
		ops = ops[1:] // the mode or owner
	}
	recursive := has(os, "-R", "--recursive") || hasPrefixOpt(os, "--recur")
	for _, x := range ops {
		a.access(x, c.cwd, true, false)
		p := resolve(x.s, c.cwd)
		if recursive && (x.dyn || p == "/" || p == a.env.Home || p == "" || isSystemDir(p)) {
			a.find(risk.Destructive, c.sp, name+" -R on "+quote(a.text(x.sp))+" changes every file below it and cannot easily be undone")
		}
	}
	if recursive {
		a.find(risk.Write, c.sp, name+" -R changes every file below "+a.operandText(ops))
	}
}

func isSystemDir(p string) bool {
	switch p {
	case "/usr", "/etc", "/bin", "/sbin", "/lib", "/var", "/home", "/root", "/opt", "/boot", "/Users", "/System", "/Library":
		return true
	}
	return false
}

// ruleDisk: filesystem and partition tools destroy what is on the device.
func ruleDisk(a *analyzer, c *call) {
	name := programName(c.args[0].s)
	if name == "fdisk" || name == "sfdisk" || name == "parted" {
		for _, x := range c.args[1:] {
			if x.s == "-l" || x.s == "--list" || x.s == "print" {
				return
			}
		}
	}
	a.find(risk.Destructive, c.sp, name+" rewrites a disk or filesystem, destroying the data on it")
}

func isMkfs(name string) bool {
	return strings.HasPrefix(name, "mkfs.") || strings.HasPrefix(name, "mke2fs") || name == "newfs"
}

// ruleTar: extraction overwrites files; several options run programs.
func ruleTar(a *analyzer, c *call) {
	extract := a.tarPrograms(c)
	if !extract {
		// Creating or listing: the operands are read.
		os, ops := a.scan(opts{short: "fCbTXgKLNV", long: []string{"file", "directory", "exclude", "files-from", "exclude-from", "transform", "owner", "group", "mode"}}, c.args)
		// Creating an archive reads every operand recursively, unless
		// --no-recursion; listing reads only the archive.
		deep := !hasPrefixOpt(os, "--no-rec") && !tarListing(c.args)
		if f, ok := val(os, "-T", "--files-from"); ok && f.s != "-" {
			a.access(f, c.cwd, false, false)
		}
		for i, x := range ops {
			if i == 0 && !strings.HasPrefix(c.args[1].s, "-") && x.sp == c.args[1].sp {
				continue // old-style cluster
			}
			if deep {
				a.accessDeep(x, c.cwd)
			} else {
				a.access(x, c.cwd, false, false)
			}
		}
		return
	}
	a.find(risk.Write, c.sp, "tar extraction creates and overwrites files")
	dir := arg{s: ".", sp: c.sp}
	for i, x := range c.args {
		if (x.s == "-C" || x.s == "--directory") && i+1 < len(c.args) {
			dir = c.args[i+1]
		} else if strings.HasPrefix(x.s, "--directory=") {
			dir = arg{s: x.s[len("--directory="):], dyn: x.dyn, sp: x.sp}
		}
	}
	a.access(dir, c.cwd, true, false)
}

// tarListing reports tar t (list) or d (diff): the operands are member
// names, read from the archive.
func tarListing(args []arg) bool {
	for i, x := range args[1:] {
		s := x.s
		switch {
		case s == "--list" || s == "--diff" || s == "--compare":
			return true
		case strings.HasPrefix(s, "--"):
		case strings.HasPrefix(s, "-") || i == 0:
			if strings.ContainsAny(s, "cru") {
				return false
			}
			if strings.ContainsAny(s, "td") {
				return true
			}
		}
	}
	return false
}

// tarPrograms judges the options with which tar runs another program and
// reports whether tar extracts.
func (a *analyzer) tarPrograms(c *call) bool {
	args := c.args
	extract := false
	next := 2 // the word the next value-taking letter of an old-style cluster reads
	for i := 1; i < len(args); i++ {
		x := args[i]
		s := x.s
		if x.dyn {
			continue
		}
		if strings.HasPrefix(s, "--") {
			if s == "--extract" || s == "--get" {
				extract = true
			}
			long, ok := tarProgramOpt(s)
			if !ok {
				continue
			}
			a.find(risk.Execute, x.sp, "tar "+long+" runs another program")
			v, used, ok := optValue(args, i)
			if used {
				i++
			}
			if !ok {
				continue
			}
			if long == "--checkpoint-action" {
				code, isExec := strings.CutPrefix(v.s, "exec=")
				if !isExec {
					continue
				}
				v.s = code
			}
			a.runValue(v, "tar "+long, long == "--info-script" || long == "--new-volume-script")
			continue
		}
		oldStyle := i == 1 && !strings.HasPrefix(s, "-")
		if !oldStyle && (len(s) < 2 || s[0] != '-') {
			continue
		}
		cluster := strings.TrimPrefix(s, "-")
		for j := 0; j < len(cluster); j++ {
			letter := cluster[j]
			if letter == 'x' {
				extract = true
			}
			if strings.IndexByte("bCfFgHIKLNTVX", letter) < 0 {
				continue
			}
			var v arg
			ok := false
			switch {
			case oldStyle:
				if next < len(args) {
					v, ok = args[next], true
					next++
				}
			case j+1 < len(cluster):
				v, ok = arg{s: cluster[j+1:], dyn: x.dyn, sp: x.sp, w: x.w}, true
			case i+1 < len(args):
				i++
				v, ok = args[i], true
			}
			if letter == 'I' || letter == 'F' {
				a.find(risk.Execute, x.sp, "tar -I and -F run another program")
				if ok {
					a.runValue(v, "tar -"+string(letter), letter == 'F')
				}
			}
			if !oldStyle {
				break // the rest of the cluster was the value
			}
		}
		if oldStyle {
			i = max(i, next-1)
		}
	}
	return extract
}

// tarProgramOpt reports the long tar options whose value is a program,
// accepting the unambiguous prefixes GNU tar accepts.
func tarProgramOpt(s string) (string, bool) {
	for _, o := range [...]struct {
		long string
		min  int
	}{{"--checkpoint-action", 14}, {"--to-command", 5}, {"--use-compress-program", 6}, {"--info-script", 7},
		{"--new-volume-script", 6}, {"--rsh-command", 5}, {"--rmt-command", 5}} {
		if longOpt(s, o.long, o.min) {
			return o.long, true
		}
	}
	return "", false
}

// ruleZip: -T with -TT/--unzip-command runs a program.
func ruleZip(a *analyzer, c *call) {
	name := programName(c.args[0].s)
	for i := 1; i < len(c.args) && name == "zip"; i++ {
		x := c.args[i]
		if !strings.HasPrefix(x.s, "--unzip-command") && !strings.HasPrefix(x.s, "-TT") {
			continue
		}
		a.find(risk.Execute, x.sp, "zip -TT runs the given command to test the archive")
		v, next, ok := optValue(c.args, i)
		if len(x.s) > 3 && strings.HasPrefix(x.s, "-TT") {
			v, next, ok = arg{s: x.s[3:], dyn: x.dyn, sp: x.sp, w: x.w}, false, true
		}
		if ok {
			a.runValue(v, "zip -TT", true) // {} or the archive's name is added
			if next {
				i++
			}
		}
	}
	if name == "unzip" {
		a.find(risk.Write, c.sp, "unzip creates and may overwrite files")
		os, ops := a.scan(opts{short: "dxP"}, c.args)
		if len(ops) > 0 {
			a.access(ops[0], c.cwd, false, false)
		}
		if has(os, "-l", "-v", "-t", "-Z", "-p", "-c", "-z") {
			return // lists, tests or prints to standard output
		}
		dir := arg{s: ".", sp: c.sp}
		if d, ok := val(os, "-d"); ok {
			dir = d
		}
		a.access(dir, c.cwd, true, false)
		return
	}
	// zip [opts] archive files...: the archive is written, the files read,
	// recursively with -r or -R.
	os, ops := a.scan(opts{short: "bntOZPsixe", long: []string{"temp-path", "suffixes", "from-date", "before-date", "output-file",
		"compression-method", "password", "split-size", "include", "exclude", "unzip-command"}}, c.args)
	deep := has(os, "-r", "-R", "--recurse-paths", "--recurse-patterns") || hasPrefixOpt(os, "--recurse")
	for i, x := range ops {
		switch {
		case i == 0:
			a.access(x, c.cwd, true, false)
		case x.s == "-" && !x.dyn:
		case deep:
			a.accessDeep(x, c.cwd)
		default:
			a.access(x, c.cwd, false, false)
		}
	}
}

// ruleRg: --pre runs a program on every file searched, with the file's
// name added.
func ruleRg(a *analyzer, c *call) {
	for i := 1; i < len(c.args); i++ {
		x := c.args[i]
		if x.s != "--pre" && !strings.HasPrefix(x.s, "--pre=") {
			continue
		}
		a.find(risk.Execute, x.sp, "rg --pre runs a program on every file it searches")
		if v, next, ok := optValue(c.args, i); ok {
			a.runValue(v, "rg --pre", true)
			if next {
				i++
			}
		}
	}
	ruleRead(a, c)
}

// readsOperands lists programs that only read their operands.
func readsOperands(name string) bool {
	switch name {
	case "cat", "tac", "less", "more", "head", "tail", "nl", "wc", "od", "hexdump", "strings", "file", "stat",
		"md5sum", "sha1sum", "sha256sum", "sha512sum", "b2sum", "cksum", "cut", "paste", "diff", "cmp", "comm",
		"ls", "tree", "du", "readlink", "realpath", "bat", "batcat", "view", "grep", "egrep", "fgrep", "ag", "ack",
		"jq", "yq", "column", "fold", "fmt", "expand", "unexpand", "rev", "sort", "uniq", "tr", "look", "zcat", "bzcat", "xzcat",
		"zless", "zgrep", "lsattr", "getfacl", "identify", "exiftool", "pr", "iconv", "dos2unix", "unix2dos", "split", "csplit":
		return true
	}
	return false
}

// ruleRead records the operands of a reading program as reads. Programs
// whose first operand is a pattern or filter skip it.
func ruleRead(a *analyzer, c *call) {
	name := programName(c.args[0].s)
	o := opts{}
	skip := 0
	if spec, ok := readSpecFor(name); ok {
		a.readBySpec(c, name, spec)
		return
	}
	switch name {
	case "jq":
		ruleJq(a, c)
		return
	case "dos2unix", "unix2dos", "mac2unix", "unix2mac":
		ruleDos2unix(a, c)
		return
	case "rg", "ripgrep":
		// Every option of ripgrep that takes a value: one left out would
		// make its value a pattern or a path (rg --iglob G url).
		o = opts{short: "efmABCdDgEjMrtT", long: []string{"regexp", "file", "max-count", "after-context", "before-context",
			"context", "glob", "iglob", "type", "type-not", "pre", "pre-glob", "color", "colors", "sort", "sortr", "max-depth", "maxdepth",
			"threads", "replace", "encoding", "max-columns", "max-filesize", "engine", "type-add", "type-clear", "context-separator",
			"field-match-separator", "field-context-separator", "path-separator", "dfa-size-limit", "regex-size-limit",
			"ignore-file", "hostname-bin", "hyperlink-format"}}
		skip = 1
	case "ag", "ack":
		o = opts{short: "efmABCdDg", long: []string{"regexp", "file", "max-count", "after-context", "before-context",
			"context", "glob", "type", "type-not", "pre", "pre-glob", "color", "colors", "sort", "max-depth", "threads", "replace", "encoding"}}
		skip = 1
	case "yq":
		o = opts{long: []string{"arg", "argjson", "slurpfile", "rawfile", "indent", "from-file"}}
		skip = 1
	case "cut":
		o = opts{short: "dfbc", long: []string{"delimiter", "fields", "bytes", "characters", "output-delimiter"}}
	case "sort":
		o = opts{short: "koSTt", long: []string{"key", "output", "buffer-size", "temporary-directory", "field-separator", "parallel", "files0-from", "compress-program", "random-source"},
			abbrev: []string{"key", "output", "buffer-size", "temporary-directory", "field-separator", "parallel", "files0-from", "compress-program",
				"random-source", "ignore-leading-blanks", "dictionary-order", "ignore-case", "general-numeric-sort", "ignore-nonprinting", "month-sort",
				"human-numeric-sort", "numeric-sort", "random-sort", "reverse", "sort", "version-sort", "batch-size", "check", "debug", "merge",
				"stable", "unique", "zero-terminated", "help", "version"}}
	case "tr":
		return
	case "split", "csplit":
		o = opts{short: "lbnaCdpf", long: []string{"lines", "bytes", "number", "suffix-length", "line-bytes", "prefix"}}
	case "uniq":
		o = opts{short: "fsw", long: []string{"skip-fields", "skip-chars", "check-chars"}}
	case "xxd":
		o = opts{short: "cglosn"}
	}
	os, ops := a.scan(o, c.args)
	if skip > 0 && (has(os, "-e", "-f", "--regexp", "--file") || name == "jq" && has(os, "--from-file")) {
		skip = 0
	}
	if skip > len(ops) {
		skip = len(ops)
	}
	if skip > 0 && ops[0].glob {
		// An unquoted glob where the pattern goes: bash expands it, the
		// first name becomes the pattern and the others files the program
		// reads (grep -v ~/.n* README.md prints ~/.npmrc).
		skip = 0
	}
	deep := false
	switch name {
	case "rg", "ripgrep", "ag", "ack":
		deep = true
	case "grep", "egrep", "fgrep", "zgrep":
		deep = has(os, "-r", "-R") || hasPrefixOpt(os, "--recursive") || hasPrefixOpt(os, "--dereference-rec") ||
			hasPrefixOpt(os, "--directories=rec") || hasPrefixOpt(os, "--recur")
		if d, ok := val(os, "-d"); ok && strings.HasPrefix(d.s, "rec") {
			deep = true
		}
	}
	// A recursive search without a path searches the working directory
	// (rg, ag and ack read a piped input instead).
	a.readOperands(c, ops[skip:], deep, c.in.kind == inNone)
	if p, ok := val(os, "--compress-program"); ok && name == "sort" {
		a.find(risk.Execute, p.sp, "sort --compress-program runs the given program on its temporary files")
		a.runValue(p, "sort --compress-program", true)
	}
	if f, ok := val(os, "--files0-from"); ok && name == "sort" && f.s != "-" {
		a.access(f, c.cwd, false, false)
	}
	if f, ok := val(os, "-o", "--output"); ok && name == "sort" {
		a.access(f, c.cwd, true, false)
	}
	if f, ok := val(os, "-f", "--file"); ok && skip == 0 && name != "cut" {
		a.access(f, c.cwd, false, false)
	}
	if name == "uniq" && len(ops) == 2 {
		a.access(ops[1], c.cwd, true, false)
	}
}

// readBySpec judges a reading program with a complete option table.
func (a *analyzer) readBySpec(c *call, name string, spec readSpec) {
	os, ops := a.scan(spec.o, c.args)
	skip := spec.skip
	if skip > 0 && has(os, spec.noSkip...) {
		skip = 0
	}
	skip = min(skip, len(ops))
	if skip > 0 && ops[0].glob {
		// A glob where the pattern goes: its names past the first are
		// files the program reads (see ruleRead).
		skip = 0
	}
	deep := false
	switch name {
	case "grep", "egrep", "fgrep", "zgrep":
		deep = has(os, "-r", "-R", "--recursive", "--dereference-recursive")
		if d, ok := val(os, "-d", "--directories"); ok && strings.HasPrefix(d.s, "rec") {
			deep = true
		}
	case "ls":
		deep = has(os, "-R", "--recursive")
	case "du":
		// Dereferencing, du lists and sizes what links lead to.
		deep = has(os, "-L", "--dereference", "-D", "-H", "--dereference-args")
	case "tree":
		deep = has(os, "-l")
	case "diff":
		// Even without -r: diff DIR1 DIR2 compares the files one level
		// down (dotfiles and links included), and diff DIR FILE reads
		// DIR/FILE's name; an operand may be a directory, so each is
		// read as one, whatever it turns out to be.
		deep = true
	}
	// du and tree read names and sizes, not contents: plain reads.
	a.readOperands(c, ops[skip:], deep, true)
	for _, op := range os {
		if op.val.s == "" && !op.val.dyn || op.val.s == "-" {
			continue
		}
		switch {
		case slices.Contains(spec.reads, op.name) && deep:
			a.accessDeep(op.val, c.cwd) // diff --from-file/--to-file may name a directory too
		case slices.Contains(spec.reads, op.name):
			a.access(op.val, c.cwd, false, false)
		case slices.Contains(spec.writes, op.name):
			a.access(op.val, c.cwd, true, false)
		}
	}
}

// readOperands records the files a reading program reads: each operand,
// everything beneath it when deep, and the working directory when a deep
// read names no file and cwdIfNone is set.
func (a *analyzer) readOperands(c *call, ops []arg, deep, cwdIfNone bool) {
	if deep && len(ops) == 0 && cwdIfNone {
		a.accessDeep(arg{s: ".", sp: c.sp}, c.cwd)
	}
	for _, x := range ops {
		if deep {
			a.accessDeep(x, c.cwd)
		} else {
			a.access(x, c.cwd, false, false)
		}
	}
}

// ruleJq: jq's first operand is the filter unless -f gives it; --rawfile
// and --slurpfile take a name and a file, --arg and --argjson a name and
// a value (jq parses its options itself: no abbreviations, and these take
// two words).
func ruleJq(a *analyzer, c *call) {
	args := c.args[1:]
	filter, positional := true, false
	var files []arg
	for i := 0; i < len(args); i++ {
		x := args[i]
		s := x.s
		switch {
		case positional && (x.dyn || !strings.HasPrefix(s, "-")):
			// After --args the words are values, not files, but for the
			// filter when none came before.
			if filter && len(files) == 0 {
				files = append(files, x)
			}
		case x.dyn:
			files = append(files, x)
		case s == "--args" || s == "--jsonargs":
			positional = true
		case s == "--arg" || s == "--argjson":
			i += 2
		case s == "--rawfile" || s == "--slurpfile":
			if i+2 < len(args) {
				a.access(args[i+2], c.cwd, false, false)
			}
			i += 2
		case s == "-f" || s == "--from-file":
			filter = false
			if i+1 < len(args) {
				a.access(args[i+1], c.cwd, false, false)
			}
			i++
		case s == "--indent" || s == "-L":
			i++
		case s == "--":
			files = append(files, args[i+1:]...)
			i = len(args)
		case len(s) > 1 && s[0] == '-':
			if !jqFlag(s) {
				a.unknownOpt(c.args[0], opt{name: s, x: x})
			}
		default:
			files = append(files, x)
		}
	}
	if filter && len(files) > 0 {
		files = files[1:]
	}
	a.jqFiles(c, files)
}

func (a *analyzer) jqFiles(c *call, files []arg) {
	for _, f := range files {
		a.access(f, c.cwd, false, false)
	}
}

// jqFlag reports a jq option that takes no value; short ones may be
// clustered (-rc).
func jqFlag(s string) bool {
	switch s {
	case "--seq", "--stream", "--stream-errors", "--ascii-output", "--raw-output", "--join-output", "--raw-output0",
		"--compact-output", "--color-output", "--monochrome-output", "--sort-keys", "--exit-status", "--null-input",
		"--slurp", "--raw-input", "--tab", "--unbuffered", "--help", "--version", "--build-configuration":
		return true
	}
	if strings.HasPrefix(s, "--") {
		return false
	}
	return strings.Trim(s[1:], "nrjascCMSehV") == ""
}

// ruleDos2unix: the converters rewrite their operands in place, and with
// -n (--newfile) operands come in pairs, a file read and a file written.
// Every operand is judged as written: the read half of a pair is judged
// stricter than it needs, never looser.
func ruleDos2unix(a *analyzer, c *call) {
	for _, x := range c.args[1:] {
		if x.dyn || len(x.s) < 2 || x.s[0] != '-' {
			a.access(x, c.cwd, true, false)
		}
	}
}

// isHarmlessDevice reports special files that neither store nor leak data,
// read or written: the null and random devices, and the standard output
// and error (by name or as descriptor 1 or 2). The standard input is
// harmless to read; writing it is not (isTerminal). A descriptor other than
// 0, 1 or 2 is whatever the shell has open there, and a path through a
// descriptor (/dev/fd/3/x) is a path inside whatever directory it is open
// on (throughFd): neither is harmless.
func isHarmlessDevice(p string) bool {
	switch p {
	case "/dev/null", "/dev/stdout", "/dev/stderr", "/dev/stdin", "/dev/zero", "/dev/random", "/dev/urandom", "/dev/full":
		return true
	}
	if n, ok := fdNumber(p); ok {
		return n == "0" || n == "1" || n == "2"
	}
	return false
}

// isBlockDevice reports disk devices, which a write destroys.
func isBlockDevice(p string) bool {
	for _, pre := range [...]string{"/dev/sd", "/dev/hd", "/dev/vd", "/dev/xvd", "/dev/nvme", "/dev/mmcblk", "/dev/disk", "/dev/rdisk", "/dev/md", "/dev/dm-", "/dev/mapper/", "/dev/loop", "/dev/mem", "/dev/kmem", "/dev/port"} {
		if strings.HasPrefix(p, pre) {
			return true
		}
	}
	return false
}
