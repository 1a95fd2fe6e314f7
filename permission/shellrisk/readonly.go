package shellrisk

import (
	"path"
	"slices"
	"strings"
)

// ReadOnly returns the read-only form a simple command takes ("cat",
// "git status", "go version", …), the name of the built-in rule that may
// allow it, or "" when the command is not one the analyser understands
// completely as a read.
//
// A command has a read-only form only when:
//   - every word is known before it runs (not Dynamic), and it runs as
//     written: not through a wrapper, not with assignments before it (not
//     Prefixed), and not a program given by a path ("./ls");
//   - every option is in the program's complete option table, with its
//     arity, and none of them writes, runs another program (a pager,
//     --pre, -exec, an external diff driver, a decompressor) or reads a
//     file the analyser does not see as an access;
//   - a sed or awk program, or a jq filter, holds nothing that writes,
//     runs a command or reads the environment;
//   - no unquoted glob could expand to an option: a pattern that may match
//     a name starting with "-" (*.go, ?x) is accepted only after "--", or
//     for the few programs none of whose options writes, runs or reads a
//     named file (cat, ls, head, tail, nl, stat);
//   - for git: only the options --no-pager, -P, -C DIR and the pathspec
//     and lock switches before the subcommand, and only the listing forms
//     of git branch and git tag.
//
// ReadOnly says nothing about where the command reads: the caller must
// still check that every access is a read inside the working directory
// that is neither a credential nor protected, that nothing is redirected
// into a file, and that the analysis found nothing (see package permission,
// the built-in rules).
func ReadOnly(c *Command) string {
	if c == nil || c.Dynamic || c.Prefixed || len(c.Argv) == 0 {
		return ""
	}
	args := make([]arg, len(c.Argv))
	for i, w := range c.Argv {
		args[i] = arg{s: w, glob: c.Globs&(1<<min(i, 63)) != 0}
	}
	name := args[0].s
	if args[0].glob || strings.IndexByte(name, '/') >= 0 {
		return ""
	}
	if len(args) == 2 { // the table is built only for a command that may be a version query
		if v, ok := versionForms.get()[name]; ok && slices.Contains(v, args[1].s) {
			return name + " " + versionWord(name)
		}
	}
	switch name {
	case "git":
		return gitReadOnly(args)
	case "go":
		return goReadOnly(args)
	case "find":
		return findReadOnly(args)
	case "sed":
		return sedReadOnly(args)
	case "awk", "gawk", "mawk", "nawk":
		return awkReadOnly(args)
	case "jq":
		return jqReadOnly(args)
	case "cd":
		// cd DIR: the caller decides whether DIR is where the command
		// already is (the working directory itself).
		if len(args) == 2 && !args[1].glob && args[1].s != "" && args[1].s[0] != '-' {
			return "cd"
		}
		return ""
	case "echo", "true", "false", ":":
		// They only print their words, or nothing (a file name a glob
		// expands to is printed too); a redirection is the caller's to
		// judge.
		return name
	case "printf":
		// printf -v NAME assigns instead of printing.
		if len(args) < 2 || strings.HasPrefix(args[1].s, "-") {
			return ""
		}
		for _, x := range args[1:] {
			if x.glob {
				return ""
			}
		}
		return name
	}
	sp, ok := roSpecs.get()[name]
	if !ok {
		return ""
	}
	if !sp.check(args) {
		return ""
	}
	if sp.form != "" {
		return sp.form
	}
	return name
}

