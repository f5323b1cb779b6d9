; dot_product.s: the 16-bit dot product of two 256-element byte vectors, using mul's high
; byte. Bank i holds a[16i..16i+16] at rows 0..15 and b[16i..16i+16] at rows 64..79.
; Each core sums its 16 products into a 16-bit partial (low byte at row 128, high at 129
; of its bank); then core 0 adds the 16 partials into the total: low byte at 0x0f0,
; high byte at 0x0f1 (the sum mod 65536). Input: dot_product.mem.hex.

.cf mask=0xffff fence=acq    ; acq: the reduction below starts after every partial is stored
.if                          ; setup; registers persist into the core's next task
    set_const 0, r1          ; bank = core id
    set_const 64, r10        ; rows from a[k] to b[k]
    set_const 1, r11
    set_const 16, r13
    or r13, r13, r6          ; elements left
    set_const 0, r8          ; sum, low byte
    set_const 0, r9          ; sum, high byte
    xor r4, r4, r4           ; k
.if
loop:
    ld [r4, r1], r12         ; a[k]
    add r4, r10, r5
    ld [r5, r1], r13         ; b[k]
    mul r12, r13, r14        ; product: low byte r14, high byte r15
    add r8, r14, r8
    cmpge r8, r14, r12       ; 1 unless the low-byte add carried
    add r9, r15, r9
    add r9, r11, r9
    sub r9, r12, r9          ; high += product high + carry
    add r4, r11, r4
    sub r6, r11, r6
    bnz loop, r6
    set_const 128, r12
    st [r12, r1], r8
    set_const 129, r12
    st [r12, r1], r9

.cf mask=0x0001              ; the reduction, on core 0
.if
    set_const 16, r12
    or r12, r12, r2          ; banks left
    set_const 1, r11
    set_const 128, r10
    set_const 129, r13
    set_const 0, r8
    set_const 0, r9
.if
loop:
    sub r2, r11, r2          ; next bank, from 15 down
    ld [r10, r2], r12        ; partial, low byte
    ld [r13, r2], r14        ; partial, high byte
    add r8, r12, r8
    cmpge r8, r12, r12       ; 1 unless the low-byte add carried
    add r9, r14, r9
    add r9, r11, r9
    sub r9, r12, r9
    bnz loop, r2
    set_const 0xf0, r12
    st [r12, r2], r8         ; r2 is 0: bank 0
    set_const 0xf1, r12
    st [r12, r2], r9
