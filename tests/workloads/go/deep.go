// SPDX-License-Identifier: Apache-2.0

// deep burns CPU in a known call chain, main -> a -> b -> c -> burn, for
// the number of seconds given as the first argument (default 1).  The
// functions are not inlined, so every one of them is a frame.
package main

import (
	"fmt"
	"os"
	"strconv"
	"time"
)

//go:noinline
func burn(until time.Time) uint64 {
	var x uint64 = 1
	for time.Now().Before(until) {
		for i := 0; i < 100000; i++ {
			x = x*6364136223846793005 + 1442695040888963407
		}
	}
	return x
}

//go:noinline
func c(until time.Time) uint64 { return burn(until) + 3 }

//go:noinline
func b(until time.Time) uint64 { return c(until) + 2 }

//go:noinline
func a(until time.Time) uint64 { return b(until) + 1 }

func main() {
	secs := 1.0
	if len(os.Args) > 1 {
		v, err := strconv.ParseFloat(os.Args[1], 64)
		if err != nil {
			fmt.Fprintln(os.Stderr, "usage: deep [seconds]")
			os.Exit(2)
		}
		secs = v
	}
	until := time.Now().Add(time.Duration(secs * float64(time.Second)))
	fmt.Println(a(until))
}