// versionForms lists the toolchains whose version query is read-only, and
// the words that ask for it. Left out on purpose: cargo and rustc (a
// rust-toolchain.toml in the project may name a toolchain by path, which
// the rustup proxy runs), yarn and pnpm (.yarnrc.yml yarnPath and corepack
// run or fetch the project's own copy), mvn (.mvn/jvm.config may load a
// Java agent from the project), dotnet (global.json may name an SDK path)
// and bun (bunfig.toml).
var versionForms = lazy[map[string][]string]{build: func() map[string][]string {
	return map[string][]string{
		"node": {"--version", "-v"}, "npm": {"--version", "-v"}, "deno": {"--version", "-V"},
		"python": {"--version", "-V"}, "python3": {"--version", "-V"}, "pip": {"--version", "-V"}, "pip3": {"--version", "-V"},
		"ruby": {"--version", "-v"}, "gem": {"--version"}, "java": {"--version", "-version"}, "javac": {"--version", "-version"},
		"gcc": {"--version"}, "g++": {"--version"}, "clang": {"--version"}, "cc": {"--version"}, "make": {"--version", "-v"},
		"cmake": {"--version"}, "git": {"--version"}, "docker": {"--version", "-v"}, "php": {"--version", "-v"},
		"perl": {"--version", "-v"}, "go": {"version"}, "tsc": {"--version", "-v"},
		"terraform": {"--version", "-v", "version"}, "jq": {"--version"}, "rg": {"--version", "-V"}, "uv": {"--version", "-V"},
	}
}}

// versionWord is the word the rule for a version query is written with.
func versionWord(name string) string {
	if name == "go" {
		return "version"
	}
	return "--version"
}

// roSpec is a read-only program with a complete option table.
type roSpec struct {
	o opts
	// form is the rule's command when it is not the program's name
	// (egrep is grep).
	form string
	// deny lists options of the table that do not read only (tree -o).
	deny []string
	// maxOps bounds the operands (uniq IN OUT writes OUT); 0 is no bound.
	maxOps int
	// noOps is set for programs that take no operand (pwd, uname).
	noOps bool
	// globSafe marks programs none of whose options writes, runs or reads
	// a file it names, so that a glob expanding to an option is harmless.
	globSafe bool
	// extra checks the options and operands further.
	extra func(os []opt, ops []arg) bool
	// pattern marks programs whose first operand is a pattern, not a file,
	// unless an option gives the pattern (grep, rg): a glob there is
	// refused, since the names it expands to past the first are read as
	// files the analysis never saw (grep -v ~/.n* README.md prints
	// ~/.npmrc).
	pattern bool
}

// check scans args with the table: every option known, none denied, no
// glob that may expand to an option, and the extra check.
func (sp *roSpec) check(args []arg) bool {
	os, ops, tail := roScan(sp.o, args)
	for _, op := range os {
		if op.unknown || slices.Contains(sp.deny, op.name) || op.x.glob || op.val.glob {
			return false
		}
	}
	if !sp.globSafe {
		for _, x := range ops {
			if mayBeOption(x) {
				return false
			}
		}
	}
	ops = append(ops, tail...)
	if sp.maxOps > 0 && len(ops) > sp.maxOps || sp.noOps && len(ops) > 0 {
		return false
	}
	if sp.pattern && len(ops) > 0 && ops[0].glob && !slices.ContainsFunc(os, func(o opt) bool {
		return o.name == "-e" || o.name == "--regexp" || o.name == "-f" || o.name == "--file"
	}) {
		return false
	}
	return sp.extra == nil || sp.extra(os, ops)
}

// roScan splits args[1:] into options, operands and the words after "--"
// with a complete table, taking long options only by their full names: a
// table lists the options known to read, and an abbreviation of an option
// it leaves out (rg --pre, a prefix of --pretty) must not be read as one it
// lists.
func roScan(o opts, args []arg) ([]opt, []arg, []arg) {
	o.abbrev = exactNames
	return o.scanInto(nil, nil, args)
}

// exactNames as opts.abbrev turns abbreviations off: no option name is a
// prefix of it.
var exactNames = []string{"\x00"}

// mayBeOption reports whether an operand is an unquoted glob that may
// match a name starting with "-".
func mayBeOption(x arg) bool {
	return x.glob && x.s != "" && strings.IndexByte("*?[", x.s[0]) >= 0
}

var sumSpec = roSpec{o: opts{short: "a", long: []string{"algorithm", "length"},
	flags: "btzlr", flagsLong: []string{"binary", "text", "tag", "zero", "untagged", "raw", "base64", "help", "version"}, complete: true}}

