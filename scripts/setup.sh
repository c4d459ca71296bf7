#!/usr/bin/env bash
# Shared set-up of ./run.sh and ./test.sh: installs missing Debian packages,
# configures (once) and builds incrementally into build/.
set -euo pipefail
top="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"

# gtkwave: the VCD-consumer test (vcd2fst, fst2vcd). parallel: GNU parallel
# runs the jobs of `kernbench sweep --emit-jobs` in test_sweep_jobs.
packages=(g++ make cmake pkg-config ccache libsystemc-dev libyaml-cpp-dev libgtest-dev
          nlohmann-json3-dev libcli11-dev python3-matplotlib gtkwave parallel)
# Node.js and npm: the trace-consumer test (Chrome DevTools trace engine).
# A machine that has both already keeps them (NodeSource's nodejs bundles
# npm and conflicts with Debian's); otherwise Debian's.
if ! command -v node >/dev/null 2>&1 || ! command -v npm >/dev/null 2>&1; then
  packages+=(nodejs npm)
fi
missing=()
for p in "${packages[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
if [ ${#missing[@]} -gt 0 ]; then
  echo "setup: installing ${missing[*]}" >&2
  sudo_cmd=()
  [ "$(id -u)" -eq 0 ] || sudo_cmd=(sudo)
  export DEBIAN_FRONTEND=noninteractive
  "${sudo_cmd[@]}" apt-get update -q >&2
  "${sudo_cmd[@]}" apt-get install -y -q --no-install-recommends "${missing[@]}" >&2
fi

# The trace consumer's npm packages, as pinned by its package-lock.json:
# installed when missing or older than the lock file.
consumer="$top/tests/trace_consumer"
if [ ! -f "$consumer/node_modules/.package-lock.json" ] ||
   [ "$consumer/package-lock.json" -nt "$consumer/node_modules/.package-lock.json" ]; then
  echo "setup: npm ci in tests/trace_consumer" >&2
  (cd "$consumer" && npm ci --no-audit --no-fund >&2)
fi

build="$top/build"
if [ ! -f "$build/CMakeCache.txt" ]; then
  cmake -S "$top" -B "$build" -DCMAKE_BUILD_TYPE=RelWithDebInfo >&2
fi
cmake --build "$build" -j "$(nproc)" >&2
