; Divergent trip counts in one shared bank: in each of 100 rounds core k adds its id to its
; own byte of bank 0 (row 16k) 4 + (k mod 8) times, then counts the round: the cores part
; at the inner loop's bnz and never meet again, and take turns on bank 0.
.repeat 16
.cf mask=0xffff
.repeat 4
.if
    set_const 0, r1          ; core id
    xor r2, r2, r2           ; bank 0
    lshft r1, 4, r9          ; row 16 k
    set_const 1, r14
    set_const 100, r15       ; rounds
    set_const 7, r13
    and r1, r13, r6          ; k mod 8
outer:
    set_const 4, r8
    add r8, r6, r8           ; this core's trip count
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