var roSpecs = lazy[map[string]roSpec]{build: func() map[string]roSpec {
	return map[string]roSpec{
		"cat":     {o: catSpec.o, globSafe: true},
		"head":    {o: headTailSpec.o, globSafe: true},
		"tail":    {o: headTailSpec.o, globSafe: true, deny: []string{"-f", "-F", "--follow", "--retry", "--pid"}},
		"ls":      {o: lsSpec.o, globSafe: true},
		"wc":      {o: wcSpec.o, deny: []string{"--files0-from"}},
		"grep":    {o: grepSpec.o, deny: []string{"-f", "--file", "--exclude-from"}, pattern: true},
		"egrep":   {o: grepSpec.o, form: "grep", deny: []string{"-f", "--file", "--exclude-from"}, pattern: true},
		"fgrep":   {o: grepSpec.o, form: "grep", deny: []string{"-f", "--file", "--exclude-from"}, pattern: true},
		"diff":    {o: diffSpec.o, deny: []string{"-l", "--paginate", "-X", "--exclude-from"}},
		"du":      {o: duSpec.o, deny: []string{"-X", "--exclude-from", "--files0-from"}},
		"tree":    {o: treeSpec.o, deny: []string{"-o", "-R", "-H", "--fromfile", "--infofile", "--gitfile"}},
		"od":      {o: odSpec.o},
		"hexdump": {o: hexdumpSpec.o, deny: []string{"-f", "--format-file"}},
		"nl": {o: opts{short: "bdfhilnsvw", long: []string{"body-numbering", "section-delimiter", "footer-numbering", "header-numbering",
			"line-increment", "join-blank-lines", "number-format", "number-separator", "starting-line-number", "number-width"},
			flags: "p", flagsLong: []string{"no-renumber", "help", "version"}, complete: true}, globSafe: true},
		"stat": {o: opts{short: "c", long: []string{"format", "printf", "cached"}, flags: "LftZ",
			flagsLong: []string{"dereference", "file-system", "terse", "context", "help", "version"}, complete: true}, globSafe: true},
		"file": {o: opts{short: "eFP", long: []string{"exclude", "exclude-quiet", "separator", "parameter"},
			flags: "0bcdEhiIkLlNnprsv",
			flagsLong: []string{"brief", "checking-printout", "no-buffer", "no-dereference", "dereference", "mime", "mime-type",
				"mime-encoding", "keep-going", "list", "no-pad", "preserve-date", "raw", "special-files", "print0", "extension",
				"apple", "help", "version"}, complete: true},
			// -s reads block devices; -z and -Z decompress with other
			// programs; -S turns off the sandbox.
			deny: []string{"-s", "--special-files"}},
		"sort": {o: opts{short: "kStT", long: []string{"key", "buffer-size", "field-separator", "sort", "parallel", "batch-size"},
			flags: "bdfgiMhnRrVcCsuz",
			flagsLong: []string{"ignore-leading-blanks", "dictionary-order", "ignore-case", "general-numeric-sort", "ignore-nonprinting",
				"month-sort", "human-numeric-sort", "numeric-sort", "random-sort", "reverse", "version-sort", "check", "merge",
				"stable", "unique", "zero-terminated", "debug", "help", "version"}, complete: true},
			// -T names a directory sort writes temporary files to.
			deny: []string{"-T"}},
		"uniq": {o: opts{short: "fsw", long: []string{"skip-fields", "skip-chars", "check-chars"}, flags: "cdDiuz",
			flagsLong: []string{"count", "repeated", "ignore-case", "unique", "zero-terminated", "help", "version"},
			optional:  []string{"all-repeated", "group"}, complete: true}, maxOps: 1},
		"cut": {o: opts{short: "bcdf", long: []string{"bytes", "characters", "delimiter", "fields", "output-delimiter"},
			flags: "nsz", flagsLong: []string{"complement", "only-delimited", "zero-terminated", "help", "version"}, complete: true}},
		"tr": {o: opts{flags: "cCdst", flagsLong: []string{"complement", "delete", "squeeze-repeats", "truncate-set1", "help", "version"},
			complete: true}, maxOps: 2},
		"cmp": {o: opts{short: "in", long: []string{"ignore-initial", "bytes"}, flags: "bls",
			flagsLong: []string{"print-bytes", "verbose", "quiet", "silent", "help", "version"}, complete: true}, maxOps: 4},
		"md5sum": sumSpec, "sha1sum": sumSpec, "sha224sum": sumSpec, "sha256sum": sumSpec, "sha384sum": sumSpec,
		"sha512sum": sumSpec, "b2sum": sumSpec, "cksum": sumSpec,
		"rg": {o: rgOpts, pattern: true},
		"basename": {o: opts{short: "s", long: []string{"suffix"}, flags: "az", flagsLong: []string{"multiple", "zero", "help", "version"},
			complete: true}},
		"dirname": {o: opts{flags: "z", flagsLong: []string{"zero", "help", "version"}, complete: true}},
		"pwd":     {o: opts{flags: "LP", complete: true}, noOps: true},
		"which":   {o: opts{flags: "as", complete: true}},
		"whoami":  {o: opts{flagsLong: []string{"help", "version"}, complete: true}, noOps: true},
		"uname": {o: opts{flags: "asnrvmpio", flagsLong: []string{"all", "kernel-name", "nodename", "kernel-release", "kernel-version",
			"machine", "processor", "hardware-platform", "operating-system", "help", "version"}, complete: true}, noOps: true},
		"date": {o: opts{short: "d", long: []string{"date"}, optShort: "I", flags: "uR",
			flagsLong: []string{"utc", "universal", "rfc-email", "debug", "help", "version"},
			optional:  []string{"iso-8601", "rfc-3339"}, complete: true},
			// An operand not starting with + sets the clock.
			extra: func(_ []opt, ops []arg) bool {
				return len(ops) == 0 || len(ops) == 1 && strings.HasPrefix(ops[0].s, "+")
			}},
	}
}}

