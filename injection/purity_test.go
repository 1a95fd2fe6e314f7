package injection

import (
	"testing"

	"github.com/custom-agent/custom-agent/internal/puritytest"
)

func TestPure(t *testing.T) {
	t.Parallel()
	puritytest.Check(t, ".")
}
