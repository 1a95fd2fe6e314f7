// Package diffname reads the file names of unified diff headers ("diff
// --git a/X b/Y", "--- X", "+++ Y") the way git writes them. The engine,
// which judges the files a patch writes, and the apply_patch tool, which
// writes them, both use it, so that the files judged are the files written.
// It is pure.
package diffname

import (
	"strconv"
	"strings"
)

// GitDiffNames splits the "a/X b/Y" of a diff --git line into X and Y, and
// returns where Y starts in rest (0 when rest is not of that form). Names
// with spaces are ambiguous there; the
// split that gives equal names is preferred, else the last " b/".
func GitDiffNames(rest string) (a, b string, bAt int) {
	if strings.HasPrefix(rest, `"`) {
		q, err := strconv.QuotedPrefix(rest)
		if err != nil {
			return "", "", 0
		}
		a = strings.TrimPrefix(HeaderName(q), "a/")
		tail := strings.TrimPrefix(rest[len(q):], " ")
		return a, strings.TrimPrefix(HeaderName(tail), "b/"), len(rest) - len(tail) + 2
	}
	if !strings.HasPrefix(rest, "a/") {
		return "", "", 0
	}
	best := -1
	for i := 0; ; {
		j := strings.Index(rest[i:], " b/")
		if j < 0 {
			break
		}
		i += j
		best = i
		if rest[2:i] == rest[i+3:] {
			break
		}
		i++
	}
	if best < 0 {
		return "", "", 0
	}
	return rest[2:best], rest[best+3:], best + 3
}

// HeaderName returns the file name of a ---/+++ or rename header: a
// C-quoted name is unquoted, and a tab (before a timestamp) ends the name.
func HeaderName(s string) string {
	if strings.HasPrefix(s, `"`) {
		if q, err := strconv.QuotedPrefix(s); err == nil {
			if u, err := strconv.Unquote(q); err == nil {
				return u
			}
		}
	}
	if i := strings.IndexByte(s, '\t'); i >= 0 {
		s = s[:i]
	}
	return strings.TrimRight(s, " ")
}
