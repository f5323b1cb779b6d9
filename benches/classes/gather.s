; Table lookups: every core reads bank 0 at a row the byte it read last picks (rows
; differ from core to core), and stores it to row 16 of its own bank, in lockstep.
.cf mask=0xffff
.repeat 8
.if
    set_const 0, r1          ; core id
    xor r2, r2, r2           ; bank 0
    set_const 1, r14
    lshft r1, 2, r9          ; row 4 * id
    add r1, r14, r12         ; id + 1
    set_const 16, r13
    set_const 200, r11
outer:
    set_const 250, r8
loop:
    ld [r9, r2], r10
    add r10, r12, r9         ; the next row depends on the byte read
    st [r13, r1], r10
    sub r8, r14, r8
    bnz loop, r8
    sub r11, r14, r11
    bnz outer, r11
.end
