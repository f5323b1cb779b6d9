#!/usr/bin/env bash
# A long differential campaign of `gpu16 fuzz`, and its tally per engine: the way to the
# "10^6 generated programs per engine" that issue 30 asks for, resumable and counted.
#
# Usage:
#   fuzz/campaign.sh run GPU16 FIRST_SEED [--steps N] [--count C] [--first-step K] [--log FILE]
#                          [--out DIR] [--engines E1,E2,...]
#   fuzz/campaign.sh tally [--log FILE]
#
# `run` holds each engine to the interpreter in turn, C programs a step (default 2,000),
# each step on the next C seeds, for N steps (default: until stopped). The rotation covers
# every engine twice in ten steps, the stream (`scheduler`) and `atomics` profiles and the
# MCST dialect (on `jit` and on `auto`); each case draws bank conflicts on or off, the issue
# policy and `auto`'s hot thresholds itself (an MCST case draws its timing).
# It appends one line a step to the log (default fuzz-campaign.log), with the SHA-256 of
# the binary, so that a tally counts each code version apart. It stops at the first step
# that does not agree: status 1 for a divergence (the shrunk reproducer is in DIR, by
# default fuzz-campaign-repro beside the log), 2 for a step that could not compare. Start
# step K of the rotation with `--first-step K`; a run resumed from the log's next seed and
# step covers no seed twice. `--engines` (of lockstep, percore, adaptive, auto, mcst) runs
# only those engines' steps of the rotation, for an engine whose count is behind; a step
# keeps its number in the rotation, and skipped steps take no seeds.
#
# Stopping the script (SIGTERM, SIGINT) or a step's `gpu16 fuzz` (SIGTERM, SIGINT) stops
# the run with status 143 or 130 without logging the step in flight.
#
# `tally` prints, per binary and engine, the programs that agreed and the seed ranges run.
set -euo pipefail

usage() {
  sed -n '5,8p' "$0" | sed 's/^# \{0,1\}//' >&2
  exit 2
}
die() {
  echo "campaign.sh: $*" >&2
  exit 2
}
number() { [[ $2 =~ ^[0-9]{1,15}$ ]] || die "$1 must be a whole number below 10^15, not '$2'"; }

# The rotation: engine label, then `gpu16 fuzz` arguments.
rotation=(
  "lockstep|--backends interp jit --jit-engine lockstep"
  "percore|--backends interp jit --jit-engine percore"
  "adaptive|--backends interp jit --jit-engine adaptive"
  "auto|--backends interp auto"
  "adaptive|--backends interp jit --jit-engine adaptive --profile atomics"
  "auto|--backends interp auto --profile scheduler"
  "mcst|--backends interp jit --dialect mcst"
  "percore|--backends interp jit --jit-engine percore --profile atomics"
  "lockstep|--backends interp jit --jit-engine lockstep --profile scheduler"
  "mcst|--backends interp auto --dialect mcst"
)

