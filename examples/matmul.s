; matmul.s: C = A * B for 8x8 byte matrices, entries mod 256. A is row-major in bank 0
; rows 0..63 (A[i][k] at 8i+k), B in bank 1, C is written to bank 2 the same way.
; Core c computes C[c/2][4(c%2) .. 4(c%2)+4], one entry per task; its registers carry
; the row and column from task to task. Input: matmul.mem.hex.

.cf mask=0xffff
.if
    set_const 1, r8
    set_const 8, r9          ; row stride
    xor r0, r0, r0           ; bank of A
    or r8, r8, r1            ; bank of B
    set_const 2, r11
    or r11, r11, r2          ; bank of C
    set_const 0, r3          ; core id
    rshft r3, 1, r7
    lshft r7, 3, r7          ; 8i: where row i starts
    and r3, r8, r15
    lshft r15, 2, r15        ; j, the first column of this core
.repeat 4                    ; one task per entry C[i][j]
.if
    or r7, r7, r4            ; &A[i][0]
    or r15, r15, r5          ; &B[0][j]
    set_const 8, r10
    set_const 0, r12
loop:
    ld [r4, r0], r13
    ld [r5, r1], r14
    mul r13, r14, r13        ; low byte in r13 (the high byte goes to r14)
    add r12, r13, r12
    add r4, r8, r4
    add r5, r9, r5
    sub r10, r8, r10
    bnz loop, r10
    add r7, r15, r6          ; &C[i][j]
    st [r6, r2], r12
    add r15, r8, r15         ; next column
.end
