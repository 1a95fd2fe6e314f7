package mcp

import (
	"encoding/json"
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"sync"
)

// PinsFile is the file, in the data directory, that records the hash of
// every MCP tool definition a rule or an answer let run.
const PinsFile = "mcp-pins.json"

// Pins records approved tool definitions by hash, keyed by the full tool
// name (mcp__server__tool).
type Pins struct {
	path string
	mu   sync.Mutex
	m    map[string]string
}

// OpenPins reads the pins file at path; a missing file is no pins.
func OpenPins(path string) (*Pins, error) {
	p := &Pins{path: path, m: map[string]string{}}
	b, err := os.ReadFile(path)
	if errors.Is(err, fs.ErrNotExist) {
		return p, nil
	}
	if err != nil {
		return nil, err
	}
	var f struct {
		Tools map[string]string `json:"tools"`
	}
	if err := json.Unmarshal(b, &f); err != nil {
		return nil, errors.New(path + ": " + err.Error())
	}
	if f.Tools != nil {
		p.m = f.Tools
	}
	return p, nil
}

// Get returns the hash pinned for a tool.
func (p *Pins) Get(name string) (string, bool) {
	p.mu.Lock()
	defer p.mu.Unlock()
	h, ok := p.m[name]
	return h, ok
}

// Set pins a tool's definition hash and writes the file (atomically).
func (p *Pins) Set(name, hash string) error {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.m[name] == hash {
		return nil
	}
	p.m[name] = hash
	b, err := json.MarshalIndent(struct {
		Tools map[string]string `json:"tools"`
	}{p.m}, "", "  ")
	if err != nil {
		return err
	}
	if err := os.MkdirAll(filepath.Dir(p.path), 0o700); err != nil {
		return err
	}
	tmp := p.path + ".tmp"
	if err := os.WriteFile(tmp, append(b, '\n'), 0o600); err != nil {
		return err
	}
	return os.Rename(tmp, p.path)
}
