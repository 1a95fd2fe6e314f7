package shellrisk

import "sync"

// lazy is a table built on first use (get) rather than at package init:
// every hook call is a new process, and most of them judge no shell
// command, or one that needs few of the tables. A map literal is built by
// code at init however constant its entries are; a lazy one costs
// nothing until a command looks in it.
type lazy[T any] struct {
	once  sync.Once
	build func() T
	v     T
}

// get returns the table, building it on the first call.
func (l *lazy[T]) get() T {
	l.once.Do(l.init)
	return l.v
}

func (l *lazy[T]) init() { l.v = l.build() }
