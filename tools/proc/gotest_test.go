package proc

import (
	"strings"
	"testing"
)

func TestGoTestOutput(t *testing.T) {
	t.Parallel()
	long := strings.Repeat("x", maxLine+10)
	tests := []struct {
		name string
		in   string
		want string
	}{
		{name: "framing dropped, names kept",
			in: `{"Action":"run","Package":"p","Test":"TestA"}
{"Action":"output","Package":"p","Test":"TestA","Output":"=== RUN   TestA\n"}
{"Action":"output","Package":"p","Test":"TestA","Output":"    a_test.go:3: boom\n"}
{"Action":"output","Package":"p","Test":"TestA","Output":"--- FAIL: TestA (0.00s)\n"}
{"Action":"fail","Package":"p","Test":"TestA"}
{"Action":"output","Package":"p","Output":"FAIL\n"}
`,
			want: "=== NAME  TestA\n    a_test.go:3: boom\n--- FAIL: TestA (0.00s)\nFAIL\n"},
		{name: "a line that is not an event passes through", in: "go: downloading x\n", want: "go: downloading x\n"},
		{name: "a line too long for an event passes through", in: long + "\nend", want: long + "\nend"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			var out strings.Builder
			g := &goTestOutput{w: &out, t: &tally{}}
			for in := tt.in; len(in) > 0; {
				n := min(100, len(in))
				if _, err := g.Write([]byte(in[:n])); err != nil {
					t.Fatal(err)
				}
				in = in[n:]
			}
			if err := g.flush(); err != nil {
				t.Fatal(err)
			}
			if got := out.String(); got != tt.want {
				t.Errorf("got %q, want %q", got, tt.want)
			}
		})
	}
}
