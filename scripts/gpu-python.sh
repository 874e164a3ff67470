#!/usr/bin/env bash
# The Python package on a machine with no Rust and no network (the GPU machine of
# DEVELOPERS.md): installs the wheel carried in .gpu/wheels (made here by
#   target/pyenv/bin/pip wheel --no-deps -w .gpu/wheels ./python
# ) by unpacking it (a wheel is a zip; no pip needed), then runs python/bench.py (one core
# against cKDTree where SciPy exists, else the GPU against sweepfan's CPU grid) and, where
# pytest and SciPy exist, python/tests on that machine's GPU.
#   scripts/gpu-python.sh OUT_DIR
set -uo pipefail
out=${1:?usage: scripts/gpu-python.sh OUT_DIR}
here=$(cd "$(dirname "$0")/.." && pwd)
mkdir -p "$out"
py=${PYTHON:-python3}
"$py" - <<'PY' > "$out/python.txt" 2>&1
import sys, importlib
print("python", sys.version.split()[0])
for m in ("numpy", "scipy", "pytest"):
    try:
        print(m, importlib.import_module(m).__version__)
    except Exception as e:
        print(m, "missing:", e)
PY
cat "$out/python.txt"
"$py" -c 'import numpy' || { echo "gpu-python: no NumPy here" >&2; exit 2; }
site=$(mktemp -d)
"$py" -m zipfile -e "$here"/.gpu/wheels/sweepfan-*.whl "$site" || exit 2
export PYTHONPATH=$site${PYTHONPATH:+:$PYTHONPATH}
status=0
kd=()
"$py" -c 'import scipy.spatial' 2>/dev/null || kd=(--no-ckdtree)
echo "== bench, one core: $py python/bench.py --sizes 10000 100000 1000000 4000000 ${kd[*]}"
timeout -k 5 200 "$py" "$here/python/bench.py" --sizes 10000 100000 1000000 4000000 "${kd[@]}" \
  --json "$out/python_bench_1core.json" || status=1
echo "== bench, all cores: $py python/bench.py --threads $(nproc) --no-ckdtree --sizes 1000000 16000000"
timeout -k 5 120 "$py" "$here/python/bench.py" --threads "$(nproc)" --no-ckdtree \
  --sizes 1000000 16000000 --json "$out/python_bench_allcores.json" || status=1
if [ ${#kd[@]} = 0 ] && "$py" -c 'import pytest' 2>/dev/null; then
  echo "== pytest python/tests"
  (cd "$here/python/tests" && timeout -k 5 150 "$py" -m pytest -q -p no:cacheprovider . \
    > "$out/pytest.txt" 2>&1) || status=1
  tail -3 "$out/pytest.txt"
fi
exit $status
