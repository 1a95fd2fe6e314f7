package mcp_test

import (
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"testing"
)

// Servers returns the directory of the npm-installed test servers
// (mcp/testdata/servers; scripts/test runs npm ci there). Without node or
// the installed servers a test skips, saying what is missing, except under
// CI=true, where it fails.
func Servers(t testing.TB) string {
	t.Helper()
	_, file, _, _ := runtime.Caller(0)
	dir := filepath.Join(filepath.Dir(file), "testdata", "servers")
	missing := ""
	if _, err := exec.LookPath("node"); err != nil {
		missing = "node is not installed"
	} else if _, err := os.Stat(filepath.Join(dir, "node_modules", "@modelcontextprotocol", "server-everything", "dist", "index.js")); err != nil {
		missing = "the MCP test servers are not installed: run npm ci --no-audit --no-fund in " + dir + " (scripts/test does)"
	}
	if missing != "" {
		if os.Getenv("CI") == "true" {
			t.Fatal(missing)
		}
		t.Skip(missing)
	}
	return dir
}
