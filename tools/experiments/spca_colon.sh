#!/usr/bin/env bash
# Sparse PCA on colon cancer (paper Table "sparse PCA" and "initialisation"): for each rank, loss
# and start (PCA = solver.init "model", random = "gaussian"), the final objective, the explained
# variance, the sparsity of Z, the MM iterations until the stopping rule and until the objective is
# within 1e-4 (relative) of the better of the two starts' final objectives, the times of both, and
# the peak memory (when /usr/bin/time exists), as one Markdown table on stdout.
#   tools/experiments/spca_colon.sh [RANKS...]      (default: 50 100 200)
# Environment: LOSSES (default "l1 leaky-mcp"), TIME_LIMIT seconds per run (default 0 = none),
# SDPRL (default build/bin/sdprl), KEEP (a directory: keep every run's output there), EXTRA
# (space-separated KEY=VALUE overrides for every run, e.g. EXTRA="solver.admm.c0=200" to give both
# starts the same ADMM tolerance schedule).
set -euo pipefail
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
sdprl=${SDPRL:-$root/build/bin/sdprl}
ranks=("$@"); [ ${#ranks[@]} -gt 0 ] || ranks=(50 100 200)
losses=${LOSSES:-"l1 leaky-mcp"}
work=$(mktemp -d); trap 'rm -rf "$work"' EXIT
runs=${KEEP:-$work}
mkdir -p "$runs"
timer=(); [ -x /usr/bin/time ] && timer=(/usr/bin/time -f "%M" -o "$work/peak_kb")
echo "| r | loss | start | objective | explained variance | sparsity | MM iterations | MM its to 1e-4 | time (s) | time to 1e-4 (s) | peak memory (MB) | status |"
echo "|---|---|---|---|---|---|---|---|---|---|---|---|"
get() { grep "^$1 = " "$2" | sed "s/^$1 = //; s/ s$//"; }
for r in "${ranks[@]}"; do
  for loss in $losses; do
    for init in model gaussian; do
      out=$runs/r$r-$loss-$init
      rm -f "$work/peak_kb"
      extra=(); for kv in ${EXTRA:-}; do extra+=(--set "$kv"); done
      "${timer[@]}" "$sdprl" run "$root/models/spca_colon.toml" --quiet --out "$out" --set solver.rank="$r" \
        --set loss.type="$loss" --set solver.init="$init" --set solver.time_limit="${TIME_LIMIT:-0}" \
        "${extra[@]}" > "$out.txt" || true
      peak=-; [ -s "$work/peak_kb" ] && peak=$(( $(tail -n 1 "$work/peak_kb") / 1024 ))
      echo "$peak" > "$out.peak"
    done
    # The target: within 1e-4 of the lower (better) final objective of the two starts.
    best=$(for init in model gaussian; do get objective "$runs/r$r-$loss-$init.txt"; done | sort -g | head -n 1)
    for init in model gaussian; do
      out=$runs/r$r-$loss-$init
      reach=$(awk -F, -v best="$best" 'NR > 1 && $3 <= best + 1e-4 * (best < 0 ? -best : best) { print $2 "|" $8; exit }' \
                "$out/trace.csv" 2>/dev/null || true)
      [ -n "$reach" ] || reach="-|-"
      start=$([ "$init" = model ] && echo PCA || echo random)
      echo "| $r | $loss | $start | $(get objective "$out.txt") | $(get explained_variance "$out.txt") | $(get sparsity "$out.txt") | $(get mm_iterations "$out.txt") | ${reach%|*} | $(get time "$out.txt") | ${reach#*|} | $(cat "$out.peak") | $(get status "$out.txt") |"
    done
  done
done
