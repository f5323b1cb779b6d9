#!/usr/bin/env python3
"""Write the two task streams of the stop 67 table (README, "Speed") to OUTDIR:
mixed.s, 4,000 tasks of the reduction's body (benches/classes/reduction.s) on masks of
widths 1 + (i*7) % 16 at offsets (i*5) % (17 - width); full.s, the same 4,000 tasks on
mask 0xffff. Fences go none, acq, rel in turn. Count them with benches/steady.sh.

Usage: python3 benches/streams.py OUTDIR (neither file may exist there yet)
"""
import os
import sys

FENCES = ["", " fence=acq", " fence=rel"]
TASKS = 4000


def body(k):
    return (
        "    set_const 0, r1\n"
        f"    set_const {1 << (k % 4)}, r14\n"
        "    add r1, r14, r2\n"
        "    xor r9, r9, r9\n"
        "    ld [r9, r2], r10\n"
        "    ld [r9, r1], r11\n"
        "    add r10, r11, r11\n"
        "    st [r9, r1], r11\n"
        "    ready\n"
    )


def mask(i, full):
    if full:
        return 0xFFFF
    width = 1 + (i * 7) % 16
    return ((1 << width) - 1) << ((i * 5) % (17 - width))


def main():
    if len(sys.argv) != 2:
        sys.exit(__doc__.strip())
    out = sys.argv[1]
    os.makedirs(out, exist_ok=True)
    for name, full in (("mixed.s", False), ("full.s", True)):
        lines = [f"; benches/streams.py: {TASKS} tasks of the reduction's body\n"]
        for i in range(TASKS):
            lines.append(f".cf mask=0x{mask(i, full):04x}{FENCES[i % 3]}\n.if\n{body(i)}")
        path = os.path.join(out, name)
        try:
            # "x": a file already there is the user's, never written over.
            with open(path, "x") as f:
                f.write("".join(lines))
        except OSError as e:
            sys.exit(f"streams.py: {path}: {e.strerror}")


if __name__ == "__main__":
    main()
