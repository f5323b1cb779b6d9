#!/usr/bin/env python3
"""Build the test programs as raw task-memory images (.bin, 32-byte frames, LE 16-bit words)
and optional shared-memory images (.mem.bin, 4096 bytes) into progs/."""
import os, struct, re
D = os.path.join(os.path.dirname(os.path.abspath(__file__)), 'progs')
os.makedirs(D, exist_ok=True)

def cf(ifn, mask, fence=0, nextcf=0, stop=0, r0vect=0, r0=None):
    w = [ifn | (fence << 6) | (nextcf << 8) | (stop << 14), mask, r0vect] + [0]*5
    r0 = list(r0 or []); b = struct.pack("<8H", *w) + bytes(r0 + [0]*(16 - len(r0)))
    return b
def iff(words):
    words = list(words) + [0]*(16 - len(words))
    return struct.pack('<16H', *words)
def halt(idx):
    return cf(0, 0, nextcf=idx, stop=1)
def prog(name, frames, mem=None):
    open(os.path.join(D, name + '.bin'), 'wb').write(b''.join(frames))
    if mem is not None:
        m = bytearray(4096)
        for a, v in mem.items(): m[a] = v
        open(os.path.join(D, name + '.mem.bin'), 'wb').write(bytes(m))
def one(name, code, mask=1, mem=None, r0vect=0, r0=None):
    prog(name, [cf(1, mask, r0vect=r0vect, r0=r0), iff(code), halt(2)], mem)

# ---- micro programs after mcst-dialect.md 5.4 (own encodings) ----
one('m1_ready', [0xf000])
one('m2_add_ready', [0x1123, 0xf000])
one('m4_no_ready', [0]*16)
prog('m5_2if', [cf(2, 1), iff([0xf000]), iff([0xf000]), halt(3)])
prog('m6_2cf', [cf(1, 1), iff([0xf000]), cf(1, 1), iff([0xf000]), halt(4)])
one('m7_loop10', [0xc0a1, 0xc012, 0x2121, 0xe120, 0xf000])        # r1=10; r2=1; L: r1-=r2; bnz r1,L
one('m8_ld', [0xb001, 0xf000], mem={0: 0x5a})                     # ld [r0,r0],r1
one('m9_ld_use', [0xb001, 0x1112, 0xf000], mem={0: 0x5a})         # ld; add r1,r1,r2
one('m11_ld16', [0xb001, 0xf000], mask=0xffff, mem={0: 0x5a})     # 16 cores read M[0]
one('m12_st16', [0xc081, 0xd001, 0xf000], mask=0xffff)            # r1=8 ... st [r0,r0],r1 (all 16 -> bank 0)
one('m13_st_own_bank', [0xc008, 0xc0a1, 0x1881, 0xd081, 0xf000], mask=0xffff)  # r8=id; r1=10; r1=r8+r8; st [r0,r8],r1
one('m14_r0init', [0x1001, 0xf000], mask=0x00ff, r0vect=0x000f, r0=list(range(1, 17)))
one('m15_shift_mul_div', [0xc0d1, 0xc032, 0x6123, 0x7124, 0x3125, 0x4126, 0x5217, 0xa12a, 0x812b, 0x912c, 0xf000], mask=3)
one('m16_ld_bnz', [0xc011, 0xb012, 0x0000, 0x0000, 0xe240, 0xc0f5, 0xf000], mem={1: 0x00})  # ld then bnz 3 later (B3)
# multi-core fence / group shapes
prog('m17_fence_acq', [cf(1, 1, fence=1), iff([0xc0a1, 0xc012, 0x2121, 0xe120, 0xf000]),
                       cf(1, 2), iff([0xc008, 0xf000]), halt(4)])
prog('m18_two_groups', [cf(1, 1), iff([0xc0a1, 0xc012, 0x2121, 0xe120, 0xf000]),
                        cf(1, 2), iff([0xc008, 0xf000]), halt(4)])   # R5 shape (needs the TP fix)
# ---- peer programs ----
def words_of(text):
    return [int(x, 16) for x in re.findall(r'\b[0-9a-fA-F]{4}\b', text)]
src = os.environ.get('RTL', '/work/rtl') + '/src'
w = words_of(open(src + '/Test/code.txt').read())
prog('peer_test_code', [struct.pack('<16H', *w[i:i+16]) for i in range(0, len(w), 16)])
ev = open(src + '/GPU/EnvMem.v').read()
tm = {}
for f, k, v in re.findall(r"env_task_mem_array\[(\d+)\]\[(\d+)\]\s*=\s*16'h([0-9a-fA-F]+)", ev):
    tm.setdefault(int(f), [0]*16)[int(k)] = int(v, 16)
