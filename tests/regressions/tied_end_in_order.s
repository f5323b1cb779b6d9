; gpu16 program, 7 frames

.cf mask=0x6000 fence=no r0=0:0x4a,1:0x71,2:0x02,3:0x36,4:0xb6,5:0xd8,6:0xa4,7:0xf4,8:0x33,9:0x0a,10:0x42,11:0x31,12:0x1b,13:0x64,14:0x98,15:0x25 r0_vect=0x0000 ; frame 0, 1 instruction frame
.if                                              ; frame 1
          nop
          nop
          nop
          nop
          nop
          set_const 0x01, r10
          and r10, r10, r9
          nop
          nop
          nop
          cmpge r0, r0, r5

.cf mask=0xa000 fence=no r0=0:0x65,1:0x95,2:0x9b,3:0x8d,4:0xf0,5:0x9b,6:0x79,7:0x0b,8:0x99,9:0xb6,10:0x8f,11:0x23,12:0x34,13:0x57,14:0xf5,15:0xe2 r0_vect=0x0000 ; frame 2, 1 instruction frame
.if                                              ; frame 3
          nop
          nop
          nop
          nop
          nop
          nop
          nop
          nop
          nop
          nop
          nop
          nop
          nop
          bnz 15, r9
          nop

.cf mask=0x4000 fence=no r0=0:0x41,1:0xc9,2:0x51,3:0x43,4:0xb3,5:0xd7,6:0xd4,7:0xaf,8:0xb0,9:0x2b,10:0xdd,11:0x1f,12:0x0a,13:0xa2,14:0xd7,15:0x8d r0_vect=0x0000 ; frame 4, 2 instruction frames
.if                                              ; frame 5
          nop
          nop
.if                                              ; frame 6
          nop
          bnz L6, r5
          ready
          ready
          ready
          ready
    L6:   nop
