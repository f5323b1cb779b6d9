; The MCST dialect (run with --dialect mcst): sixteen cores each store their core id in
; bank 0, at the row of their id. Under --timing mcst-rtl bank 0 grants one access a cycle,
; round robin from core 1, so the stores take 16 cycles and core 0 stores last.
.cf mask=0xffff
.if
    set_const 0, r8         ; r8..r15 load the core id in this dialect
    st [r8, r0], r8         ; memory[(r0 & 0xF) << 8 | r8] = r8: bank 0, row id
    ready
.halt                       ; the end frame: a stop CF whose NextCF is itself
