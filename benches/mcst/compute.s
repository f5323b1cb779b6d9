; 16 cores of the MCST dialect: 40 outer trips around 250 inner ones, each inner trip a
; multiply, an add, a shift and an xor; then a store of the result. The `mcst-compute`
; rows of benches/workloads.rs, which run it under `--timing mcst-rtl`.
.cf mask=0xffff
.if
    set_const 40, r1
    set_const 1, r2
    set_const 3, r6
    set_const 0, r8
outer:
    set_const 250, r3
inner:
    mul r4, r6, r4
    add r4, r3, r4
    rshft r4, r2, r5
    xor r5, r4, r4
    sub r3, r2, r3
    bnz inner, r3
    sub r1, r2, r1
    bnz outer, r1
    st [r8, r7], r4
    ready
.halt
