// inline.js: CPU time split 60/30/10 over three call chains small and
// hot enough that TurboFan inlines each into its caller (checked with
// --trace-turbo-inlining): the logical chain of a sample is then only in
// the optimized code's inlining data.
//   mix <- heavy  <- chain_60 <- round <- (top level)
//   mix <- medium <- chain_30 <- round <- (top level)
//   mix <- light  <- chain_10 <- round <- (top level)
// Each chain does the same work per call; round calls them 6, 3 and 1
// times.  The sums stay small integers (V8's Smis): the loop allocates
// nothing, so no scavenge moves the functions between a sample and its
// naming (a known limit, see the README).  node inline.js SECONDS
'use strict';

function mix(i) { return (i * 31) ^ (i >> 3); }
function heavy(n) { let x = 0; for (let i = 0; i < n; i++) x += mix(i); return x; }
function medium(n) { let x = 0; for (let i = 0; i < n; i++) x += mix(i); return x; }
function light(n) { let x = 0; for (let i = 0; i < n; i++) x += mix(i); return x; }
function chain_60(n) { return heavy(n); }
function chain_30(n) { return medium(n); }
function chain_10(n) { return light(n); }

function round(n) {
	let x = 0;
	for (let k = 0; k < 6; k++)
		x += chain_60(n);
	for (let k = 0; k < 3; k++)
		x += chain_30(n);
	x += chain_10(n);
	return x;
}

const deadline = Date.now() + Number(process.argv[2] || 30) * 1000;
let s = 0;
while (Date.now() < deadline)
	for (let j = 0; j < 100; j++)
		s = (s + round(200)) & 0xffff;