[ $# -ge 1 ] || usage
cmd=$1
shift
log=fuzz-campaign.log
case $cmd in
run)
  [ $# -ge 2 ] || usage
  bin=$1 seed=$2
  shift 2
  number "FIRST_SEED" "$seed"
  steps=-1 count=2000 first=0 repro= only=
  while [ $# -gt 0 ]; do
    [ $# -ge 2 ] || die "$1 needs a value"
    case $1 in
    --steps) number "--steps" "$2"; steps=$2 ;;
    --count) number "--count" "$2"; count=$2 ;;
    --first-step) number "--first-step" "$2"; first=$2 ;;
    --log) log=$2 ;;
    --out) repro=$2 ;;
    --engines) [ -n "$2" ] || die "--engines names no engine"; only=$2 ;;
    *) die "unknown option '$1'" ;;
    esac
    shift 2
  done
  [ "$count" -ge 1 ] && [ "$count" -le 1000000 ] || die "--count must be 1 to 1,000,000"
  # The engines to run: every label of the rotation unless --engines names some.
  labels=" "
  for entry in "${rotation[@]}"; do
    [[ $labels == *" ${entry%%|*} "* ]] || labels+="${entry%%|*} "
  done
  wanted=$labels
  if [ -n "$only" ]; then
    # Split on commas only: a name is compared as written, never expanded as a glob.
    IFS=, read -ra names <<< "$only"
    wanted=" "
    for e in "${names[@]}"; do
      [ -n "$e" ] || continue
      [[ $e =~ ^[a-z]+$ && $labels == *" $e "* ]] ||
        die "--engines: no engine '$e' in the rotation (${labels:1:-1})"
      wanted+="$e "
    done
    [ "$wanted" != " " ] || die "--engines names no engine"
  fi
  [ -x "$bin" ] || die "$bin is not an executable file"
  [ ! -e "$log" ] || [ -f "$log" ] || die "$log exists and is not a file"
  [ -d "$(dirname "$log")" ] || die "no directory for the log $log"
  touch "$log" 2>/dev/null || die "cannot write the log $log"
  hash=$(sha256sum "$bin" | cut -c1-12)
  [ -n "$repro" ] || repro=$(dirname "$log")/fuzz-campaign-repro
  [ ! -e "$repro" ] || [ -d "$repro" ] || die "--out $repro exists and is not a directory"
  step=$first
  out=$(mktemp) || die "cannot make a temporary file"
  child=
  # Stopped (SIGTERM or SIGINT to the script): the step in flight is stopped too and not
  # logged, so that a tally's "not" column counts only steps that failed.
  stop() {
    [ -z "$child" ] || { kill "$child" 2>/dev/null; wait "$child" 2>/dev/null; }
    rm -f "$out"
    echo "campaign.sh: stopped during step $step (seed $seed), which is not logged" >&2
    exit "$1"
  }
  trap 'stop 143' TERM
  trap 'stop 130' INT
  trap 'rm -f "$out"' EXIT
  while [ "$steps" -ne 0 ]; do
    IFS='|' read -r engine args <<< "${rotation[$((step % ${#rotation[@]}))]}"
    if [[ $wanted != *" $engine "* ]]; then
      step=$((step + 1))
      continue
    fi
    set +e
    # In the background and waited for, so that a signal to the script is handled at once.
    # shellcheck disable=SC2086 # the rotation's arguments are words
    nice -n 19 "$bin" fuzz --count "$count" --seed "$seed" --jobs 1 --quiet --json \
      --out "$repro" $args > "$out" 2>&1 &
    child=$!
    wait "$child"
    rc=$?
    child=
    set -e
    case $rc in
    0) verdict=agree ;;
    1) verdict=diverge ;;
    # The step itself was stopped from outside (SIGTERM or SIGINT to `gpu16 fuzz`): not
    # logged either. Any other signal (a crash, the OOM killer) is an error.
    130 | 143)
      echo "campaign.sh: step $step (seed $seed) was stopped by a signal; not logged" >&2
      exit "$rc"
      ;;
    *) verdict=error ;;
    esac
    printf '%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\n' "$(date -u +%FT%TZ)" "$hash" "$step" "$seed" \
      "$count" "$engine" "$verdict" "$args" >> "$log" || die "cannot write the log $log"
    if [ "$rc" -ne 0 ]; then
      echo "campaign.sh: step $step (seed $seed, $engine: $args) ended $verdict:" >&2
      tail -5 "$out" >&2
      [ "$rc" -eq 1 ] && echo "campaign.sh: reproducer in $repro" >&2
      exit $((rc == 1 ? 1 : 2))
    fi
    seed=$((seed + count))
    step=$((step + 1))
    steps=$((steps - 1))
  done
  ;;
tally)
  while [ $# -gt 0 ]; do
    [ $# -ge 2 ] || die "$1 needs a value"
    case $1 in
    --log) log=$2 ;;
    *) die "unknown option '$1'" ;;
    esac
    shift 2
  done
  [ -f "$log" ] || die "no log at $log"
  awk -F'\t' '
    NF < 8 { next }
    {
      key = $2 SUBSEP $6
      if ($7 == "agree") { agreed[key] += $5; lo = $4; hi = $4 + $5 - 1
        if (!(key in first) || lo < first[key]) first[key] = lo
        if (!(key in last) || hi > last[key]) last[key] = hi }
      else bad[key]++
      seen[$2] = 1; engines[$6] = 1
    }
    END {
      printf "%-14s %-9s %12s %9s  %s\n", "binary", "engine", "agreed", "not", "seeds"
      for (h in seen) for (e in engines) {
        key = h SUBSEP e
        if (!(key in agreed) && !(key in bad)) continue
        printf "%-14s %-9s %12d %9d  %s..%s\n", h, e, agreed[key], bad[key], first[key], last[key]
      }
    }' "$log" | { read -r head; echo "$head"; sort; }
  ;;
*) usage ;;
esac