// rgOpts is ripgrep's table without --pre, --pre-glob, -z/--search-zip
// (they run other programs), --hostname-bin, -f/--file and --ignore-file
// (they read files the analysis does not see).
var rgOpts = opts{short: "ABCeEgjmMrtTd", long: []string{"after-context", "before-context", "context", "regexp", "encoding",
	"glob", "iglob", "threads", "max-count", "max-columns", "replace", "type", "type-not", "max-depth", "maxdepth",
	"max-filesize", "colors", "sort", "sortr", "engine", "type-add", "type-clear", "context-separator", "field-match-separator",
	"field-context-separator", "path-separator", "dfa-size-limit", "regex-size-limit"},
	flags: "0abcFHhiIlLnNopPqsSuUvVwx",
	flagsLong: []string{"binary", "block-buffered", "byte-offset", "case-sensitive", "column", "count", "count-matches", "crlf",
		"debug", "files", "files-with-matches", "files-without-match", "fixed-strings", "follow", "glob-case-insensitive",
		"heading", "hidden", "ignore-case", "invert-match", "json", "line-buffered", "line-number", "line-regexp",
		"max-columns-preview", "mmap", "multiline", "multiline-dotall", "no-config", "no-filename", "no-heading", "no-hidden",
		"no-ignore", "no-ignore-dot", "no-ignore-exclude", "no-ignore-files", "no-ignore-global", "no-ignore-parent",
		"no-ignore-vcs", "no-line-number", "no-messages", "no-mmap", "no-multiline", "no-require-git", "no-unicode", "null",
		"null-data", "one-file-system", "only-matching", "passthru", "pcre2", "no-pcre2", "pretty", "quiet", "smart-case",
		"stats", "text", "trim", "no-trim", "type-list", "unrestricted", "vimgrep", "with-filename", "word-regexp", "trace",
		"no-context-separator", "include-zero", "sort-files", "help", "version"},
	optional: []string{"color"}, complete: true}