prog('peer_envmem', [struct.pack('<16H', *tm[i]) for i in range(max(tm) + 1)])
# ---- benchmarks ----
# bench_alu: 255 x 255 nested loop (inner: add, sub, bnz), core 0 only and all 16 cores
alu = [0xc008, 0xcff1, 0xc012, 0xcff3, 0x1434, 0x2323, 0xe340, 0x2121, 0xe130, 0x1848, 0xf000]
one('bench_alu_1', alu, mask=1)
one('bench_alu_16', alu, mask=0xffff)
# bench_ldst: inner loop stores r4 to own bank [r3, r8] then loads it back (16 cores, no contention)
ldst = [0xc008, 0xcff1, 0xc012, 0xcff3, 0x1434, 0xd384, 0x2323, 0xb389, 0x1949, 0xe340, 0x2121, 0xe130, 0xf000]
one('bench_ldst_16', ldst, mask=0xffff)
print('\n'.join(sorted(f for f in os.listdir(D) if f.endswith('.bin'))))
# ---- bug repros (expected to differ only on the unfixed RTL) ----
one('r1_repro', [0x5551, 0x1111, 0x1152, 0xd532, 0xf000])   # cmpge r5,r5,r1; add r1,r1,r1; add r1,r5,r2; st [r5,r3],r2
# long: 20 one-IF groups of the 16-core ALU loop (gpu16 wall-time only; ~5.2M cycles)
prog('bench_alu_16x20', sum([[cf(1, 0xffff), iff(alu)] for _ in range(20)], []) + [halt(40)])
# ---- scheduler / dialect edge cases ----
LONG = [0xc0a1, 0xc012, 0x2121, 0xe120, 0xf000]          # ~30-cycle loop
# R3: R0 re-initialised at each IF of a multi-IF group
prog('e_r3_multi_if_r0', [cf(2, 3, r0vect=3, r0=[5, 6]), iff([0x1001, 0xf000]), iff([0x1002, 0xf000]), halt(3)])
# R4: IF_Num 0 CF with R0 init initialises nothing; then a group without init reads R0
prog('e_r4_ifnum0_r0', [cf(0, 1, r0vect=1, r0=[9]), cf(1, 1), iff([0x1001, 0xf000]), halt(3)])
# acq then acq: second waits for core 0 (no R10 since waiting CF is acq)
prog('e_acq_acq', [cf(1, 1, fence=1), iff(LONG), cf(1, 2, fence=1), iff([0xc008, 0xf000]), halt(4)])
# acq group then rel CF then halt
prog('e_acq_rel', [cf(1, 1, fence=1), iff(LONG), cf(1, 2, fence=2), iff([0xc008, 0xf000]), halt(4)])
# stop CF reached with all cores idle and NextCF elsewhere: plain jump
prog('e_stop_jump', [cf(0, 0), cf(0, 0, nextcf=3, stop=1), iff([0xffff]*16), cf(1, 1), iff([0xc0a1, 0xf000]), halt(5)])
# stop bit on a CF with IF_Num > 0 (ambiguous, section 7): jump to NextCF after the group
prog('e_stop_on_group', [cf(1, 1, nextcf=3, stop=1), iff(LONG), iff([0xffff]*16), cf(1, 2), iff([0xc008, 0xf000]), halt(5)])
# task pointer wrap: 62 empty CFs then groups at 62/63 -> wrap to 0? (program occupies all 64 frames)
prog('e_many_empty_cfs', [cf(0, 0)] * 60 + [cf(1, 0xffff), iff([0xc008, 0xd081, 0xf000]), halt(62)])
# several overlapping no-fence groups on different cores, contention on bank 0
prog('e_overlap_groups', [cf(1, 0x00ff), iff([0xc008, 0xd080, 0x0000, 0xb001, 0xf000]),
                          cf(1, 0xff00), iff([0xc008, 0xd080, 0x0000, 0xb081, 0x1111, 0xf000]),
                          cf(1, 0x0f0f), iff(LONG), halt(6)])
# ---- RTL bugs that gpu16 must NOT reproduce (expected disagreements, section 6) ----
one('r2_bnz_after_ld', [0xc011, 0xb132, 0xe240, 0xc0f5, 0xf000], mem={1: 0})          # bnz r2 must not branch
one('r6_ld_ld', [0xc011, 0xc024, 0xb432, 0xb136, 0xf000], mem={0: 0x99, 1: 0x11, 2: 0x22})
one('r7_ld_st_16', [0xc008, 0xc776, 0xb402, 0xd836, 0xf000], mask=0xffff)
