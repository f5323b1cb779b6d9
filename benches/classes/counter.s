; One contended counter: 300 tasks in which each of the 16 cores adds 1 to the byte at
; 0x000 250 times, in ld_sync / st_sync sequences.
.repeat 5
.cf mask=0xffff
.repeat 60
.if
    xor r1, r1, r1           ; bank 0
    xor r4, r4, r4           ; row 0
    set_const 1, r9
    set_const 250, r10
loop:
    ld_sync [r4, r1], r5
    add r5, r9, r5
    st_sync [r4, r1], r5
    sub r10, r9, r10
    bnz loop, r10
    ready
.end
.end