// findReadOnly accepts find with tests and the printing actions only:
// -exec, -execdir, -ok, -okdir, -delete, -fprint, -fprint0, -fprintf and
// -fls (and any predicate not listed) make it not read-only.
func findReadOnly(args []arg) string {
	i := 1
	for i < len(args) && (args[i].s == "-H" || args[i].s == "-L" || args[i].s == "-P") {
		i++
	}
	for ; i < len(args); i++ {
		x := args[i]
		if x.glob {
			// find reads every word the same way: a glob could become a
			// predicate such as -delete.
			return ""
		}
		s := x.s
		if s == "" {
			continue
		}
		if s[0] != '-' {
			// A starting point, or ( ) ! , of the expression. A starting
			// point is an access the caller judges.
			continue
		}
		n, ok := findPreds.get()[s]
		if !ok {
			if strings.HasPrefix(s, "-newer") && len(s) == 8 {
				n, ok = 1, true // -newerXY
			}
		}
		if !ok {
			return ""
		}
		for k := 0; k < n; k++ {
			i++
			if i >= len(args) || args[i].glob {
				return ""
			}
		}
	}
	return "find"
}

// findPreds maps a find test, option or printing action to the words it
// takes.
var findPreds = lazy[map[string]int]{build: func() map[string]int {
	return map[string]int{
		"-name": 1, "-iname": 1, "-path": 1, "-ipath": 1, "-wholename": 1, "-iwholename": 1, "-regex": 1, "-iregex": 1,
		"-type": 1, "-xtype": 1, "-size": 1, "-mtime": 1, "-mmin": 1, "-atime": 1, "-amin": 1, "-ctime": 1, "-cmin": 1,
		"-newer": 1, "-anewer": 1, "-cnewer": 1, "-perm": 1, "-user": 1, "-group": 1, "-uid": 1, "-gid": 1, "-links": 1,
		"-inum": 1, "-samefile": 1, "-lname": 1, "-ilname": 1, "-used": 1, "-fstype": 1, "-maxdepth": 1, "-mindepth": 1,
		"-regextype": 1, "-printf": 1, "-context": 1,
		"-empty": 0, "-readable": 0, "-writable": 0, "-executable": 0, "-nouser": 0, "-nogroup": 0, "-depth": 0, "-prune": 0,
		"-quit": 0, "-print": 0, "-print0": 0, "-ls": 0, "-true": 0, "-false": 0, "-not": 0, "-a": 0, "-and": 0, "-o": 0,
		"-or": 0, "-follow": 0, "-mount": 0, "-xdev": 0, "-noleaf": 0, "-daystart": 0, "-ignore_readdir_race": 0,
		"-noignore_readdir_race": 0, "-warn": 0, "-nowarn": 0, "-help": 0, "--help": 0, "-version": 0, "--version": 0,
	}
}}

// goReadOnly accepts go version, go env (not -w or -u), go list (without
// the flags that build, run or go to the network) and go doc.
func goReadOnly(args []arg) string {
	if len(args) < 2 || args[1].glob {
		return ""
	}
	var o opts
	switch args[1].s {
	case "version":
		o = opts{flags: "mv", complete: true}
	case "env":
		o = opts{flagsLong: []string{"json", "changed"}, complete: true}
	case "doc":
		o = opts{flagsLong: []string{"all", "c", "cmd", "short", "src", "u"}, complete: true}
	case "list":
		// Go flags are single-dash words; they are listed as long
		// options and rewritten below.
		o = opts{long: []string{"f", "tags", "mod"}, flagsLong: []string{"e", "deps", "test", "find", "m"},
			optional: []string{"json"}, complete: true}
	default:
		return ""
	}
	rest := make([]arg, 0, len(args)-1)
	rest = append(rest, args[1])
	for _, x := range args[2:] {
		if x.glob {
			return ""
		}
		if strings.HasPrefix(x.s, "-") && !strings.HasPrefix(x.s, "--") && len(x.s) > 1 {
			if args[1].s == "version" {
				rest = append(rest, x)
				continue
			}
			x.s = "-" + x.s // go's -json is getopt's --json
		}
		rest = append(rest, x)
	}
	os, _, _ := roScan(o, rest)
	for _, op := range os {
		if op.unknown {
			return ""
		}
		if op.name == "--mod" && op.val.s != "readonly" && op.val.s != "vendor" {
			return ""
		}
	}
	return "go " + args[1].s
}

