; picture.s: draws a 64x64 picture over the whole shared memory, pixel (x, y) at address
; 64y + x: a Sierpinski triangle (a fractal: pixel lit where x & y == 0) shaded with a
; diagonal gradient, x + y + 64; unlit pixels are 0. Core c fills bank c, which is picture
; rows 4c..4c+3. No input. Save it with --dump-mem and view it as 64x64 8-bit grey.

.cf mask=0xffff
.if
    set_const 0, r1          ; bank = core id
    set_const 0, r7
    lshft r7, 2, r7          ; 4c: the first picture row of the bank
    xor r4, r4, r4           ; byte within the bank
    set_const 63, r8
    set_const 1, r9
    set_const 64, r10
    set_const 0, r15
.if
loop:
    and r4, r8, r5           ; x
    rshft r4, 6, r6
    add r6, r7, r6           ; y
    and r5, r6, r12
    cmpge r15, r12, r12      ; 1 where x & y == 0
    sub r15, r12, r12        ; 0xff there, else 0
    add r5, r6, r13
    add r13, r10, r13        ; shade
    and r12, r13, r12
    st [r4, r1], r12
    add r4, r9, r4
    bnz loop, r4             ; 256 pixels: done when the byte index wraps to 0
