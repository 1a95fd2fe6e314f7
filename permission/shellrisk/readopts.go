package shellrisk

// Complete option tables of reading programs (GNU coreutils 9, grep 3,
// diffutils 3, util-linux, tree 2). An option they do not list makes the
// command Opaque (see opts.complete): a wrong arity would let a file hide
// as the value of an option or a pattern (grep --color . ~/.ssh/id_rsa).

// readSpec is how ruleRead treats one program.
type readSpec struct {
	o opts
	// skip is the number of leading operands that are not files (grep's
	// pattern), unless one of noSkip is given.
	skip   int
	noSkip []string
	// reads and writes name options whose value is a file read or written.
	reads, writes []string
}

var grepSpec = readSpec{
	o: opts{short: "efmABCdD", long: []string{"regexp", "file", "max-count", "after-context", "before-context", "context",
		"devices", "directories", "exclude", "include", "exclude-from", "exclude-dir", "label", "binary-files", "group-separator"},
		flags: "EFGPiyvwxcLloqsbHhnTZzaIrRUV", numeric: true,
		flagsLong: []string{"extended-regexp", "fixed-strings", "basic-regexp", "perl-regexp", "ignore-case", "no-ignore-case",
			"word-regexp", "line-regexp", "null-data", "no-messages", "invert-match", "byte-offset", "line-number", "line-buffered",
			"with-filename", "no-filename", "only-matching", "quiet", "silent", "recursive", "dereference-recursive",
			"files-without-match", "files-with-matches", "count", "initial-tab", "null", "text", "no-group-separator", "binary",
			"help", "version"},
		optional: []string{"color", "colour"}, complete: true},
	skip: 1, noSkip: []string{"-e", "-f", "--regexp", "--file"},
	reads: []string{"-f", "--file", "--exclude-from"},
}

var diffSpec = readSpec{
	o: opts{short: "CDFILSUWxX", long: []string{"ifdef", "show-function-line", "ignore-matching-lines", "label", "starting-file",
		"width", "exclude", "exclude-from", "line-format", "old-line-format", "new-line-format", "unchanged-line-format",
		"old-group-format", "new-group-format", "unchanged-group-format", "changed-group-format", "horizon-lines", "tabsize",
		"to-file", "from-file", "palette"},
		flags: "abBcdeEfilnNpPqrstTuvwyZ", numeric: true,
		flagsLong: []string{"normal", "brief", "report-identical-files", "ed", "rcs", "side-by-side", "left-column",
			"suppress-common-lines", "show-c-function", "paginate", "expand-tabs", "initial-tab", "suppress-blank-empty", "recursive",
			"no-dereference", "new-file", "unidirectional-new-file", "ignore-file-name-case", "no-ignore-file-name-case", "text",
			"strip-trailing-cr", "ignore-case", "ignore-tab-expansion", "ignore-trailing-space", "ignore-space-change",
			"ignore-all-space", "ignore-blank-lines", "minimal", "speed-large-files", "help", "version"},
		optional: []string{"color", "context", "unified"}, complete: true},
	reads: []string{"-X", "--exclude-from", "--from-file", "--to-file"},
}

var lsSpec = readSpec{
	o: opts{short: "ITw", long: []string{"block-size", "format", "hide", "ignore", "indicator-style", "quoting-style", "sort",
		"time", "time-style", "tabsize", "width"},
		flags: "aAbBcCdDfFgGhHiklLmnNopqQrRsStuUvxXZ1",
		flagsLong: []string{"all", "almost-all", "author", "escape", "ignore-backups", "directory", "dired", "file-type",
			"full-time", "group-directories-first", "no-group", "human-readable", "si", "dereference-command-line",
			"dereference-command-line-symlink-to-dir", "inode", "kibibytes", "dereference", "numeric-uid-gid", "literal",
			"hide-control-chars", "show-control-chars", "quote-name", "recursive", "size", "context", "zero", "help", "version"},
		optional: []string{"color", "hyperlink", "classify"}, complete: true},
}

