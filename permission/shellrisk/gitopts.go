package shellrisk

import (
	"slices"
	"strings"
)

// Complete option tables of the read-only git subcommands (git 2.4x), for
// ReadOnly. They list only options that read: --output, --ext-diff,
// --textconv, --no-index, -O (an order file), --open-files-in-pager,
// --show-signature (runs gpg), -L (reads ranges of a file), --contents and
// the subcommands' writing forms are left out on purpose, so they make the
// command not read-only. A value-taking long option that git only accepts
// as --opt=value is listed as optional: given alone it takes no word.

// gitDiffFlags are the diff options shared by diff, log and show.
var gitDiffFlags = []string{"patch", "no-patch", "raw", "patch-with-raw", "indent-heuristic", "no-indent-heuristic", "minimal",
	"patience", "histogram", "numstat", "shortstat", "summary", "patch-with-stat", "name-only", "name-status", "full-index",
	"binary", "no-color", "color-moved-ws", "no-color-moved", "no-color-moved-ws", "no-renames", "rename-empty",
	"no-rename-empty", "check", "no-prefix", "default-prefix", "ita-invisible-in-index", "ita-visible-in-index", "text",
	"ignore-cr-at-eol", "ignore-space-at-eol", "ignore-space-change", "ignore-all-space", "ignore-blank-lines",
	"function-context", "no-ext-diff", "no-textconv", "no-relative", "irreversible-delete",
	"compact-summary", "exit-code", "quiet", "cumulative", "no-stat", "merge-base", "cached", "staged", "pickaxe-all",
	"pickaxe-regex", "find-copies-harder", "no-abbrev", "full-diff"}

var gitDiffOptional = []string{"stat", "dirstat", "color", "color-moved", "word-diff", "word-diff-regex", "color-words",
	"abbrev", "find-renames", "find-copies", "break-rewrites", "diff-algorithm", "diff-filter", "src-prefix", "dst-prefix",
	"line-prefix", "relative", "unified", "inter-hunk-context", "anchored", "stat-width", "stat-name-width",
	"stat-graph-width", "stat-count", "ignore-matching-lines", "ws-error-highlight", "submodule", "ignore-submodules",
	"rotate-to", "skip-to"}

// gitLogFlags are the revision and formatting options of log and show.
var gitLogFlags = []string{"oneline", "graph", "no-decorate", "all", "first-parent", "reverse", "merges", "no-merges",
	"no-min-parents", "no-max-parents", "regexp-ignore-case", "extended-regexp", "fixed-strings", "basic-regexp",
	"perl-regexp", "invert-grep", "all-match", "relative-date", "abbrev-commit", "no-abbrev-commit", "topo-order",
	"date-order", "author-date-order", "left-right", "left-only", "right-only", "cherry-pick", "cherry-mark", "cherry",
	"boundary", "ancestry-path", "simplify-by-decoration", "full-history", "dense", "sparse", "simplify-merges",
	"source", "parents", "children", "log-size", "follow", "do-walk", "mailmap", "use-mailmap", "no-mailmap",
	"no-notes", "no-expand-tabs", "count", "remove-empty", "reflog", "walk-reflogs", "single-worktree",
	"no-graph", "combined-all-paths", "remerge-diff", "cc", "dd", "no-diff-merges", "show-pulls",
	"bisect", "stdin", "not", "ignore-missing", "in-commit-order"}

var gitLogOptional = []string{"decorate", "pretty", "format", "date", "branches", "tags", "remotes", "glob", "exclude",
	"diff-merges", "decorate-refs", "decorate-refs-exclude", "clear-decorations", "notes", "show-notes", "show-linear-break",
	"expand-tabs", "encoding", "no-walk"}

// gitLogLong take a value, as --opt=value or --opt value.
var gitLogLong = []string{"max-count", "skip", "since", "after", "until", "before", "author", "committer", "grep",
	"min-parents", "max-parents", "since-as-filter", "grep-reflog"}

func gitLogTable(withDiff bool) opts {
	o := opts{short: "nSG", flags: "ipusmcMCBDRtwbzW", numeric: true, complete: true,
		optShort:  "U",
		long:      gitLogLong,
		flagsLong: slices.Concat(gitLogFlags, []string{"help"}),
		optional:  gitLogOptional}
	if withDiff {
		o.flagsLong = slices.Concat(o.flagsLong, gitDiffFlags)
		o.optional = slices.Concat(o.optional, gitDiffOptional)
	}
	return o
}

