; A stencil in two groups of four (mask 0x0f0f): core k sums rows j of banks k+1 and k-1
; into row j + 64 of bank k, j from 32 down to 1. 6,000 tasks.
.repeat 100
.cf mask=0x0f0f
.repeat 60
.if
    set_const 0, r1
    set_const 1, r14
    sub r1, r14, r3
    add r1, r14, r0
    set_const 32, r9
    set_const 64, r12
loop:
    ld [r9, r0], r11
    ld [r9, r3], r10
    add r10, r11, r10
    add r9, r12, r13
    st [r13, r1], r10
    sub r9, r14, r9
    bnz loop, r9
    ready
.end
.end