// sedReadOnly accepts sed without -i, -f, and with a script of commands
// that only print: no w, W, r, R, e, v-less surprises, and no s///w or
// s///e.
func sedReadOnly(args []arg) string {
	o := opts{short: "el", long: []string{"expression", "line-length"}, flags: "nEsuzrb",
		flagsLong: []string{"quiet", "silent", "regexp-extended", "separate", "unbuffered", "null-data", "posix",
			"debug", "sandbox", "binary", "help", "version"}, complete: true}
	os, ops, tail := roScan(o, args)
	var scripts []arg
	for _, op := range os {
		if op.unknown || op.x.glob || op.val.glob {
			return ""
		}
		if op.name == "-e" || op.name == "--expression" {
			scripts = append(scripts, op.val)
		}
	}
	ops = append(ops, tail...)
	if len(scripts) == 0 {
		if len(ops) == 0 {
			return ""
		}
		scripts, ops = ops[:1], ops[1:]
	}
	for _, s := range scripts {
		if s.glob || !sedPrintsOnly(s.s) {
			return ""
		}
	}
	for _, x := range ops {
		if mayBeOption(x) {
			return ""
		}
	}
	return "sed"
}

// sedPrintsOnly parses a GNU sed script and reports whether every command
// only prints or edits the pattern space: r, R, w, W, e and the s flags w
// and e (and anything not understood) make it false.
func sedPrintsOnly(s string) bool {
	i := 0
	n := len(s)
	skipBlank := func() {
		for i < n && (s[i] == ' ' || s[i] == '\t') {
			i++
		}
	}
	// regex reads a delimited part; i is after the opening delimiter.
	regex := func(d byte) bool {
		for i < n {
			switch s[i] {
			case '\\':
				i += 2
				continue
			case '\n':
				if d != '\n' {
					return false
				}
			}
			if s[i] == d {
				i++
				return true
			}
			i++
		}
		return false
	}
	address := func() bool {
		switch {
		case i < n && s[i] >= '0' && s[i] <= '9':
			for i < n && (s[i] >= '0' && s[i] <= '9' || s[i] == '~') {
				i++
			}
		case i < n && s[i] == '$':
			i++
		case i < n && s[i] == '/':
			i++
			if !regex('/') {
				return false
			}
			for i < n && (s[i] == 'I' || s[i] == 'M') {
				i++
			}
		case i+1 < n && s[i] == '\\':
			d := s[i+1]
			if d == '\n' || d == '\\' {
				return false
			}
			i += 2
			if !regex(d) {
				return false
			}
			for i < n && (s[i] == 'I' || s[i] == 'M') {
				i++
			}
		}
		return true
	}
	end := func() bool {
		skipBlank()
		if i < n && s[i] == '#' {
			for i < n && s[i] != '\n' {
				i++
			}
		}
		if i >= n {
			return true
		}
		switch s[i] {
		case ';', '\n':
			i++
			return true
		case '}':
			return true
		}
		return false
	}
	for i < n {
		for i < n && (s[i] == ' ' || s[i] == '\t' || s[i] == ';' || s[i] == '\n') {
			i++
		}
		if i >= n {
			break
		}
		if s[i] == '#' {
			for i < n && s[i] != '\n' {
				i++
			}
			continue
		}
		if !address() {
			return false
		}
		skipBlank()
		if i < n && s[i] == ',' {
			i++
			skipBlank()
			if i < n && (s[i] == '+' || s[i] == '~') {
				i++
			}
			if !address() {
				return false
			}
			skipBlank()
		}
		for i < n && (s[i] == '!' || s[i] == ' ') {
			i++
		}
		if i >= n {
			return false
		}
		c := s[i]
		i++
		switch c {
		case '{':
			continue
		case '}', '=', 'd', 'D', 'g', 'G', 'h', 'H', 'n', 'N', 'p', 'P', 'x', 'z', 'F':
		case 'q', 'Q', 'l', 'L':
			skipBlank()
			for i < n && s[i] >= '0' && s[i] <= '9' {
				i++
			}
		case ':', 'b', 't', 'T':
			// A label: GNU sed ends it at ; or a newline, older ones only
			// at a newline, and what follows white space inside it is read
			// differently by different versions: refuse white space.
			skipBlank()
			for i < n && s[i] != '\n' && s[i] != ';' && (c == ':' || s[i] != '}') {
				if s[i] == ' ' || s[i] == '\t' {
					return false
				}
				i++
			}
		case 'a', 'i', 'c':
			// Text to the end of the line, continued by backslashes.
			for i < n && s[i] != '\n' {
				if s[i] == '\\' {
					i++
				}
				i++
			}
			continue
		case 's', 'y':
			if i >= n || s[i] == '\n' || s[i] == '\\' {
				return false
			}
			d := s[i]
			i++
			for range 2 { // the pattern and the replacement
				if !regex(d) {
					return false
				}
			}
			if c == 's' {
				for i < n && strings.IndexByte("gpiImM0123456789", s[i]) >= 0 {
					i++
				}
			}
		default:
			// r R w W e v and anything unknown.
			return false
		}
		if !end() {
			return false
		}
	}
	return true
}

