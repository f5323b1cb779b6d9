; Fenced reduction rounds: in round k each core adds the byte of bank (id + 2^(k mod 4))
; to its own; fence=acq orders the rounds. 8,000 tasks of 9 instructions.
.repeat 20
.repeat 400, k
.cf mask=0xffff fence=acq
.if
    set_const 0, r1
    set_const 1 << (k % 4), r14
    add r1, r14, r2
    xor r9, r9, r9
    ld [r9, r2], r10
    ld [r9, r1], r11
    add r10, r11, r11
    st [r9, r1], r11
    ready
.end

.end
