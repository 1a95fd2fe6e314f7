package main

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// Web review 4, finding 6: policy explain and serve's web explain form
// decide as check and the turns do, knowing the data dir: a custom one
// inside the project (--data-dir proj/.cad) is the agent's own, and
// reading serve's token file there is denied, not allowed as any project
// file would be.
func TestExplainKnowsTheDataDir(t *testing.T) {
	t.Setenv("XDG_CONFIG_HOME", t.TempDir())
	t.Setenv("CUSTOM_AGENT_DATA_DIR", "")
	proj, err := filepath.EvalSymlinks(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	data := filepath.Join(proj, ".cad")
	if err := os.Mkdir(data, 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(data, "serve-1.token"), []byte(strings.Repeat("ab", 32)), 0o600); err != nil {
		t.Fatal(err)
	}
	args := `{"path":".cad/serve-1.token"}`
	out, errOut, err := runCLI(t, "--data-dir", data, "policy", "explain", "--cwd", proj, "--tool", "read_file", "--args", args)
	if err != nil {
		t.Fatalf("policy explain: %v\n%s", err, errOut)
	}
	if !strings.Contains(out, "decision: deny") || !strings.Contains(out, "custom-agent's own data") {
		t.Errorf("policy explain --data-dir %s does not deny reading its token file:\n%s", data, out)
	}
	web, err := servePolicy{dataDir: data}.Explain(context.Background(), proj, "read_file", json.RawMessage(args))
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(web, "decision: deny") || !strings.Contains(web, "custom-agent's own data") {
		t.Errorf("the web's explain form does not deny reading the token file of serve's data dir:\n%s", web)
	}
}
