// Package mcptest finds the MCP reference servers the tests run against:
// @modelcontextprotocol/server-filesystem and server-everything, pinned in
// mcp/testdata/servers and installed there by scripts/test (npm ci).
package mcptest

import (
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"testing"
)

// Dir returns the absolute directory of the installed servers. Without
// node or the installed servers the test skips, saying what is missing,
// except under CI=true, where it fails.
func Dir(t testing.TB) string {
	t.Helper()
	_, file, _, _ := runtime.Caller(0)
	dir, _ := filepath.Abs(filepath.Join(filepath.Dir(file), "..", "testdata", "servers"))
	missing := ""
	if _, err := exec.LookPath("node"); err != nil {
		missing = "node is not installed"
	} else {
		for _, pkg := range []string{"server-filesystem", "server-everything"} {
			if _, err := os.Stat(Script(dir, pkg)); err != nil {
				missing = "the MCP test servers are not installed: run npm ci --no-audit --no-fund in " + dir + " (scripts/test does)"
				break
			}
		}
	}
	if missing != "" {
		if os.Getenv("CI") == "true" {
			t.Fatal(missing)
		}
		t.Skip(missing)
	}
	return dir
}

// Script is the entry point of the server package pkg ("server-everything")
// under dir.
func Script(dir, pkg string) string {
	return filepath.Join(dir, "node_modules", "@modelcontextprotocol", pkg, "dist", "index.js")
}
