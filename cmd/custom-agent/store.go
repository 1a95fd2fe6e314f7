package main

import (
	"context"
	"os"
	"path/filepath"

	"github.com/custom-agent/custom-agent/eventlog/sqlitestore"
	"github.com/custom-agent/custom-agent/internal/datadir"
)

// dataDir resolves the data directory for this invocation.
func (g *globalFlags) resolveDataDir() (string, error) {
	return datadir.Resolve(g.dataDir, os.Getenv, os.UserHomeDir)
}

// openLog opens the event log in the data directory. Commands that only read
// open it read-only, so that looking never creates or migrates anything.
func (g *globalFlags) openLog(ctx context.Context, readOnly bool) (*sqlitestore.Store, error) {
	dir, err := g.resolveDataDir()
	if err != nil {
		return nil, err
	}
	return sqlitestore.Open(ctx, filepath.Join(dir, datadir.LogFile), &sqlitestore.Options{ReadOnly: readOnly})
}
