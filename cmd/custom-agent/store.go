package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"iter"
	"os"
	"path/filepath"

	"github.com/custom-agent/custom-agent/app/logstore"
	"github.com/custom-agent/custom-agent/event"
	"github.com/custom-agent/custom-agent/eventlog"
	"github.com/custom-agent/custom-agent/hook/ingest"
	"github.com/custom-agent/custom-agent/hook/journal"
	"github.com/custom-agent/custom-agent/support/datadir"
	"github.com/custom-agent/custom-agent/support/termtext"
)

// dataDir resolves the data directory for this invocation.
func (g *globalFlags) resolveDataDir() (string, error) {
	return datadir.Resolve(g.dataDir, os.Getenv, os.UserHomeDir)
}

// resolveStore chooses the event log for this invocation: --store, else
// CUSTOM_AGENT_STORE, else "store" in the user's configuration file, else
// the SQLite file in the data directory (logstore.Resolve). A project's
// configuration never chooses it.
func (g *globalFlags) resolveStore() (logstore.Choice, error) {
	return logstore.Resolve(g.store, os.Getenv, "")
}

// openLog opens the event log. Commands that only read open it read-only,
// so that looking never creates or migrates anything.
func (g *globalFlags) openLog(ctx context.Context, readOnly bool) (logstore.Log, error) {
	dir, err := g.resolveDataDir()
	if err != nil {
		return nil, err
	}
	c, err := g.resolveStore()
	if err != nil {
		return nil, err
	}
	foldHookJournalOrWarn(ctx, c, dir, os.Stderr)
	return logstore.Open(ctx, c, dir, readOnly)
}

// foldHookJournalOrWarn folds the hook journal (foldHookJournal); when
// that fails (the log is locked, the disk is full) it says so on warn and
// the command goes on with the log as it is: the records stay in the
// journal for the next command.
func foldHookJournalOrWarn(ctx context.Context, c logstore.Choice, dir string, warn io.Writer) {
	if err := foldHookJournal(ctx, c, dir, warn); err != nil {
		fmt.Fprintf(warn, "custom-agent: warning: the hook decisions recorded since the log was last opened are not in it yet (they stay in %s for the next command): %s\n",
			filepath.Join(dir, journal.Dir), termtext.Line(err.Error()))
	}
}

// foldHookJournal appends to the log the hook decisions recorded in the
// data directory dir since it was last opened (package hook/ingest), so
// that every command that reads the log shows them. A broken record is set
// aside with a warning.
func foldHookJournal(ctx context.Context, c logstore.Choice, dir string, warn io.Writer) error {
	jd := filepath.Join(dir, journal.Dir)
	if !ingest.Pending(jd) {
		return nil
	}
	s, err := logstore.Open(ctx, c, dir, false)
	if err != nil {
		return err
	}
	res, err := ingest.Ingest(ctx, s, jd)
	if cerr := s.Close(); err == nil {
		err = cerr
	}
	for _, b := range res.Broken {
		fmt.Fprintf(warn, "custom-agent: warning: %s (set aside in %s)\n", termtext.Line(b.Error()), jd)
	}
	return err
}

// LastSession is the word that names the most recently updated session
// wherever a command takes a session id (log, audit verify, run --session).
const LastSession = "last"

// sessionLister is what resolveSessionID needs of an event log.
type sessionLister interface {
	Sessions(ctx context.Context) ([]eventlog.SessionInfo, error)
}

// resolveSessionID turns a session id as a person typed it into the id of a
// recorded session: "last" is the most recently updated one, any other word
// must be a recorded id. Every command that takes a session id calls it, so
// that an unknown id gets the same error everywhere (unknownSession). log may
// be nil when there is no log file yet (sqlitestore.ErrNoLog). dataDir only
// goes into the error.
func resolveSessionID(ctx context.Context, log sessionLister, dataDir, arg string) (string, error) {
	if arg == "" {
		return "", errors.New("the session id is empty (custom-agent sessions lists the recorded ones; \"last\" is the most recent)")
	}
	var list []eventlog.SessionInfo
	if log != nil {
		var err error
		if list, err = log.Sessions(ctx); err != nil {
			return "", err
		}
	}
	if arg == LastSession {
		if len(list) == 0 {
			return "", &exitError{code: 1, err: eventlog.ErrNoSession,
				msg: fmt.Sprintf("custom-agent: no sessions are recorded in %s yet, so %q names none", dataDir, LastSession)}
		}
		return list[0].ID, nil // Sessions is newest first
	}
	for _, si := range list {
		if si.ID == arg {
			return arg, nil
		}
	}
	return "", unknownSession(dataDir, arg)
}

