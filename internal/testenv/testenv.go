// Package testenv lets tests that need a real program (npm, go, …) skip on
// a developer's machine that lacks it, and fail in CI (CI=true), where the
// test command installs everything the tests need.
package testenv

import (
	"os"
	"os/exec"
	"testing"
)

// InCI reports whether the tests run in CI.
func InCI() bool { return os.Getenv("CI") == "true" }

// NeedProgram skips the test, naming what is missing, unless the program is
// on PATH; in CI a missing program fails the test instead.
func NeedProgram(t testing.TB, name string) {
	t.Helper()
	if _, err := exec.LookPath(name); err == nil {
		return
	}
	if InCI() {
		t.Fatalf("%s is not installed, and CI must run every test: install it in scripts/test", name)
	}
	t.Skipf("%s is not installed: skipping the test that runs it", name)
}
