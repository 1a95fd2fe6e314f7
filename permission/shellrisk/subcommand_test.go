package shellrisk_test

import (
	"strings"
	"testing"

	"github.com/custom-agent/custom-agent/permission/shellrisk"
)

func TestSubcommand(t *testing.T) {
	t.Parallel()
	tests := []struct {
		argv string
		want int // -1: not read with certainty
	}{
		{"git log", 1},
		{"git -C . log", 3},
		{"git -C. log", -1},
		{"git --no-pager log", 2},
		{"git -c core.quotepath=off log", 3},
		{"git --git-dir=.git log", 2},
		{"git --git-dir .git --work-tree . status", 5},
		{"git --exec-path=/x log", 2},
		{"git --bogus log", -1},
		{"git -pP log", -1},
		{"git -C", -1},
		{"git -- log", -1},
		{"git --version", 2},
		{"docker --context x ps", 3},
		{"docker -H tcp://h:1 ps", 3},
		{"docker --cont x ps", -1},
		{"go -C dir vet", 3},
		{"go -x vet", -1},
		{"cargo +nightly build", 2},
		{"cargo +nightly --locked -C sub test", 5},
		{"cargo -vv build", -1},
		{"make -k test", 2},
		{"make -C dir test", 3},
		{"make -j4 test", 2},
		{"make --jobs=4 test", 2},
		{"make --dir=x test", -1},
		{"npm test", 1},
		{"npm --prefix x run build", -1},
		{"curl -s https://x", -1},
		{"ls", 1},
	}
	for _, tc := range tests {
		c := shellrisk.Command{Argv: strings.Fields(tc.argv)}
		i, ok := shellrisk.Subcommand(&c)
		if !ok {
			i = -1
		}
		if i != tc.want {
			t.Errorf("Subcommand(%q) = %d, %v; want %d", tc.argv, i, ok, tc.want)
		}
	}
}
