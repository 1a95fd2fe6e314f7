package executor

import (
	"slices"
	"testing"
)

func TestScrubEnv(t *testing.T) {
	env := []string{
		"PATH=/usr/bin", "HOME=/home/u", "PWD=/home/u/p", "OLDPWD=/", "LANG=C", "GOCACHE=/c",
		"GITHUB_TOKEN=ghp_x", "OPENAI_API_KEY=sk", "AWS_REGION=eu", "PGPASSWORD=pw", "MYSQL_PWD=pw",
		"SENTRY_DSN=https://k@o.ingest/1", "SLACK_WEBHOOK_URL=https://hooks/x", "CI_JOB_JWT=e.y.j",
		"DATABASE_URL=postgres://u:secret@db/app", "REDIS_URL=redis://:secret@r:6379",
		"PUBLIC_URL=https://example.com/a@b", "PROXY=http://user@proxy:3128", "SSH_AUTH_SOCK=/run/a",
		// Secrets under names that do not say so (sixth review).
		"STRIPE_SK=sk_live_4eC39HqLyjWDarjtT1zdp7dc",
		"GIT_CONFIG_PARAMETERS='http.extraheader'='Authorization: Bearer abcdefghijklmnop1234567890'",
		"GIT_CONFIG_VALUE_0=AUTHORIZATION: basic dXNlcjpwYXNzd29yZDEyMzQ=",
		"EDITOR=vim", "TERM=xterm-256color",
	}
	kept, removed := ScrubEnv(env)
	wantKept := []string{"PATH=/usr/bin", "HOME=/home/u", "PWD=/home/u/p", "OLDPWD=/", "LANG=C", "GOCACHE=/c", "PUBLIC_URL=https://example.com/a@b", "PROXY=http://user@proxy:3128", "EDITOR=vim", "TERM=xterm-256color"}
	if !slices.Equal(kept, wantKept) {
		t.Errorf("kept %q\nwant %q (removed %q)", kept, wantKept, removed)
	}
}
