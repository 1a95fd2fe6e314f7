//go:build race

package shellrisk

// raceSlowdown scales the time bounds of TestBoundedShapes: the race
// detector makes the analyser several times slower.
const raceSlowdown = 10
