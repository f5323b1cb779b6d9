; Matrix-vector product: core k multiplies row k of M (bank k, rows 0..127) by v (bank 0,
; rows 0x80..0xff), whose byte j every core reads in the same cycle, and stores the dot
; product at row 0 of its bank. 6,000 tasks.
.repeat 100
.cf mask=0xffff
.repeat 60
.if
    set_const 0, r1          ; core id: the bank of its row
    xor r2, r2, r2           ; bank 0: v
    set_const 1, r14
    set_const 128, r8
    xor r12, r12, r12
    xor r9, r9, r9           ; j
    set_const 0x80, r13      ; &v[j]
loop:
    ld [r9, r1], r10         ; M[k][j]
    ld [r13, r2], r11        ; v[j]
    mul r10, r11, r10
    add r12, r10, r12
    add r9, r14, r9
    add r13, r14, r13
    sub r8, r14, r8
    bnz loop, r8
    st [r13, r1], r12        ; row 0 (r13 wrapped)
.end

.end
