#!/usr/bin/env bash
# The long fuzzing run (docs/fuzzing.md): writes the seed corpora, builds every target with
# cargo-fuzz (nightly, libFuzzer, release with debug assertions and overflow checks, no
# sanitizer), runs each for RUNS inputs (default 1 000 000) with a per-input timeout of 2 s,
# JOBS targets at a time (default 2), and prints a table: inputs run, seconds, inputs per
# second, crashes (panics, timeouts, out-of-memory), corpus size at the end.
# Usage: fuzz/long_run.sh [target ...]   (default: every target)
# Needs: rustup toolchain nightly, `cargo install cargo-fuzz`.
set -euo pipefail
cd "$(dirname "$0")/.."
RUNS="${RUNS:-1000000}"
JOBS="${JOBS:-2}"
MAX_TIME="${MAX_TIME:-3600}"
FLAGS=(-a -s none)
LOGS=fuzz/logs
mkdir -p "$LOGS"

targets=("$@")
if [ ${#targets[@]} -eq 0 ]; then
  mapfile -t targets < <(cd fuzz/fuzz_targets && ls ./*.rs | sed 's|^\./||; s|\.rs$||')
fi

cargo run --quiet -p continuum-fuzz-targets --example write_corpus -- fuzz/corpus
cargo +nightly fuzz build "${FLAGS[@]}"
# The built binaries run directly, so that an edit elsewhere in the tree during the run does
# not rebuild them halfway.
BIN="fuzz/target/$(rustc +nightly -vV | sed -n 's/^host: //p')/release"

run_one() {
  local t="$1"
  local start end
  start=$(date +%s)
  set +e
  mkdir -p "fuzz/artifacts/$t"
  # `timeout`: without a sanitizer, libFuzzer's own timeout handler can hang after its report.
  TMPDIR="${TMPDIR:-/dev/shm}" timeout -s KILL $((MAX_TIME + 300)) \
    "$BIN/$t" -artifact_prefix="fuzz/artifacts/$t/" "fuzz/corpus/$t" \
    -runs="$RUNS" -timeout=2 -rss_limit_mb=2048 -max_total_time="$MAX_TIME" \
    -print_final_stats=1 >"$LOGS/$t.log" 2>&1
  echo $? >"$LOGS/$t.rc"
  set -e
  end=$(date +%s)
  echo $((end - start)) >"$LOGS/$t.wall"
}

running=0
for t in "${targets[@]}"; do
  run_one "$t" &
  running=$((running + 1))
  if [ "$running" -ge "$JOBS" ]; then
    wait -n || true
    running=$((running - 1))
  fi
done
wait

printf '| %-15s | %10s | %8s | %8s | %7s | %7s |\n' target inputs seconds 'inputs/s' crashes corpus
printf '|%s|%s|%s|%s|%s|%s|\n' ----------------- ------------ ---------- ---------- --------- ---------
for t in "${targets[@]}"; do
  log="$LOGS/$t.log"
  execs=$(grep -o 'stat::number_of_executed_units: *[0-9]*' "$log" | grep -o '[0-9]*$' || echo 0)
  secs=$(grep -o 'Done [0-9]* runs in [0-9]* second' "$log" | awk '{print $5}' || true)
  secs="${secs:-$(cat "$LOGS/$t.wall")}"
  rate=$(awk -v e="$execs" -v s="$secs" 'BEGIN { printf "%d", (s > 0 ? e / s : e) }')
  crashes=$(ls "fuzz/artifacts/$t" 2>/dev/null | grep -cE '^(crash|timeout|oom|leak)-' || true)
  [ "$(cat "$LOGS/$t.rc")" = 0 ] || crashes="${crashes} (rc $(cat "$LOGS/$t.rc"))"
  corpus=$(ls "fuzz/corpus/$t" | wc -l)
  printf '| %-15s | %10s | %8s | %8s | %7s | %7s |\n' "$t" "$execs" "$secs" "$rate" "$crashes" "$corpus"
done
