//go:build !linux

package llm

import "net"

// arrivalSys is empty where kernel receive timestamps are not implemented.
type arrivalSys struct{}

// wrapArrival returns conn unchanged: chunks are stamped when their read returns.
func wrapArrival(conn net.Conn) net.Conn { return conn }
