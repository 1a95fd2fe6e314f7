package fs

import (
	"github.com/custom-agent/custom-agent/permission/diffname"

	"errors"
	"fmt"
	"io/fs"
	"regexp"
	"strconv"
	"strings"
)

const devNull = "/dev/null"

// filePatch is one file's part of a unified diff.
type filePatch struct {
	line int // where the part starts in the patch, from 1
	// oldName and newName are the ---/+++ names with git's a/ and b/
	// removed as permission.PatchPaths removes them; devNull when the file
	// is created or deleted; "" when the part has no ---/+++ lines.
	oldName, newName string
	headers          bool // the part has ---/+++ lines
	hunks            []hunk
	// Git's extended headers, when the part starts with "diff --git".
	git              bool
	gitOld, gitNew   string
	newFile, deleted bool
	mode             fs.FileMode // from "new file mode", or 0
	unsupported      string      // what git header the part has that apply_patch cannot do
}

// name returns the file the part changes.
func (f *filePatch) name() string {
	if f.newName != devNull {
		return f.newName
	}
	return f.oldName
}

func (f *filePatch) creates() bool { return f.oldName == devNull }
func (f *filePatch) deletes() bool { return f.newName == devNull }

// hunk is one @@ section.
type hunk struct {
	num                int    // from 1 within its file
	header             string // "@@ -1,3 +1,4 @@"
	oldStart, oldLines int
	newStart, newLines int
	lines              []hunkLine
}

// hunkLine is a line of a hunk: op is ' ', '-' or '+'; text is the line
// with its newline, which "\ No newline at end of file" removes.
type hunkLine struct {
	op   byte
	text string
}

// old and new return the lines the hunk expects and the lines it leaves.
func (h *hunk) old() []string { return h.side('+') }
func (h *hunk) new() []string { return h.side('-') }

func (h *hunk) side(skip byte) []string {
	var out []string
	for _, l := range h.lines {
		if l.op != skip {
			out = append(out, l.text)
		}
	}
	return out
}

var hunkHeader = regexp.MustCompile(`^@@ -(\d+)(?:,(\d+))? \+(\d+)(?:,(\d+))? @@`)

// parsePatch splits a unified diff into its files. Text before, between
// and after the files' parts that is not a header or a hunk (a commit
// message, "index" lines, a diffstat) is ignored, as git apply ignores it.
// A hunk's extent is given by the counts in its header.
func parsePatch(patch string) ([]*filePatch, error) {
	lines := strings.Split(patch, "\n")
	if len(lines) > 0 && lines[len(lines)-1] == "" {
		lines = lines[:len(lines)-1] // the final newline ends the last line
	}
	var files []*filePatch
	var cur *filePatch
	for i := 0; i < len(lines); i++ {
		line := strings.TrimSuffix(lines[i], "\r")
		switch {
		case strings.HasPrefix(line, "*** Begin Patch"):
			return nil, errors.New("this is a Codex-style patch (*** Begin Patch); apply_patch takes a unified diff as `git diff` writes it: `--- a/file`, `+++ b/file`, then @@ hunks")
		case strings.HasPrefix(line, "diff --git "):
			a, b, _ := diffname.GitDiffNames(line[len("diff --git "):])
			cur = &filePatch{line: i + 1, git: true, gitOld: a, gitNew: b}
			files = append(files, cur)
		case cur != nil && cur.git && !cur.headers && gitHeader(cur, line):
		case strings.HasPrefix(line, "--- ") && i+1 < len(lines) && strings.HasPrefix(lines[i+1], "+++ "):
			oldName := diffname.HeaderName(line[4:])
			newName := diffname.HeaderName(strings.TrimSuffix(lines[i+1], "\r")[4:])
			if (strings.HasPrefix(oldName, "a/") || oldName == devNull) && (strings.HasPrefix(newName, "b/") || newName == devNull) {
				oldName, newName = strings.TrimPrefix(oldName, "a/"), strings.TrimPrefix(newName, "b/")
			}
			if cur == nil || !cur.git || cur.headers {
				cur = &filePatch{line: i + 1}
				files = append(files, cur)
			}
			cur.oldName, cur.newName, cur.headers = oldName, newName, true
			i++
		case strings.HasPrefix(line, "@@"):
			if cur == nil || !cur.headers {
				return nil, fmt.Errorf("line %d of the patch: a hunk (@@) comes before any file header; each file's hunks follow its `--- a/name` and `+++ b/name` lines", i+1)
			}
			h, next, err := parseHunk(lines, i, cur.name(), len(cur.hunks)+1)
			if err != nil {
				return nil, err
			}
			cur.hunks = append(cur.hunks, h)
			i = next - 1
		}
	}
	if len(files) == 0 {
		return nil, errors.New("the patch has no file headers; give a unified diff: `--- a/file`, `+++ b/file`, then @@ hunks (new files have `--- /dev/null`, deleted files `+++ /dev/null`)")
	}
	for _, f := range files {
		if err := f.check(); err != nil {
			return nil, err
		}
	}
	return files, nil
}

