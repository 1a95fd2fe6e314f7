package main

import (
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/custom-agent/custom-agent/eventlog"
)

type fakeLister []eventlog.SessionInfo

func (f fakeLister) Sessions(context.Context) ([]eventlog.SessionInfo, error) { return f, nil }

func TestResolveSessionID(t *testing.T) {
	t.Parallel()
	two := fakeLister{{ID: "newer"}, {ID: "older"}} // newest first, as Sessions returns them
	tests := []struct {
		name    string
		log     sessionLister
		arg     string
		want    string
		errWant string // a piece of the error, "" for none
	}{
		{"last is the newest", two, "last", "newer", ""},
		{"a recorded id", two, "older", "older", ""},
		{"an unknown id", two, "nope", "", `no session "nope" in /data (custom-agent sessions lists`},
		{"last with no sessions", fakeLister{}, "last", "", "no sessions are recorded in /data yet"},
		{"no log file", nil, "x", "", `no session "x" in /data`},
		{"empty", two, "", "", "the session id is empty"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			got, err := resolveSessionID(context.Background(), tt.log, "/data", tt.arg)
			if tt.errWant == "" {
				if err != nil || got != tt.want {
					t.Fatalf("got %q, %v; want %q", got, err, tt.want)
				}
				return
			}
			if err == nil || !strings.Contains(err.Error(), tt.errWant) {
				t.Fatalf("got %q, %v; want an error containing %q", got, err, tt.errWant)
			}
			if tt.arg != "" && !errors.Is(err, eventlog.ErrNoSession) {
				t.Fatalf("%v does not unwrap to ErrNoSession", err)
			}
		})
	}
}
