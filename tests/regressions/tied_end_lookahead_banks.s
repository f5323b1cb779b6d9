; gpu16 program, 6 frames

.cf mask=0x0082 fence=no r0=0:0x77,1:0xe5,2:0xe6,3:0xde,4:0xaf,5:0x5b,6:0xea,7:0x67,8:0x4a,9:0xeb,10:0x96,11:0x55,12:0x31,13:0x92,14:0x87,15:0x08 r0_vect=0x0000 ; frame 0, 1 instruction frame
.if                                              ; frame 1
          nop
          ld_sync [r0, r2], r1
          nop
          st_sync [r0, r2], r0

.cf mask=0x8080 fence=no r0=0:0x47,1:0xe6,2:0x52,3:0xcf,5:0x30,6:0xbc,7:0x95,8:0x0b,9:0xff,10:0xdf,11:0x23,12:0x7e,13:0xc3,14:0xbf,15:0x22 r0_vect=0x0000 ; frame 2, 1 instruction frame
.if                                              ; frame 3
          set_const 0x02, r8
          set_const 0x01, r15
    L2:   nop
          nop
          nop
          sub r8, r15, r8
          bnz L2, r8
          nop
          nop
          nop
          nop
          nop
          ld [r0, r0], r0
          nop
          nop

.cf mask=0x0002 fence=no r0=0:0x85,1:0x88,2:0xe4,3:0xc9,4:0x71,5:0x32,6:0xcc,7:0x09,8:0x65,9:0x79,10:0x94,11:0x3a,12:0xb7,13:0x46,14:0xab,15:0x19 r0_vect=0x0000 ; frame 4, 1 instruction frame
.if                                              ; frame 5
          nop
          bnz L5, r1
          ready
          ready
          ready
    L5:   nop
          set_const 0x02, r14
          set_const 0x01, r11
    L8:   nop
          nop
          sub r14, r11, r14
          bnz L8, r14
          nop
          nop
          nop
