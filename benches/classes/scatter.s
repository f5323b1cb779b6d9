; A racy histogram in lockstep: every core reads a byte of its own bank, picks a bin row
; from it in bank 0 and stores a count there (cores that pick one bin collide: the highest
; id's store stays).
.cf mask=0xffff
.repeat 8
.if
    set_const 0, r1          ; core id
    xor r2, r2, r2           ; bank 0
    set_const 1, r14
    set_const 7, r12
    set_const 200, r11
outer:
    set_const 250, r8
loop:
    ld [r8, r1], r10         ; own bank, row r8
    and r10, r12, r9         ; bin 0..7
    add r9, r8, r9
    st [r9, r2], r8          ; bank 0, row bin + r8
    sub r8, r14, r8
    bnz loop, r8
    sub r11, r14, r11
    bnz outer, r11
.end
