#!/usr/bin/env bash
# Runs every libFuzzer harness of a KB_FUZZ build for a bounded number of
# executions, starting from the committed seed corpus (tests/fuzz/corpus).
# Any finding (crash, sanitizer report, uncaught exception, timeout, memory
# over the limit, leak) makes libFuzzer exit non-zero, and this script with
# it; the input is saved as BUILD/fuzz-artifacts-*.
#
#   scripts/ci_fuzz.sh [BUILD]        (default build-fuzz)
#
# KB_FUZZ_RUNS_<HARNESS> overrides a harness's execution count (CONFIG,
# STREAM, REPLAY, DESCRIPTOR, TENSOR_DESC, CLI_TEXT, TOPOLOGY, SWEEP_POINT,
# IPC_REPLAY). The counts are sized for about a minute each on a shared
# 2-core machine (config ~150, stream ~15,000, replay ~30 executions/s: each
# replay input is simulated in a forked child); -max_total_time caps a run
# at 150 s should the machine be slower. The three later harnesses are sized
# for about 35 s each and capped at 40 s (max_time below), to keep CI within
# its budget: measured on a 2-core machine that other work slowed up to 4
# times, topology ran 150 to 580, sweep_point 990 to 1,170 and ipc_replay 4
# to 8 executions/s (a forked child elaborates a mesh per input); on a busy
# machine the cap, not the count, ends them. New inputs go to
# BUILD/fuzz-corpus-<harness>, never into the committed corpus.
# The mutations follow KB_FUZZ_SEED (default 1), so a run is reproducible:
# the same tree explores the same inputs, in CI as here. KB_FUZZ_SEED=0
# draws a new seed (libFuzzer's time-based one) to explore further.
set -euo pipefail
top="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
build="${1:-$top/build-fuzz}"

declare -A runs=([config]="${KB_FUZZ_RUNS_CONFIG:-20000}"
                 [stream]="${KB_FUZZ_RUNS_STREAM:-500000}"
                 [replay]="${KB_FUZZ_RUNS_REPLAY:-2000}"
                 [descriptor]="${KB_FUZZ_RUNS_DESCRIPTOR:-500000}"
                 [tensor_desc]="${KB_FUZZ_RUNS_TENSOR_DESC:-500000}"
                 [cli_text]="${KB_FUZZ_RUNS_CLI_TEXT:-200000}"
                 [topology]="${KB_FUZZ_RUNS_TOPOLOGY:-12000}"
                 [sweep_point]="${KB_FUZZ_RUNS_SWEEP_POINT:-35000}"
                 [ipc_replay]="${KB_FUZZ_RUNS_IPC_REPLAY:-250}")
declare -A dict=([config]=config [stream]=stream [replay]=stream [topology]=topology [sweep_point]=sweep_point
                 [ipc_replay]=ipc_replay)
declare -A max_time=([topology]=40 [sweep_point]=40 [ipc_replay]=40)  # s; the others 150

for h in config stream replay descriptor tensor_desc cli_text topology sweep_point ipc_replay; do
  work="$build/fuzz-corpus-$h"
  mkdir -p "$work"
  t0=$(date +%s)
  echo "fuzz: $h, ${runs[$h]} executions" >&2
  # -max_len bounds mutated inputs (larger seeds are cut to it here; the
  # Fuzz.corpus_* tests run them whole).
  "$build/fuzz_$h" -seed="${KB_FUZZ_SEED:-1}" -runs="${runs[$h]}" -max_total_time="${max_time[$h]:-150}" -timeout=10 -rss_limit_mb=2048 \
      -max_len=8192 ${dict[$h]:+-dict="$top/tests/fuzz/${dict[$h]}.dict"} -print_final_stats=1 \
      -artifact_prefix="$build/fuzz-artifacts-$h-" "$work" "$top/tests/fuzz/corpus/$h"
  echo "fuzz: $h done in $(( $(date +%s) - t0 )) s" >&2
done