var (
	gitLogOpts  = lazy[opts]{build: func() opts { return gitLogTable(true) }}
	gitDiffOpts = lazy[opts]{build: func() opts {
		return opts{optShort: "UMCBl", flags: "pusRaDwbzW", complete: true,
			flagsLong: slices.Concat(gitDiffFlags, []string{"help"}), optional: gitDiffOptional}
	}}
	// No -v/--verbose: git status -v prints the staged diff, and -vv the
	// unstaged one too, which git diff's own checks (tracked credential
	// files, submodules) would judge; without them status lists names.
	gitStatusOpts = opts{optShort: "u", flags: "sbz",
		flagsLong: []string{"short", "branch", "show-stash", "long", "null", "no-column", "ahead-behind",
			"no-ahead-behind", "renames", "no-renames", "help"},
		optional: []string{"porcelain", "untracked-files", "ignored", "ignore-submodules", "column", "find-renames"},
		complete: true}
	gitBranchOpts = opts{long: []string{"sort", "format", "points-at", "contains", "no-contains", "merged", "no-merged"},
		flags: "arvli", flagsLong: []string{"all", "remotes", "verbose", "list", "show-current", "ignore-case", "no-color",
			"no-column", "omit-empty", "no-abbrev", "help"},
		optional: []string{"color", "column", "abbrev"}, complete: true}
	gitTagOpts = opts{long: []string{"sort", "format", "points-at", "contains", "no-contains", "merged", "no-merged"},
		flags: "li", optShort: "n", flagsLong: []string{"list", "ignore-case", "no-column", "omit-empty", "help"},
		optional: []string{"column", "color"}, complete: true}
	gitBlameOpts = opts{short: "L", long: []string{"date", "ignore-rev", "reverse"}, optShort: "MC",
		flags: "blftnsepwc", flagsLong: []string{"root", "show-stats", "porcelain", "line-porcelain", "incremental",
			"show-name", "show-number", "show-email", "no-progress", "minimal", "score-debug", "color-lines", "color-by-age",
			"first-parent", "help"},
		optional: []string{"abbrev"}, complete: true}
	gitRevParseOpts = opts{long: []string{"git-path", "default", "prefix"}, flags: "q",
		flagsLong: []string{"show-toplevel", "verify", "quiet", "sq", "not", "all", "git-dir", "absolute-git-dir",
			"git-common-dir", "is-inside-work-tree", "is-inside-git-dir", "is-bare-repository", "is-shallow-repository",
			"show-prefix", "show-cdup", "symbolic", "symbolic-full-name", "show-superproject-working-tree",
			"local-env-vars", "revs-only", "no-revs", "flags", "no-flags", "shared-index-path", "show-ref-format", "help"},
		optional: []string{"short", "abbrev-ref", "path-format", "branches", "tags", "remotes", "glob", "exclude",
			"disambiguate", "show-object-format", "since", "after", "until", "before"}, complete: true}
	gitLsFilesOpts = opts{short: "x", long: []string{"exclude", "format", "with-tree"}, flags: "cdmoisukztvf",
		flagsLong: []string{"cached", "deleted", "modified", "others", "ignored", "stage", "unmerged", "killed", "directory",
			"no-empty-directory", "eol", "full-name", "error-unmatch", "exclude-standard", "recurse-submodules", "debug",
			"deduplicate", "sparse", "resolve-undo", "help"},
		optional: []string{"abbrev"}, complete: true}
	gitGrepOpts = opts{short: "eABCm", long: []string{"regexp", "max-depth", "threads", "after-context", "before-context",
		"context", "max-count"}, numeric: true, flags: "iywvhHlLcnbozrIEGFPWpa",
		flagsLong: []string{"cached", "untracked", "no-exclude-standard", "exclude-standard", "recurse-submodules", "text",
			"ignore-case", "word-regexp", "invert-match", "full-name", "extended-regexp", "basic-regexp", "perl-regexp",
			"fixed-strings", "line-number", "column", "files-with-matches", "name-only", "files-without-match", "count",
			"null", "only-matching", "quiet", "all-match", "and", "or", "not", "break", "heading", "show-function",
			"function-context", "no-color", "no-recursive", "recursive", "no-textconv", "help"},
		optional: []string{"color"}, complete: true}
	gitShortlogOpts = opts{long: []string{"group", "format", "since", "after", "until", "before", "author", "committer",
		"max-count", "skip", "grep"}, optShort: "w", flags: "nsec", numeric: true,
		flagsLong: []string{"numbered", "summary", "email", "committer", "all", "no-merges", "merges", "first-parent",
			"reverse", "help"},
		optional: []string{"branches", "tags", "remotes"}, complete: true}
	gitDescribeOpts = opts{long: []string{"match", "exclude"},
		flagsLong: []string{"tags", "all", "long", "always", "contains", "debug", "exact-match", "first-parent", "help"},
		optional:  []string{"abbrev", "dirty", "broken", "candidates"}, complete: true}
)

