package main

import (
	"fmt"
	"time"

	"github.com/spf13/pflag"

	"github.com/custom-agent/custom-agent/support/flagspec"
)

// addFlags adds the flags of s, defined once for custom-agent and
// custom-agent-gate (package flagspec), to a cobra command's flag set,
// each as pflag's own flag of its type, so that help and errors are
// pflag's.
func addFlags(fl *pflag.FlagSet, s *flagspec.Set) {
	for _, f := range s.Flags() {
		switch p := f.Ptr.(type) {
		case *string:
			fl.StringVar(p, f.Name, f.Def.(string), f.Usage)
		case *bool:
			fl.BoolVar(p, f.Name, f.Def.(bool), f.Usage)
		case *[]string:
			fl.StringArrayVar(p, f.Name, nil, f.Usage)
		case *time.Duration:
			fl.DurationVar(p, f.Name, f.Def.(time.Duration), f.Usage)
		default:
			panic(fmt.Sprintf("addFlags: flag --%s of type %T", f.Name, f.Ptr))
		}
	}
}
