; A histogram with atomic bins: core k adds 1 to bin (k / 2 + i) mod 16 in round i, in
; an ld_sync/st_sync sequence, 240 rounds a task, 200 tasks: each bin contended by two cores.
.repeat 5
.cf mask=0xffff
.repeat 40
.if
    set_const 0, r1          ; core id
    rshft r1, 1, r1          ; the first bin's bank
    xor r9, r9, r9           ; row 0
    set_const 240, r8
    set_const 1, r14
loop:
    ld_sync [r9, r1], r10
    add r10, r14, r10
    st_sync [r9, r1], r10
    add r1, r14, r1          ; next bank (its low four bits count)
    sub r8, r14, r8
    bnz loop, r8
    ready
.end

.end
