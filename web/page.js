// The page (docs/design.md §8.5): runs a scene through a method on the GPU (WebGPU) or the CPU,
// checks it in the page, and draws the last frame. `window.sweepfan.run` is what the controls
// call, and what scripts/browser-test.sh calls through puppeteer.
import init, * as web from './pkg/sweepfan_web.js';

const ready = init();
let adapter = null;
// One run at a time: a run awaits the GPU, and a second started meanwhile would share (and
// replace) its device and its kept pipelines. Each call waits for the ones before it.
let queue = Promise.resolve();

function run(options) {
  const mine = queue.then(() => runAlone(options));
  queue = mine.catch(() => {});
  return mine;
}

async function runAlone({ scene, n, seed = 1, method, backend, frames = 1 }) {
  await ready;
  const started = performance.now();
  // `f` of the check's input (a `web.Run`: its counts refused as it is made where they are not
  // whole numbers within the page's bounds), freed once the check has settled.
  const withRun = async (f) => {
    const input = new web.Run(scene, n, seed, frames);
    try {
      return await f(input);
    } finally {
      input.free();
    }
  };
  let check;
  if (backend === 'gpu') {
    // Opened at the first GPU run, and again where the device was lost since.
    if (adapter === null || !web.gpu_is_open()) {
      // wgpu names a browser's adapter by its description, often empty: the vendor and the
      // architecture the browser reports name it (SwiftShader: "google swiftshader"), asked
      // with the library's preference so that both name the same adapter.
      const opened = await web.open_gpu_async();
      const asked = await navigator.gpu.requestAdapter({ powerPreference: 'high-performance' });
      const info = asked && asked.info ? `${asked.info.vendor} ${asked.info.architecture}`.trim() : '';
      adapter = opened.startsWith(' ') ? `${info}${opened}` : `${info} ${opened}`.trim();
      document.getElementById('adapter').textContent = `GPU: ${adapter || '(unnamed adapter)'}`;
    }
    if (method === 'rotating') {
      check = await withRun((input) => web.check_rotating_gpu_async(input));
    } else if (method === 'boxes') {
      check = await withRun((input) => web.check_boxes_gpu_async(input));
    } else if (method === 'contacts') {
      check = await web.check_contacts_gpu_async(scene, n, seed);
    } else if (method === 'worlds') {
      check = await web.check_worlds_gpu_async(scene, n, seed);
    } else {
      check = await withRun((input) => web.check_gpu_async(input, method));
    }
  } else if (method === 'rotating') {
    throw new Error('rotating: the sector CCD runs on the GPU here, checked against the CPU');
  } else {
    check = method === 'boxes'
      ? await withRun((input) => web.check_boxes_cpu(input))
      : method === 'contacts'
        ? web.check_contacts_cpu(scene, n, seed)
        : method === 'worlds'
          ? web.check_worlds_cpu(scene, n, seed)
          : await withRun((input) => web.check_cpu(input, method));
  }
  // What ran and what it was checked against, as the check reports them.
  const reference = check.reference();
  const ran = check.frames;
  const what = method === 'rotating'
    ? `n / 20 rotating boxes among ${n} spheres, hits of the conservative sector`
    : method === 'contacts'
      ? `${n} oriented boxes of the ${scene} scene, the contacts of their touching pairs`
      : method === 'worlds'
        ? `${Math.max(Math.ceil(n / 64), 1)} worlds of 64 spheres of the ${scene} scene and a ` +
          'floor shared by all, in one call'
        : `${scene}, n = ${n}`;
  const summary = {
    scene, n, method, backend, frames: ran, reference,
    adapter,
    pairs: check.pairs,
    referencePairs: check.reference_pairs,
    found: check.found,
    lost: check.lost,
    agrees: check.agrees,
    msPerFrame: check.ms,
    msTotal: performance.now() - started,
  };
  document.getElementById('result').textContent =
    `${what}, ${method} on the ${backend.toUpperCase()}: ${check.pairs} pairs, ` +
    `${check.ms.toFixed(2)} ms a frame over ${ran} frame(s)` +
    (ran < frames ? ` (a still scene: one frame run of the ${frames} asked)` : '') + '\n' +
    `reference (${reference}): ${check.reference_pairs} pairs; ` +
    `${check.agrees ? (ran > 1 ? 'every frame agrees' : 'agrees') : 'MISMATCH'}` +
    (ran > 1 ? `\nfound ${check.found}, lost ${check.lost} after the first frame` : '');
  const points = check.contact_points();
  draw(check.spheres(), check.touching(), method === 'boxes' || method === 'contacts', points);
  summary.points = points.length / 2;
  check.free();
  return summary;
}

// Spheres as discs; boxes (`x, y, z, h`: centre and larger half extent) as squares; contact
// points (`x, y` each) as dark dots over them.
function draw(spheres, touching, squares, points = []) {
  const canvas = document.getElementById('view');
  const g = canvas.getContext('2d');
  g.clearRect(0, 0, canvas.width, canvas.height);
  const count = touching.length;
  if (count === 0) return;
  let [x0, x1, y0, y1] = [Infinity, -Infinity, Infinity, -Infinity];
  for (let i = 0; i < count; i++) {
    const [x, y] = [spheres[4 * i], spheres[4 * i + 1]];
    x0 = Math.min(x0, x); x1 = Math.max(x1, x); y0 = Math.min(y0, y); y1 = Math.max(y1, y);
  }
  const scale = (canvas.width - 10) / Math.max(x1 - x0, y1 - y0, 1e-6);
  for (const pass of [0, 1]) {
    g.fillStyle = pass ? 'rgba(210, 30, 30, 0.8)' : 'rgba(90, 90, 90, 0.35)';
    for (let i = 0; i < count; i++) {
      if (touching[i] !== pass) continue;
      const px = 5 + (spheres[4 * i] - x0) * scale;
      const py = 5 + (spheres[4 * i + 1] - y0) * scale;
      const r = Math.max(spheres[4 * i + 3] * scale, 0.7);
      if (squares) {
        g.fillRect(px - r, py - r, 2 * r, 2 * r);
        continue;
      }
      g.beginPath();
      g.arc(px, py, r, 0, 2 * Math.PI);
      g.fill();
    }
  }
  g.fillStyle = 'rgba(10, 10, 120, 0.9)';
  for (let k = 0; k + 1 < points.length; k += 2) {
    g.fillRect(5 + (points[k] - x0) * scale - 1, 5 + (points[k + 1] - y0) * scale - 1, 2, 2);
  }
}

document.getElementById('controls').addEventListener('submit', async (event) => {
  event.preventDefault();
  const f = new FormData(event.target);
  const result = document.getElementById('result');
  const button = document.getElementById('run');
  result.textContent = 'running...';
  button.disabled = true;
  try {
    await run({
      scene: f.get('scene'), n: Number(f.get('n')), method: f.get('method'),
      backend: f.get('backend'), frames: Number(f.get('frames')),
    });
  } catch (e) {
    result.textContent = `error: ${e.message || e}`;
  } finally {
    button.disabled = false;
  }
});

// Stops the running check before its next frame (it then fails as interrupted).
async function stop() {
  await ready;
  web.stop();
}
document.getElementById('stop').addEventListener('click', stop);

window.sweepfan = { run, stop, ready };
