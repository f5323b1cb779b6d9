#!/bin/sh
# bench.sh NAME [REPEATS]: wall time of the Verilator model vs gpu16 on progs/NAME.bin
H=$(cd "$(dirname "$0")" && pwd); N=$1; R=${2:-3}
GPU16=${GPU16:-$(dirname "$0")/../../target/release/gpu16}
python3 -c "
import sys; b=open('$H/progs/$N.bin','rb').read()
for i in range(64):
    fr=b[32*i:32*i+32] if 32*i<len(b) else bytes(32); print(fr[::-1].hex())" > /tmp/bench_$N.tm.hex
uptime
for i in $(seq $R); do
  /usr/bin/time -f "rtl   %e s wall %U s user" ${RTL:-/work/rtl}/obj_patched/Vtb_top +tm=/tmp/bench_$N.tm.hex +maxcycles=5000000 | grep CYCLES
done
for be in auto interp jit; do for i in $(seq $R); do
  /usr/bin/time -f "gpu16-$be %e s wall %U s user" $GPU16 run $H/progs/$N.bin --dialect mcst --timing mcst-rtl --backend $be -q >/dev/null
done; done
uptime
