#!/usr/bin/env bash
# Host instructions of one warm run of each program, in two trees: a comparison machine
# noise cannot move, in seconds a row. Builds `benches/steady.rs` (this checkout's copy,
# the same probe for both sides) against each tree's crates as a package of its own under
# TREE/target/steady-probe (neither tree's files change), then runs it under callgrind
# with collection only inside its measured run.
#
# Usage: benches/steady.sh OLD_TREE NEW_TREE BACKEND PROGRAM.s... [-- PROBE_FLAGS]
#   OLD_TREE, NEW_TREE: checkouts of this workspace (e.g. a `git worktree` of 6d9c98e and
#   this one); BACKEND: interp, jit or auto; PROBE_FLAGS: passed to each probe run
#   (`--mcst` for the MCST dialect under mcst-rtl timing, `--mem FILE`).
set -euo pipefail
if [ $# -lt 4 ]; then
  sed -n '2,11p' "$0" | sed 's/^# \{0,1\}//'
  exit 2
fi
here=$(cd "$(dirname "$0")" && pwd)
old=$(realpath "$1") new=$(realpath "$2") backend=$3
shift 3
programs=()
while [ $# -gt 0 ] && [ "$1" != "--" ]; do programs+=("$(realpath "$1")"); shift; done
[ $# -gt 0 ] && shift
flags=("$@")
for tree in "$old" "$new"; do
  for crate in machine jit interp asm; do
    [ -f "$tree/$crate/Cargo.toml" ] ||
      { echo "steady.sh: $tree has no $crate/Cargo.toml: not a gpu16 checkout" >&2; exit 2; }
  done
done
command -v valgrind > /dev/null || { echo "steady.sh: valgrind is not installed" >&2; exit 2; }
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

# Build the probe against tree $1; print the executable's path. The package sits inside the
# tree's target/ so that the tree's cargo configuration applies, declares a workspace of its
# own, starts from the tree's lock file and shares the tree's build directory and release
# profile, so the tree's dependencies are not built again.
build() {
  local tree=$1 pkg=$1/target/steady-probe
  mkdir -p "$pkg/src"
  cat > "$pkg/Cargo.toml" <<EOF
[package]
name = "steady-probe"
version = "0.0.0"
edition = "2021"
publish = false

[dependencies]
gpu16-machine = { path = "$tree/machine" }
gpu16-jit = { path = "$tree/jit" }
gpu16-interp = { path = "$tree/interp" }
gpu16-asm = { path = "$tree/asm" }

[profile.release]
debug = 1
codegen-units = 16

[workspace]
EOF
  cp "$here/steady.rs" "$pkg/src/main.rs"
  cp "$tree/Cargo.lock" "$pkg/Cargo.lock"
  CARGO_TARGET_DIR="$tree/target" cargo build --quiet --release \
    --manifest-path "$pkg/Cargo.toml" >&2 ||
    { echo "steady.sh: the probe does not build against $tree" >&2; return 1; }
  echo "$tree/target/release/steady-probe"
}

# Host instructions of the measured run of program $2 on probe $1.
count() {
  local out=$work/cg.out
  rm -f "$out"
  valgrind --tool=callgrind --toggle-collect='*measured*' --callgrind-out-file="$out" \
    "$1" "$2" "$backend" "${flags[@]}" > "$work/log" 2>&1 ||
    { echo "steady.sh: $1 failed on $2 (log below)" >&2; cat "$work/log" >&2; return 1; }
  awk '/^summary:/ {print $2; exit}' "$out"
}

old_probe=$(build "$old")
new_probe=$(build "$new")
printf '%-40s %14s %14s %8s\n' "program ($backend)" old new ratio
for p in "${programs[@]}"; do
  a=$(count "$old_probe" "$p")
  b=$(count "$new_probe" "$p")
  awk -v r="$(basename "$p")" -v a="$a" -v b="$b" \
    'BEGIN {printf "%-40s %14.0f %14.0f %8.3f\n", r, a, b, (a > 0) ? b / a : 0}'
done
