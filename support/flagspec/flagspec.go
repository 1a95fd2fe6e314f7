// Package flagspec defines a command's flags once, for two front ends:
// custom-agent's cobra commands (cmd/custom-agent adds a Set to a pflag
// FlagSet) and custom-agent-gate's own small parser (Parse), which links
// neither cobra nor pflag, and so neither net nor text/template: the gate
// starts for every tool call of another agent and must start fast.
//
// Parse reads the command lines pflag reads for the kinds of flags here
// (long flags only, --name value, --name=value, a bare --name for a
// boolean, -- ending the flags, flags and arguments in any order, and
// cobra's boolean help flag -h, --help[=BOOL]) and fails with pflag's
// messages, so that both binaries answer a bad command line byte for byte
// alike.
package flagspec

import (
	"errors"
	"fmt"
	"io"
	"slices"
	"strconv"
	"strings"
	"time"
)

// Flag is one flag: its name, help and where its value goes. Ptr is a
// *string, *bool, *[]string (a repeatable flag: each use appends) or
// *time.Duration; Def is its default, of the pointed-to type (nil for a
// repeatable flag).
type Flag struct {
	Name, Usage string
	Ptr         any
	Def         any
}

// Set is a command's flags, in the order they were defined.
type Set struct {
	flags   []*Flag
	changed map[string]bool
}

func (s *Set) add(f *Flag) {
	for _, g := range s.flags {
		if g.Name == f.Name {
			panic("flagspec: flag --" + f.Name + " defined twice")
		}
	}
	s.flags = append(s.flags, f)
}

// String defines a flag with a string value.
func (s *Set) String(p *string, name, def, usage string) {
	*p = def
	s.add(&Flag{Name: name, Usage: usage, Ptr: p, Def: def})
}

// Bool defines a boolean flag.
func (s *Set) Bool(p *bool, name string, def bool, usage string) {
	*p = def
	s.add(&Flag{Name: name, Usage: usage, Ptr: p, Def: def})
}

// StringArray defines a repeatable flag: each use appends its value.
func (s *Set) StringArray(p *[]string, name, usage string) {
	*p = nil
	s.add(&Flag{Name: name, Usage: usage, Ptr: p})
}

// Duration defines a flag with a time.Duration value.
func (s *Set) Duration(p *time.Duration, name string, def time.Duration, usage string) {
	*p = def
	s.add(&Flag{Name: name, Usage: usage, Ptr: p, Def: def})
}

// Flags returns the flags in the order they were defined.
func (s *Set) Flags() []*Flag { return s.flags }

// Merge adds t's flags to s (a parent command's flags that its
// subcommands take too).
func (s *Set) Merge(t *Set) {
	for _, f := range t.flags {
		s.add(f)
	}
}

// Changed reports whether Parse set the flag name.
func (s *Set) Changed(name string) bool { return s.changed[name] }

func (s *Set) lookup(name string) *Flag {
	for _, f := range s.flags {
		if f.Name == name {
			return f
		}
	}
	return nil
}

// ErrHelp is Parse's error for a help flag that ends true: -h, --help,
// --help=true, -h=1 (and not --help=false).
var ErrHelp = errors.New("help requested")

// Parse sets the flags of args and returns the other arguments, in order.
// It reads them as pflag reads a cobra command's flags, cobra's -h, --help
// included: a boolean flag like the others (--help=false asks no help,
// --help=maybe is an error), whose shorthand clusters as pflag's do (-hx
// is -h then the unknown -x). Its errors are pflag's, word for word; a
// help flag that ends true, and no error, is ErrHelp.
func (s *Set) Parse(args []string) ([]string, error) {
	if s.changed == nil {
		s.changed = map[string]bool{}
	}
	help := false
	var rest []string
	for len(args) > 0 {
		a := args[0]
		args = args[1:]
		switch {
		case a == "--":
			rest = append(rest, args...)
			args = nil
		case len(a) < 2 || a[0] != '-':
			rest = append(rest, a)
		case a[1] != '-':
			if err := shorts(a[1:], &help); err != nil {
				return nil, err
			}
		default:
			var err error
			if args, err = s.long(a, args, &help); err != nil {
				return nil, err
			}
		}
	}
	if help {
		return nil, ErrHelp
	}
	return rest, nil
}

// helpName is how pflag's errors name cobra's help flag.
const helpName = "-h, --help"

