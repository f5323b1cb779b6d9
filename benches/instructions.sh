#!/usr/bin/env bash
# Host instructions per run of criterion rows, counted by callgrind: a comparison of two
# builds that machine noise cannot move (on a shared machine two rounds of one binary can
# differ by 30%, far more than a 3% bar). For one warm run of an assembly program, in seconds
# rather than minutes, see benches/steady.sh. Each bench binary runs under callgrind with
# collection on only inside criterion's `Bencher::iter` and one dump per emulator run
# (`run_observed`); the first, cold run (compilation, caches) is dropped and the median of
# the rest is reported.
#
# Usage: benches/instructions.sh OLD_BENCH NEW_BENCH ROW...
#   OLD_BENCH, NEW_BENCH: criterion bench executables (target/release/deps/workloads-*,
#   classes-*), built by `cargo bench --no-run` in each tree; ROW: an exact row id such as
#   scheduler/jit. Each row costs about a minute per side (the bench builds its programs
#   under callgrind too). PROFILE_SECS (default 6) sets criterion's --profile-time.
set -euo pipefail
if [ $# -lt 3 ]; then
  sed -n '2,14p' "$0" | sed 's/^# \{0,1\}//'
  exit 2
fi
old=$(realpath "$1") new=$(realpath "$2")
shift 2
for bin in "$old" "$new"; do
  [ -x "$bin" ] || { echo "instructions.sh: $bin is not an executable bench binary" >&2; exit 2; }
done
command -v valgrind > /dev/null || { echo "instructions.sh: valgrind is not installed" >&2; exit 2; }
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

# Median host instructions of the warm runs of one row, from the dumps in directory $1.
median_of() {
  local sums
  sums=$(for f in "$1"/cg.out.*; do
    n=${f##*.}
    s=$(awk '/^summary:/ {print $2; exit}' "$f")
    [ "${s:-0}" -gt 1000 ] && echo "$n $s"
  done | sort -n | awk 'NR > 1 {print $2}' | sort -n)
  [ -n "$sums" ] || { echo 0; return; }
  echo "$sums" | awk '{v[NR] = $1} END {print (NR % 2) ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2}'
}

count() {
  local bin=$1 row=$2 dir=$3
  mkdir -p "$dir"
  # Run from the bench's crate root when it is under target/, as cargo bench would.
  (cd "$(dirname "$bin")/../../.." &&
    valgrind --tool=callgrind --toggle-collect='*Bencher*iter*' \
      --dump-before='*gpu16_machine::run::run_observed*' \
      --callgrind-out-file="$dir/cg.out" "$bin" --bench \
      --profile-time "${PROFILE_SECS:-6}" "^$row\$" > "$dir/log" 2>&1) ||
    { echo "instructions.sh: $bin failed on $row (log: $dir/log)" >&2; return 1; }
  median_of "$dir"
}

status=0
printf '%-40s %16s %16s %8s\n' row old new ratio
for row in "$@"; do
  tag=${row//\//_}
  a=$(count "$old" "$row" "$work/old-$tag")
  b=$(count "$new" "$row" "$work/new-$tag")
  if [ "$a" = 0 ] || [ "$b" = 0 ]; then
    printf '%-40s %s\n' "$row" "no warm run (unknown row, or raise PROFILE_SECS)"
    status=1
  else
    awk -v r="$row" -v a="$a" -v b="$b" 'BEGIN {printf "%-40s %16d %16d %8.3f\n", r, a, b, b / a}'
  fi
done
exit $status
