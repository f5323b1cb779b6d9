; A stencil at distance 2 on 8 cores (mask 0x00ff): core k adds rows j of banks k-2 and
; k+2 (mod 16) into row j of bank k, j from 48 down to 1. 6,000 tasks.
.repeat 100
.cf mask=0x00ff
.repeat 60
.if
    set_const 0, r1
    set_const 2, r14
    sub r1, r14, r3
    add r1, r14, r0
    set_const 1, r15
    set_const 48, r9
loop:
    ld [r9, r3], r10
    ld [r9, r0], r11
    add r10, r11, r10
    ld [r9, r1], r11
    add r10, r11, r10
    st [r9, r1], r10
    sub r9, r15, r9
    bnz loop, r9
.end
.end
