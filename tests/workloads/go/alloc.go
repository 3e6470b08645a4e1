// SPDX-License-Identifier: Apache-2.0
// Go's stack switches under load: the main goroutine allocates pointerful
// garbage so that the GC runs and makes it assist (mallocgc ->
// gcAssistAlloc -> systemstack -> g0), and background mark workers run on
// g0 too; meanwhile goroutines recurse far past the profiler's frame
// limit, growing their stacks as they go (morestack -> newstack on g0).
// Usage: alloc SECONDS
package main

import (
	"fmt"
	"os"
	"strconv"
	"time"
)

type node struct {
	next *node
	pad  [6]uint64
}

var keep []*node
var sink uint64

//go:noinline
func allocate(n int) {
	var head *node
	for i := 0; i < n; i++ {
		head = &node{next: head}
		head.pad[0] = uint64(i)
	}
	keep = append(keep, head)
	if len(keep) > 64 {
		keep = keep[1:]
	}
}

// A frame large enough to need more stack every few levels.
//go:noinline
func recurse(depth int, buf [32]uint64) uint64 {
	buf[depth%32] += uint64(depth)
	if depth == 0 {
		x := buf[3]
		for i := uint64(0); i < 200000; i++ {
			x = x*6364136223846793005 + i
		}
		return x
	}
	return recurse(depth-1, buf) + buf[0]
}

//go:noinline
func deep() {
	done := make(chan uint64)
	go func() { done <- recurse(3000, [32]uint64{}) }()
	sink += <-done
}

func main() {
	secs, _ := strconv.ParseFloat(os.Args[1], 64)
	end := time.Now().Add(time.Duration(secs * float64(time.Second)))
	rounds := 0
	for time.Now().Before(end) {
		allocate(20000)
		if rounds%4 == 0 {
			deep()
		}
		rounds++
	}
	fmt.Printf("rounds=%d\n", rounds)
}
