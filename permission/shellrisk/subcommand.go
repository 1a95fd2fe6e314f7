package shellrisk

import (
	"slices"
	"strings"
)

// gitGlobalTable lists git's options before the subcommand (git.c
// handle_options, as gitGlobalOpts reads them), for Subcommand. git takes
// them in full only and one to a word.
var gitGlobalTable = opts{stop: true, exact: true, complete: true,
	short: "Cc", long: []string{"git-dir", "work-tree", "namespace", "super-prefix", "config-env"},
	flags: "pPvh",
	flagsLong: []string{"paginate", "no-pager", "no-replace-objects", "no-lazy-fetch", "no-optional-locks", "no-advice",
		"bare", "literal-pathspecs", "glob-pathspecs", "noglob-pathspecs", "icase-pathspecs", "version", "help",
		"html-path", "man-path", "info-path"},
	optional: []string{"exec-path", "list-cmds"}}

// goGlobalTable: go takes -C DIR, and only it, before the subcommand.
var goGlobalTable = opts{stop: true, exact: true, complete: true, short: "C"}

// cargoGlobalTable lists cargo's options before the subcommand (after an
// optional +toolchain).
var cargoGlobalTable = opts{stop: true, exact: true, complete: true,
	short: "CZ", long: []string{"color", "config", "explain"}, flags: "vVqh",
	flagsLong: []string{"verbose", "quiet", "frozen", "locked", "offline", "list", "version", "help"}}

// subcommandTable returns the table of a program whose options before
// the subcommand the analyser knows completely. A switch, not a map: a
// map literal is built at every start.
func subcommandTable(name string) (opts, bool) {
	switch name {
	case "git":
		return gitGlobalTable, true
	case "go":
		return goGlobalTable, true
	case "cargo":
		return cargoGlobalTable, true
	case "docker", "podman", "nerdctl":
		return containerGlobalOpts.get(), true
	case "make", "gmake":
		return makeTable, true
	}
	return opts{}, false
}

// Subcommand returns the index in c.Argv of the word a program's own
// options end at: git's, go's, cargo's and docker's subcommand (past their
// global options, git -C DIR --no-pager log), make's first target or
// variable. For a program whose options the analyser does not know
// completely it is Argv[1], when that word is not an option. ok is false
// when the words before it cannot be read with certainty: an option the
// table does not list, an option whose value is missing, several short
// options in one word, an abbreviation, "--", or a word built at run time.
// i == len(c.Argv) when no word follows the options.
func Subcommand(c *Command) (i int, ok bool) {
	argv := c.Argv
	if len(argv) == 0 || c.Dynamic {
		return 0, false
	}
	o, known := subcommandTable(argv[0])
	if !known {
		if len(argv) > 1 && isOptionWord(argv[1]) {
			return 0, false
		}
		return 1, true
	}
	i = 1
	if argv[0] == "cargo" && len(argv) > 1 && strings.HasPrefix(argv[1], "+") {
		i = 2 // the toolchain: cargo +nightly build
	}
	for ; i < len(argv); i++ {
		s := argv[i]
		if !isOptionWord(s) {
			return i, true
		}
		if s == "--" {
			return 0, false
		}
		if name, hasVal := strings.CutPrefix(s, "--"); hasVal {
			name, _, hasVal = strings.Cut(name, "=")
			switch {
			case !o.knownLong(name), hasVal && !o.takesLong(name) && !slices.Contains(o.optional, name):
				return 0, false
			case !hasVal && o.takesLong(name):
				if i++; i >= len(argv) {
					return 0, false
				}
			}
			continue
		}
		// A short option: one to a word, its value attached or next.
		ch := s[1]
		switch {
		case strings.IndexByte(o.short, ch) >= 0:
			if len(s) > 2 && (argv[0] == "git" || argv[0] == "go") {
				return 0, false // they take no value attached: -C. is an error
			}
			if len(s) == 2 {
				if i++; i >= len(argv) {
					return 0, false
				}
			}
		case strings.IndexByte(o.optShort, ch) >= 0:
		case len(s) == 2 && strings.IndexByte(o.flags, ch) >= 0:
		default:
			return 0, false
		}
	}
	return i, true
}

// isOptionWord reports whether a word is read as an option: it starts with
// "-" and is not "-" alone.
func isOptionWord(s string) bool {
	return len(s) > 1 && s[0] == '-'
}
