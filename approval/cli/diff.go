package cli

import (
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"path/filepath"
	"strings"

	"github.com/custom-agent/custom-agent/secrets"
)

// An edit question (apply_patch, write_file) shows the change as a unified
// diff instead of its escaped JSON args (issue 10 §7).

// diffLine is one line of a diff as shown: kind is '+', '-', ' ', '@' (a
// hunk header), 'h' (a file header) or 'n' (a note of ours).
type diffLine struct {
	kind byte
	text string
}

// edit is what the question shows for an edit call: a one-line summary and
// the diff.
type edit struct {
	summary string
	lines   []diffLine
}

// Limits on what the UI reads and diffs.
const (
	maxEditFile  = 1 << 20 // a bigger current file is not read
	maxDiffD     = 2000    // edits past this many are shown as one hunk
	diffContext  = 3
	maxPlainDiff = 400 // lines of diff the line protocol prints
)

// editFor returns the diff view of an apply_patch or write_file call, and
// false for any other call or args it cannot read. readFile reads the
// current content; dir is the session's directory ("" if not known: a
// relative path is then not read).
func editFor(tool string, args json.RawMessage, dir string, readFile func(string) ([]byte, error)) (edit, bool) {
	var a struct {
		Patch   *string `json:"patch"`
		Path    *string `json:"path"`
		Content *string `json:"content"`
	}
	if json.Unmarshal(args, &a) != nil {
		return edit{}, false
	}
	switch {
	case tool == "apply_patch" && a.Patch != nil:
		return patchEdit(*a.Patch), true
	case tool == "write_file" && a.Path != nil && a.Content != nil:
		return writeEdit(*a.Path, *a.Content, dir, readFile), true
	}
	return edit{}, false
}

// patchEdit shows a patch as it is, each line of it classified.
func patchEdit(patch string) edit {
	src := splitLines(patch)
	files, add, del := 0, 0, 0
	out := make([]diffLine, 0, len(src))
	for i := 0; i < len(src); i++ {
		l := src[i]
		switch {
		case strings.HasPrefix(l, "--- ") && i+1 < len(src) && strings.HasPrefix(src[i+1], "+++ "):
			files++
			out = append(out, diffLine{'h', l}, diffLine{'h', src[i+1]})
			i++
		case strings.HasPrefix(l, "diff --git "), strings.HasPrefix(l, "index "), strings.HasPrefix(l, "new file mode"),
			strings.HasPrefix(l, "deleted file mode"):
			out = append(out, diffLine{'h', l})
		case strings.HasPrefix(l, "@@"):
			out = append(out, diffLine{'@', l})
		case strings.HasPrefix(l, "+"):
			add++
			out = append(out, diffLine{'+', l})
		case strings.HasPrefix(l, "-"):
			del++
			out = append(out, diffLine{'-', l})
		default:
			out = append(out, diffLine{' ', l})
		}
	}
	return edit{summary: fmt.Sprintf("patch: %d %s, +%d -%d lines", files, plural(files, "file", "files"), add, del), lines: out}
}

// writeEdit diffs a write_file's content against the file's current
// content. The current content is masked of secrets as the args are, so
// that a secret in the file is neither shown nor taken for a change.
func writeEdit(path, content, dir string, readFile func(string) ([]byte, error)) edit {
	newLines := splitLines(content)
	asNew := func(summary string) edit {
		lines := make([]diffLine, len(newLines))
		for i, l := range newLines {
			lines[i] = diffLine{'+', "+" + l}
		}
		return edit{summary: summary, lines: lines}
	}
	full := path
	if !filepath.IsAbs(path) {
		if dir == "" {
			return asNew(fmt.Sprintf("%d new %s; the current file was not compared (the session's directory is not known here)",
				len(newLines), plural(len(newLines), "line", "lines")))
		}
		full = filepath.Join(dir, path)
	}
	old, err := readFile(full)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		return asNew(fmt.Sprintf("new file, %d %s", len(newLines), plural(len(newLines), "line", "lines")))
	case errors.Is(err, ErrNotRegular):
		return asNew(fmt.Sprintf("%d new %s; no diff: %v", len(newLines), plural(len(newLines), "line", "lines"), err))
	case errors.Is(err, ErrTooBig):
		return asNew(fmt.Sprintf("%d new %s replace a file %v", len(newLines), plural(len(newLines), "line", "lines"), err))
	case err != nil:
		return asNew(fmt.Sprintf("%d new %s; the current file could not be read: %v", len(newLines), plural(len(newLines), "line", "lines"), err))
	case len(old) > maxEditFile:
		return asNew(fmt.Sprintf("%d new %s replace a file of %d bytes, too big to compare here", len(newLines), plural(len(newLines), "line", "lines"), len(old)))
	}
	oldLines := splitLines(secrets.Mask(string(old)))
	ops := diffOps(oldLines, newLines)
	add, del := 0, 0
	for _, o := range ops {
		switch o.kind {
		case '+':
			add++
		case '-':
			del++
		}
	}
	if add == 0 && del == 0 {
		return edit{summary: fmt.Sprintf("no change: the file already holds this content (%d %s)", len(newLines), plural(len(newLines), "line", "lines"))}
	}
	lines := []diffLine{{'h', "--- " + path}, {'h', "+++ " + path}}
	lines = append(lines, hunks(ops)...)
	return edit{summary: fmt.Sprintf("changes %d of %d lines: +%d -%d", max(add, del), len(oldLines), add, del), lines: lines}
}

