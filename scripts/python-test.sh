#!/usr/bin/env bash
# The Python package's tests (docs/design.md §8.4), called by .ci/run after scripts/test.sh (which
# installs lavapipe where no Vulkan driver exists: the GPU tests fail, not skip, without one).
# Makes a virtual environment in target/pyenv (PYENV=DIR for another), installs NumPy, SciPy and
# pytest, then the package from this clone with `pip install ./python`, and runs pytest.
#   scripts/python-test.sh [PYTEST ARGS...]
set -euo pipefail
cd "$(dirname "$0")/.."
env_dir=${PYENV:-target/pyenv}
if [ ! -x "$env_dir/bin/python" ]; then
  python3 -m venv "$env_dir"
fi
py=$(cd "$env_dir" && pwd)/bin/python
"$py" -m pip install -q --disable-pip-version-check numpy scipy pytest
"$py" -m pip install -q --disable-pip-version-check --force-reinstall --no-deps ./python
# Run from python/tests' parent with the source tree off sys.path, so that the installed
# package (not python/sweepfan without its compiled half) is what the tests import.
cd python/tests
"$py" -m pytest -q -p no:cacheprovider "$@" .