// gitHeader reads one of git's extended header lines into f, and reports
// whether line was one.
func gitHeader(f *filePatch, line string) bool {
	key, val, _ := strings.Cut(line, " mode ")
	switch {
	case key == "new file":
		f.newFile = true
		if m, err := strconv.ParseUint(val, 8, 32); err == nil {
			f.mode = fs.FileMode(m) & fs.ModePerm
		}
	case key == "deleted file":
		f.deleted = true
	case key == "old" || key == "new":
		f.unsupported = "a mode change (use shell chmod)"
	case strings.HasPrefix(line, "rename from "), strings.HasPrefix(line, "rename to "):
		f.unsupported = "a rename (delete the old file with `+++ /dev/null` and create the new one with `--- /dev/null`)"
	case strings.HasPrefix(line, "copy from "), strings.HasPrefix(line, "copy to "):
		f.unsupported = "a copy (create the new file with `--- /dev/null`)"
	case strings.HasPrefix(line, "GIT binary patch"), strings.HasPrefix(line, "Binary files "):
		f.unsupported = "a binary change (use shell)"
	case strings.HasPrefix(line, "index "), strings.HasPrefix(line, "similarity index "),
		strings.HasPrefix(line, "dissimilarity index "):
	default:
		return false
	}
	return true
}

// check refuses a file part apply_patch cannot apply exactly.
func (f *filePatch) check() error {
	where := fmt.Sprintf("the part of the patch at line %d", f.line)
	if f.unsupported != "" {
		return fmt.Errorf("%s is %s, which apply_patch does not do", where, f.unsupported)
	}
	if !f.headers {
		switch {
		case f.gitOld == "" || f.gitOld != f.gitNew:
			return fmt.Errorf("%s has no `---`/`+++` lines naming its file; give them", where)
		case f.newFile:
			f.oldName, f.newName = devNull, f.gitNew
		case f.deleted:
			f.oldName, f.newName = f.gitOld, devNull
		default:
			return fmt.Errorf("%s (%s) changes nothing apply_patch can do: it has no hunks", where, f.gitOld)
		}
		return nil
	}
	switch {
	case f.oldName == devNull && f.newName == devNull:
		return fmt.Errorf("%s has /dev/null as both its old and new name; name the file", where)
	case f.oldName == "" || f.newName == "":
		return fmt.Errorf("%s has an empty file name", where)
	case f.oldName != devNull && f.newName != devNull && f.oldName != f.newName:
		return fmt.Errorf("%s names %s on its --- line but %s on its +++ line; apply_patch changes files in place, so both must name the same file (`--- a/x` and `+++ b/x`); to rename, delete the old file (`+++ /dev/null`) and create the new one (`--- /dev/null`)", where, f.oldName, f.newName)
	case len(f.hunks) == 0 && !f.newFile && !f.deleted:
		return fmt.Errorf("%s (%s) has no hunks", where, f.name())
	}
	for _, h := range f.hunks {
		for _, l := range h.lines {
			if f.creates() && l.op != '+' {
				return fmt.Errorf("%s, hunk %d: a new file (--- /dev/null) can only have added lines (+)", f.name(), h.num)
			}
			if f.deletes() && l.op != '-' {
				return fmt.Errorf("%s, hunk %d: a deleted file (+++ /dev/null) can only have removed lines (-)", f.name(), h.num)
			}
		}
	}
	return nil
}

