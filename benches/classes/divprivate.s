; Divergent trip counts in private banks: in each of 150 rounds core k adds the round
; to rows 3 + (k mod 4) down to 1 of its own bank; four groups of trip counts that never
; meet. 64 tasks.
.repeat 16
.cf mask=0xffff
.repeat 4
.if
    set_const 0, r1
    set_const 1, r14
    set_const 150, r15
    set_const 3, r13
    and r1, r13, r6
outer:
    set_const 3, r8
    add r8, r6, r8
inner:
    ld [r8, r1], r10
    add r10, r15, r10
    st [r8, r1], r10
    sub r8, r14, r8
    bnz inner, r8
    sub r15, r14, r15
    bnz outer, r15
    ready
.end
.end
