package main

import "testing"

// --sandbox-prestart wins over $CUSTOM_AGENT_SANDBOX_PRESTART; on is the
// default; anything but on or off is refused, naming where it came from.
func TestSandboxPrestart(t *testing.T) {
	for _, c := range []struct {
		flag, env string
		want      bool
		err       string
	}{
		{"", "", true, ""},
		{"", "off", false, ""},
		{"", " on ", true, ""},
		{"on", "off", true, ""},
		{"off", "", false, ""},
		{"", "no", false, `CUSTOM_AGENT_SANDBOX_PRESTART="no": want on or off`},
		{"yes", "off", false, `--sandbox-prestart="yes": want on or off`},
	} {
		got, err := sandboxPrestart(c.flag, func(k string) string {
			if k == envSandboxPrestart {
				return c.env
			}
			return ""
		})
		if c.err != "" {
			if err == nil || err.Error() != c.err {
				t.Errorf("flag %q env %q: error %v, want %s", c.flag, c.env, err, c.err)
			}
			continue
		}
		if err != nil || got != c.want {
			t.Errorf("flag %q env %q: %v, %v; want %v", c.flag, c.env, got, err, c.want)
		}
	}
}
