; A transpose in lockstep: core k reads row j of its own bank and writes it to row k of
; bank j, for j from 255 down to 1 (every lane at another bank and row).
.cf mask=0xffff
.repeat 8
.if
    set_const 0, r1          ; core id
    set_const 0, r3          ; core id, as the row of the stores
    set_const 1, r14
    set_const 100, r11
outer:
    set_const 255, r8
loop:
    ld [r8, r1], r10         ; own bank, row j
    or r8, r8, r2            ; bank j (its low nibble)
    st [r3, r2], r10         ; bank j, row k
    sub r8, r14, r8
    bnz loop, r8
    sub r11, r14, r11
    bnz outer, r11
.end
