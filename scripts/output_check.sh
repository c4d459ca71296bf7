#!/usr/bin/env bash
# Writes every output of every bench, in timing and data mode, and of the
# replay of each recorded stream, into one folder, so that two builds can be
# compared byte for byte (a refactoring must leave them all identical):
#
#   scripts/output_check.sh build/kernbench /tmp/out-before
#   ... change, rebuild ...
#   scripts/output_check.sh build/kernbench /tmp/out-after
#   diff -r /tmp/out-before /tmp/out-after && echo identical
#
# Outputs: op log, statistics, run JSON, Chrome trace, VCD, the recorded
# command stream and the printed report (stdout). The parameters are small so
# that the whole set runs in about a minute; mesh benches run on a 1x2 mesh.
set -euo pipefail
if [ $# -ne 2 ]; then
  echo "usage: $0 KERNBENCH OUTDIR" >&2
  exit 2
fi
kb="$(realpath "$1")" out="$2"
mkdir -p "$out"
cd "$out"  # relative paths: the messages that name a file are the same in any folder

# name|bench|parameters (one word each, passed as --param)
cases=(
  "gemm-composite|gemm-composite|m=128 n=128 k=256"
  "gemm-tiled|gemm-tiled-single-op|m=128 n=128 k=128"
  "gemm-async|gemm-async-vs-composite|m=128 n=128 ks=256,512"
  "gqa-decode|gqa-decode|q_heads=8 kv_heads=2 head_dim=64 context=512"
  "softmax-merge|softmax-merge|heads=4 head_dim=64 kv_tile=64 tiles=3"
  "allreduce-lrab|allreduce|sizes=65536 algos=lrab chunk_elems=4096"
  "allreduce-ring|allreduce|sizes=65536 algos=ring chunk_elems=4096"
  "long-ctx|gqa-long-ctx|contexts=8192 cases=cube_sp_pe_sp"
)
mesh_set=(--set topology.mesh.h=1 --set topology.mesh.w=2)

for c in "${cases[@]}"; do
  IFS='|' read -r name bench params <<<"$c"
  args=()
  for p in $params; do args+=(--param "$p"); done
  extra=()
  case "$bench" in allreduce|gqa-long-ctx) extra=("${mesh_set[@]}") ;; esac
  for mode in timing data; do
    [ "$mode" = data ] && [ "$bench" = gqa-long-ctx ] && continue  # no data mode at mesh scale
    d="$name.$mode"
    mflag=()
    [ "$mode" = data ] && mflag=(--data)
    rec=()
    case "$bench" in allreduce|gqa-long-ctx) ;; *) rec=(--record "$d.stream") ;; esac
    "$kb" run "$bench" "${args[@]}" "${extra[@]}" "${mflag[@]}" --oplog "$d.oplog.csv" \
      --stats "$d.stats.json" --json "$d.run.json" --trace "$d.trace.json" --vcd "$d.vcd" "${rec[@]}" \
      >"$d.stdout" 2>"$d.stderr" || echo "exit $?" >>"$d.stderr"
    if [ ${#rec[@]} -gt 0 ] && [ -s "$d.stream" ]; then
      "$kb" replay "$d.stream" "${mflag[@]}" --oplog "$d.replay.oplog.csv" --json "$d.replay.json" \
        >"$d.replay.stdout" 2>"$d.replay.stderr" || echo "exit $?" >>"$d.replay.stderr"
    fi
  done
done
# The VCD header's date differs run to run.
sed -i -E '2{/^ +[A-Z][a-z]{2} [0-9]{2}, [0-9]{4} +[0-9:]+$/d}' ./*.vcd
echo "$(ls | wc -l) files in $out"
