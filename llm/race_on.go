//go:build race

package llm

// raceEnabled: see arrivalConn.recv.
const raceEnabled = true
