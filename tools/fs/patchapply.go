package fs

import (
	"fmt"
	"strconv"
	"strings"
)

// applyHunks returns content with the hunks of f applied. Each hunk's
// context and removed lines must match the file exactly (no fuzz); a hunk
// may match away from the line its header names, after the previous hunk,
// at the nearest place, as git apply allows. notes tell where that
// happened.
func applyHunks(f *filePatch, content string) (string, []string, error) {
	old := splitLines(content)
	var out []string
	var notes []string
	pos := 0 // the next line of old not yet copied
	for _, h := range f.hunks {
		want, seg := h.oldStart-1, h.old()
		if h.oldLines == 0 {
			want = h.oldStart // insert after line oldStart
		}
		at := find(old, seg, pos, want)
		if at < 0 {
			return "", nil, mismatch(f.name(), &h, old, pos, want, seg)
		}
		if at != want {
			notes = append(notes, fmt.Sprintf("hunk %d matched at line %d, %s", h.num, at+1, offsetText(at-want)))
		}
		out = append(out, old[pos:at]...)
		out = append(out, h.new()...)
		pos = at + len(seg)
	}
	out = append(out, old[pos:]...)
	return strings.Join(out, ""), notes, nil
}

// splitLines splits s into lines that keep their newlines; the last one
// has none when s does not end with a newline.
func splitLines(s string) []string {
	lines := strings.SplitAfter(s, "\n")
	if lines[len(lines)-1] == "" {
		lines = lines[:len(lines)-1]
	}
	return lines
}

// find returns where seg occurs in old at or after pos, nearest to want
// (later before earlier at equal distance), or -1. An empty seg (a hunk
// that only adds lines, with no context) must go exactly at want.
func find(old, seg []string, pos, want int) int {
	if len(seg) == 0 {
		if want >= pos && want <= len(old) {
			return want
		}
		return -1
	}
	last := len(old) - len(seg)
	if last < pos {
		return -1
	}
	want = min(max(want, pos), last)
	for d := 0; want-d >= pos || want+d <= last; d++ {
		if hi := want + d; hi <= last && matchAt(old, seg, hi) {
			return hi
		}
		if lo := want - d; d > 0 && lo >= pos && matchAt(old, seg, lo) {
			return lo
		}
	}
	return -1
}

func matchAt(old, seg []string, at int) bool {
	for k, s := range seg {
		if old[at+k] != s {
			return false
		}
	}
	return true
}

// mismatch explains why a hunk matched nowhere, by the first of its lines
// that differs from the file at the place its header names.
func mismatch(name string, h *hunk, old []string, pos, want int, seg []string) error {
	where := fmt.Sprintf("%s, hunk %d (%s) does not apply", name, h.num, h.header)
	const redo = "Read the file again (read_file) and make the hunk from its current text: context and removed lines must match the file exactly, whitespace included"
	if len(seg) == 0 {
		return fmt.Errorf("%s: it adds lines after line %d, but the file has %d lines. %s", where, want, len(old), redo)
	}
	at := min(max(want, pos), len(old))
	for k, s := range seg {
		i := at + k
		if i >= len(old) {
			return fmt.Errorf("%s: the file ends at line %d, where the hunk still expects %s, and its lines match nowhere else after the previous hunk. %s", where, len(old), quoteLine(s), redo)
		}
		if old[i] == s {
			continue
		}
		if strings.TrimSuffix(old[i], "\n") == strings.TrimSuffix(s, "\n") {
			if strings.HasSuffix(old[i], "\n") {
				return fmt.Errorf("%s: the hunk marks line %d (%s) `\\ No newline at end of file`, but in the file a newline follows it; drop that marker", where, i+1, quoteLine(s))
			}
			return fmt.Errorf("%s: line %d (%s) is the file's last and has no newline at its end; put `\\ No newline at end of file` after it in the hunk", where, i+1, quoteLine(s))
		}
		return fmt.Errorf("%s: at line %d the file has %s where the hunk expects %s, and the hunk's lines match nowhere else after the previous hunk. %s", where, i+1, quoteLine(old[i]), quoteLine(s), redo)
	}
	return fmt.Errorf("%s: it overlaps the hunk before it; hunks must come in file order and must not overlap", where)
}

func quoteLine(s string) string { return strconv.Quote(strings.TrimSuffix(s, "\n")) }

func offsetText(d int) string {
	switch {
	case d == 1:
		return "1 line after where its header says"
	case d > 0:
		return fmt.Sprintf("%d lines after where its header says", d)
	case d == -1:
		return "1 line before where its header says"
	}
	return fmt.Sprintf("%d lines before where its header says", -d)
}
