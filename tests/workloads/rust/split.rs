// SPDX-License-Identifier: Apache-2.0
// The C split workload (tests/workloads/split.c) in Rust, built with the
// machine's rustc defaults (`rustc -O`): rustc 1.90+ links x86_64 Linux
// programs with its own lld, whose layout puts the text segment on a file
// page it shares with the read-only segment.  60% of the CPU time under
// chain_a, 30% under chain_b, 10% under chain_c, each a distinct call chain
// down to its own leaf; the shares are of the thread's CPU time.
// Usage: split SECONDS
use std::hint::black_box;

#[repr(C)]
struct Timespec {
    sec: i64,
    nsec: i64,
}

extern "C" {
    fn clock_gettime(clock: i32, ts: *mut Timespec) -> i32;
}

const CLOCK_MONOTONIC: i32 = 1;
const CLOCK_THREAD_CPUTIME_ID: i32 = 3;

fn now(clock: i32) -> f64 {
    let mut ts = Timespec { sec: 0, nsec: 0 };
    // SAFETY: ts is a valid timespec for the call to fill.
    unsafe { clock_gettime(clock, &mut ts) };
    ts.sec as f64 + ts.nsec as f64 / 1e9
}

// Spin until the thread has used `slice` seconds of CPU.
#[inline(never)]
fn spin(slice: f64) -> u64 {
    let end = now(CLOCK_THREAD_CPUTIME_ID) + slice;
    let mut x: u64 = 0;
    loop {
        for i in 0..20000u64 {
            x = x.wrapping_add(black_box(i).wrapping_mul(i) ^ (x >> 3));
        }
        if now(CLOCK_THREAD_CPUTIME_ID) >= end {
            return x;
        }
    }
}

// black_box on the results keeps each call a call, not a tail jump.
#[inline(never)]
fn leaf_a(s: f64) -> u64 { black_box(spin(s)) + 1 }
#[inline(never)]
fn mid_a(s: f64) -> u64 { black_box(leaf_a(s)) + 1 }
#[inline(never)]
fn chain_a(s: f64) -> u64 { black_box(mid_a(s)) + 1 }

#[inline(never)]
fn leaf_b(s: f64) -> u64 { black_box(spin(s)) + 2 }
#[inline(never)]
fn mid_b(s: f64) -> u64 { black_box(leaf_b(s)) + 2 }
#[inline(never)]
fn chain_b(s: f64) -> u64 { black_box(mid_b(s)) + 2 }

#[inline(never)]
fn leaf_c(s: f64) -> u64 { black_box(spin(s)) + 3 }
#[inline(never)]
fn mid_c(s: f64) -> u64 { black_box(leaf_c(s)) + 3 }
#[inline(never)]
fn chain_c(s: f64) -> u64 { black_box(mid_c(s)) + 3 }

fn main() {
    let secs: f64 = std::env::args()
        .nth(1)
        .and_then(|a| a.parse().ok())
        .unwrap_or(10.0);
    let end = now(CLOCK_MONOTONIC) + secs;
    let mut sink: u64 = 0;
    let mut rounds: u64 = 0;

    while now(CLOCK_MONOTONIC) < end {
        sink = sink.wrapping_add(chain_a(black_box(0.006)));
        sink = sink.wrapping_add(chain_b(black_box(0.003)));
        sink = sink.wrapping_add(chain_c(black_box(0.001)));
        rounds += 1;
    }
    println!("rounds={} sink={}", rounds, black_box(sink));
}
