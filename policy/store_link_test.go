package policy

import (
	"errors"
	"os"
	"path/filepath"
	"testing"
)

// TestNoLinkBelow: a project's .custom-agent that is a symbolic link (to
// the user's own policy directory, say) is not written through.
func TestNoLinkBelow(t *testing.T) {
	root, elsewhere := t.TempDir(), t.TempDir()
	if err := noLinkBelow(root, filepath.Join(root, ".custom-agent", "policy.json")); err != nil {
		t.Fatalf("a project with no .custom-agent: %v", err)
	}
	if err := os.Symlink(elsewhere, filepath.Join(root, ".custom-agent")); err != nil {
		t.Fatal(err)
	}
	if err := noLinkBelow(root, filepath.Join(root, ".custom-agent", "policy.json")); !errors.Is(err, ErrLinkedPolicy) {
		t.Fatalf("a linked .custom-agent: %v; want ErrLinkedPolicy", err)
	}
}
