// split.js: CPU time split 60/30/10 over three call chains, by the
// process' CPU clock (process.cpuUsage), so the split holds on a busy host.
//   heavy  <- chain_60 <- run <- (top level)
//   medium <- chain_30 <- run <- (top level)
//   light  <- chain_10 <- run <- (top level)
// node split.js SECONDS
'use strict';

function cpuMs() {
	const u = process.cpuUsage();
	return (u.user + u.system) / 1000;
}

function spin(ms) {
	const end = cpuMs() + ms;
	let x = 0;
	while (cpuMs() < end) {
		for (let i = 0; i < 2000; i++)
			x += i * i;
	}
	return x;
}

function heavy() { return spin(60); }
function medium() { return spin(30); }
function light() { return spin(10); }
function chain_60() { return heavy(); }
function chain_30() { return medium(); }
function chain_10() { return light(); }

function run(seconds) {
	const deadline = Date.now() + seconds * 1000;
	let x = 0;
	while (Date.now() < deadline) {
		x += chain_60();
		x += chain_30();
		x += chain_10();
	}
	return x;
}

run(Number(process.argv[2] || 30));
