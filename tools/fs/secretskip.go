package fs

import (
	"bufio"
	"fmt"
	"os"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/custom-agent/custom-agent/permission/pathrisk"
	"github.com/custom-agent/custom-agent/permission/risk"
)

// secretFilter keeps a walk from returning what the PermissionEngine would
// deny (white-box review A8): the engine judges search_text by its path
// argument, a directory, and never learns which files the walker opens, so
// `search_text {"pattern": "."}` would otherwise print the lines of .env and
// of private keys that read_file is denied. Every file the walk meets is
// judged with the engine's own classifier (pathrisk.Classify) in both its
// forms: the path as the model would pass it to read_file, made canonical,
// and the physical path (the walk starts from the symlink-resolved
// directory and never follows a link, so it is already resolved). A file
// judged credential is not opened; its name is counted for the note.
type secretFilter struct {
	env     pathrisk.Env
	raw     string   // the path argument, for display names
	skipped []string // display names of the files left out
}

func newSecretFilter(cwd, raw string) *secretFilter {
	home, _ := os.UserHomeDir()
	return &secretFilter{env: pathrisk.Env{Cwd: cwd, Home: home}, raw: raw}
}

// skip reports whether the file e holds credentials by the engine's
// judgement, and records it when it does.
func (f *secretFilter) skip(e entry) bool {
	shown := displayPath(f.raw, e.rel)
	facts := pathrisk.PathFacts{Raw: shown, Canonical: e.abs, Resolved: e.abs}
	if c, ok := pathrisk.Canonical(shown, f.env); ok {
		facts.Canonical = c
	}
	if l, _ := pathrisk.Classify(facts, f.env); l < risk.Credential {
		return false
	}
	f.skipped = append(f.skipped, shown)
	return true
}

// note writes how many files were left out and why, without their
// contents.
func (f *secretFilter) note(w *bufio.Writer) {
	n := len(f.skipped)
	if n == 0 {
		return
	}
	shown := make([]string, 0, min(n, 10))
	for _, s := range f.skipped[:min(n, 10)] {
		shown = append(shown, safeName(s))
	}
	more := ""
	if n > len(shown) {
		more = fmt.Sprintf(" and %d more", n-len(shown))
	}
	fmt.Fprintf(w, "[not searched: %d file%s that hold%s credentials by name or location (keys, .env files, tokens): %s%s; the permission engine judges reading them credential, so their contents are left out]\n",
		n, plural(n, "", "s"), plural(n, "s", ""), strings.Join(shown, ", "), more)
}

// safeName returns a file name fit to print: as it is, or quoted with Go
// escapes when it holds a control character (which could move the cursor
// or rewrite a terminal line) or bytes that are not UTF-8.
func safeName(s string) string {
	if pathrisk.HasControl(s) || !utf8.ValidString(s) {
		return strconv.Quote(s)
	}
	return s
}
