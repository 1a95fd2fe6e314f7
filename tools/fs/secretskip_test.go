package fs

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// secretTree is a project holding credentials by name and look-alikes that
// hold none (review A8, issue 9 §3 and §5).
var secretTree = map[string]string{
	".env":                              "DB_PASSWORD=hunter2\n",
	".env.local":                        "STRIPE_KEY=sk_live_LOCAL\n",
	".env.example":                      "DB_PASSWORD=changeme\n",
	"keys/id_ed25519":                   "-----BEGIN OPENSSH PRIVATE KEY-----\nKEYDATA\n-----END OPENSSH PRIVATE KEY-----\n",
	"keys/id_ed25519.pub":               "ssh-ed25519 AAAAPUBLIC u@host\n",
	".npmrc":                            "//registry.example/:_authToken=npm_TOKEN\n",
	"secrets/prod-service-account.json": "{\"private_key\": \"-----BEGIN PRIVATE KEY-----SAKEY\"}\n",
	"certs/server.pem":                  "-----BEGIN PRIVATE KEY-----\nPEMKEY\n",
	"infra/terraform.tfstate":           "{\"password\": \"TFSECRET\"}\n",
	".docker/config.json":               "{\"auths\": {\"x\": {\"auth\": \"DOCKERAUTH\"}}}\n",
	"src/keyboard.go":                   "package src // PASSWORD handling for the keyboard\n",
	"src/main.go":                       "package main\n",
}

func TestSearchSkipsCredentialFiles(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	makeTree(t, dir, secretTree)
	got, res, err := run(t, &SearchText{}, dir, map[string]any{"pattern": "."})
	if err != nil {
		t.Fatal(err)
	}
	for _, secret := range []string{"hunter2", "sk_live_LOCAL", "KEYDATA", "OPENSSH", "npm_TOKEN", "SAKEY", "PEMKEY", "TFSECRET", "DOCKERAUTH"} {
		if strings.Contains(got, secret) {
			t.Errorf("search output holds %q, which read_file would be denied:\n%s", secret, got)
		}
	}
	for _, line := range []string{
		".env.example:1:DB_PASSWORD=changeme", "keys/id_ed25519.pub:1:ssh-ed25519 AAAAPUBLIC u@host",
		"src/keyboard.go:1:package src // PASSWORD handling for the keyboard", "src/main.go:1:package main",
	} {
		if !strings.Contains(got, line+"\n") {
			t.Errorf("search output lacks %q:\n%s", line, got)
		}
	}
	wantNote := "[not searched: 8 files that hold credentials by name or location (keys, .env files, tokens): " +
		".docker/config.json, .env, .env.local, .npmrc, certs/server.pem, infra/terraform.tfstate, keys/id_ed25519, secrets/prod-service-account.json; " +
		"the permission engine judges reading them credential, so their contents are left out]\n"
	if !strings.HasSuffix(got, wantNote) {
		t.Errorf("output does not end with the note\n%s\ngot:\n%s", wantNote, got)
	}
	var sum searchSummary
	if err := json.Unmarshal(res.Summary, &sum); err != nil {
		t.Fatal(err)
	}
	if want := (searchSummary{Matches: 4, Files: 4, Searched: 4, Skipped: 8}); sum != want {
		t.Errorf("summary = %+v, want %+v", sum, want)
	}

	// The glob narrows what is judged: files it leaves out are not counted.
	got, _, err = run(t, &SearchText{}, dir, map[string]any{"pattern": "PASSWORD", "glob": "*.go"})
	if err != nil {
		t.Fatal(err)
	}
	if want := "src/keyboard.go:1:package src // PASSWORD handling for the keyboard\n"; got != want {
		t.Errorf("glob *.go: got %q, want %q", got, want)
	}
	// Only credentials in the tree: no matches, and the note says why.
	got, _, err = run(t, &SearchText{}, dir, map[string]any{"pattern": "hunter2", "path": "."})
	if err != nil {
		t.Fatal(err)
	}
	if strings.Contains(got, ":1:") || !strings.Contains(got, "[no matches in 4 files searched]\n[not searched: 8 files") {
		t.Errorf("search for a secret's text:\n%s", got)
	}
}

