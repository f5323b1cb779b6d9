; Two halves a cycle apart in one bank: the odd cores skip a nop, then every core adds
; to its own byte of bank 0, 200 x 250 times a task, 8 tasks.
.cf mask=0xffff
.repeat 8
.if
    set_const 0, r1          ; core id
    xor r2, r2, r2           ; bank 0
    lshft r1, 4, r9          ; row 16 * id
    set_const 1, r14
    set_const 200, r11
    and r1, r14, r3
    bnz outer, r3            ; the odd cores skip the nop
    nop
outer:
    set_const 250, r8
loop:
    ld [r9, r2], r10
    add r10, r8, r10
    st [r9, r2], r10
    sub r8, r14, r8
    bnz loop, r8
    sub r11, r14, r11
    bnz outer, r11
.end
