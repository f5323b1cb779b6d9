; Cores 6, 10, 11, 12 and 15 take turns on three locks of bank 0. Woken together, waiters
; of a herd are put to sleep on the sequence their first retry is about to open; until it
; opens, the bank has no lock. The scheduler's lower bound on such a sleeper's end was then
; "never", so frame 3 (on core 12) looked unable to start and lockstep ran core 15 through
; its st_sync at 56 before core 12's ld of byte 0 at 55, which must stall until then.
; By hand: core 12 ends frame 1 at 50, frame 3 is broadcast 51..54, its ld stalls at 55
; and 56 and loads at 57, ready at 58: 59 cycles (lockstep gave 57).
.cf mask=0x9c40
.if
nop
nop
nop
nop
ld_sync [r0, r2], r0
st_sync [r0, r2], r0
ld_sync [r0, r3], r0
nop
st_sync [r0, r3], r0
ld_sync [r0, r0], r0
nop
nop
nop
nop
nop
st_sync [r0, r0], r0
.cf mask=0x1000
.if
ld [r0, r0], r0
