#!/usr/bin/env bash
# Installs what tad needs on Debian 12 (as root, or with sudo) and builds it into build/.
# Safe to run again: apt skips installed packages and the build is incremental.
set -euo pipefail
cd "$(dirname "$0")/.."

packages=(cmake g++ make pkg-config libcjson-dev libcurl4-openssl-dev libgtest-dev python3 python3-dev python3-pip clang-format clang-tidy
          python3-setuptools python3-torch
          libfaiss-dev  # retrieval's index (docs/retrieval.md)
          cargo rustc swig lua5.4 liblua5.4-dev)  # the Rust and Lua bindings (docs/bindings.md)
missing=()
for p in "${packages[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
if [ ${#missing[@]} -gt 0 ]; then
  sudo_cmd=""
  [ "$(id -u)" -eq 0 ] || sudo_cmd="sudo"
  export DEBIAN_FRONTEND=noninteractive
  $sudo_cmd apt-get update -qq
  $sudo_cmd apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
fi

cmake -S . -B build -DCMAKE_BUILD_TYPE="${TAD_BUILD_TYPE:-RelWithDebInfo}" >/dev/null
cmake --build build -j"$(nproc)"
