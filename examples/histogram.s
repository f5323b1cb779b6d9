; histogram.s: a 16-bin histogram of 768 bytes, bin = value >> 4. Core i reads the 48
; bytes at rows 0..47 of bank i and counts each into bank 15, rows 0xf0 + bin, with an
; atomic ld_sync/add/st_sync so concurrent increments of a bin are never lost. Counts are
; bytes (mod 256). Input: histogram.mem.hex.

.equ N, 48

.cf mask=0xffff
.if
    set_const 0, r1          ; data bank = core id
    set_const 15, r8
    or r8, r8, r2            ; histogram bank
    set_const 1, r9
    set_const 0xf0, r11      ; row of bin 0
    set_const N, r10
    xor r4, r4, r4
loop:
    ld [r4, r1], r12
    rshft r12, 4, r12        ; bin
    or r12, r11, r5          ; its row
    ld_sync [r5, r2], r13
    add r13, r9, r13
    st_sync [r5, r2], r13
    add r4, r9, r4
    sub r10, r9, r10
    bnz loop, r10            ; the last slot: the frame ends when the loop does
