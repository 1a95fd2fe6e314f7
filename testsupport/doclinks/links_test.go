package doclinks

import (
	"fmt"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"unicode"
)

// root is the repository, two directories up from this package.
const root = "../.."

// pages returns README.md and every Markdown file beneath docs/, as paths
// relative to the repository with forward slashes.
func pages(t *testing.T) []string {
	t.Helper()
	out := []string{"README.md"}
	err := filepath.WalkDir(filepath.Join(root, "docs"), func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if !d.IsDir() && strings.HasSuffix(p, ".md") {
			rel, err := filepath.Rel(root, p)
			if err != nil {
				return err
			}
			out = append(out, filepath.ToSlash(rel))
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return out
}

var (
	// inlineLink is [text](target) or [text](target "title"); an image's
	// ![alt](target) matches too.
	inlineLink = regexp.MustCompile(`\]\(\s*<?([^)\s>]+)>?(?:\s+"[^"]*")?\s*\)`)
	// refLink is a reference definition: [name]: target
	refLink = regexp.MustCompile(`(?m)^\s{0,3}\[[^\]]+\]:\s*<?(\S+?)>?(?:\s|$)`)
	// mdName is a Markdown file named in running text: DESIGN.md, docs/x.md.
	mdName = regexp.MustCompile(`(?:^|[\s(` + "`" + `"'])((?:\.{0,2}/)?[\w./-]*\w\.md)\b`)
	// codeSpan is inline code, whose text is neither a link nor a name.
	codeSpan = regexp.MustCompile("`[^`\n]*`")
	heading  = regexp.MustCompile(`(?m)^#{1,6}\s+(.+?)\s*#*\s*$`)
)

// prose returns src with fenced code blocks blanked out, line for line,
// so that line numbers still hold.
func prose(src string) string {
	lines := strings.Split(src, "\n")
	fence := ""
	for i, l := range lines {
		t := strings.TrimSpace(l)
		switch {
		case fence == "" && (strings.HasPrefix(t, "```") || strings.HasPrefix(t, "~~~")):
			fence = t[:3]
			lines[i] = ""
		case fence != "":
			if strings.HasPrefix(t, fence) {
				fence = ""
			}
			lines[i] = ""
		}
	}
	return strings.Join(lines, "\n")
}

// external reports whether a link leaves the repository (a URL with a
// scheme, mail), which this test does not follow.
func external(target string) bool {
	if i := strings.IndexByte(target, ':'); i > 0 && !strings.ContainsAny(target[:i], "/.#") {
		return true // http:, https:, mailto: and any other scheme
	}
	return strings.HasPrefix(target, "//")
}

// slug is the anchor a heading gets on the forge and most renderers:
// lower case, punctuation dropped, spaces made hyphens.
func slug(h string) string {
	h = strings.ToLower(strings.TrimSpace(h))
	var b strings.Builder
	for _, r := range h {
		switch {
		case r == ' ':
			b.WriteByte('-')
		case r == '-' || r == '_' || unicode.IsLetter(r) || unicode.IsDigit(r):
			b.WriteRune(r)
		}
	}
	return b.String()
}

// anchors returns the heading anchors of a Markdown file.
func anchors(t *testing.T, page string) map[string]bool {
	t.Helper()
	src, err := os.ReadFile(filepath.Join(root, filepath.FromSlash(page)))
	if err != nil {
		t.Fatal(err)
	}
	m := map[string]bool{}
	for _, h := range heading.FindAllStringSubmatch(prose(string(src)), -1) {
		s := slug(h[1])
		for n := 1; m[s]; n++ {
			s = slug(h[1]) + "-" + string(rune('0'+n)) // a repeated heading gets -1, -2, …
		}
		m[s] = true
	}
	return m
}

// repo is how the checks see the repository: whether a path (relative,
// forward slashes) exists, and the anchors of a Markdown file.
type repo struct {
	exists  func(p string) bool
	anchors func(p string) map[string]bool
}

// brokenLinks returns a message for each relative link of page (its text
// src) whose file is not in r, or whose #anchor names no heading of the
// Markdown file it points at.
func brokenLinks(page, src string, r repo) []string {
	var out []string
	for n, line := range strings.Split(prose(src), "\n") {
		line = codeSpan.ReplaceAllString(line, "")
		var targets []string
		for _, m := range inlineLink.FindAllStringSubmatch(line, -1) {
			targets = append(targets, m[1])
		}
		for _, m := range refLink.FindAllStringSubmatch(line, -1) {
			targets = append(targets, m[1])
		}
		for _, target := range targets {
			if external(target) {
				continue
			}
			file, anchor, _ := strings.Cut(target, "#")
			dest := page
			if file != "" {
				dest = path.Join(path.Dir(page), file)
				if strings.HasPrefix(file, "/") {
					dest = path.Clean(strings.TrimPrefix(file, "/"))
				}
				if strings.HasPrefix(dest, "../") || dest == ".." {
					out = append(out, fmt.Sprintf("%s:%d: link %q leaves the repository", page, n+1, target))
					continue
				}
				if !r.exists(dest) {
					out = append(out, fmt.Sprintf("%s:%d: link %q: %s is not in the repository", page, n+1, target, dest))
					continue
				}
			}
			if anchor == "" || !strings.HasSuffix(dest, ".md") {
				continue
			}
			if !r.anchors(dest)[anchor] {
				out = append(out, fmt.Sprintf("%s:%d: link %q: %s has no heading #%s", page, n+1, target, dest, anchor))
			}
		}
	}
	return out
}

// disk is the repository on disk.
func disk(t *testing.T) repo {
	cache := map[string]map[string]bool{}
	return repo{
		exists: func(p string) bool {
			_, err := os.Stat(filepath.Join(root, filepath.FromSlash(p)))
			return err == nil
		},
		anchors: func(p string) map[string]bool {
			if cache[p] == nil {
				cache[p] = anchors(t, p)
			}
			return cache[p]
		},
	}
}

// TestLinksResolve fails for a relative link of README.md or docs/ whose
// file is not in the repository, or whose #anchor names no heading of the
// Markdown file it points at.
func TestLinksResolve(t *testing.T) {
	t.Parallel()
	r := disk(t)
	for _, page := range pages(t) {
		src, err := os.ReadFile(filepath.Join(root, filepath.FromSlash(page)))
		if err != nil {
			t.Fatal(err)
		}
		for _, msg := range brokenLinks(page, string(src), r) {
			t.Error(msg)
		}
	}
}

// TestBrokenLinks runs the link check on made-up pages, so that a check
// that finds nothing is known to be able to find something.
func TestBrokenLinks(t *testing.T) {
	t.Parallel()
	r := repo{
		exists: func(p string) bool {
			return p == "docs/a.md" || p == "docs/ref/b.md" || p == "README.md" || p == "scripts"
		},
		anchors: func(p string) map[string]bool {
			return map[string]bool{"modes": true, "built-in-rules": true}
		},
	}
	tests := []struct {
		name string
		page string
		src  string
		want int
	}{
		{"file beside", "docs/a.md", "see [b](ref/b.md)", 0},
		{"file up", "docs/ref/b.md", "see [a](../a.md#modes)", 0},
		{"missing file", "README.md", "see [design](DESIGN.md)", 1},
		{"missing anchor", "README.md", "see [a](docs/a.md#nowhere)", 1},
		{"own anchor", "docs/a.md", "see [modes](#modes)", 0},
		{"own missing anchor", "docs/a.md", "see [x](#x)", 1},
		{"leaves the repository", "README.md", "see [x](../x.md)", 1},
		{"web and mail", "README.md", "[w](https://example.com/x.md) [m](mailto:a@b.c)", 0},
		{"directory", "README.md", "[s](scripts)", 0},
		{"in a code span", "README.md", "`[x](nowhere.md)`", 0},
		{"in a code block", "README.md", "```\n[x](nowhere.md)\n```", 0},
		{"reference definition", "README.md", "[d]: DESIGN.md", 1},
		{"two on a line", "README.md", "[a](docs/a.md) and [x](x.md) and [y](y.md)", 2},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			if got := brokenLinks(tc.page, tc.src, r); len(got) != tc.want {
				t.Errorf("%d broken, want %d: %q", len(got), tc.want, got)
			}
		})
	}
}