// awkReadOnly accepts awk with -F and -v, and a program text (not -f)
// that neither runs commands, redirects output, reads other files nor the
// environment.
func awkReadOnly(args []arg) string {
	o := opts{short: "Fv", long: []string{"field-separator", "assign"}, complete: true}
	os, ops, tail := roScan(o, args)
	for _, op := range os {
		if op.unknown || op.x.glob || op.val.glob {
			return ""
		}
		if op.name == "-v" || op.name == "--assign" {
			// -v ARGC=9 or SYMTAB=…: the tables the program text may not
			// name may not be set from outside either.
			name, _, _ := strings.Cut(op.val.s, "=")
			if !awkPrintsOnly(name) {
				return ""
			}
		}
	}
	ops = append(ops, tail...)
	if len(ops) == 0 || ops[0].glob || !awkPrintsOnly(ops[0].s) {
		return ""
	}
	for _, x := range ops[1:] {
		if mayBeOption(x) {
			return ""
		}
	}
	return "awk"
}

// awkPrintsOnly reports whether an awk program cannot run a command,
// write a file, read a file it names or read the environment: no |
// (pipes to and from commands, coprocesses), no > after the first print or
// printf (a redirection), no system, getline, ENVIRON, ARGV or ARGC (a
// program may add files to read), close, fflush, PROCINFO, SYMTAB or
// FUNCTAB (gawk's tables of every variable and function), and no @
// (gawk's @load, @include and indirect calls). Strings, regular
// expressions and comments are not told apart from code: a quote inside a
// regular expression would make a reader skip code as a string, so every
// byte is read as if it were code, and a | or > inside a string also makes
// it false.
func awkPrintsOnly(p string) bool {
	printed := false
	for i := 0; i < len(p); i++ {
		c := p[i]
		switch {
		case c == '|':
			if i+1 < len(p) && p[i+1] == '|' {
				i++
				continue
			}
			return false
		case c == '>':
			if printed {
				return false
			}
		case c == '@':
			return false
		case c == '_' || c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z':
			j := identEnd(p, i)
			switch p[i:j] {
			case "system", "getline", "ENVIRON", "ARGV", "ARGC", "PROCINFO", "close", "fflush",
				// gawk's SYMTAB reaches every global by name, ENVIRON and
				// ARGV among them (SYMTAB["ENV" "IRON"]), and FUNCTAB
				// every function.
				"SYMTAB", "FUNCTAB":
				return false
			case "print", "printf":
				printed = true
			}
			i = j - 1
		}
	}
	return true
}

// identEnd returns the end of the identifier starting at i.
func identEnd(p string, i int) int {
	j := i + 1
	for j < len(p) && (p[j] == '_' || p[j] >= 'a' && p[j] <= 'z' || p[j] >= 'A' && p[j] <= 'Z' || p[j] >= '0' && p[j] <= '9') {
		j++
	}
	return j
}

