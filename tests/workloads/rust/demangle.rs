// SPDX-License-Identifier: Apache-2.0
// Symbols for the v0 demangler test (tests/unit/test_rustdemangle.c), built
// with `rustc -O -C symbol-mangling-version=v0`: generics, closures, trait
// and inherent impls, dyn traits with associated types, fn pointers with an
// ABI, arrays, slices, tuples, raw pointers, const generics of every stable
// kind, non-ASCII identifiers (Punycode), async blocks.  Each function is
// kept out of line so that it keeps its own symbol.
use std::collections::{BTreeMap, HashMap};
use std::fmt::Debug;
use std::future::Future;
use std::hint::black_box;
use std::pin::pin;
use std::task::{Context, Poll, Waker};

pub trait Shape {
    fn area(&self) -> f64;
    fn name(&self) -> String {
        "shape".into()
    }
}

pub struct Square<const N: usize>(f64);
pub struct Circle {
    r: f64,
}

impl<const N: usize> Shape for Square<N> {
    #[inline(never)]
    fn area(&self) -> f64 {
        self.0 * self.0 * N as f64
    }
}

impl Shape for Circle {
    #[inline(never)]
    fn area(&self) -> f64 {
        3.14 * self.r * self.r
    }
    #[inline(never)]
    fn name(&self) -> String {
        format!("circle {}", self.r)
    }
}

impl Circle {
    #[inline(never)]
    fn new(r: f64) -> Self {
        Circle { r }
    }
}

pub struct Wrapper<T, U>(T, U);

impl<T: Debug, U: Debug> Wrapper<T, U> {
    #[inline(never)]
    fn show<const K: u8>(&self) -> String {
        format!("{:?} {:?} {}", self.0, self.1, K)
    }
}

impl<T: Clone, U> Clone for Wrapper<T, U>
where
    U: Clone,
{
    #[inline(never)]
    fn clone(&self) -> Self {
        Wrapper(self.0.clone(), self.1.clone())
    }
}

#[inline(never)]
fn consts<const B: bool, const C: char, const I: i32, const L: i64, const U: u128>() -> i128 {
    black_box(I as i128 + B as i128 + C as i128 + L as i128 + U as i128)
}

#[inline(never)]
fn grüße<T: Debug>(t: T) -> String {
    format!("{:?}", t)
}

mod 東京 {
    #[inline(never)]
    pub fn ñandú(x: &[u8]) -> usize {
        super::black_box(x.len())
    }
}

#[inline(never)]
fn apply<F: Fn(u8) -> u8>(f: F, x: u8) -> u8 {
    f(x)
}

#[inline(never)]
fn dyn_args(f: &dyn Fn(&str) -> usize, it: &mut dyn Iterator<Item = u32>) -> usize {
    f("abc") + it.next().unwrap_or(0) as usize
}

#[inline(never)]
fn fn_ptrs(
    f: fn(i8, &[u16], (char, bool)) -> *const u8,
    g: unsafe extern "C" fn(i64) -> !,
    h: for<'a> fn(&'a str, &'a mut [f32; 2]) -> &'a str,
) -> usize {
    black_box(f as usize + g as usize + h as usize)
}

#[inline(never)]
fn arrays<const N: usize>(a: [i128; N], b: &mut [u128], p: *mut (i16, u16)) -> i128 {
    a.iter().sum::<i128>() + b.len() as i128 + p as usize as i128
}

extern "C" fn never(_: i64) -> ! {
    std::process::exit(0)
}
fn fptr(_: i8, _: &[u16], (_, _): (char, bool)) -> *const u8 {
    std::ptr::null()
}
fn first<'a>(s: &'a str, _: &'a mut [f32; 2]) -> &'a str {
    s
}

#[inline(never)]
fn block_on<F: Future>(f: F) -> F::Output {
    let mut f = pin!(f);
    let mut cx = Context::from_waker(Waker::noop());
    loop {
        if let Poll::Ready(v) = f.as_mut().poll(&mut cx) {
            return v;
        }
    }
}

async fn add_later(a: u32, b: u32) -> u32 {
    black_box(a) + b
}

fn main() {
    let v: Vec<Box<dyn Shape>> = vec![Box::new(Square::<3>(2.0)), Box::new(Circle::new(1.0))];
    let mut s = 0.0;
    for x in &v {
        s += x.area();
        println!("{}", x.name());
    }
    println!("{}", s);
    println!(
        "{}",
        consts::<true, 'é', -5, { i64::MIN }, { u128::MAX }>() + consts::<false, '\n', 7, 0, 1>()
    );
    println!("{}", grüße(vec![1u8, 2]) + &grüße(("a", 1.5f32, -2i16)));
    println!("{}", 東京::ñandú(b"abc"));
    let k = black_box(3u8);
    println!("{}", apply(|x| x + k, 4) + apply(move |x| x * k, 5));
    let f = |s: &str| s.len();
    println!("{}", dyn_args(&f, &mut vec![1u32, 2].into_iter()));
    println!("{}", fn_ptrs(fptr, never, first));
    let mut pair = (1i16, 2u16);
    println!("{}", arrays([1, 2, 3], &mut [4, 5], &mut pair) + arrays([7i128; 40], &mut [], &mut pair));
    let w = Wrapper(Some("x"), [1u64, 2]);
    println!("{} {}", w.show::<7>(), w.clone().show::<255>());
    let mut h: HashMap<String, Vec<(i64, Option<&str>)>> = HashMap::new();
    h.entry("x".into()).or_default().push((1, Some("y")));
    let mut ks: Vec<_> = h.keys().cloned().collect();
    ks.sort_by(|a, b| b.cmp(a));
    let b: BTreeMap<u8, char> = (0..10u8).map(|i| (i, (b'a' + i) as char)).collect();
    println!("{:?} {:?} {:?}", h, ks, b);
    println!("{}", block_on(async { add_later(1, 2).await + 1 }));
    std::thread::spawn(|| println!("thread")).join().unwrap();
}