// gitTables are the read-only subcommands' tables.
var gitTables = lazy[map[string]opts]{build: func() map[string]opts {
	return map[string]opts{
		"status": gitStatusOpts, "diff": gitDiffOpts.get(), "log": gitLogOpts.get(), "show": gitLogOpts.get(), "branch": gitBranchOpts,
		"tag": gitTagOpts, "blame": gitBlameOpts, "rev-parse": gitRevParseOpts, "ls-files": gitLsFilesOpts,
		"grep": gitGrepOpts, "shortlog": gitShortlogOpts, "describe": gitDescribeOpts,
	}
}}

// gitReadOnly returns "git SUB" for a read-only git subcommand whose
// options are all in its table, and "" otherwise.
func gitReadOnly(args []arg) string {
	i := 1
	for ; i < len(args); i++ {
		x := args[i]
		if x.glob {
			return ""
		}
		s := x.s
		if !strings.HasPrefix(s, "-") {
			break
		}
		switch s {
		case "--no-pager", "-P", "--no-optional-locks", "--literal-pathspecs", "--glob-pathspecs", "--noglob-pathspecs",
			"--icase-pathspecs", "--no-replace-objects", "--no-lazy-fetch", "--no-advice":
		case "-C":
			// The directory is an access the caller judges.
			i++
		default:
			// -c, --config-env, --git-dir, --work-tree, --exec-path,
			// -p/--paginate and the rest change what git runs or reads.
			return ""
		}
	}
	if i >= len(args) {
		return ""
	}
	sub := args[i].s
	if _, ok := gitTables.get()[sub]; !ok || args[i].glob {
		return ""
	}
	if !gitListing(sub, args[i:]) {
		return ""
	}
	return "git " + sub
}

// FormatRunsGpg reports whether a git --format or --pretty value (or a
// pretty.* alias) asks for a commit's signature (%G?, %GS, %GK …, with
// git's modifiers %+G, %-G, % G; %(signature) of ref formats), which git
// checks by running gpg, as --show-signature does.
func FormatRunsGpg(v string) bool {
	for i := 0; i < len(v); i++ {
		if v[i] != '%' {
			continue
		}
		rest := v[i+1:]
		if strings.HasPrefix(rest, "(signature") {
			return true
		}
		if rest != "" && (rest[0] == '+' || rest[0] == '-' || rest[0] == ' ') {
			rest = rest[1:]
		}
		if strings.HasPrefix(rest, "G") {
			return true
		}
	}
	return false
}

// formatPrintsObjects reports whether a ref-filter format (git branch and
// git tag --format) prints the objects refs name: %(raw) and %(*raw) print
// a blob a tag names as it is, a committed .env say.
func formatPrintsObjects(v string) bool {
	return strings.Contains(v, "%(raw") || strings.Contains(v, "%(*raw")
}

// gitListing reports whether args (the subcommand and its words) use only
// the options of the subcommand's table, and for branch and tag only the
// listing forms.
func gitListing(sub string, args []arg) bool {
	o := gitTables.get()[sub]
	os, ops, tail := roScan(o, args)
	for _, op := range os {
		if op.unknown || op.x.glob || op.val.glob {
			return false
		}
		if (op.name == "--format" || op.name == "--pretty") && FormatRunsGpg(op.val.s) {
			return false // like --show-signature
		}
		if op.name == "--format" && (sub == "branch" || sub == "tag") && formatPrintsObjects(op.val.s) {
			return false
		}
		if op.name == "--help" {
			// git SUB --help is git help SUB, which runs man, or the
			// viewer the repository's man.<tool>.cmd names.
			return false
		}
	}
	for _, x := range ops {
		if mayBeOption(x) {
			return false
		}
	}
	// Only the listing forms of branch and tag read: an operand without
	// --list names a branch or tag to create.
	switch sub {
	case "branch":
		if len(ops)+len(tail) > 0 && !has(os, "-l", "--list") {
			return false
		}
	case "tag":
		if len(ops)+len(tail) > 0 && !has(os, "-l", "--list", "-n") {
			return false
		}
	}
	return true
}

// gitTagLists reports whether the words after "git tag" only list tags
// (no operand, or -l, --list or -n, and only options of the listing
// table), known before the command runs.
func gitTagLists(rest []arg) bool {
	args := append(make([]arg, 0, len(rest)+1), arg{s: "tag"})
	for _, x := range rest {
		if x.dyn {
			return false
		}
		args = append(args, x)
	}
	return gitListing("tag", args)
}
