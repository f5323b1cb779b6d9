#!/usr/bin/env python3
"""run_rtl.py PROG.bin [MEM.bin] [--obj patched|src] [--maxcycles N] -> JSON {cycles, registers, memory} like gpu16."""
import sys, os, subprocess, json, tempfile, argparse
ap = argparse.ArgumentParser(); ap.add_argument('prog'); ap.add_argument('mem', nargs='?')
ap.add_argument('--obj', default='patched'); ap.add_argument('--maxcycles', type=int, default=2000000)
a = ap.parse_args()
b = open(a.prog, 'rb').read()
assert len(b) % 32 == 0 and len(b) <= 64*32
td = tempfile.mkdtemp(prefix='rtl')
with open(td + '/tm.hex', 'w') as f:
    for i in range(64):
        fr = b[32*i:32*i+32] if 32*i < len(b) else bytes(32)
        f.write(fr[::-1].hex() + '\n')
args = [os.environ.get('RTL', '/work/rtl') + '/obj_%s/Vtb_top' % a.obj, '+tm=' + td + '/tm.hex', '+maxcycles=%d' % a.maxcycles]
if a.mem:
    m = open(a.mem, 'rb').read().ljust(4096, b'\0')
    with open(td + '/mem.hex', 'w') as f:
        f.write('\n'.join('%02x' % x for x in m) + '\n')
    args.append('+mem=' + td + '/mem.hex')
out = subprocess.run(args, capture_output=True, text=True).stdout
res = {'cycles': None, 'capped': False, 'registers': [], 'memory': ''}
mem = []
for line in out.splitlines():
    t = line.split()
    if not t: continue
    if t[0] == 'CYCLES': res['cycles'] = int(t[1]); res['capped'] = '(cap)' in line
    elif t[0] == 'REGS': res['registers'].append([int(x, 16) for x in t[2:]])
    elif t[0] == 'MEM': mem += t[2:]
res['memory'] = ''.join(mem)
print(json.dumps(res))
