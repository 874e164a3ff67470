// The page in headless Chromium (scripts/browser-test.sh): every case through the page's own
// `window.sweepfan.run`, the GPU ones on the browser's WebGPU adapter checked against the same
// method on the CPU in the page, the CPU ones against brute force; then the refusals. Ends
// with `N passed, 0 failed`; exits 1 on any mismatch, on an error, or when the page has no
// WebGPU adapter (never a skip).
// Usage: node web/tests/browser.cjs URL CHROMIUM
'use strict';
const puppeteer = require('puppeteer-core');

const [url, chromium] = process.argv.slice(2);
const gpu = [];
for (const method of ['grid', 'sap', 'brute-force']) {
  gpu.push({ scene: 'paper', n: 5000, method });
  // Brute force at 20k, not 50k: 1.25e9 tests took 170 s on SwiftShader, a third of the script
  // and enough to take CI past its limit; 2e8 tests check the same kernel.
  gpu.push({ scene: 'clusters', n: method === 'brute-force' ? 20000 : 50000, method });
  gpu.push({ scene: 'mixed-radii', n: 20000, method });
}
// The caller's boxes by id: moved, one in eleven removed each frame, found and lost checked.
gpu.push({ scene: 'paper', n: 5000, method: 'boxes', frames: 4 });
gpu.push({ scene: 'clusters', n: 50000, method: 'boxes', frames: 3 });
// Contacts of oriented boxes: the GPU's against the CPU's contacts in the page.
gpu.push({ scene: 'paper', n: 20000, method: 'contacts' });
// The sector CCD: 1,000 rotating boxes among 20k moving spheres, both proxies.
gpu.push({ scene: 'paper', n: 20000, method: 'rotating', frames: 3 });
// Many worlds in one call: 128 worlds of 64 with a shared floor, against the CPU batch.
gpu.push({ scene: 'paper', n: 8192, method: 'worlds' });
gpu.push({ scene: 'clusters', n: 4096, method: 'worlds' });
// Moving scenes: pairs and found/lost each frame.
gpu.push({ scene: 'paper', n: 5000, method: 'grid', frames: 6 });
gpu.push({ scene: 'density', n: 20000, method: 'sap', frames: 4 });
const cpu = [];
for (const method of ['grid', 'sap', 'xyz', 'min-axis', 'origin-distance']) {
  cpu.push({ scene: 'paper', n: 5000, method });
}
cpu.push({ scene: 'clusters', n: 50000, method: 'grid' });
cpu.push({ scene: 'mixed-radii', n: 20000, method: 'sap', frames: 3 });
cpu.push({ scene: 'paper', n: 5000, method: 'boxes', frames: 3 });
cpu.push({ scene: 'paper', n: 2000, method: 'contacts' });
cpu.push({ scene: 'paper', n: 4096, method: 'worlds' });

