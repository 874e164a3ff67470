#!/usr/bin/env bash
# The library in a browser's runtime (docs/design.md §8.5): builds the library and `web/` for
# wasm32-unknown-unknown (clippy clean there too), makes the JavaScript glue with wasm-bindgen,
# and runs web/tests/node.cjs under Node: every CPU method against brute force in the same wasm
# instance, a moving scene's events, the refusals. Ends with `N passed, 0 failed`; exits 1 on
# any mismatch. Installs what it lacks: the wasm32 target (rustup) and the wasm-bindgen tool of
# the version web/Cargo.toml pins (cargo install, about 2.5 minutes on 2 cores). Needs Node.
set -euo pipefail
cd "$(dirname "$0")/.."
target=wasm32-unknown-unknown
if ! rustup target list --installed | grep -qx "$target"; then
  rustup target add "$target"
fi
version=$(sed -n 's/^wasm-bindgen = "=\(.*\)"$/\1/p' web/Cargo.toml)
if [ -z "$version" ]; then
  echo "scripts/wasm-test.sh: web/Cargo.toml pins no wasm-bindgen version" >&2
  exit 2
fi
if [ "$(wasm-bindgen --version 2>/dev/null || true)" != "wasm-bindgen $version" ]; then
  # Not --locked: the tool's lock file names versions a crates.io mirror may not hold.
  cargo install wasm-bindgen-cli --version "$version"
fi
if ! command -v node >/dev/null 2>&1; then
  echo "scripts/wasm-test.sh: Node.js is needed to run the wasm build (apt-get install nodejs)" >&2
  exit 2
fi
cargo clippy --release --target "$target" -p sweepfan -p sweepfan-web -- -D warnings
cargo build --release --target "$target" -p sweepfan-web
out=target/web/node
rm -rf "$out"
wasm-bindgen --target nodejs --out-dir "$out" "target/$target/release/sweepfan_web.wasm"
echo "wasm (after wasm-bindgen): $(stat -c %s "$out/sweepfan_web_bg.wasm") bytes"
node web/tests/node.cjs "$out"
