package eventlog

import (
	"context"
	"errors"
)

// Leases tells the sessions a live process is running from those a dead
// one left behind, across every process sharing the store. Start-up
// recovery (approval.RecoverPending, session.CloseAbandoned) closes the
// open asks and turns of a session only while it can lease the session
// itself: a question that `custom-agent run` in another terminal is still
// waiting on is not denied as "process restarted" because `chat` started,
// and `serve` can list it.
//
// A lease ends when release is called or when the process holding it
// ends, however it ends (a crash or SIGKILL included): a lease never
// outlives its process.
type Leases interface {
	// Lease marks sessionID as run by this process. It fails with an
	// error wrapping ErrSessionBusy when another live process, or another
	// lease of this one, holds it.
	Lease(ctx context.Context, sessionID string) (release func(), err error)
}

// ErrSessionBusy: a live process holds the session's lease.
var ErrSessionBusy = errors.New("session is in use by another live process")

// IfIdle runs fn while holding the lease of sessionID, when log is a
// Leases, and reports ran=false without running it when a live process
// holds the session. A log that is no Leases runs fn unguarded: such a
// store cannot tell a live process from a dead one.
func IfIdle(ctx context.Context, log any, sessionID string, fn func() error) (ran bool, err error) {
	l, ok := log.(Leases)
	if !ok {
		return true, fn()
	}
	release, err := l.Lease(ctx, sessionID)
	if errors.Is(err, ErrSessionBusy) {
		return false, nil
	}
	if err != nil {
		return false, err
	}
	defer release()
	return true, fn()
}
