#!/usr/bin/env bash
# Extra software Vulkan drivers for testing sweepfan under more than one implementation.
# Everything is unpacked (dpkg -x) into a cache folder; nothing is installed over the system and
# the system's apt configuration is untouched (a private sources list / lists / cache is used).
#   scripts/drivers.sh fetch [NAME...]      # download + unpack what NAME needs (default: all); idempotent
#   scripts/drivers.sh env NAME             # print `export ...` lines for NAME (eval "$(... env NAME)")
#   scripts/drivers.sh run NAME -- CMD...   # run CMD with NAME's environment
#   scripts/drivers.sh list                 # driver names
# Drivers: lavapipe (Mesa 22 of bookworm; the system's if installed, else unpacked here),
#   lavapipe4 (same, LP_NATIVE_VECTOR_WIDTH=128: subgroup size 4), swiftshader (chromium-common),
#   validation (lavapipe + Khronos validation layer from chromium-common), mesa25 (lavapipe of
#   Mesa 25 from bookworm-backports, plus whatever newer libraries it needs, via LD_LIBRARY_PATH).
# Where the system has no Vulkan loader (libvulkan.so.1), bookworm's is unpacked and put on
# LD_LIBRARY_PATH too. Cache: $SWEEPFAN_DRIVER_CACHE, default ~/.cache/sweepfan-drivers.
set -euo pipefail
CACHE=${SWEEPFAN_DRIVER_CACHE:-$HOME/.cache/sweepfan-drivers}
NAMES="lavapipe lavapipe4 swiftshader validation mesa25"
TRIPLET=$(uname -m)-linux-gnu
die() { echo "drivers.sh: $*" >&2; exit 2; }

first() { local f; for f in "$@"; do [ -e "$f" ] && { echo "$f"; return; }; done; true; }
system_lvp() { first /usr/share/vulkan/icd.d/lvp_icd*.json; }
system_loader() { [[ $( (ldconfig -p || /sbin/ldconfig -p) 2>/dev/null) == *"libvulkan.so.1 "* ]]; }

