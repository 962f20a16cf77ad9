#!/usr/bin/env bash
# Sparse PCA on colon cancer (paper Table "sparse PCA" and "initialisation"): for each rank, loss
# and start (PCA = solver.init "model", random = "gaussian"), the explained variance, the sparsity
# of Z, the MM iterations, the time and the peak memory (when /usr/bin/time exists), as one
# Markdown table on stdout.
#   tools/experiments/spca_colon.sh [RANKS...]      (default: 50 100 200)
# Environment: LOSSES (default "l1 leaky-mcp"), TIME_LIMIT seconds per run (default 0 = none),
# SDPRL (default build/bin/sdprl).
set -euo pipefail
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
sdprl=${SDPRL:-$root/build/bin/sdprl}
ranks=("$@"); [ ${#ranks[@]} -gt 0 ] || ranks=(50 100 200)
losses=${LOSSES:-"l1 leaky-mcp"}
work=$(mktemp -d); trap 'rm -rf "$work"' EXIT
timer=(); [ -x /usr/bin/time ] && timer=(/usr/bin/time -f "%M" -o "$work/peak_kb")
echo "| r | loss | start | explained variance | sparsity | MM iterations | time (s) | peak memory (MB) | status |"
echo "|---|---|---|---|---|---|---|---|---|"
for r in "${ranks[@]}"; do
  for loss in $losses; do
    for init in model gaussian; do
      out=$("${timer[@]}" "$sdprl" run "$root/models/spca_colon.toml" --quiet --out "$work/out" --set solver.rank="$r" \
              --set loss.type="$loss" --set solver.init="$init" --set solver.time_limit="${TIME_LIMIT:-0}")
      get() { grep "^$1 = " <<<"$out" | sed "s/^$1 = //; s/ s$//"; }
      start=$([ "$init" = model ] && echo PCA || echo random)
      peak=-; [ -s "$work/peak_kb" ] && peak=$(( $(tail -n 1 "$work/peak_kb") / 1024 ))
      echo "| $r | $loss | $start | $(get explained_variance) | $(get sparsity) | $(get mm_iterations) | $(get time) | $peak | $(get status) |"
    done
  done
done