func plural(n int, one, many string) string {
	if n == 1 {
		return one
	}
	return many
}

// splitLines splits text into lines; a final newline ends the last line
// rather than starting an empty one.
func splitLines(s string) []string {
	if s == "" {
		return nil
	}
	return strings.Split(strings.TrimSuffix(s, "\n"), "\n")
}

// op is one line of an edit script.
type op struct {
	kind byte // ' ', '-', '+'
	text string
}

// diffOps returns an edit script from a to b: the common prefix and suffix,
// and between them a shortest script (Myers) when it has at most maxDiffD
// edits, else all of a's middle removed and all of b's added.
func diffOps(a, b []string) []op {
	pre := 0
	for pre < len(a) && pre < len(b) && a[pre] == b[pre] {
		pre++
	}
	suf := 0
	for suf < len(a)-pre && suf < len(b)-pre && a[len(a)-1-suf] == b[len(b)-1-suf] {
		suf++
	}
	var out []op
	for _, l := range a[:pre] {
		out = append(out, op{' ', l})
	}
	am, bm := a[pre:len(a)-suf], b[pre:len(b)-suf]
	if mid, ok := myers(am, bm); ok {
		out = append(out, mid...)
	} else {
		for _, l := range am {
			out = append(out, op{'-', l})
		}
		for _, l := range bm {
			out = append(out, op{'+', l})
		}
	}
	for _, l := range a[len(a)-suf:] {
		out = append(out, op{' ', l})
	}
	return out
}

// myers is the O(ND) shortest edit script, or false past maxDiffD edits.
func myers(a, b []string) ([]op, bool) {
	n, m := len(a), len(b)
	if n == 0 && m == 0 {
		return nil, true
	}
	off := n + m + 1
	v := make([]int, 2*off+1)
	// trace[d] is v[-d-1 .. d+1] before step d.
	var trace [][]int
	for d := 0; d <= n+m; d++ {
		if d > maxDiffD {
			return nil, false
		}
		trace = append(trace, append([]int(nil), v[off-d-1:off+d+2]...))
		for k := -d; k <= d; k += 2 {
			var x int
			if k == -d || k != d && v[off+k-1] < v[off+k+1] {
				x = v[off+k+1]
			} else {
				x = v[off+k-1] + 1
			}
			y := x - k
			for x < n && y < m && a[x] == b[y] {
				x++
				y++
			}
			v[off+k] = x
			if x >= n && y >= m {
				return backtrack(a, b, trace, d), true
			}
		}
	}
	return nil, false
}

func backtrack(a, b []string, trace [][]int, dEnd int) []op {
	var rev []op
	x, y := len(a), len(b)
	for d := dEnd; d > 0; d-- {
		w := trace[d] // index k is at w[k+d+1]
		at := func(k int) int { return w[k+d+1] }
		k := x - y
		var pk int
		if k == -d || k != d && at(k-1) < at(k+1) {
			pk = k + 1
		} else {
			pk = k - 1
		}
		px := at(pk)
		py := px - pk
		for x > px && y > py {
			rev = append(rev, op{' ', a[x-1]})
			x--
			y--
		}
		if x == px {
			rev = append(rev, op{'+', b[y-1]})
		} else {
			rev = append(rev, op{'-', a[x-1]})
		}
		x, y = px, py
	}
	for x > 0 && y > 0 {
		rev = append(rev, op{' ', a[x-1]})
		x--
		y--
	}
	for i, j := 0, len(rev)-1; i < j; i, j = i+1, j-1 {
		rev[i], rev[j] = rev[j], rev[i]
	}
	return rev
}

// hunks groups an edit script into unified diff hunks with diffContext
// lines of context.
func hunks(ops []op) []diffLine {
	var out []diffLine
	i := 0
	oldLine, newLine := 1, 1 // line numbers at ops[i]
	for i < len(ops) {
		// Find the next change.
		j := i
		for j < len(ops) && ops[j].kind == ' ' {
			j++
		}
		if j == len(ops) {
			break
		}
		start := max(i, j-diffContext)
		oldLine += start - i
		newLine += start - i
		// A hunk goes on through the next change when at most
		// 2*diffContext lines of context lie between them.
		end := j
		for {
			for end < len(ops) && ops[end].kind != ' ' {
				end++
			}
			k := end
			for k < len(ops) && ops[k].kind == ' ' {
				k++
			}
			if k < len(ops) && k-end <= 2*diffContext {
				end = k
				continue
			}
			end = min(end+diffContext, k)
			break
		}
		var body []diffLine
		oldN, newN := 0, 0
		for _, o := range ops[start:end] {
			body = append(body, diffLine{o.kind, string(o.kind) + o.text})
			if o.kind != '+' {
				oldN++
			}
			if o.kind != '-' {
				newN++
			}
		}
		out = append(out, diffLine{'@', fmt.Sprintf("@@ -%s +%s @@", span(oldLine, oldN), span(newLine, newN))})
		out = append(out, body...)
		oldLine += oldN
		newLine += newN
		i = end
	}
	return out
}

// span is a hunk header's range: start,count, where an empty range starts
// at the line before it.
func span(start, n int) string {
	if n == 0 {
		return fmt.Sprintf("%d,0", start-1)
	}
	if n == 1 {
		return fmt.Sprint(start)
	}
	return fmt.Sprintf("%d,%d", start, n)
}
