#!/usr/bin/env bash
# The library in a browser (docs/design.md §8.5): lints the library and `web/` for
# wasm32-unknown-unknown (clippy -D warnings), builds the page (wasm-bindgen --target web into
# target/web/page), serves it on localhost and runs web/tests/browser.cjs in headless Chromium
# through puppeteer-core: the GPU methods on the browser's WebGPU adapter against the same method
# on the CPU in the page, the CPU methods against brute force, moving scenes' found and lost
# pairs, the refusals. Ends with `N passed, 0 failed`; exits 1 on any mismatch or when the page
# has no WebGPU adapter (never a skip).
#
# Installs what it lacks: the wasm32 target (rustup), the wasm-bindgen tool of the version
# web/Cargo.toml pins (cargo install, about 2.5 minutes on 2 cores), Debian's
# chromium-headless-shell (apt-get; WebGPU on SwiftShader with --enable-unsafe-webgpu), and
# puppeteer-core (npm, web/package.json). Needs Node and Python 3 (the local server).
#
# `scripts/browser-test.sh --serve` builds the page and serves it at http://localhost:8000/
# instead (open it in a browser with WebGPU; README, "In the browser").
set -euo pipefail
cd "$(dirname "$0")/.."
serve=0
if [ "${1:-}" = "--serve" ]; then
  serve=1
fi
target=wasm32-unknown-unknown
if ! rustup target list --installed | grep -qx "$target"; then
  rustup target add "$target"
fi
version=$(sed -n 's/^wasm-bindgen = "=\(.*\)"$/\1/p' web/Cargo.toml)
if [ -z "$version" ]; then
  echo "scripts/browser-test.sh: web/Cargo.toml pins no wasm-bindgen version" >&2
  exit 2
fi
if [ "$(wasm-bindgen --version 2>/dev/null || true)" != "wasm-bindgen $version" ]; then
  # Not --locked: the tool's lock file names versions a crates.io mirror may not hold.
  cargo install wasm-bindgen-cli --version "$version"
fi
for tool in node npm python3; do
  if ! command -v "$tool" >/dev/null 2>&1; then
    echo "scripts/browser-test.sh: $tool is needed (apt-get install nodejs npm python3)" >&2
    exit 2
  fi
done

cargo clippy --release --target "$target" -p sweepfan -p sweepfan-web -- -D warnings
cargo build --release --target "$target" -p sweepfan-web
page=target/web/page
rm -rf "$page"
mkdir -p "$page"
wasm-bindgen --target web --out-dir "$page/pkg" "target/$target/release/sweepfan_web.wasm"
cp web/index.html web/page.js "$page/"
echo "page: $page ($(stat -c %s "$page/pkg/sweepfan_web_bg.wasm") bytes of wasm)"

if [ "$serve" = 1 ]; then
  echo "serving $page at http://localhost:8000/ (Ctrl-C stops)"
  exec python3 -m http.server 8000 --bind 127.0.0.1 --directory "$page"
fi

chromium=/usr/bin/chromium-headless-shell
if [ ! -x "$chromium" ]; then
  if [ "$(id -u)" = 0 ]; then
    apt-get install -y chromium-headless-shell >/dev/null || {
      apt-get update >/dev/null && apt-get install -y chromium-headless-shell >/dev/null
    }
  else
    sudo apt-get install -y chromium-headless-shell >/dev/null
  fi
fi
(cd web && npm install --no-audit --no-fund --silent)

# A free port from the kernel, then the server in the background (stopped on exit).
port=$(python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')
python3 -m http.server "$port" --bind 127.0.0.1 --directory "$page" >/dev/null 2>&1 &
server=$!
trap 'kill "$server" 2>/dev/null || true' EXIT
for _ in $(seq 50); do
  if python3 -c "import urllib.request; urllib.request.urlopen('http://127.0.0.1:$port/index.html')" 2>/dev/null; then
    break
  fi
  sleep 0.1
done
NODE_PATH=web/node_modules node web/tests/browser.cjs "http://127.0.0.1:$port/index.html" "$chromium"