(async () => {
  let passed = 0;
  let failed = 0;
  const report = (ok, line) => {
    console.log(`${ok ? 'ok  ' : 'FAIL'} ${line}`);
    ok ? passed++ : failed++;
  };
  const browser = await puppeteer.launch({
    executablePath: chromium,
    headless: 'shell',
    args: ['--enable-unsafe-webgpu', '--no-sandbox'],
    protocolTimeout: 900000,
  });
  try {
    const page = await browser.newPage();
    page.on('pageerror', (e) => console.log(`page error: ${e.message}`));
    await page.goto(url);
    await page.waitForFunction(() => window.sweepfan !== undefined);
    const hasGpu = await page.evaluate(async () =>
      navigator.gpu !== undefined && (await navigator.gpu.requestAdapter()) !== null);
    if (!hasGpu) {
      report(false, 'the page has no WebGPU adapter (Chromium needs --enable-unsafe-webgpu)');
    }
    const cases = [...gpu.map((c) => ({ ...c, backend: 'gpu' })),
      ...cpu.map((c) => ({ ...c, backend: 'cpu' }))];
    for (const c of cases) {
      if (c.backend === 'gpu' && !hasGpu) break;
      const frames = c.frames || 1;
      const name = `${c.backend} ${c.scene} n=${c.n} ${c.method} frames=${frames}`;
      try {
        const r = await page.evaluate((c) => window.sweepfan.run(c), { ...c, frames });
        // A scene without pairs would agree trivially: each case here has some, and a moving
        // one some contacts found and lost.
        // The sector CCD's hits may differ from the CPU's by a tie or two within 1e-4 of
        // touching, which the page's `agrees` bounds and checks pair by pair.
        const counted = c.method === 'rotating'
          ? Math.abs(r.pairs - r.referencePairs) <= 2 : r.pairs === r.referencePairs;
        // Contacts: at least one point a touching pair, drawn.
        const drawn = c.method !== 'contacts' || r.points >= r.pairs;
        // Every frame asked was run (a still scene's checks run one and say so).
        const still = c.method === 'contacts' || c.method === 'worlds';
        const ran = r.frames === (still ? 1 : frames);
        const ok = r.agrees && counted && r.pairs > 0 && drawn && ran &&
          (frames === 1 || (r.found > 0 && r.lost > 0));
        report(ok, `${name}: ${r.pairs} pairs (reference ${r.referencePairs}), found ${r.found}, ` +
          `lost ${r.lost}, ${r.msPerFrame.toFixed(1)} ms/frame, ${(r.msTotal / 1000).toFixed(1)} s ` +
          `in all${c.backend === 'gpu' ? ` (adapter: ${r.adapter || 'unnamed'}; SwiftShader ` +
          'where Chromium has no GPU: not GPU times)' : ' (wasm, one thread)'}`);
      } catch (e) {
        report(false, `${name}: ${e.message}`);
      }
    }
    const refusals = [
      ['unknown scene', { scene: 'pape', n: 10, method: 'grid', backend: 'cpu' }, "unknown scene 'pape'"],
      ['unknown method', { scene: 'paper', n: 10, method: 'grdi', backend: 'gpu' }, "unknown method 'grdi'"],
      ['empty scene', { scene: 'paper', n: 0, method: 'grid', backend: 'gpu' }, 'empty scene'],
      // A JavaScript number that a u32 would wrap (-1 to 4294967295, 1.5 to 1) is refused.
      ['negative n', { scene: 'paper', n: -1, method: 'grid', backend: 'gpu' }, 'n = -1: a whole number'],
      ['fractional frames', { scene: 'paper', n: 10, method: 'grid', backend: 'cpu', frames: 2.5 },
        'frames = 2.5: a whole number'],
      ['n past the page', { scene: 'paper', n: 2 ** 32 + 100, method: 'sap', backend: 'cpu' },
        'n = 4294967396: a whole number'],
      // Brute force past its bound: hours on the page's one thread.
      ['brute force past its bound', { scene: 'paper', n: 60000, method: 'brute-force', backend: 'cpu' },
        'at most 50000'],
    ];
    for (const [name, c, expected] of refusals) {
      const message = await page.evaluate(async (c) => {
        try {
          await window.sweepfan.run(c);
          return null;
        } catch (e) {
          return e.message;
        }
      }, c);
      report(message !== null && message.includes(expected),
        `${name}: ${message === null ? 'no error' : message}`);
    }
    // The stop button's call ends a long run before its next frame, and the next run works.
    const stopped = await page.evaluate(async () => {
      const long = window.sweepfan.run({ scene: 'paper', n: 3000, method: 'grid', backend: 'cpu', frames: 1000 });
      await new Promise((r) => setTimeout(r, 300));
      await window.sweepfan.stop();
      try {
        await long;
        return 'no error';
      } catch (e) {
        return e.message;
      }
    });
    report(stopped.includes('interrupted'), `stop during 1,000 frames: ${stopped}`);
    const after = await page.evaluate(() =>
      window.sweepfan.run({ scene: 'paper', n: 3000, method: 'grid', backend: 'cpu', frames: 2 }));
    report(after.agrees && after.frames === 2, `a run after the stop: ${after.frames} frames, agrees ${after.agrees}`);
    const blocking = await page.evaluate(async () => {
      const web = await import('./pkg/sweepfan_web.js');
      try {
        web.open_gpu();
        return 'no error';
      } catch (e) {
        return e.message;
      }
    });
    report(blocking.includes('unsupported here'), `the blocking GPU call in a page: ${blocking}`);
  } finally {
    await browser.close();
  }
  console.log(`${passed} passed, ${failed} failed`);
  process.exit(failed === 0 ? 0 : 1);
})().catch((e) => {
  console.log(`FAIL ${e.stack || e}`);
  console.log('0 passed, 1 failed');
  process.exit(1);
});
