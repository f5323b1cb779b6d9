; Divergent trip counts over two shared banks: in each of 80 rounds core k adds its id to
; row 16k of bank k mod 2, 1 + (k xor 5) times. 64 tasks.
.repeat 16
.cf mask=0xffff
.repeat 4
.if
    set_const 0, r1
    set_const 1, r14
    and r1, r14, r2
    lshft r1, 4, r9
    set_const 80, r15
    set_const 5, r13
outer:
    xor r1, r13, r8
    add r8, r14, r8
inner:
    ld [r9, r2], r10
    add r10, r1, r10
    st [r9, r2], r10
    sub r8, r14, r8
    bnz inner, r8
    sub r15, r14, r15
    bnz outer, r15
.end
.end
