; vector_add.s: c = a + b (bytes, mod 256) over 512 elements on 16 cores, one bank each.
; Bank i holds a[0..32] at rows 0..31 and b[0..32] at rows 64..95; core i writes
; c[j] = a[j] + b[j] to rows 128..159 of the same bank. Input: vector_add.mem.hex.
;   gpu16 run examples/vector_add.s --mem examples/vector_add.mem.hex

.equ N, 32                   ; elements per bank
.equ GAP, 64                 ; rows from a[j] to b[j], and from b[j] to c[j]

.cf mask=0xffff
.if
    set_const 0, r1          ; r1 = core id (r0..r7 take the id): this core's bank
    set_const 1, r9
    set_const GAP, r10
    set_const N, r11         ; elements left
    xor r4, r4, r4           ; j
loop:
    ld [r4, r1], r12         ; a[j]
    add r4, r10, r5
    ld [r5, r1], r13         ; b[j]
    add r12, r13, r12
    add r5, r10, r5
    st [r5, r1], r12         ; c[j]
    add r4, r9, r4
    sub r11, r9, r11
    bnz loop, r11