// jqReadOnly accepts jq with output options and --arg/--argjson, without
// -f, --rawfile, --slurpfile, -L or --args, and a filter that does not
// read the environment or load modules.
func jqReadOnly(args []arg) string {
	flags := "rjacnseSCMRh"
	long := []string{"raw-output", "raw-output0", "join-output", "ascii-output", "compact-output", "null-input", "slurp",
		"exit-status", "sort-keys", "color-output", "monochrome-output", "raw-input", "tab", "seq", "stream", "stream-errors",
		"help", "version"}
	var ops []arg
	for i := 1; i < len(args); i++ {
		x := args[i]
		s := x.s
		if x.glob && (len(ops) == 0 || mayBeOption(x)) {
			return ""
		}
		switch {
		case s == "--arg" || s == "--argjson":
			if i+2 >= len(args) || args[i+1].glob || args[i+2].glob {
				return ""
			}
			i += 2
		case s == "--indent":
			if i+1 >= len(args) || !isDigits(args[i+1].s) {
				return ""
			}
			i++
		case strings.HasPrefix(s, "--"):
			if !slices.Contains(long, s[2:]) {
				return ""
			}
		case len(s) > 1 && s[0] == '-':
			for _, f := range []byte(s[1:]) {
				if strings.IndexByte(flags, f) < 0 {
					return ""
				}
			}
		default:
			ops = append(ops, x)
		}
	}
	if len(ops) == 0 || !jqFilterReads(ops[0].s) {
		return ""
	}
	return "jq"
}

// jqFilterReads reports whether a jq filter names nothing that reads the
// environment ($ENV, env) or loads modules (import, include). Strings are
// read as code too: "\(env)" interpolates code into a string. jq reads a
// variable as '$' and a name, with white space and comments allowed
// between them ($ ENV, $ # c<newline>ENV): a '$' not followed at once by a
// name is refused rather than read past.
func jqFilterReads(f string) bool {
	for i := 0; i < len(f); i++ {
		c := f[i]
		if c == '$' && (i+1 >= len(f) || !isIdentStart(f[i+1])) {
			return false
		}
		if c == '$' || isIdentStart(c) {
			j := identEnd(f, i)
			switch f[i:j] {
			case "env", "$ENV", "import", "include", "get_search_list", "modulemeta", "input_filename", "$__prog_args",
				"$__loc__", "get_prog_origin", "get_jq_origin":
				return false
			}
			i = j - 1
		}
	}
	return true
}

// SkipsGitDir reports whether a recursive search by c leaves .git
// directories out. git grep reads what git tracks, never .git. rg skips
// .git only because it is hidden: --hidden, -uu (or -u twice, or
// --unrestricted twice) and a --glob/--iglob that lets the name .git in
// (-g '*', -g '**') make it search .git, and so does a name given as a
// path (the caller checks that) or an ignore file that negates a pattern
// (Tree.Unignore). Every other program is taken to read .git.
func SkipsGitDir(c *Command) bool {
	if c == nil || len(c.Argv) == 0 {
		return false
	}
	switch c.Argv[0] {
	case "git":
		return len(c.Argv) > 1 && c.Argv[1] == "grep"
	case "rg":
	default:
		return false
	}
	args := make([]arg, len(c.Argv))
	for i, w := range c.Argv {
		args[i] = arg{s: w}
	}
	os, _, _ := roScan(rgOpts, args)
	u := 0
	for _, op := range os {
		switch op.name {
		case "--hidden":
			return false
		case "-u", "--unrestricted":
			u++
		case "-g", "--glob", "--iglob":
			if globMayMatchGit(op.val.s, op.name == "--iglob") {
				return false
			}
		}
	}
	return u < 2
}

// globMayMatchGit reports whether an rg --glob whitelist may match a
// directory named .git (rg's globs, like gitignore's, let * match a
// leading dot). A pattern with a slash, ** or braces is taken to match.
func globMayMatchGit(g string, fold bool) bool {
	if strings.HasPrefix(g, "!") {
		return false // an exclusion
	}
	if fold {
		g = strings.ToLower(g)
	}
	if strings.ContainsAny(g, "/{\\") || strings.Contains(g, "**") {
		return true
	}
	m, err := path.Match(g, ".git")
	return m || err != nil
}
