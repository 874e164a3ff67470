// The CPU methods compiled to wasm32, run under Node (scripts/wasm-test.sh): every method's
// pairs, and a moving scene's found and lost pairs, against brute force computed in the same
// wasm instance; the GPU entry point must refuse with the library's `Unsupported` error.
// Usage: node web/tests/node.cjs <dir of wasm-bindgen --target nodejs output>
'use strict';
const path = require('path');
const web = require(path.resolve(process.argv[2], 'sweepfan_web.js'));

// [scene, n, seed, method, frames]
const cases = [];
for (const method of ['grid', 'sap', 'xyz', 'min-axis', 'origin-distance']) {
  cases.push(['paper', 5000, 1, method, 1]);
}
for (const method of ['grid', 'sap']) {
  cases.push(['clusters', 50000, 2, method, 1]);
  cases.push(['mixed-radii', 20000, 3, method, 1]);
}
// A moving scene: pairs and events each frame.
cases.push(['paper', 5000, 4, 'grid', 6]);
cases.push(['density', 20000, 5, 'sap', 4]);

let passed = 0;
let failed = 0;
for (const [scene, n, seed, method, frames] of cases) {
  const name = `${scene} n=${n} ${method} frames=${frames}`;
  try {
    const c = web.check_cpu(scene, n, seed, method, frames);
    // A scene with no pairs would agree trivially: every case here has some.
    const ok = c.agrees && c.pairs === c.brute_force_pairs && c.pairs > 0 &&
      (frames === 1 || c.found + c.lost > 0);
    console.log(`${ok ? 'ok  ' : 'FAIL'} ${name}: ${c.pairs} pairs (brute force ${c.brute_force_pairs}), ` +
      `found ${c.found}, lost ${c.lost}, ${c.ms.toFixed(2)} ms/frame (wasm, Node, one thread)`);
    ok ? passed++ : failed++;
  } catch (e) {
    console.log(`FAIL ${name}: ${e.message}`);
    failed++;
  }
}
const refusals = [
  ['unknown scene', () => web.check_cpu('pape', 10, 1, 'grid', 1), "unknown scene 'pape'"],
  ['unknown method', () => web.check_cpu('paper', 10, 1, 'grdi', 1), "unknown method 'grdi'"],
  ['empty scene', () => web.check_cpu('paper', 0, 1, 'grid', 1), 'empty scene'],
  ['GPU in a page', () => web.open_gpu(), 'unsupported here'],
];
for (const [name, call, expected] of refusals) {
  let message = null;
  try {
    call();
  } catch (e) {
    message = e.message;
  }
  const ok = message !== null && message.includes(expected);
  console.log(`${ok ? 'ok  ' : 'FAIL'} ${name}: ${message === null ? 'no error' : message}`);
  ok ? passed++ : failed++;
}
console.log(`${passed} passed, ${failed} failed`);
process.exit(failed === 0 ? 0 : 1);
