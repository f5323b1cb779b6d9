; Three groups 0, 1 and 2 cycles apart in one bank: the odd cores skip both nops, the
; other even ones one, core 0 none; each adds to its own byte (row id) of bank 0, 256 x 200
; times a task, 6 tasks.
.cf mask=0xffff
.repeat 6
.if
    set_const 0, r1          ; core id
    xor r2, r2, r2           ; bank 0
    set_const 1, r14
    and r1, r14, r3
    bnz one, r3
    nop
one:
    bnz outer, r1
    nop
outer:
    set_const 200, r8
loop:
    ld [r1, r2], r10
    add r10, r8, r10
    st [r1, r2], r10
    sub r8, r14, r8
    bnz loop, r8
    sub r11, r14, r11        ; r11 counts 256 rounds down from 0
    bnz outer, r11
.end
