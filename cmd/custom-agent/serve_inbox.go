package main

import (
	"github.com/custom-agent/custom-agent/eventlog/sqlitestore"
	"github.com/custom-agent/custom-agent/web"
)

// inboxFor is the store's answer inbox, through which the web UI's answers
// reach the process that asked (its approval relay takes them).
func inboxFor(s *sqlitestore.Store) web.Inbox { return s }
