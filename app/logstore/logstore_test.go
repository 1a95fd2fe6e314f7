package logstore

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/custom-agent/custom-agent/eventlog/pgstore"
	"github.com/custom-agent/custom-agent/eventlog/sqlitestore"
)

// TestResolve: --store beats CUSTOM_AGENT_STORE, which beats "store" in
// the user's config.json, which beats the default, SQLite. Bad values are
// refused naming where they came from, without the password.
func TestResolve(t *testing.T) {
	const pg = "postgres://agent@db:5432/agents"
	home := t.TempDir()
	os.MkdirAll(filepath.Join(home, "custom-agent"), 0o700)
	userFile := filepath.Join(home, "custom-agent", "config.json")
	env := func(v string) func(string) string {
		return func(k string) string { return map[string]string{"CUSTOM_AGENT_STORE": v}[k] }
	}
	for _, tc := range []struct {
		name, flag, env, file string
		want, source          string
		wantErr               string
	}{
		{name: "default", want: "sqlite", source: "default"},
		{name: "user file", file: `{"version":1,"store":"` + pg + `"}`, want: pg, source: userFile + ":1:22"},
		{name: "env over file", env: "sqlite", file: `{"version":1,"store":"` + pg + `"}`, want: "sqlite", source: "CUSTOM_AGENT_STORE"},
		{name: "flag over env", flag: pg, env: "sqlite", want: pg, source: "--store"},
		{name: "file without store", file: `{"version":1,"model":"openai:gpt-4.1"}`, want: "sqlite", source: "default"},
		{name: "bad flag", flag: "mysql://u:hunter2@h/db", wantErr: "--store"},
		{name: "bad env", env: "events.db", wantErr: "CUSTOM_AGENT_STORE"},
		{name: "bad file", file: `{"version":1,"store":"nope"}`, wantErr: userFile},
	} {
		t.Run(tc.name, func(t *testing.T) {
			os.Remove(userFile)
			if tc.file != "" {
				os.WriteFile(userFile, []byte(tc.file), 0o600)
			}
			c, err := Resolve(tc.flag, env(tc.env), home)
			if tc.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tc.wantErr) || strings.Contains(err.Error(), "hunter2") {
					t.Fatalf("Resolve = %+v, %v; want an error naming %s", c, err, tc.wantErr)
				}
				return
			}
			if err != nil || c.Spec != tc.want || c.Source != tc.source {
				t.Fatalf("Resolve = %+v, %v; want %s from %s", c, err, tc.want, tc.source)
			}
			if c.IsPostgres() != strings.HasPrefix(tc.want, "postgres") {
				t.Fatalf("IsPostgres = %v for %s", c.IsPostgres(), c.Spec)
			}
		})
	}
}

func TestIsNoLog(t *testing.T) {
	for _, err := range []error{sqlitestore.ErrNoLog, pgstore.ErrNoLog, errors.Join(errors.New("x"), pgstore.ErrNoLog)} {
		if !IsNoLog(err) {
			t.Errorf("IsNoLog(%v) = false", err)
		}
	}
	if IsNoLog(errors.New("other")) || IsNoLog(nil) {
		t.Error("IsNoLog of another error")
	}
	if got := Where(Choice{Spec: "postgres://u:pw@h/db"}, "/data"); strings.Contains(got, ":pw@") {
		t.Errorf("Where shows the password: %s", got)
	}
}
