// SPDX-License-Identifier: Apache-2.0
// A Go workload with a known CPU split: 60% under chainA, 30% under chainB,
// 10% under chainC, each ending in a small leaf function that has no stack
// frame (frame-pointer walking loses the leaf's caller there).
// Usage: split SECONDS
package main

import (
	"fmt"
	"os"
	"runtime"
	"strconv"
	"syscall"
	"time"
	"unsafe"
)

var sink uint64

// threadCPU is this thread's CPU time (the main goroutine is locked to
// its thread), from CLOCK_THREAD_CPUTIME_ID: precise, where getrusage
// only moves at scheduler ticks.
func threadCPU() time.Duration {
	var ts syscall.Timespec
	syscall.Syscall(syscall.SYS_CLOCK_GETTIME, 3 /* CLOCK_THREAD_CPUTIME_ID */,
		uintptr(unsafe.Pointer(&ts)), 0)
	return time.Duration(ts.Nano())
}

// A leaf without a frame: no calls, no locals on the stack.
//go:noinline
func mix(x uint64) uint64 {
	for i := uint64(0); i < 5000; i++ {
		x = x*6364136223846793005 + i
	}
	return x
}

//go:noinline
func leafA(d time.Duration) { end := threadCPU() + d; for threadCPU() < end { sink = mix(sink) } }
//go:noinline
func midA(d time.Duration) { leafA(d) }
//go:noinline
func chainA(d time.Duration) { midA(d) }

//go:noinline
func leafB(d time.Duration) { end := threadCPU() + d; for threadCPU() < end { sink = mix(sink) } }
//go:noinline
func midB(d time.Duration) { leafB(d) }
//go:noinline
func chainB(d time.Duration) { midB(d) }

//go:noinline
func leafC(d time.Duration) { end := threadCPU() + d; for threadCPU() < end { sink = mix(sink) } }
//go:noinline
func midC(d time.Duration) { leafC(d) }
//go:noinline
func chainC(d time.Duration) { midC(d) }

func main() {
	runtime.LockOSThread()
	secs := 10.0
	if len(os.Args) > 1 {
		secs, _ = strconv.ParseFloat(os.Args[1], 64)
	}
	end := time.Now().Add(time.Duration(secs * float64(time.Second)))
	rounds := 0
	for time.Now().Before(end) {
		chainA(6 * time.Millisecond)
		chainB(3 * time.Millisecond)
		chainC(1 * time.Millisecond)
		rounds++
	}
	fmt.Printf("rounds=%d\n", rounds)
}
