package event

import "testing"

func TestTurnStartedValidate(t *testing.T) {
	for name, tc := range map[string]struct {
		p  TurnStartedPayload
		ok bool
	}{
		"old empty form":           {TurnStartedPayload{}, true},
		"full":                     {TurnStartedPayload{Cwd: "/repo/a", Model: "openai:m", Mode: "default"}, true},
		"moved":                    {TurnStartedPayload{Cwd: "/repo/b", Mode: "plan", CwdChangedFrom: "/repo/a"}, true},
		"windows path":             {TurnStartedPayload{Cwd: `C:\repo`, Mode: "default"}, true},
		"model without cwd":        {TurnStartedPayload{Model: "openai:m", Mode: "default"}, false},
		"no mode":                  {TurnStartedPayload{Cwd: "/repo/a"}, false},
		"relative cwd":             {TurnStartedPayload{Cwd: "repo", Mode: "default"}, false},
		"moved from itself":        {TurnStartedPayload{Cwd: "/repo/a", Mode: "default", CwdChangedFrom: "/repo/a"}, false},
		"moved from relative path": {TurnStartedPayload{Cwd: "/repo/a", Mode: "default", CwdChangedFrom: "a"}, false},
	} {
		if err := tc.p.Validate(); (err == nil) != tc.ok {
			t.Errorf("%s: Validate() = %v, want ok=%v", name, err, tc.ok)
		}
	}
	// An old log's {} still decodes.
	e := Event{V: Version, Seq: 2, Type: TurnStarted, Payload: []byte(`{}`)}
	if _, err := e.Decode(); err != nil {
		t.Fatal(err)
	}
}
