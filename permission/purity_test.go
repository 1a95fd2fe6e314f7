package permission_test

import (
	"testing"

	"github.com/custom-agent/custom-agent/testsupport/puritytest"
)

func TestPure(t *testing.T) {
	t.Parallel()
	puritytest.Check(t, ".")
}
