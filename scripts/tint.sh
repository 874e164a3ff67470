#!/usr/bin/env bash
# Validates every shader module, exactly as the pipelines compile it (`sweepfan shaders`), with
# Tint, the WGSL compiler of Chrome/Dawn, for subgroup sizes 4 to 128 (the constants of the
# subgroup sort depend on it). naga validates them in every GPU test; Tint adds its uniformity
# analysis, which naga lacks. Installs dawn.node (npm `webgpu`) into scripts/tint/node_modules.
# Called by .ci/run; needs node >= 18 and npm.
set -euo pipefail
cd "$(dirname "$0")/.."
if ! command -v node >/dev/null; then
  echo "scripts/tint.sh: node is needed (node 18 or newer)" >&2
  exit 2
fi
if [ ! -d scripts/tint/node_modules/webgpu ]; then
  (cd scripts/tint && npm install --no-audit --no-fund --silent)
fi
cargo build --release --quiet --bin sweepfan
out="$(mktemp -d)"
trap 'rm -rf "$out"' EXIT
status=0
for size in 4 8 16 32 64 128; do
  target/release/sweepfan shaders --out "$out/$size" --subgroup-size "$size" --enable-subgroups >/dev/null
  echo "subgroup size $size:"
  mapfile -t files < <(find "$out/$size" -name '*.wgsl' | sort)
  node scripts/tint/check.mjs "${files[@]}" || status=1
done
exit $status
