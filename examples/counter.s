; counter.s: a shared counter at address 0 incremented 10 times by each of the 16 cores.
; ld_sync locks the byte and st_sync writes it and releases the lock, so no increment is
; lost: the counter ends at 160. No input.

.equ TIMES, 10

.cf mask=0xffff
.if
    xor r1, r1, r1           ; bank 0
    xor r4, r4, r4           ; row 0
    set_const 1, r9
    set_const TIMES, r10
loop:
    ld_sync [r4, r1], r5     ; take the lock (stalls while another core holds it)
    add r5, r9, r5
    st_sync [r4, r1], r5     ; store and release
    sub r10, r9, r10
    bnz loop, r10
