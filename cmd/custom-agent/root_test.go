package main

import (
	"strings"
	"testing"

	"github.com/spf13/cobra"
)

// groups returns every command with subcommands, the root included.
func groups(c *cobra.Command) []*cobra.Command {
	var out []*cobra.Command
	if c.HasSubCommands() {
		out = append(out, c)
	}
	for _, sub := range c.Commands() {
		out = append(out, groups(sub)...)
	}
	return out
}

// pathArgs is a command's path without the root's name.
func pathArgs(c *cobra.Command) []string {
	return strings.Fields(c.CommandPath())[1:]
}

func TestUnknownSubcommandFailsWithASuggestion(t *testing.T) {
	gs := groups(newRootCmd())
	names := map[string]bool{}
	for _, g := range gs {
		names[g.CommandPath()] = true
	}
	// The groups this test must cover, so that a new group cannot slip by.
	for _, want := range []string{"custom-agent", "custom-agent policy", "custom-agent audit", "custom-agent artifact", "custom-agent completion"} {
		if !names[want] {
			t.Fatalf("command group %q not found among %v", want, names)
		}
	}
	for _, g := range gs {
		for _, sub := range g.Commands() {
			if !sub.IsAvailableCommand() || len(sub.Name()) < 3 {
				continue
			}
			// A typo: the subcommand's name with its last letter dropped.
			typo := sub.Name()[:len(sub.Name())-1]
			args := append(pathArgs(g), typo)
			t.Run(strings.Join(args, " "), func(t *testing.T) {
				out, _, err := runCLI(t, args...)
				if err == nil || exitCode(err) == 0 {
					t.Fatalf("%v: exit 0, want a failure; stdout:\n%s", args, out)
				}
				want := "unknown command \"" + typo + "\" for \"" + g.CommandPath() + "\"; did you mean "
				if !strings.Contains(err.Error(), want) || !strings.Contains(err.Error(), sub.Name()) {
					t.Fatalf("%v: error %q, want %q naming %s", args, err, want, sub.Name())
				}
			})
		}
		args := append(pathArgs(g), "qqqqqqqq")
		t.Run(strings.Join(args, " "), func(t *testing.T) {
			_, _, err := runCLI(t, args...)
			want := "unknown command \"qqqqqqqq\" for \"" + g.CommandPath() + "\" (" + g.CommandPath() + " --help lists its commands)"
			if err == nil || err.Error() != want {
				t.Fatalf("%v: error %v, want %q", args, err, want)
			}
			// help names the same problem.
			_, _, err = runCLI(t, append([]string{"help"}, args...)...)
			if err == nil || err.Error() != want {
				t.Fatalf("help %v: error %v, want %q", args, err, want)
			}
		})
		if g.HasParent() {
			// A group named alone still prints its help and succeeds.
			t.Run(g.CommandPath()+" alone", func(t *testing.T) {
				out, _, err := runCLI(t, pathArgs(g)...)
				if err != nil || !strings.Contains(out, "Available Commands") {
					t.Fatalf("%v: %v\n%s", pathArgs(g), err, out)
				}
			})
		}
	}
}

func TestVersionFlag(t *testing.T) {
	for _, args := range [][]string{{"--version"}, {"-v"}, {"version"}} {
		out, _, err := runCLI(t, args...)
		if err != nil || out != "custom-agent "+version()+"\n" {
			t.Fatalf("%v: %q, %v", args, out, err)
		}
	}
}
