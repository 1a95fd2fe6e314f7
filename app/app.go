// Package app is the composition root: it opens the event log and artifact
// store in the data directory, registers the built-in tools, creates the
// approval broker, resolves the model, and hands sessions what they need.
package app

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/custom-agent/custom-agent/app/logstore"
	"github.com/custom-agent/custom-agent/approval"
	"github.com/custom-agent/custom-agent/artifact"
	"github.com/custom-agent/custom-agent/eventlog"
	"github.com/custom-agent/custom-agent/model"
	"github.com/custom-agent/custom-agent/model/anthropic"
	"github.com/custom-agent/custom-agent/model/openai"
	"github.com/custom-agent/custom-agent/model/script"
	"github.com/custom-agent/custom-agent/session"
	"github.com/custom-agent/custom-agent/tool"
	"github.com/custom-agent/custom-agent/tools"
)

// Runtime is what a process that runs turns holds open.
type Runtime struct {
	DataDir   string
	Store     logstore.Log
	Artifacts *artifact.Store
	Router    *tool.Router
	Broker    *approval.Broker
	// Recovered is how many asks left pending by a process that died were
	// resolved to deny at start-up.
	Recovered int
}

// Open opens the runtime in dataDir, with the SQLite event log there.
func Open(ctx context.Context, dataDir string, approvalTimeout time.Duration) (*Runtime, error) {
	return OpenWith(ctx, dataDir, logstore.Choice{Spec: "sqlite", Source: "default"}, approvalTimeout)
}

// OpenWith opens the runtime in dataDir with the chosen event log (the
// artifact store stays in dataDir, on this host, whatever the log). Asks
// left pending by a process that died are resolved to deny ("process
// restarted") before anything else, so that no chain is left open.
func OpenWith(ctx context.Context, dataDir string, log logstore.Choice, approvalTimeout time.Duration) (*Runtime, error) {
	store, err := logstore.Open(ctx, log, dataDir, false)
	if err != nil {
		return nil, err
	}
	arts, err := artifact.Open(filepath.Join(dataDir, "artifacts"))
	if err != nil {
		store.Close()
		return nil, err
	}
	// Only sessions no live process holds are recovered (eventlog.Leases:
	// an flock beside a SQLite log, an advisory lock on PostgreSQL, which
	// other hosts' live processes hold too).
	n, err := approval.RecoverPending(ctx, store, time.Now())
	if err != nil {
		store.Close()
		return nil, fmt.Errorf("resolving asks left pending by an earlier process: %w", err)
	}
	if _, err := session.CloseAbandoned(ctx, store, time.Now()); err != nil {
		store.Close()
		return nil, err
	}
	return &Runtime{
		DataDir: dataDir, Store: store, Artifacts: arts.WithSource(store), Router: tools.NewRouter(),
		Broker:    approval.New(&approval.Options{DefaultTimeout: approvalTimeout}),
		Recovered: n,
	}, nil
}

// Relay answers the broker's asks of session sessionID ("" for all of
// them) with the answers UIs of other processes (the web UI) offer through
// the event log's store, when the store carries them (eventlog.Inbox),
// until ctx ends (approval.Relay). It returns at once; wait returns once
// the relay has stopped.
func (r *Runtime) Relay(ctx context.Context, sessionID string, logger *slog.Logger) (wait func()) {
	inbox, ok := any(r.Store).(eventlog.Inbox)
	if !ok {
		return func() {}
	}
	done := make(chan struct{})
	go func() {
		defer close(done)
		_ = approval.Relay(ctx, inbox, r.Store, r.Broker, sessionID, &approval.RelayOptions{Logger: logger})
	}()
	return func() { <-done }
}

// Close releases the runtime.
func (r *Runtime) Close() error { return r.Store.Close() }

// ErrNoModel: no model was named.
var ErrNoModel = errors.New("no model is configured")

// ModelHelp says what to set to get a model.
const ModelHelp = `choose a model with --model, CUSTOM_AGENT_MODEL, or "model" in ~/.config/custom-agent/config.json (docs/reference/config.md):
  --model openai:gpt-4.1              with OPENAI_API_KEY set (OPENAI_BASE_URL for Ollama, vLLM or llama.cpp, e.g. http://localhost:11434/v1)
  --model anthropic:claude-sonnet-4-5 with ANTHROPIC_API_KEY set
  --model script:FILE.jsonl           a scripted model, one JSON response per line (docs/script-model.md)
or try it with no model at all: custom-agent demo`

// Model resolves a model spec "provider:name". An empty spec falls back to
// $CUSTOM_AGENT_MODEL.
func Model(spec string, getenv func(string) string) (model.Gateway, error) {
	if spec == "" {
		spec = getenv("CUSTOM_AGENT_MODEL")
	}
	if spec == "" {
		return nil, fmt.Errorf("%w; %s", ErrNoModel, ModelHelp)
	}
	provider, name, ok := strings.Cut(spec, ":")
	if !ok || name == "" {
		return nil, fmt.Errorf("model %q is not provider:name; %s", spec, ModelHelp)
	}
	switch provider {
	case "script":
		return script.Load(name)
	case "openai":
		m, err := openai.New(openai.FromEnv(name, getenv))
		if err != nil {
			return nil, fmt.Errorf("%w\n%s", err, ModelHelp)
		}
		return m, nil
	case "anthropic":
		m, err := anthropic.New(anthropic.FromEnv(name, getenv))
		if err != nil {
			return nil, fmt.Errorf("%w\n%s", err, ModelHelp)
		}
		return m, nil
	}
	return nil, fmt.Errorf("unknown model provider %q; %s", provider, ModelHelp)
}

// Cwd returns the absolute, symlink-resolved working directory for a
// session: dir, or the current directory. It must exist.
func Cwd(dir string) (string, error) {
	if dir == "" {
		d, err := os.Getwd()
		if err != nil {
			return "", err
		}
		dir = d
	}
	abs, err := filepath.Abs(dir)
	if err != nil {
		return "", err
	}
	st, err := os.Stat(abs)
	if err != nil {
		return "", fmt.Errorf("working directory %s: %w", abs, err)
	}
	if !st.IsDir() {
		return "", fmt.Errorf("working directory %s is not a directory", abs)
	}
	return filepath.EvalSymlinks(abs)
}
