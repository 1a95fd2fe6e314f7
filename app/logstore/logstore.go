// Package logstore chooses and opens the event log a command writes to and
// reads from: the SQLite file in the data directory (the default), or a
// PostgreSQL database shared by several hosts.
//
// The choice is the user's alone: --store, then CUSTOM_AGENT_STORE, then
// "store" in the user's configuration file. A project's configuration file
// never chooses it (config.Merge ignores it there with a warning): a
// repository must not send the record of what is done in it elsewhere.
package logstore

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"

	"github.com/custom-agent/custom-agent/config"
	"github.com/custom-agent/custom-agent/eventlog"
	"github.com/custom-agent/custom-agent/eventlog/pgstore"
	"github.com/custom-agent/custom-agent/eventlog/sqlitestore"
	"github.com/custom-agent/custom-agent/policy"
	"github.com/custom-agent/custom-agent/support/datadir"
)

// Log is what commands use of an event log: the Store port, the blobs
// beside it and the inbox of answers. Both stores are one.
type Log interface {
	eventlog.Store
	eventlog.BlobAppender
	eventlog.Inbox
}

var (
	_ Log = (*sqlitestore.Store)(nil)
	_ Log = (*pgstore.Store)(nil)
)

// Choice is a resolved store and where the choice came from.
type Choice struct {
	Spec   string // "sqlite" or a postgres:// URL
	Source string // "default", "--store", "CUSTOM_AGENT_STORE" or the user file's path
}

// IsPostgres reports whether the choice is a PostgreSQL database.
func (c Choice) IsPostgres() bool { return c.Spec != "" && c.Spec != "sqlite" }

// Resolve chooses the store: flag, else $CUSTOM_AGENT_STORE, else "store"
// in the user's configuration file (under configHome, or the config home
// getenv names when configHome is ""), else SQLite.
func Resolve(flag string, getenv func(string) string, configHome string) (Choice, error) {
	if flag != "" {
		if err := config.CheckStore(flag); err != nil {
			return Choice{}, fmt.Errorf("--store: %w", err)
		}
		return Choice{flag, "--store"}, nil
	}
	if v := strings.TrimSpace(getenv(config.EnvStore)); v != "" {
		if err := config.CheckStore(v); err != nil {
			return Choice{}, fmt.Errorf("%s: %w", config.EnvStore, err)
		}
		return Choice{v, config.EnvStore}, nil
	}
	if configHome == "" {
		h, err := policy.ConfigHome(getenv)
		if err != nil {
			return Choice{"sqlite", "default"}, nil // no config home: no user file
		}
		configHome = h
	}
	path := filepath.Join(configHome, policy.AppDir, config.FileName)
	b, err := os.ReadFile(path)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		return Choice{"sqlite", "default"}, nil
	case err != nil:
		return Choice{}, err
	}
	f, err := config.Parse(path, b)
	if err != nil {
		return Choice{}, err
	}
	if v, ok := f.Set["store"].(string); ok {
		return Choice{v, f.Pos["store"]}, nil
	}
	return Choice{"sqlite", "default"}, nil
}

// Open opens the chosen log. SQLite's file is in dataDir; read-only opens
// create and migrate nothing.
func Open(ctx context.Context, c Choice, dataDir string, readOnly bool) (Log, error) {
	if !c.IsPostgres() {
		return sqlitestore.Open(ctx, filepath.Join(dataDir, datadir.LogFile), &sqlitestore.Options{ReadOnly: readOnly})
	}
	s, err := pgstore.Open(ctx, c.Spec, &pgstore.Options{ReadOnly: readOnly})
	if err != nil {
		return nil, fmt.Errorf("%w (the store was chosen by %s)", err, c.Source)
	}
	return s, nil
}

// Where names the log for messages: the SQLite file's directory, or the
// PostgreSQL server and database (without a password).
func Where(c Choice, dataDir string) string {
	if !c.IsPostgres() {
		return dataDir
	}
	return config.RedactStore(c.Spec)
}

// IsNoLog reports whether err says that a read-only open found no log.
func IsNoLog(err error) bool {
	return errors.Is(err, sqlitestore.ErrNoLog) || errors.Is(err, pgstore.ErrNoLog)
}
