#!/usr/bin/env bash
# Installs what is missing, builds, runs the default bench and prints its
# result. Extra arguments go to `kernbench run` (e.g. --oplog FILE).
set -euo pipefail
cd "$(dirname "$0")"
scripts/setup.sh
exec build/kernbench run gqa-decode "$@"
