// Package doclinks holds no code: its test checks that every relative link
// in README.md and docs/ resolves inside the repository, and that no page
// names a Markdown file the repository does not hold (issue 24 item 9).
package doclinks
