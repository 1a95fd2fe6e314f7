package pgstore_test

import (
	"context"
	"testing"

	"github.com/custom-agent/custom-agent/eventlog"
	"github.com/custom-agent/custom-agent/eventlog/pgstore"
	"github.com/custom-agent/custom-agent/eventlog/storetest"
	"github.com/custom-agent/custom-agent/testsupport/pgtest"
)

func TestMain(m *testing.M) { pgtest.Main(m) }

// openFresh opens a store on a new, empty database of the shared server.
func openFresh(t testing.TB) (*pgstore.Store, string) {
	t.Helper()
	url := pgtest.Shared(t).CreateDB(t)
	s, err := pgstore.Open(context.Background(), url, nil)
	if err != nil {
		t.Fatal(err)
	}
	return s, url
}

func TestConformance(t *testing.T) {
	storetest.Run(t, func(t *testing.T) eventlog.Store {
		s, _ := openFresh(t)
		return s
	})
}
