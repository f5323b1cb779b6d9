; spec_example1.s: example 1 of the spec. CF0 (IF_Num 4, mask 0x0f0f, fence=acq) leads
; IF0..IF3; CF1 (IF_Num 2, mask 0xf0f0, fence=acq) leads IF4, IF5. Task k makes every
; core c of its mask store 16c + k at row k of bank c, so the memory shows which cores
; ran which task; the task timeline shows the ordering. With fence=acq on CF0, IF4 starts
; only after IF3 has finished. No input.

.cf mask=0x0f0f fence=acq
.repeat 4, k
.if
    set_const 0, r1          ; core id
    lshft r1, 4, r12
    set_const k, r8
    add r12, r8, r12
    st [r8, r1], r12
.end

.cf mask=0xf0f0 fence=acq
.repeat 2, k
.if
    set_const 0, r1
    lshft r1, 4, r12
    set_const 4 + k, r8
    add r12, r8, r12
    st [r8, r1], r12
.end