// TestSlug pins the anchors headings get.
func TestSlug(t *testing.T) {
	t.Parallel()
	for h, want := range map[string]string{
		"Built-in rules": "built-in-rules",
		"Opaque calls: an allow covers only what was understood": "opaque-calls-an-allow-covers-only-what-was-understood",
		"`check` and `policy explain`":                           "check-and-policy-explain",
	} {
		if got := slug(h); got != want {
			t.Errorf("slug(%q) = %q, want %q", h, got, want)
		}
	}
}

// formatNames are Markdown files that pages name as files of a format a
// user's project holds (a skill's SKILL.md, the project's AGENTS.md, aider's
// transcript), not
// as pages of this repository.
var formatNames = map[string]bool{"SKILL.md": true, "AGENTS.md": true, ".aider.chat.history.md": true}

// TestNamedPagesExist fails for a Markdown file named in the text of
// README.md or docs/ (not in a code block) that the repository does not
// hold, looked for beside the page and at the repository's top: a page
// that says "see DESIGN.md §4" points at something as surely as a link.
func TestNamedPagesExist(t *testing.T) {
	t.Parallel()
	for _, page := range pages(t) {
		src, err := os.ReadFile(filepath.Join(root, filepath.FromSlash(page)))
		if err != nil {
			t.Fatal(err)
		}
		for n, line := range strings.Split(prose(string(src)), "\n") {
			line = inlineLink.ReplaceAllString(line, "]")
			for _, m := range mdName.FindAllStringSubmatch(line, -1) {
				name := m[1]
				if formatNames[name] || strings.Contains(name, "://") {
					continue
				}
				beside := path.Join(path.Dir(page), name)
				_, errBeside := os.Stat(filepath.Join(root, filepath.FromSlash(beside)))
				_, errTop := os.Stat(filepath.Join(root, filepath.FromSlash(strings.TrimPrefix(name, "/"))))
				if errBeside != nil && errTop != nil {
					t.Errorf("%s:%d: names %s, which is not in the repository", page, n+1, name)
				}
			}
		}
	}
}
