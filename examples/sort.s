; sort.s: sorts the 16 bytes at bank 0 rows 0..15 into rows 16..31, ascending, one value
; per core. Core i counts the values that go before its own v = A[i] (smaller ones, and
; equal ones at a lower index, so ties get distinct ranks) and stores v at row 16 + rank.
; Registers carry v, the rank and the index j from the first task to the second.
; Input: sort.mem.hex.

.cf mask=0xffff
.if                          ; j = 0 .. i-1: count A[j] <= v
    xor r0, r0, r0           ; bank 0
    set_const 0, r4          ; i = core id
    ld [r4, r0], r12         ; v
    set_const 0, r13         ; rank
    set_const 1, r8
    xor r5, r5, r5           ; j
top:
    sub r4, r5, r6
    bnz body, r6             ; j != i
    bnz done, r8             ; always taken
body:
    ld [r5, r0], r14
    cmpge r12, r14, r14      ; A[j] <= v
    add r13, r14, r13
    add r5, r8, r5
    bnz top, r8
done:
.if                          ; j = i+1 .. 15: count A[j] < v
    set_const 16, r9
    add r5, r8, r5
top:
    sub r9, r5, r6
    bnz body, r6             ; j != 16
    bnz done, r8
body:
    ld [r5, r0], r14
    cmpge r14, r12, r14      ; A[j] >= v does not count
    sub r13, r14, r13
    add r13, r8, r13
    add r5, r8, r5
    bnz top, r8
done:
    add r13, r9, r13
    st [r13, r0], r12