apt_uri() { cat /etc/apt/sources.list /etc/apt/sources.list.d/*.{list,sources} 2>/dev/null \
  | grep -oE "^ *(URIs:|deb) +[a-z]+://[^ ]*/$1/?( |\$)" | awk 'NR == 1 {print $2}' || true; }
# Private apt: same mirror as the system's sources, plus <codename>-backports.
apt_private() {
  local codename mirror security keyring opt=""
  codename=$(. /etc/os-release && echo "${VERSION_CODENAME:?}")
  mirror=$(apt_uri debian); mirror=${mirror:-http://deb.debian.org/debian}
  security=$(apt_uri debian-security); security=${security:-http://deb.debian.org/debian-security}
  keyring=/usr/share/keyrings/debian-archive-keyring.gpg
  [ -f "$keyring" ] && opt="[signed-by=$keyring] "
  mkdir -p "$CACHE/apt/lists/partial" "$CACHE/apt/cache/archives/partial" "$CACHE/debs"
  printf 'deb %s%s %s main\n' "$opt" "$mirror" "$codename" "$opt" "$mirror" "$codename-updates" \
    "$opt" "$security" "$codename-security" "$opt" "$mirror" "$codename-backports" > "$CACHE/apt/sources.list"
  APT_OPTS=(-o "Dir::Etc::SourceList=$CACHE/apt/sources.list" -o "Dir::Etc::SourceParts=$CACHE/apt/none"
    -o "Dir::State::Lists=$CACHE/apt/lists" -o "Dir::Cache=$CACHE/apt/cache" -o Debug::NoLocking=1)
  [ "$(id -u)" -eq 0 ] && APT_OPTS+=(-o APT::Sandbox::User=root)
  APT_CODENAME=$codename
}
# Refreshes the private package lists once per fetch when they are over a day old.
apt_update() {
  [ -n "${APT_FRESH:-}" ] || [ -n "$(find "$CACHE/apt/lists" -name '*_Packages*' -mmin -1440)" ] \
    || apt-get -qq "${APT_OPTS[@]}" update || die "apt-get update with $CACHE/apt/sources.list failed"
  APT_FRESH=1
}

# Downloads SPEC (pkg or pkg/release) plus every dependency the system lacks (or has too old),
# as an install simulation against the system's dpkg state says, and unpacks them all into DIR.
unpack_closure() {
  local dir=$1 spec=$2 pkgs debs=$CACHE/debs/${1##*/}
  [ -f "$dir/.done" ] && return 0
  apt_update
  pkgs=$(apt-get -s "${APT_OPTS[@]}" install --no-install-recommends \
    -o APT::Get::Upgrade-By-Source-Package=false "$spec" | awk '$1 == "Inst" { v = ($3 ~ /^\[/) ? $4 : $3
    sub(/^\(/, "", v); print $2 "=" v }') || die "apt-get could not resolve $spec (see above)"
  [ -n "$pkgs" ] || die "install simulation of $spec gave no packages (is it already installed?)"
  echo "drivers.sh: $dir <- $(echo $pkgs)" >&2
  rm -rf "$debs" "$dir"; mkdir -p "$debs" "$dir"
  (cd "$debs" && apt-get -qq "${APT_OPTS[@]}" download $pkgs) || die "apt-get download failed for: $pkgs"
  local deb; for deb in "$debs"/*.deb; do dpkg -x "$deb" "$dir"; done
  rm -rf "$debs"; touch "$dir/.done"
}

libpath() { echo "$1/usr/lib/$TRIPLET:$1/lib/$TRIPLET"; }

# Writes DIR/lvp_icd.json (absolute library_path) and checks libvulkan_lvp.so links.
mesa_icd() {
  local dir=$1 src lib links
  src=$(first "$dir"/usr/share/vulkan/icd.d/lvp_icd*.json)
  lib=$dir/usr/lib/$TRIPLET/libvulkan_lvp.so
  [ -n "$src" ] && [ -f "$lib" ] || die "no lavapipe (lvp_icd json / libvulkan_lvp.so) in $dir"
  sed -E "s#\"library_path\": *\"[^\"]*\"#\"library_path\": \"$lib\"#" "$src" > "$dir/lvp_icd.json"
  links=$(LD_LIBRARY_PATH=$(libpath "$dir") ldd "$lib")
  if [[ $links == *"not found"* ]]; then
    grep 'not found' <<< "$links" >&2
    die "$lib does not resolve all its libraries (above)"
  fi
}

fetch_chromium() {
  local dir=$CACHE/chromium cc json so manifest
  if [ ! -f "$dir/.done" ]; then
    apt_update; rm -rf "$CACHE/debs/chromium" "$dir"; mkdir -p "$CACHE/debs/chromium"
    (cd "$CACHE/debs/chromium" && apt-get -qq "${APT_OPTS[@]}" download chromium-common) \
      || die "apt-get download chromium-common failed"
    dpkg -x "$CACHE"/debs/chromium/chromium-common_*.deb "$dir"; rm -rf "$CACHE/debs/chromium"; touch "$dir/.done"
  fi
  cc=$dir/usr/lib/chromium; json=$cc/vk_swiftshader_icd.json
  [ -f "$json" ] || die "no vk_swiftshader_icd.json in chromium-common"
  so=$(sed -nE 's/.*"library_path": *"([^"]*)".*/\1/p' "$json")
  case $so in /*) ;; *) so=$cc/$so ;; esac
  [ -f "$so" ] || die "swiftshader ICD's library_path does not resolve: $so"
  [ -f "$cc/libVkLayer_khronos_validation.so" ] || die "no libVkLayer_khronos_validation.so in chromium-common"
  mkdir -p "$CACHE/layers"
  manifest=$(grep -rl --include='*.json' VK_LAYER_KHRONOS_validation "$dir" | head -n1 || true)
  if [ -n "$manifest" ]; then
    sed -E "s#\"library_path\": *\"[^\"]*\"#\"library_path\": \"$cc/libVkLayer_khronos_validation.so\"#" \
      "$manifest" > "$CACHE/layers/VkLayer_khronos_validation.json"
  else cat > "$CACHE/layers/VkLayer_khronos_validation.json" <<EOF
{ "file_format_version": "1.2.0",
  "layer": { "name": "VK_LAYER_KHRONOS_validation", "type": "GLOBAL",
    "library_path": "$cc/libVkLayer_khronos_validation.so", "api_version": "1.3.290",
    "implementation_version": "1", "description": "Khronos validation layer (chromium-common)" } }
EOF
  fi
}

fetch() {
  local want=" ${*:-$NAMES} "
  apt_private
  system_loader || unpack_closure "$CACHE/loader" libvulkan1
  if [[ $want =~ \ (lavapipe|lavapipe4|validation)\  ]] && [ -z "$(system_lvp)" ]; then
    unpack_closure "$CACHE/mesa22" "mesa-vulkan-drivers/$APT_CODENAME"; mesa_icd "$CACHE/mesa22"
  fi
  [[ $want =~ \ (swiftshader|validation)\  ]] && fetch_chromium
  if [[ $want =~ \ mesa25\  ]]; then
    unpack_closure "$CACHE/mesa25" "mesa-vulkan-drivers/$APT_CODENAME-backports"; mesa_icd "$CACHE/mesa25"
  fi
  du -sh "$CACHE" >&2
}

need() { [ -e "$1" ] || die "$2 is not fetched ($1 missing): run scripts/drivers.sh fetch"; }
exports() { local k; for k in "$@"; do printf 'export %s=%q\n' "${k%%=*}" "${k#*=}"; done; }
icd() { exports "VK_ICD_FILENAMES=$1" "VK_DRIVER_FILES=$1"; }

# The loader (if unpacked here), plus lavapipe of Mesa 22: the system's, else the cache's.
lavapipe_env() {
  local lvp ld=""
  system_loader || { need "$CACHE/loader/.done" "the Vulkan loader"; ld=$(libpath "$CACHE/loader"); }
  lvp=$(system_lvp)
  if [ -z "$lvp" ]; then
    lvp=$CACHE/mesa22/lvp_icd.json; need "$lvp" "lavapipe (Mesa 22)"; ld=$(libpath "$CACHE/mesa22")${ld:+:$ld}
  fi
  icd "$lvp"
  [ -z "$ld" ] || exports "LD_LIBRARY_PATH=$ld${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
}

env_of() {
  case ${1:-} in
    lavapipe) lavapipe_env ;;
    lavapipe4) lavapipe_env; exports LP_NATIVE_VECTOR_WIDTH=128 ;;
    swiftshader)
      need "$CACHE/chromium/.done" swiftshader
      icd "$CACHE/chromium/usr/lib/chromium/vk_swiftshader_icd.json"
      system_loader || { need "$CACHE/loader/.done" "the Vulkan loader"
        exports "LD_LIBRARY_PATH=$(libpath "$CACHE/loader")${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"; } ;;
    validation)
      need "$CACHE/layers/VkLayer_khronos_validation.json" "the validation layer"
      lavapipe_env; exports "VK_LAYER_PATH=$CACHE/layers" VK_INSTANCE_LAYERS=VK_LAYER_KHRONOS_validation ;;
    mesa25)
      need "$CACHE/mesa25/lvp_icd.json" mesa25
      icd "$CACHE/mesa25/lvp_icd.json"
      exports "LD_LIBRARY_PATH=$(libpath "$CACHE/mesa25")${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}" ;;
    *) die "unknown driver '${1:-}' (one of: $NAMES)" ;;
  esac
}

case ${1:-} in
  fetch) shift; for n in "$@"; do [[ " $NAMES " == *" $n "* ]] || die "unknown driver '$n'"; done; fetch "$@" ;;
  env) env_of "${2:-}" ;;
  run)
    name=${2:-}; [ "${3:-}" = "--" ] && [ $# -ge 4 ] || die "usage: scripts/drivers.sh run NAME -- CMD..."
    envs=$(env_of "$name"); eval "$envs"; shift 3; exec "$@" ;;
  list) tr ' ' '\n' <<< "$NAMES" ;;
  *) die "usage: scripts/drivers.sh fetch [NAME...] | env NAME | run NAME -- CMD... | list" ;;
esac
