//go:build race

package main

// raceEnabled: the race detector multiplies memory use several times, so
// peak-RSS bounds are only enforced without it.
const raceEnabled = true
