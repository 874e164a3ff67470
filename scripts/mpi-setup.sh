#!/usr/bin/env bash
# What the `mpi` feature needs (docs/design.md §2.11): an MPI library with its launcher and
# libclang for the bindings' build. Installs Debian's OpenMPI and libclang when missing (as root,
# with apt-get), else says what is missing and exits 2. Called by .ci/run before the
# --all-features build.
set -euo pipefail

missing=()
command -v mpirun >/dev/null 2>&1 || missing+=(openmpi-bin)
command -v mpicc >/dev/null 2>&1 || missing+=(libopenmpi-dev)
# libclang itself (libclang.so, libclang-14.so.1, ...), not libclang-cpp, which LLVM's other
# packages bring and bindgen cannot load (issue 39, item 7).
have_libclang() {
  local f
  for f in /usr/lib/llvm-*/lib/libclang.so* /usr/lib/llvm-*/lib/libclang-[0-9]*.so* \
    /usr/lib/*/libclang.so* /usr/lib/*/libclang-[0-9]*.so*; do
    [ -e "$f" ] && return 0
  done
  return 1
}
have_libclang || missing+=(libclang-dev)
if [ ${#missing[@]} -eq 0 ]; then
  exit 0
fi
if [ "$(id -u)" -eq 0 ] && command -v apt-get >/dev/null 2>&1; then
  echo "scripts/mpi-setup.sh: installing ${missing[*]}" >&2
  export DEBIAN_FRONTEND=noninteractive
  apt-get update -qq >/dev/null
  apt-get install -y -qq "${missing[@]}" >/dev/null
  exit 0
fi
echo "scripts/mpi-setup.sh: the mpi feature needs ${missing[*]} (Debian packages): install" \
  "them, or build without --features mpi" >&2
exit 2