// A directory reached through a symbolic link is judged where it leads: a
// link in the project to a .ssh directory is walked from its physical path,
// and every file there is a credential, whatever its name.
func TestSearchSkipsThroughSymlinkedDirectory(t *testing.T) {
	t.Parallel()
	outside := t.TempDir()
	makeTree(t, outside, map[string]string{".ssh/config": "Host x\n  IdentityFile SSHCONFIG\n", ".ssh/notes.txt": "NOTE\n"})
	dir := t.TempDir()
	makeTree(t, dir, map[string]string{"README.md": "readme\n"})
	if err := os.Symlink(filepath.Join(outside, ".ssh"), filepath.Join(dir, "sshlink")); err != nil {
		t.Skip("no symbolic links:", err)
	}
	got, _, err := run(t, &SearchText{}, dir, map[string]any{"pattern": ".", "path": "sshlink"})
	if err != nil {
		t.Fatal(err)
	}
	want := "[no matches in 0 files searched]\n" +
		"[not searched: 2 files that hold credentials by name or location (keys, .env files, tokens): sshlink/config, sshlink/notes.txt; " +
		"the permission engine judges reading them credential, so their contents are left out]\n"
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("stdout (-want +got):\n%s", diff)
	}
	// A symbolic link to a key inside the searched tree is never followed.
	if err := os.Symlink(filepath.Join(outside, ".ssh", "config"), filepath.Join(dir, "innocent.txt")); err != nil {
		t.Fatal(err)
	}
	got, _, err = run(t, &SearchText{}, dir, map[string]any{"pattern": "."})
	if err != nil {
		t.Fatal(err)
	}
	if strings.Contains(got, "SSHCONFIG") || got != "README.md:1:readme\n" {
		t.Errorf("search through a file link: %q", got)
	}
}

// A file named alone was judged by the engine on that very path (a rule
// naming it may allow it), so the tool does not second-guess it.
func TestSearchFileNamedAlone(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	makeTree(t, dir, secretTree)
	got, _, err := run(t, &SearchText{}, dir, map[string]any{"pattern": "DB_", "path": ".env"})
	if err != nil {
		t.Fatal(err)
	}
	if got != ".env:1:DB_PASSWORD=hunter2\n" {
		t.Errorf("got %q", got)
	}
}

// list_files returns names, never contents; a credential file is listed
// like any other (read_file judges it), and a name holding control
// characters is escaped.
func TestListFilesNamesOnly(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	makeTree(t, dir, secretTree)
	makeTree(t, dir, map[string]string{"evil\x1b]0;owned\x07.txt": "x\n"})
	got, _, err := run(t, &ListFiles{}, dir, map[string]any{})
	if err != nil {
		t.Fatal(err)
	}
	for _, secret := range []string{"hunter2", "KEYDATA", "npm_TOKEN", "SAKEY"} {
		if strings.Contains(got, secret) {
			t.Errorf("listing holds %q", secret)
		}
	}
	for _, name := range []string{".env\n", "keys/id_ed25519\n", ".npmrc\n", `"evil\x1b]0;owned\a.txt"` + "\n"} {
		if !strings.Contains(got, name) {
			t.Errorf("listing lacks %q:\n%s", name, got)
		}
	}
	if strings.ContainsAny(got, "\x1b\x07") {
		t.Errorf("listing passes control characters through: %q", got)
	}
}

// A .gitignore that is a symbolic link is not followed (as git does), so a
// walk never reads a file outside the tree through it.
func TestIgnoreFileSymlinkNotFollowed(t *testing.T) {
	t.Parallel()
	outside := t.TempDir()
	makeTree(t, outside, map[string]string{"id_rsa": "main.go\n"})
	dir := t.TempDir()
	makeTree(t, dir, map[string]string{"main.go": "package main\n", "other.go": "package main\n"})
	if err := os.Symlink(filepath.Join(outside, "id_rsa"), filepath.Join(dir, ".gitignore")); err != nil {
		t.Skip("no symbolic links:", err)
	}
	got, _, err := run(t, &ListFiles{}, dir, map[string]any{})
	if err != nil {
		t.Fatal(err)
	}
	if want := ".gitignore\nmain.go\nother.go\n"; got != want {
		t.Errorf("listing = %q, want %q (the linked .gitignore must not apply)", got, want)
	}
}