var duSpec = readSpec{
	o: opts{short: "BdtX", long: []string{"block-size", "max-depth", "threshold", "exclude", "exclude-from", "files0-from", "time-style"},
		flags: "0abcDHhklLmPSsx",
		flagsLong: []string{"null", "all", "apparent-size", "bytes", "total", "dereference-args", "human-readable", "inodes",
			"dereference", "count-links", "no-dereference", "separate-dirs", "si", "summarize", "one-file-system", "help", "version"},
		optional: []string{"time"}, complete: true},
	reads: []string{"-X", "--exclude-from", "--files0-from"},
}

var treeSpec = readSpec{
	o: opts{short: "LPIoHT", long: []string{"filelimit", "charset", "timefmt", "sort", "gitfile", "infofile", "hintro", "houtro"},
		flags: "adlfxqNQpugshDFvtcUrCnASJXiR",
		flagsLong: []string{"inodes", "device", "du", "prune", "noreport", "dirsfirst", "filesfirst", "si", "gitignore", "info",
			"fflinks", "metafirst", "nolinks", "matchdirs", "ignore-case", "fromfile", "help", "version"},
		complete: true},
	writes: []string{"-o"},
}

var odSpec = readSpec{
	o: opts{short: "AjNSt", long: []string{"address-radix", "skip-bytes", "read-bytes", "format", "endian"},
		flags: "abcdfilosxv", optShort: "w",
		flagsLong: []string{"output-duplicates", "traditional", "help", "version"},
		optional:  []string{"strings", "width"}, complete: true},
}

var hexdumpSpec = readSpec{
	o: opts{short: "efns", long: []string{"format", "format-file", "length", "skip"},
		flags: "bcCdoxvLhV",
		flagsLong: []string{"one-byte-octal", "one-byte-char", "canonical", "two-bytes-decimal", "two-bytes-octal",
			"two-bytes-hex", "no-squeezing", "help", "version"},
		optional: []string{"color"}, complete: true},
	reads: []string{"-f", "--format-file"},
}

var iconvSpec = readSpec{
	o: opts{short: "fto", long: []string{"from-code", "to-code", "output"}, flags: "cls",
		flagsLong: []string{"list", "silent", "verbose", "help", "usage", "version"}, complete: true},
	writes: []string{"-o", "--output"},
}

var headTailSpec = readSpec{
	o: opts{short: "ncs", long: []string{"lines", "bytes", "pid", "sleep-interval", "max-unchanged-stats"}, numeric: true,
		flags: "qvzfF", flagsLong: []string{"quiet", "silent", "verbose", "zero-terminated", "retry", "help", "version"},
		optional: []string{"follow"}, complete: true},
}

var catSpec = readSpec{
	o: opts{flags: "AbeEnstTuv", flagsLong: []string{"show-all", "number-nonblank", "show-ends", "number", "squeeze-blank",
		"show-tabs", "show-nonprinting", "help", "version"}, complete: true},
}

var wcSpec = readSpec{
	o: opts{long: []string{"files0-from", "total"}, flags: "clmwL",
		flagsLong: []string{"bytes", "chars", "lines", "words", "max-line-length", "help", "version"}, complete: true},
	reads: []string{"--files0-from"},
}

// readSpecFor returns the spec of a reading program, and false for those
// without a table of their own.
func readSpecFor(name string) (readSpec, bool) {
	switch name {
	case "grep", "egrep", "fgrep", "zgrep":
		return grepSpec, true
	case "diff":
		return diffSpec, true
	case "ls":
		return lsSpec, true
	case "du":
		return duSpec, true
	case "tree":
		return treeSpec, true
	case "od":
		return odSpec, true
	case "hexdump":
		return hexdumpSpec, true
	case "iconv":
		return iconvSpec, true
	case "head", "tail":
		return headTailSpec, true
	case "cat":
		return catSpec, true
	case "wc":
		return wcSpec, true
	}
	return readSpec{}, false
}
