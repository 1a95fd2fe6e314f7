package fs

import (
	"bufio"
	"fmt"
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
//
// custom-agent's own data directory (the default one, or the one the runner
// was given, tool.Call.DataDir) is not entered at all: it holds the event
// log, the raw outputs kept for read_output and serve's script tokens, and
// a walk of a working directory that contains it must not read them.
type secretFilter struct {
	env     pathrisk.Env
	raw     string   // the path argument, for display names
	skipped []string // display names of the files left out
	data    dataDirs
}

// newSecretFilter prepares the filter of a walk of the path argument raw,
// whose physical start directory is root.
func newSecretFilter(env pathrisk.Env, raw, root string) *secretFilter {
	return &secretFilter{env: env, raw: raw, data: newDataDirs(env, raw, root)}
}

// dataDirs finds custom-agent's data directories a walk meets.
type dataDirs struct {
	env    pathrisk.Env
	raw    string
	inside bool     // the walk starts in one: a person allowed it, nothing is left out
	found  []string // display names of the data directories met
}

func newDataDirs(env pathrisk.Env, raw, root string) dataDirs {
	if raw == "" {
		raw = "."
	}
	c, ok := pathrisk.Canonical(raw, env)
	inside := pathrisk.InDataDir(root, env) || ok && pathrisk.InDataDir(c, env)
	return dataDirs{env: env, raw: raw, inside: inside}
}

// skip reports whether the entry e is a directory that is, or lies in,
// custom-agent's data directory, by the path the model would write for it,
// made canonical, or by its physical path; it records it when it is.
func (d *dataDirs) skip(e entry) bool {
	if d.inside || !e.isDir() {
		return false
	}
	c, ok := pathrisk.Canonical(displayPath(d.raw, e.rel), d.env)
	if !pathrisk.InDataDir(e.abs, d.env) && !(ok && pathrisk.InDataDir(c, d.env)) {
		return false
	}
	d.found = append(d.found, displayPath(d.raw, e.rel))
	return true
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
	noteDataDirs(w, f.data.found, "not searched")
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

// noteDataDirs writes which data directories a walk did not enter, by
// name without a trailing slash (nothing beneath them is named).
func noteDataDirs(w *bufio.Writer, dirs []string, verb string) {
	if len(dirs) == 0 {
		return
	}
	shown := make([]string, 0, min(len(dirs), 10))
	for _, d := range dirs[:min(len(dirs), 10)] {
		shown = append(shown, safeName(d))
	}
	more := ""
	if len(dirs) > len(shown) {
		more = fmt.Sprintf(" and %d more", len(dirs)-len(shown))
	}
	fmt.Fprintf(w, "[%s: %s%s, custom-agent's own data directory (the event log, stored tool outputs, the web UI's tokens), which no tool reads]\n",
		verb, strings.Join(shown, ", "), more)
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