// sessionReader lists sessions and reads their events.
type sessionReader interface {
	sessionLister
	Read(ctx context.Context, sessionID string, fromSeq uint64) iter.Seq2[event.Event, error]
}

// resolveContinuable is resolveSessionID for a session to continue (run
// --session, chat --session): a hook session, whose session.started names
// a sessionSource (claude-code, gemini-cli), holds another agent's calls
// and their output, written by what that agent's model did; continuing
// it would feed that output to our model as our own history. "last" is
// the most recent session that is not one; naming one is refused.
func resolveContinuable(ctx context.Context, log sessionReader, dataDir, arg string) (string, error) {
	if arg != LastSession {
		id, err := resolveSessionID(ctx, log, dataDir, arg)
		if err != nil {
			return "", err
		}
		src, err := sessionSource(ctx, log, id)
		if err != nil {
			return "", err
		}
		if src != "" {
			return "", &exitError{code: 1, err: errHookSession, msg: fmt.Sprintf(
				"custom-agent: session %s is a %s hook session (another agent's calls, recorded by custom-agent hook), which is not continued: its tool output was never our model's (custom-agent log %s shows it; start a new session instead)", id, src, id)}
		}
		return id, nil
	}
	if _, err := resolveSessionID(ctx, log, dataDir, arg); err != nil {
		return "", err // no sessions at all
	}
	list, err := log.Sessions(ctx)
	if err != nil {
		return "", err
	}
	for _, si := range list { // newest first
		src, err := sessionSource(ctx, log, si.ID)
		if err != nil {
			return "", err
		}
		if src == "" {
			return si.ID, nil
		}
	}
	return "", &exitError{code: 1, err: eventlog.ErrNoSession, msg: fmt.Sprintf(
		"custom-agent: no session of custom-agent's own is recorded in %s, so %q names none (hook sessions of other agents are not continued)", dataDir, LastSession)}
}

var errHookSession = errors.New("a hook session is not continued")

// sessionSource is the sessionSource of the session's session.started:
// "" for custom-agent's own sessions. A session whose first event is not
// a session.started that decodes is taken for a hook session's: it is
// not known to be ours.
func sessionSource(ctx context.Context, log sessionReader, id string) (string, error) {
	for e, err := range log.Read(ctx, id, 1) {
		if err != nil {
			return "", err
		}
		p, err := e.Decode()
		if err != nil {
			return "unknown", nil
		}
		if st, ok := p.(*event.SessionStartedPayload); ok {
			return st.SessionSource, nil
		}
		return "unknown", nil
	}
	return "", nil
}

// unknownSession is the one error for a session id that names no recorded
// session. It unwraps to eventlog.ErrNoSession and exits 1.
func unknownSession(dataDir, id string) error {
	return &exitError{code: 1, err: eventlog.ErrNoSession,
		msg: fmt.Sprintf("custom-agent: no session %q in %s (custom-agent sessions lists the recorded ones; %q is the most recent)", id, dataDir, LastSession)}
}

// openLogForSession opens the event log read-only and resolves arg to a
// recorded session id. A data directory without a log has no sessions.
func (g *globalFlags) openLogForSession(ctx context.Context, arg string) (logstore.Log, string, error) {
	dir, err := g.resolveDataDir()
	if err != nil {
		return nil, "", err
	}
	c, err := g.resolveStore()
	if err != nil {
		return nil, "", err
	}
	foldHookJournalOrWarn(ctx, c, dir, os.Stderr)
	where := logstore.Where(c, dir)
	s, err := logstore.Open(ctx, c, dir, true)
	if logstore.IsNoLog(err) {
		_, rerr := resolveSessionID(ctx, nil, where, arg)
		return nil, "", rerr
	}
	if err != nil {
		return nil, "", err
	}
	id, err := resolveSessionID(ctx, s, where, arg)
	if err != nil {
		s.Close()
		return nil, "", err
	}
	return s, id, nil
}
