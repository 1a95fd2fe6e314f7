package tool

import (
	"testing"

	"github.com/custom-agent/custom-agent/permission"
)

// BenchmarkRegisterBuiltins: compiling the built-in tools' schemas, as
// every command that builds a router does once.
func BenchmarkRegisterBuiltins(b *testing.B) {
	infos := permission.Builtins()
	for b.Loop() {
		r := NewRouter()
		for _, info := range infos {
			r.Register(fake{info})
		}
	}
}

// BenchmarkValidate: one valid call and one failing call of read_file.
func BenchmarkValidate(b *testing.B) {
	r := NewRouter()
	for _, info := range permission.Builtins() {
		r.Register(fake{info})
	}
	for _, bc := range []struct{ name, args string }{
		{"valid", `{"path":"README.md","offset":0,"limit":10}`},
		{"invalid", `{"file":"README.md","limit":0}`},
	} {
		b.Run(bc.name, func(b *testing.B) {
			for b.Loop() {
				_, _ = r.Validate("read_file", []byte(bc.args))
			}
		})
	}
}
