// Validates WGSL files with Tint, the WGSL compiler of Dawn/Chrome (npm `webgpu`, dawn.node, on
// its null backend: nothing runs, the compiler and its uniformity analysis do).
// Usage: node check.mjs FILE.wgsl...   Prints every message; exits 1 on any error or warning.
// Before the files, it compiles a shader with a barrier in non-uniform control flow and fails
// unless Tint rejects it: a validator that accepts everything would otherwise pass silently.
import { create, globals } from 'webgpu';
import fs from 'node:fs';

Object.assign(globalThis, globals);
const gpu = create(['backend=null']);
const adapter = await gpu.requestAdapter();
if (!adapter) {
  console.error('tint: dawn.node offered no adapter on the null backend');
  process.exit(2);
}
if (!adapter.features.has('subgroups')) {
  console.error('tint: the null adapter lacks the subgroups feature');
  process.exit(2);
}
const device = await adapter.requestDevice({ requiredFeatures: ['subgroups'] });
// Compilation errors also reach the console through uncaptured errors; the messages below are
// the ones counted.
device.onuncapturederror = () => {};

async function messages(code) {
  const module = device.createShaderModule({ code });
  const info = await module.getCompilationInfo();
  return info.messages;
}

const planted = `@compute @workgroup_size(64)
fn main(@builtin(local_invocation_index) lid: u32) {
    if (lid == 0u) { workgroupBarrier(); }
}`;
if (!(await messages(planted)).some((m) => m.type === 'error')) {
  console.error('tint: a barrier in non-uniform control flow was accepted: the check is not live');
  process.exit(2);
}
console.log('tint: the planted non-uniform barrier was rejected (above): the check is live');

let problems = 0;
for (const file of process.argv.slice(2)) {
  for (const m of await messages(fs.readFileSync(file, 'utf8'))) {
    console.log(`${file}:${m.lineNum}:${m.linePos}: ${m.type}: ${m.message}`);
    if (m.type === 'error' || m.type === 'warning') problems++;
  }
}
console.log(`tint: ${process.argv.length - 2} modules, ${problems} errors or warnings`);
process.exit(problems ? 1 : 0);
