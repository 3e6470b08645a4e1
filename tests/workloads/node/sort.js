// sort.js: Array.prototype.sort with a JavaScript comparator that takes
// the CPU time, called from a named function:
//   compare <- (Array.prototype.sort) <- sortAll <- (top level)
// node sort.js SECONDS
'use strict';

function compare(a, b) {
	let x = 0;
	for (let i = 0; i < 200; i++)
		x += i * (a & 7);
	return a - b + (x & 0);
}

function sortAll(data) {
	return data.slice().sort(compare);
}

const data = [];
for (let i = 0; i < 2000; i++)
	data.push((i * 7919) % 2003);
const deadline = Date.now() + Number(process.argv[2] || 30) * 1000;
let n = 0;
while (Date.now() < deadline)
	n += sortAll(data)[0];
