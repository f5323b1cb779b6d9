#!/usr/bin/env python3
"""compare.py PROG... : run each progs/NAME.bin (+ progs/NAME.mem.bin) on the RTL (Verilator) and on gpu16
(--dialect mcst --timing mcst-rtl --json -q) and compare cycles, registers and memory."""
import sys, os, json, subprocess
H = os.path.dirname(os.path.abspath(__file__))
GPU16 = os.environ.get('GPU16', os.path.join(os.path.dirname(os.path.abspath(__file__)), '../../target/release/gpu16'))
obj = os.environ.get('RTL_OBJ', 'patched')
def run_gpu16(b, m):
    a = [GPU16, 'run', b, '--dialect', 'mcst', '--timing', 'mcst-rtl', '--json', '-q', '--max-cycles', os.environ.get('CAP', '3000000'), '--timeout', '120'] + (['--mem', m] if m else [])
    p = subprocess.run(a, capture_output=True, text=True)
    try: return json.loads(p.stdout), p
    except Exception: return None, p
def run_rtl(b, m, cap):
    a = ['python3', H + '/run_rtl.py', b] + ([m] if m else []) + ['--obj', obj, '--maxcycles', str(cap)]
    return json.loads(subprocess.run(a, capture_output=True, text=True).stdout)
rows = []
for name in sys.argv[1:]:
    b = os.path.join(H, 'progs', name + '.bin'); m = os.path.join(H, 'progs', name + '.mem.bin')
    m = m if os.path.exists(m) else None
    g, p = run_gpu16(b, m)
    r = run_rtl(b, m, int(os.environ.get('CAP', '3000000')))
    if g is None:
        print(f'{name}: gpu16 failed rc={p.returncode}: {p.stderr.strip()[:300]}'); continue
    gregs = g['registers']; gmem = g['memory'].lower()
    regs_eq = gregs == r['registers']; mem_eq = gmem == r['memory']
    ok = regs_eq and mem_eq and g['cycles'] == r['cycles']
    print(f"{name:22s} rtl={r['cycles']}{'(cap)' if r['capped'] else ''} gpu16={g['cycles']} regs_eq={regs_eq} mem_eq={mem_eq} {'OK' if ok else 'DIFF'}")
    if not regs_eq:
        for c in range(16):
            if gregs[c] != r['registers'][c]:
                print(f'   core {c:2d} rtl  ', ' '.join('%02x' % x for x in r['registers'][c]))
                print(f'   core {c:2d} gpu16', ' '.join('%02x' % x for x in gregs[c]))
    if not mem_eq:
        for a in range(4096):
            if gmem[2*a:2*a+2] != r['memory'][2*a:2*a+2]:
                print(f'   M[{a:03x}] rtl={r["memory"][2*a:2*a+2]} gpu16={gmem[2*a:2*a+2]}')
