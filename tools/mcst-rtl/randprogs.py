#!/usr/bin/env python3
"""randprogs.py SEED0 N : write progs/rand_<seed>.bin/.mem.bin, random mcst programs that avoid the RTL bugs
of mcst-dialect.md 6 (no fences (R10,R11), no div (R8), memory ops never adjacent (R6,R7,R12), no bnz within
3 slots after an ld (R2), R0 init only in one-IF groups (R3), forward bnz plus bounded countdown loops)."""
import sys, os, random, struct
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
D = os.path.join(os.path.dirname(os.path.abspath(__file__)), 'progs')
def cf(ifn, mask, nextcf=0, stop=0, r0vect=0, r0=()):
    r0 = list(r0)
    return struct.pack('<8H', ifn | (nextcf << 8) | (stop << 14), mask, r0vect, 0, 0, 0, 0, 0) + bytes(r0 + [0]*(16-len(r0)))
def gen_if(rng):
    code = []; last_ld = -10; last_mem = -10; bad = set(); fwd = []
    n = rng.randint(3, 16)
    ip = 0
    while ip < n:
        k = rng.random()
        mem_ok = ip - last_mem > 1
        if k < 0.12 * MEM and mem_ok:
            code.append(0xb000 | rng.randrange(16) << 8 | rng.randrange(16) << 4 | rng.randrange(16)); last_ld = ip; last_mem = ip
        elif k < 0.24 * MEM and mem_ok:
            code.append(0xd000 | rng.randrange(16) << 8 | rng.randrange(16) << 4 | rng.randrange(16)); last_mem = ip
        elif k < 0.24 * MEM + 0.10 and ip - last_ld > 3 and ip + 2 < 16:
            fwd.append(ip); code.append(0xe000 | rng.randrange(16) << 8)   # forward bnz, target set below
        elif k < 0.24 * MEM + 0.16 and ip + 3 < 16 and ip - last_ld > 3:
            # bounded countdown: set_const k, r7; sub r7,r6,r7 (r6 = 1); bnz r7 -> sub
            code += [0xc016, 0xc007 | rng.randint(1, 6) << 4, 0x2767, 0xe700 | (ip + 2) << 4]; bad |= {ip + 1, ip + 2, ip + 3}; ip += 3
        elif k < 0.24 * MEM + 0.31:
            code.append(0xc000 | rng.randrange(256) << 4 | rng.randrange(16))
        elif k < 0.24 * MEM + 0.34:
            code.append(0x0000)
        else:
            opc = rng.choice([1, 2, 3, 5, 6, 7, 8, 9, 10])
            code.append(opc << 12 | rng.randrange(16) << 8 | rng.randrange(16) << 4 | rng.randrange(16))
        ip += 1
    code = code[:16]
    for p in fwd:
        ts = [t for t in range(p + 1, 16) if t not in bad]
        code[p] |= rng.choice(ts) << 4
    if len(code) < 16 and rng.random() < 0.7: code.append(0xf000)
    return struct.pack('<16H', *(code + [0]*(16-len(code))))
def gen(seed):
    # endless loops are impossible: bnz targets never land inside a countdown loop
    rng = random.Random(seed)
    frames = []
    while True:
        ifn = rng.choice([1, 1, 1, 2])
        if len(frames) + 1 + ifn + 1 > rng.randint(6, 40): break
        mask = rng.choice([1 << rng.randrange(16), rng.randrange(1, 65536), 0xffff, rng.randrange(1, 256)])
        r0v = rng.randrange(65536) if ifn == 1 and rng.random() < 0.5 else 0
        frames.append(cf(ifn, mask, r0vect=r0v, r0=[rng.randrange(256) for _ in range(16)]))
        for _ in range(ifn): frames.append(gen_if(rng))
    if not frames:
        frames.append(cf(1, 1)); frames.append(gen_if(rng))
    frames.append(cf(0, 0, nextcf=len(frames), stop=1))
    open(f'{D}/rand_{seed}.bin', 'wb').write(b''.join(frames))
    open(f'{D}/rand_{seed}.mem.bin', 'wb').write(bytes(rng.randrange(256) for _ in range(4096)))
s0, n = int(sys.argv[1]), int(sys.argv[2])
MEM = float(sys.argv[3]) if len(sys.argv) > 3 else 1.0   # memory-op weight multiplier
for s in range(s0, s0 + n): gen(s); print(f'rand_{s}')
