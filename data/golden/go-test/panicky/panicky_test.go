package panicky

import "testing"

func TestBeforePanic(t *testing.T) {}

func TestPanics(t *testing.T) {
	var m map[string]int
	m["boom"] = 1 // assignment to a nil map: a panic ends the test binary
}

func TestNeverRuns(t *testing.T) {}
