package web

import (
	"context"
	"encoding/json"
	"net/http"
	"path/filepath"
	"slices"

	"github.com/custom-agent/custom-agent/secrets"
)

// Policy is what the policy page reads: the layered rules a directory's
// calls are judged by, and policy explain for a call. The command wires it
// to the policy files (custom-agent policy list / explain).
type Policy interface {
	Rules(cwd string) (PolicyView, error)
	// Explain returns the text custom-agent policy explain prints for the
	// call, or an error a person can read (bad args, unknown tool).
	Explain(ctx context.Context, cwd, tool string, args json.RawMessage) (string, error)
}

// TrustLister is what a Policy may also do: list every project the user
// trusts, for the policy page (read-only).
type TrustLister interface {
	Trusted() (TrustView, error)
}

// TrustView is the user's trust list.
type TrustView struct {
	File     string
	Projects []string
	// Rules are single rules of untrusted projects the user trusted.
	Rules []TrustedRule
}

// TrustedRule is one trusted rule of an untrusted project.
type TrustedRule struct{ Root, ID string }

// PolicyView is every rule of every level for one directory.
type PolicyView struct {
	Project string
	Trusted bool
	Rules   []PolicyRule
}

// PolicyRule is one rule as policy list shows it.
type PolicyRule struct {
	Level, ID, Decision, Tool, Matches, File, Note string
}

type policyPage struct {
	Cwd      string
	Cwds     []string
	View     PolicyView
	Err      string
	Enabled  bool
	Trust    *TrustView
	TrustErr string
	// Priors are the prior approvals made in Cwd, by any session.
	Priors []priorView
	// CanRevoke: this server can revoke them (it has Turns).
	CanRevoke bool
}

type priorView struct {
	PriorApproval
	Args string // masked
}

func (s *Server) policyPage(w http.ResponseWriter, r *http.Request) {
	s.refresh(r.Context())
	p := policyPage{Cwd: r.URL.Query().Get("cwd"), Enabled: s.opts.Policy != nil, CanRevoke: s.opts.Turns != nil}
	for _, sess := range s.index.Sessions() {
		if sess.Cwd != "" && !slices.Contains(p.Cwds, sess.Cwd) {
			p.Cwds = append(p.Cwds, sess.Cwd)
		}
	}
	if p.Cwd == "" && len(p.Cwds) > 0 {
		p.Cwd = p.Cwds[0]
	}
	if p.Enabled && p.Cwd != "" {
		if !filepath.IsAbs(p.Cwd) {
			p.Err = "the directory must be an absolute path"
		} else if v, err := s.opts.Policy.Rules(p.Cwd); err != nil {
			p.Err = err.Error()
		} else {
			p.View = v
		}
	}
	for _, sess := range s.index.Sessions() {
		for _, pr := range sess.Priors {
			if pr.Cwd == p.Cwd {
				p.Priors = append(p.Priors, priorView{PriorApproval: pr, Args: string(secrets.MaskJSON(pr.Args))})
			}
		}
	}
	if tl, ok := s.opts.Policy.(TrustLister); ok {
		if v, err := tl.Trusted(); err != nil {
			p.TrustErr = err.Error()
		} else {
			p.Trust = &v
		}
	}
	s.render(w, "policy.html", page{Title: "Policy", Nav: "policy", Data: p})
}

type explainRequest struct {
	Cwd  string          `json:"cwd"`
	Tool string          `json:"tool"`
	Args json.RawMessage `json:"args"`
}

// explain answers policy explain for a typed call. It changes nothing, but
// it is a POST like every request that carries a body.
func (s *Server) explain(w http.ResponseWriter, r *http.Request) {
	if s.opts.Policy == nil {
		writeJSON(w, http.StatusServiceUnavailable, map[string]string{"error": "no policy source"})
		return
	}
	var req explainRequest
	dec := json.NewDecoder(r.Body)
	dec.DisallowUnknownFields()
	if err := dec.Decode(&req); err != nil || req.Tool == "" || !filepath.IsAbs(req.Cwd) {
		writeJSON(w, http.StatusBadRequest, map[string]string{"error": "want {cwd (absolute), tool, args}"})
		return
	}
	if len(req.Args) == 0 {
		req.Args = json.RawMessage("{}")
	}
	text, err := s.opts.Policy.Explain(r.Context(), req.Cwd, req.Tool, req.Args)
	if err != nil {
		writeJSON(w, http.StatusBadRequest, map[string]string{"error": clean(err.Error())})
		return
	}
	writeJSON(w, http.StatusOK, map[string]string{"text": cleanText(text)})
}
