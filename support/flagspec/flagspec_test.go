package flagspec

import (
	"errors"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/spf13/pflag"
)

type vals struct {
	s    string
	b    bool
	a    []string
	d    time.Duration
	rest []string
}

func define(v *vals) *Set {
	var s Set
	s.String(&v.s, "tool", "{}", "a string")
	s.Bool(&v.b, "json", false, "a bool")
	s.StringArray(&v.a, "policy", "repeatable")
	s.Duration(&v.d, "deadline", 5*time.Second, "a duration")
	return &s
}

// definePflag is define's flags as custom-agent adds them to cobra
// (cmd/custom-agent's addFlags), with the help flag cobra adds to every
// command (cobra's InitDefaultHelpFlag).
func definePflag(v *vals) *pflag.FlagSet {
	fs := pflag.NewFlagSet("x", pflag.ContinueOnError)
	fs.Usage = func() {}
	fs.BoolP("help", "h", false, "help for x")
	fs.StringVar(&v.s, "tool", "{}", "a string")
	fs.BoolVar(&v.b, "json", false, "a bool")
	fs.StringArrayVar(&v.a, "policy", nil, "repeatable")
	fs.DurationVar(&v.d, "deadline", 5*time.Second, "a duration")
	return fs
}

// TestParseAsPflag: Parse sets the same values, leaves the same arguments
// and fails with the same message as pflag, on each command line, so that
// custom-agent-gate and custom-agent answer it alike.
func TestParseAsPflag(t *testing.T) {
	for _, line := range []string{
		"",
		"--tool shell --json",
		"--tool=shell --json=false extra",
		"a --policy p1 b --policy=p2 --deadline 1m30s",
		"--tool",
		"--json=maybe",
		"--deadline soon",
		"--frobnicate",
		"--frobnicate=1",
		"-x",
		"-tool shell",
		"---tool",
		"--=x",
		"-- --json",
		"- --json",
		"--tool -- --json",
		"--policy",
		"--tool= ",
		// cobra's help flag is a boolean like the others: only a true
		// value asks for help (attacker review 2, finding 3).
		"-h",
		"--help",
		"--json x --help",
		"--help=true",
		"--help=1",
		"--help=false",
		"--help=0",
		"--help=F",
		"-h=false",
		"-h=0",
		"-h=true",
		"-h=",
		"--help=",
		"--help=maybe",
		"-h=maybe",
		"-hx",
		"-xh",
		"-hh",
		"-hhh=false",
		"--help --help=false",
		"--help=false --help",
		"--help=false --tool shell extra",
		"--help --frobnicate",
		"-h -- --help=false",
		"--help=false -- --help",
		"-test.v",
		"-test.v --json",
		"--hel",
		"--help=false=x",
	} {
		t.Run(line, func(t *testing.T) {
			args := strings.Fields(line)
			var got, want vals
			s := define(&got)
			rest, err := s.Parse(args)
			got.rest = rest
			fs := definePflag(&want)
			perr := fs.Parse(args)
			want.rest = fs.Args()
			if help, _ := fs.GetBool("help"); perr == nil && help {
				perr = ErrHelp // what cobra then does: print help, exit 0
			}
			if fmt.Sprint(err) != fmt.Sprint(perr) {
				t.Fatalf("error %v, pflag's %v", err, perr)
			}
			if err != nil {
				return
			}
			if got.s != want.s || got.b != want.b || !slices.Equal(got.a, want.a) || got.d != want.d || !slices.Equal(got.rest, want.rest) {
				t.Errorf("got %+v, pflag %+v", got, want)
			}
			for _, n := range []string{"tool", "json", "policy", "deadline"} {
				if s.Changed(n) != fs.Changed(n) {
					t.Errorf("Changed(%q) = %v, pflag %v", n, s.Changed(n), fs.Changed(n))
				}
			}
		})
	}
}

func TestHelp(t *testing.T) {
	for _, args := range [][]string{{"-h"}, {"--help"}, {"--json", "x", "--help"}} {
		var v vals
		if _, err := define(&v).Parse(args); !errors.Is(err, ErrHelp) {
			t.Errorf("%v: %v, want ErrHelp", args, err)
		}
	}
}

// TestPrintDefaultsAsPflag: the flags' help is pflag's, line for line,
// with the -h line cobra adds.
func TestPrintDefaultsAsPflag(t *testing.T) {
	var v vals
	var b strings.Builder
	if err := define(&v).PrintDefaults(&b, "x"); err != nil {
		t.Fatal(err)
	}
	if want := definePflag(&v).FlagUsages(); b.String() != want {
		t.Errorf("help:\n%s\npflag's:\n%s", b.String(), want)
	}
}

func TestDefinedTwice(t *testing.T) {
	defer func() {
		if recover() == nil {
			t.Error("no panic")
		}
	}()
	var s Set
	var a, b string
	s.String(&a, "x", "", "")
	s.String(&b, "x", "", "")
}
