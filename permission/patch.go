package permission

import (
	"slices"
	"strconv"
	"strings"

	"github.com/custom-agent/custom-agent/permission/diffname"
	"github.com/custom-agent/custom-agent/permission/risk"
)

// PatchPath is a file a patch touches.
type PatchPath struct {
	// Path is the file as the patch names it, with git's a/ and b/ prefixes
	// removed when the patch is in git's form.
	Path string
	// Span is the bytes of the name in the patch.
	Span risk.Span
	// Delete is set when the patch removes the file.
	Delete bool
	// Renamed is set when the file is the old name of a rename or copy,
	// so Delete does not mean its contents are gone.
	Renamed bool
}

// BulkDeleteThreshold is the number of files one patch may delete and
// still be judged a write: a patch deleting more files than this, or
// deleting a module manifest (ManifestNames), is destructive, as
// `rm -r` of a directory is. One ordinary file deleted stays a write.
const BulkDeleteThreshold = 3

// ManifestNames are the files that define a module or package: deleting
// one unmakes the project's build (go.mod, package.json, Cargo.toml, …).
var ManifestNames = []string{"go.mod", "go.work", "package.json", "deno.json", "Cargo.toml", "pyproject.toml",
	"setup.py", "setup.cfg", "requirements.txt", "Pipfile", "pom.xml", "build.gradle", "build.gradle.kts",
	"settings.gradle", "settings.gradle.kts", "Gemfile", "composer.json", "mix.exs", "Package.swift",
	"pubspec.yaml", "CMakeLists.txt"}

// patchDeletions judges the files a patch deletes, in both formats
// PatchPaths reads (`+++ /dev/null` and `*** Delete File:`): more than
// BulkDeleteThreshold of them, or any module manifest, is destructive.
func (j *judge) patchDeletions(arg string, pp []PatchPath) {
	n := 0
	var first, last risk.Span
	for _, p := range pp {
		if !p.Delete || p.Renamed {
			continue
		}
		if n == 0 {
			first = p.Span
		}
		last = p.Span
		n++
		base := p.Path[strings.LastIndexByte(p.Path, '/')+1:]
		if slices.Contains(ManifestNames, base) {
			j.find(risk.Destructive, arg, p.Span, p.Path, "the patch deletes "+quoteText(p.Path)+", the module's manifest, which unmakes the project's build")
		}
	}
	if n > BulkDeleteThreshold {
		j.find(risk.Destructive, arg, risk.Span{Start: first.Start, End: last.End}, "",
			"the patch deletes "+strconv.Itoa(n)+" files in one call (more than "+strconv.Itoa(BulkDeleteThreshold)+" is judged as a bulk deletion)")
	}
}

// PatchPaths returns every file a patch names, in order of first mention,
// without duplicates. It understands unified diffs (---/+++ lines, with
// git's "diff --git", rename and copy headers) and the "*** Add File:" form
// of Codex-style patches. Names in ---/+++ lines lose git's a/ and b/
// prefixes only when both sides use them (or one side is /dev/null), which
// is what `git apply` and `patch -p1` do; otherwise names are taken as they
// are. The tool that applies patches must use this same function, so that
// the files judged are the files written.
func PatchPaths(patch string) []PatchPath {
	var out []PatchPath
	renamed := false
	add := func(name string, start int, del bool) {
		if name == "" || name == "/dev/null" {
			return
		}
		for i := range out {
			if out[i].Path == name {
				if del {
					out[i].Renamed = out[i].Renamed && renamed || !out[i].Delete && renamed
					out[i].Delete = true
				}
				return
			}
		}
		out = append(out, PatchPath{Path: name, Span: risk.Span{Start: start, End: start + len(name)}, Delete: del, Renamed: del && renamed})
	}
	var minus struct {
		name  string
		start int
	}
	off := 0
	for off < len(patch) {
		end := strings.IndexByte(patch[off:], '\n')
		if end < 0 {
			end = len(patch)
		} else {
			end += off
		}
		line := strings.TrimSuffix(patch[off:end], "\r")
		switch {
		case strings.HasPrefix(line, "diff --git "):
			// Binary and mode-only changes have no ---/+++ lines; the
			// names are only here.
			rest := line[len("diff --git "):]
			a, b, bAt := diffname.GitDiffNames(rest)
			add(a, off+len("diff --git ")+2, false)
			add(b, off+len("diff --git ")+bAt, false)
		case strings.HasPrefix(line, "--- "):
			minus.name, minus.start = diffname.HeaderName(line[4:]), off+4
		case strings.HasPrefix(line, "+++ "):
			plus, pstart := diffname.HeaderName(line[4:]), off+4
			mname, mstart := minus.name, minus.start
			gitForm := (strings.HasPrefix(mname, "a/") || mname == "/dev/null") &&
				(strings.HasPrefix(plus, "b/") || plus == "/dev/null")
			if gitForm {
				if strings.HasPrefix(mname, "a/") {
					mname, mstart = mname[2:], mstart+2
				}
				if strings.HasPrefix(plus, "b/") {
					plus, pstart = plus[2:], pstart+2
				}
			}
			add(mname, mstart, plus == "/dev/null")
			add(plus, pstart, false)
			minus.name = ""
		case strings.HasPrefix(line, "rename from "), strings.HasPrefix(line, "copy from "):
			_, name, _ := strings.Cut(line, " from ")
			renamed = true
			add(diffname.HeaderName(name), end-len(name), strings.HasPrefix(line, "rename"))
			renamed = false
		case strings.HasPrefix(line, "rename to "), strings.HasPrefix(line, "copy to "):
			_, name, _ := strings.Cut(line, " to ")
			add(diffname.HeaderName(name), end-len(name), false)
		case strings.HasPrefix(line, "*** Add File: "), strings.HasPrefix(line, "*** Update File: "),
			strings.HasPrefix(line, "*** Delete File: "), strings.HasPrefix(line, "*** Move to: "):
			_, name, _ := strings.Cut(line, ": ")
			add(strings.TrimSpace(name), off+strings.Index(line, ": ")+2, strings.HasPrefix(line, "*** Delete"))
		}
		off = end + 1
	}
	return out
}
