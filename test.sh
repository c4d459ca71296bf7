#!/usr/bin/env bash
# Installs what is missing, builds, then runs every test (CTest; one process
# per test). Extra arguments go to ctest (e.g. -R Config).
set -euo pipefail
cd "$(dirname "$0")"
scripts/setup.sh
exec ctest --test-dir build --output-on-failure -j "$(nproc)" "$@"
