package main

import (
	"bytes"
	"context"
	"encoding/json"
	"os"

	"github.com/custom-agent/custom-agent/app/checkcmd"
	"github.com/custom-agent/custom-agent/eventlog"
	"github.com/custom-agent/custom-agent/policy"
	"github.com/custom-agent/custom-agent/web"
)

// inboxFor is the store's answer inbox, through which the web UI's answers
// reach the process that asked (its approval relay takes them).
func inboxFor(s eventlog.Inbox) web.Inbox { return s }

// servePolicy reads the policy files for the web's policy page, as
// custom-agent policy list and policy explain do.
type servePolicy struct {
	// dataDir is serve's resolved data dir, which the explain form's
	// decisions know, as the turns' do.
	dataDir string
}

func (servePolicy) Rules(cwd string) (web.PolicyView, error) {
	s, err := openPolicy(cwd, nil)
	if err != nil {
		return web.PolicyView{}, err
	}
	proj, trusted := s.Project()
	v := web.PolicyView{Project: proj.Root, Trusted: trusted}
	for _, e := range s.Entries("") {
		file, note := entryFileNote(e)
		v.Rules = append(v.Rules, web.PolicyRule{Level: string(e.Level), ID: e.Rule.ID, Decision: string(e.Rule.Decision),
			Tool: e.Rule.Tool, Matches: matcherText(&e.Rule), File: file, Note: note})
	}
	return v, nil
}

// Trusted lists the user's trust file, as the policy page shows it.
func (servePolicy) Trusted() (web.TrustView, error) {
	ch, err := policy.ConfigHome(os.Getenv)
	if err != nil {
		return web.TrustView{}, err
	}
	l, err := policy.ListTrusted(ch)
	if err != nil {
		return web.TrustView{File: l.Path}, err
	}
	v := web.TrustView{File: l.Path, Projects: l.Projects}
	for _, r := range l.Rules {
		v.Rules = append(v.Rules, web.TrustedRule{Root: r.Root, ID: r.ID})
	}
	return v, nil
}

func (p servePolicy) Explain(_ context.Context, cwd, tool string, args json.RawMessage) (string, error) {
	var b bytes.Buffer
	err := explainCall(&b, checkcmd.Options{Cwd: cwd, Tool: tool, Args: string(args), DataDir: p.dataDir}, false)
	return b.String(), err
}