// parseHunk reads the hunk whose header is lines[i] and returns it with the
// index of the line after it.
func parseHunk(lines []string, i int, name string, num int) (hunk, int, error) {
	header := strings.TrimSuffix(lines[i], "\r")
	m := hunkHeader.FindStringSubmatch(header)
	if m == nil {
		return hunk{}, 0, fmt.Errorf("%s, hunk %d (line %d of the patch): %q is not a hunk header; it should look like `@@ -12,5 +12,6 @@`", name, num, i+1, header)
	}
	h := hunk{num: num, header: m[0], oldStart: atoi(m[1]), oldLines: count(m[2]), newStart: atoi(m[3]), newLines: count(m[4])}
	if h.oldStart < 0 || h.oldLines < 0 || h.newStart < 0 || h.newLines < 0 {
		return hunk{}, 0, fmt.Errorf("%s, hunk %d (line %d of the patch): the numbers in %q are too large", name, num, i+1, header)
	}
	where := fmt.Sprintf("%s, hunk %d (%s)", name, num, h.header)
	oldLeft, newLeft := h.oldLines, h.newLines
	j := i + 1
	for ; oldLeft > 0 || newLeft > 0; j++ {
		if j == len(lines) {
			return hunk{}, 0, fmt.Errorf("%s: the patch ends while the hunk still needs %d old and %d new lines; make the counts in its header match its lines", where, oldLeft, newLeft)
		}
		l := lines[j]
		op, text := byte(' '), ""
		if l != "" { // an empty line is a context line whose space was lost
			op, text = l[0], l[1:]
		}
		switch op {
		case '\\':
			if err := noNewline(&h, where); err != nil {
				return hunk{}, 0, err
			}
			continue
		case ' ':
			oldLeft--
			newLeft--
		case '-':
			oldLeft--
		case '+':
			newLeft--
		default:
			return hunk{}, 0, fmt.Errorf("%s: line %d of the patch (%q) should start with ' ', '-' or '+', since the hunk still needs %d old and %d new lines; make the counts in its header match its lines", where, j+1, l, oldLeft, newLeft)
		}
		if oldLeft < 0 || newLeft < 0 {
			return hunk{}, 0, fmt.Errorf("%s: the hunk has more %s lines than its header says (line %d of the patch); make the counts in its header match its lines", where, sideName(oldLeft < 0), j+1)
		}
		h.lines = append(h.lines, hunkLine{op: op, text: text + "\n"})
	}
	if j < len(lines) && strings.HasPrefix(lines[j], `\`) {
		if err := noNewline(&h, where); err != nil {
			return hunk{}, 0, err
		}
		j++
	}
	if j < len(lines) && moreHunk(lines[j]) {
		return hunk{}, 0, fmt.Errorf("%s: line %d of the patch (%q) looks like part of the hunk, but the header's counts end the hunk before it; make the counts match its lines", where, j+1, lines[j])
	}
	return h, j, nil
}

// moreHunk reports whether a line after a hunk looks like a hunk line, the
// sign of a header whose counts are too small. "-- " is the signature
// separator of a mailed patch, not a removed line.
func moreHunk(l string) bool {
	switch {
	case l == "" || l == "-- " || l == "-- \r":
		return false
	case l[0] == ' ', l[0] == '+' && !strings.HasPrefix(l, "+++ "), l[0] == '-' && !strings.HasPrefix(l, "--- "):
		return true
	}
	return false
}

// noNewline applies "\ No newline at end of file" to the hunk's last line.
func noNewline(h *hunk, where string) error {
	if len(h.lines) == 0 {
		return fmt.Errorf("%s: `\\ No newline at end of file` must follow the line it is about", where)
	}
	last := &h.lines[len(h.lines)-1]
	last.text = strings.TrimSuffix(last.text, "\n")
	return nil
}

func sideName(old bool) string {
	if old {
		return "old (' ' and '-')"
	}
	return "new (' ' and '+')"
}

func atoi(s string) int {
	n, err := strconv.Atoi(s)
	if err != nil {
		return -1
	}
	return n
}

// count reads a hunk header's line count; absent means 1.
func count(s string) int {
	if s == "" {
		return 1
	}
	return atoi(s)
}
