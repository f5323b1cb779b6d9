#!/bin/sh
# usage: build.sh [patched|src]   (default patched = RTL with the R1 and R5 fixes)
set -e
H=$(cd "$(dirname "$0")" && pwd)
T=${1:-patched}
R=${RTL:-/work/rtl}/$T
O=${RTL:-/work/rtl}/obj_$T
verilator --cc --exe --build -j ${JOBS:-2} -O3 --x-assign fast --x-initial fast -Wno-fatal -Wno-lint -Wno-style \
  -MAKEFLAGS "OPT_FAST=${OPT_FAST:--O2}" --top-module tb_top -Mdir "$O" \
  -I"$R/Core/Modules" -I"$R/Scheduler" -I"$R/Memory" -I"$R/SharedInc" \
  "$H/tb_top.v" "$H/main.cpp" -o Vtb_top
echo "built $O/Vtb_top"
