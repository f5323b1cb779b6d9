; prefix_sum.s: inclusive prefix sums (mod 256) of the 48 bytes x[k] at bank 0 rows
; 0..47, into P[k] at rows 64..111 (row 63 is P[-1] = 0). Task k runs on core k % 16 and
; reads P[k-1], which task k-1 wrote on another core: fence=acq on every group makes each
; task complete before the next frame is processed. 96 frames: more than the 64-frame task
; memory, so `gpu16 check` reports a host-fed stream. Input: prefix_sum.mem.hex.

.equ N, 48

.repeat N, k
.cf mask=1 << (k % 16) fence=acq
.if
    xor r1, r1, r1           ; bank 0
    set_const k, r8
    ld [r8, r1], r12         ; x[k]
    set_const 63 + k, r9
    ld [r9, r1], r13         ; P[k-1]
    add r12, r13, r12
    set_const 64 + k, r10
    st [r10, r1], r12        ; P[k]
.end
