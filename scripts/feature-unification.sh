#!/usr/bin/env bash
# Checks that the builds CI and the README run resolve every crate they share with the same
# features, so that each reuses the others' dependencies instead of rebuilding naga, wgpu and
# everything above them: `cargo build` (also `cargo run`, scripts/tint.sh, the driver matrix),
# `cargo test` (scripts/test.sh: dev-dependencies), `cargo test --features peers,mpi` and the
# README's `cargo build --features mpi`, and the Python package's (`pip install ./python`). The
# cure for a difference is a line in feature-unification/Cargo.toml. Exit 1, naming each crate and both feature lists, on a difference.
set -euo pipefail
cd "$(dirname "$0")/.."
host=$(rustc -vV | sed -n 's/^host: //p')
tree() {
  cargo tree --quiet --target "$host" --prefix none --format '{p}|{f}' "$@" |
    sed 's/ (\*)$//; s/ (proc-macro)$//; s/ (\/[^)]*)//' | sort -u
}
workspace="--workspace --exclude sweepfan-python"
# shellcheck disable=SC2086
base=$(tree $workspace --edges normal)
status=0
for config in "$workspace --edges normal,dev" "$workspace --edges normal,dev --features peers,mpi" \
  "$workspace --edges normal --features mpi" \
  "-p sweepfan-python --edges normal --features pyo3/extension-module"; do
  # shellcheck disable=SC2086
  other=$(tree $config)
  differ=$(join -t'|' <(sort -t'|' -k1,1 <<<"$base") <(sort -t'|' -k1,1 <<<"$other") |
    awk -F'|' '$2 != $3 && $1 !~ /^sweepfan/ {print "  " $1 ": [" $2 "] against [" $3 "]"}')
  if [ -n "$differ" ]; then
    echo "scripts/feature-unification.sh: \`cargo build\` and \`cargo tree $config\` resolve" \
      "these crates differently (add the features to feature-unification/Cargo.toml):" >&2
    echo "$differ" >&2
    status=1
  fi
done
[ "$status" = 0 ] && echo "scripts/feature-unification.sh: one feature set for every shared crate"
exit $status
