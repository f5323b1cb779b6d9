#!/usr/bin/env python3
"""Write the task streams of the README's "Speed" tables to OUTDIR:
mixed.s, 4,000 tasks of the reduction's body (benches/classes/reduction.s) on masks of
widths 1 + (i*7) % 16 at offsets (i*5) % (17 - width); full.s, the same 4,000 tasks on
mask 0xffff. Fences go none, acq, rel in turn. narrow.s, 3,000 tasks on narrow masks
(widths 1, 2, 3, 4, 8 in turn at offsets (i*5) % (17 - width)) that touch memory at IP 0:
an `ld` of the bank the core's previous task left in r1, an add, a `st`, two `set_const`s
and `ready`; fences go none, none, acq, none, rel. Count them with benches/steady.sh.

Usage: python3 benches/streams.py OUTDIR (none of the three files may exist there yet)
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


NARROW_TASKS = 3000
NARROW_WIDTHS = [1, 2, 3, 4, 8]
NARROW_FENCES = ["", "", " fence=acq", "", " fence=rel"]
NARROW_BODY = (
    "    ld [r9, r1], r10\n"
    "    add r10, r14, r10\n"
    "    st [r9, r1], r10\n"
    "    set_const 0, r1\n"
    "    set_const 1, r14\n"
    "    ready\n"
)


def narrow():
    lines = [f"; benches/streams.py: {NARROW_TASKS} narrow tasks, memory at IP 0\n"]
    for i in range(NARROW_TASKS):
        width = NARROW_WIDTHS[i % 5]
        m = ((1 << width) - 1) << ((i * 5) % (17 - width))
        lines.append(f".cf mask=0x{m:04x}{NARROW_FENCES[i % 5]}\n.if\n{NARROW_BODY}")
    return "".join(lines)


def main():
    if len(sys.argv) != 2:
        sys.exit(__doc__.strip())
    out = sys.argv[1]
    os.makedirs(out, exist_ok=True)
    streams = []
    for name, full in (("mixed.s", False), ("full.s", True)):
        lines = [f"; benches/streams.py: {TASKS} tasks of the reduction's body\n"]
        for i in range(TASKS):
            lines.append(f".cf mask=0x{mask(i, full):04x}{FENCES[i % 3]}\n.if\n{body(i)}")
        streams.append((name, "".join(lines)))
    streams.append(("narrow.s", narrow()))
    for name, text in streams:
        path = os.path.join(out, name)
        try:
            # "x": a file already there is the user's, never written over.
            with open(path, "x") as f:
                f.write(text)
        except OSError as e:
            sys.exit(f"streams.py: {path}: {e.strerror}")


if __name__ == "__main__":
    main()
