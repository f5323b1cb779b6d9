; A stencil over neighbours' banks: core k sums rows j of banks k-1, k and k+1 into row
; j + 128 of bank k, j from 64 down to 1. 12,000 tasks.
.repeat 200
.cf mask=0xffff
.repeat 60
.if
    set_const 0, r1          ; core id: its bank
    set_const 1, r14
    sub r1, r14, r3          ; bank k - 1
    add r1, r14, r0          ; bank k + 1
    set_const 64, r9
    set_const 128, r12
loop:
    ld [r9, r3], r10
    ld [r9, r1], r11
    add r10, r11, r10
    ld [r9, r0], r11
    add r10, r11, r10
    add r9, r12, r13
    st [r13, r1], r10
    sub r9, r14, r9
    bnz loop, r9
    ready
.end

.end