// shorts reads a cluster of shorthands (what follows the "-") as pflag
// does. The only shorthand is cobra's -h: -h, -h=V (V a boolean) and -hh
// set help; any other letter is unknown, named with the rest of the
// cluster from it, as pflag names it. pflag ignores a cluster starting
// "test." (go test's flags), so this does too.
func shorts(cl string, help *bool) error {
	if strings.HasPrefix(cl, "test.") {
		return nil
	}
	for cl != "" {
		if cl[0] != 'h' {
			return fmt.Errorf("unknown shorthand flag: %q in -%s", rune(cl[0]), cl)
		}
		if len(cl) > 2 && cl[1] == '=' {
			return setHelp(cl[2:], help)
		}
		*help = true
		cl = cl[1:]
	}
	return nil
}

// setHelp sets help from v as pflag sets a boolean flag.
func setHelp(v string, help *bool) error {
	b, err := strconv.ParseBool(v)
	if err != nil {
		return fmt.Errorf("invalid argument %q for %q flag: %v", v, helpName, err)
	}
	*help = b
	return nil
}

// long sets the long flag a (--name or --name=value), taking its value
// from args when it needs one, and returns the arguments left. --help is
// cobra's help flag, a boolean, unless the set defines its own.
func (s *Set) long(a string, args []string, help *bool) ([]string, error) {
	name := a[2:]
	if name == "" || name[0] == '-' || name[0] == '=' {
		return nil, fmt.Errorf("bad flag syntax: %s", a)
	}
	name, value, hasValue := strings.Cut(name, "=")
	f := s.lookup(name)
	if f == nil {
		if name == "help" {
			if !hasValue {
				value = "true"
			}
			return args, setHelp(value, help)
		}
		return nil, fmt.Errorf("unknown flag: --%s", name)
	}
	if !hasValue {
		if _, ok := f.Ptr.(*bool); ok {
			value = "true"
		} else if len(args) > 0 {
			value, args = args[0], args[1:]
		} else {
			return nil, fmt.Errorf("flag needs an argument: --%s", name)
		}
	}
	if err := f.set(value); err != nil {
		return nil, fmt.Errorf("invalid argument %q for %q flag: %v", value, "--"+name, err)
	}
	s.changed[name] = true
	return args, nil
}

func (f *Flag) set(v string) error {
	switch p := f.Ptr.(type) {
	case *string:
		*p = v
	case *bool:
		b, err := strconv.ParseBool(v)
		if err != nil {
			return err
		}
		*p = b
	case *[]string:
		*p = append(*p, v)
	case *time.Duration:
		d, err := time.ParseDuration(v)
		if err != nil {
			return err
		}
		*p = d
	default:
		panic(fmt.Sprintf("flagspec: flag --%s of type %T", f.Name, f.Ptr))
	}
	return nil
}

// typeName is the flag's value as the help names it ("" for a boolean).
func (f *Flag) typeName() string {
	switch f.Ptr.(type) {
	case *string:
		return "string"
	case *[]string:
		return "stringArray"
	case *time.Duration:
		return "duration"
	}
	return ""
}

// defaultNote is the help's "(default …)", or "" for a zero default.
func (f *Flag) defaultNote() string {
	switch d := f.Def.(type) {
	case string:
		if d != "" {
			return fmt.Sprintf(" (default %q)", d)
		}
	case bool:
		if d {
			return " (default true)"
		}
	case time.Duration:
		if d != 0 {
			return " (default " + d.String() + ")"
		}
	}
	return ""
}

// PrintDefaults writes the flags' help as pflag lays it out: one line a
// flag, sorted by name, the help aligned. With helpFor not empty, the
// list has -h, --help ("help for " helpFor) too.
func (s *Set) PrintDefaults(w io.Writer, helpFor string) error {
	type line struct{ name, left, usage string }
	var lines []line
	if helpFor != "" {
		lines = append(lines, line{"help", "  -h, --help", "help for " + helpFor})
	}
	for _, f := range s.flags {
		l := "      --" + f.Name
		if t := f.typeName(); t != "" {
			l += " " + t
		}
		lines = append(lines, line{f.Name, l, f.Usage + f.defaultNote()})
	}
	slices.SortStableFunc(lines, func(a, b line) int { return strings.Compare(a.name, b.name) })
	width := 0
	for _, l := range lines {
		width = max(width, len(l.left))
	}
	var b strings.Builder
	for _, l := range lines {
		b.WriteString(l.left)
		b.WriteString(strings.Repeat(" ", width-len(l.left)+3))
		b.WriteString(strings.ReplaceAll(l.usage, "\n", "\n"+strings.Repeat(" ", width+3)))
		b.WriteByte('\n')
	}
	_, err := io.WriteString(w, b.String())
	return err
}
