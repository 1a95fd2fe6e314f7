//go:build !race

package shellrisk

const raceSlowdown = 1
