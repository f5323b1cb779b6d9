; gpu16 program, 10 frames
; Fuzz seed 850283815 (lockstep, lookahead, bank conflicts), shrunk: the state at an st_sync fault missed a CF the scheduler had passed under lookahead before the fault cycle, on interp and percore.

.cf mask=0xffff fence=no r0=0:0x30,1:0x9d,2:0x75,3:0x62,4:0xe8,5:0xfa,6:0xc9,7:0xfe,8:0x4a,9:0x01,10:0x7f,11:0xe0,12:0x67,13:0xff,14:0x4a,15:0x2d r0_vect=0x0000 ; frame 0, 1 instruction frame
.if                                              ; frame 1
          nop
          nop
          ld_sync [r0, r1], r0
          nop
          st_sync [r0, r1], r0
          nop
          nop
          set_const 0x00, r3
          ld_sync [r0, r3], r0
          nop
          nop
          nop
          st_sync [r0, r3], r0
          nop
          nop

.cf mask=0x0001 fence=no r0=0:0x9e,1:0xd2,2:0x14,3:0x9c,4:0x66,5:0x15,6:0xca,7:0x15,8:0x43,9:0x02,10:0x4f,11:0xe4,12:0x87,13:0x91,14:0xcf,15:0x5f r0_vect=0x0000 ; frame 2, 3 instruction frames
.if                                              ; frame 3
          nop
          nop
          nop
          ld_sync [r0, r2], r0
          nop
          nop
          nop
          st_sync [r0, r2], r0
          nop
          nop
          ld_sync [r0, r2], r0
          st_sync [r0, r2], r0
          nop
.if                                              ; frame 4
          nop
          ld_sync [r0, r2], r0
          st_sync [r0, r2], r0
          nop
          set_const 0x03, r11
          set_const 0x01, r13
    L6:   nop
          sub r11, r13, r11
          bnz L6, r11
          nop
          nop
          nop
          ld_sync [r0, r0], r0
          nop
          st_sync [r0, r0], r0
.if                                              ; frame 5
          nop
          nop
          nop
          nop
          st_sync [r0, r0], r0

.cf mask=0x9000 fence=no r0=0:0x45,1:0xa5,2:0xbf,3:0x08,4:0xc4,5:0xc2,6:0xb6,7:0x56,8:0x80,9:0xc0,10:0xf1,11:0x4e,12:0xff,13:0x57,14:0xe9,15:0x2e r0_vect=0x57f2 ; frame 6, 1 instruction frame
.if                                              ; frame 7

.cf mask=0x0000 fence=no r0=0:0xab,1:0xab,2:0x54,3:0x1e,4:0x13,5:0x32,6:0x59,7:0x2b,8:0x65,9:0x12,10:0x28,11:0x5a,12:0xdc,13:0x36,14:0x15,15:0xa1 r0_vect=0x0000 ; frame 8, 1 instruction frame
.if                                              ; frame 9
