; Matrix-vector product on 12 cores (mask 0x0fff), 64 columns: core k multiplies rows
; 64..1 of bank k by v (bank 5, rows 0xa0..0xdf; bank 5 is also core 5's own), reading v
; first, and stores the dot product at row 0 of its bank. 6,000 short tasks.
.repeat 100
.cf mask=0x0fff
.repeat 60
.if
    set_const 0, r1
    set_const 5, r15
    xor r2, r2, r2
    add r2, r15, r2          ; bank 5: v
    set_const 1, r14
    set_const 64, r8
    set_const 0xa0, r13
loop:
    ld [r13, r2], r11
    ld [r8, r1], r10
    mul r10, r11, r10
    add r12, r10, r12
    add r13, r14, r13
    sub r8, r14, r8
    bnz loop, r8
    st [r8, r1], r12
    ready
.end
.end
