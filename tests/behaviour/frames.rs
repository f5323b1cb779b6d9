//! Frames byte by byte: control and instruction frame layouts written by hand (not through
//! the machine's encoders), positional frame kinds, reserved bits, and every load error
//! naming its frame.

use crate::builder::*;
use gpu16_machine::engine::backend::Backend;
use gpu16_machine::{Fence, LoadError, Program};

fn load(bytes: &[u8]) -> Result<Program, LoadError> {
    Program::from_image(bytes)
}

fn image(frames: &[[u8; 32]]) -> Vec<u8> {
    frames.iter().flatten().copied().collect()
}

/// A hand-made CF: IF_Num and fence in byte 0, active in bytes 2-3, init in 4-5.
fn cf_bytes(byte0: u8, active: u16, init: u16) -> [u8; 32] {
    let mut b = [0u8; 32];
    b[0] = byte0;
    b[2] = active as u8;
    b[3] = (active >> 8) as u8;
    b[4] = init as u8;
    b[5] = (init >> 8) as u8;
    b
}

pub fn control_frame_layout<B: Backend>(mk: Mk<B>) {
    // Byte 0 = 0x01: IF_Num 1, fence no. Active 0x8001 (bytes 01 80): cores 0 and 15.
    // Init_R0_Vect 0x8003 (bytes 03 80): cores 0, 1, 15; core 1 is not active.
    // Init_R0[i] is byte 16 + i.
    let mut c = cf_bytes(0x01, 0x8001, 0x8003);
    c[16] = 0xA0;
    c[17] = 0xA1;
    c[31] = 0xAF;
    // IF: slot 0 = 0xC2A9 (set_const 0x2a, r9) as bytes A9 C2; slot 1 = 0xF000 (ready).
    let mut i = [0u8; 32];
    i[0] = 0xA9;
    i[1] = 0xC2;
    i[2] = 0x00;
    i[3] = 0xF0;
    let img = image(&[c, i]);
    let program = load(&img).unwrap();
    let mut backend = mk();
    let r = gpu16_machine::run(&mut backend, &program, &[], &in_order()).unwrap();
    assert_eq!((r.registers[0][0], r.registers[0][9]), (0xA0, 0x2A));
    assert_eq!((r.registers[15][0], r.registers[15][9]), (0xAF, 0x2A));
    assert_eq!(r.registers[1], [0; 16]);
    let ran: Vec<u64> = r.cores.iter().map(|c| c.tasks).collect();
    let mut want = vec![0; 16];
    want[0] = 1;
    want[15] = 1;
    assert_eq!(ran, want);
    assert_eq!(r.tasks.len(), 1);
    assert_eq!((r.tasks[0].frame, r.tasks[0].mask), (1, 0x8001));
}

pub fn instruction_words_are_little_endian_in_slot_order<B: Backend>(mk: Mk<B>) {
    // Slots 0..14 all-zero (nop); slot 15 at bytes 30, 31 = 0xC5CA (set_const 0x5c, r10).
    let c = cf_bytes(0x01, 0x0001, 0);
    let mut i = [0u8; 32];
    i[30] = 0xCA;
    i[31] = 0xC5;
    let program = load(&image(&[c, i])).unwrap();
    let mut backend = mk();
    let r = gpu16_machine::run(&mut backend, &program, &[], &in_order()).unwrap();
    assert_eq!(r.registers[0][10], 0x5C);
    assert_eq!(r.instructions, 16);
}

pub fn memory_instruction_fields<B: Backend>(mk: Mk<B>) {
    // Raw words: 0xB829 ld [r8, r2], r9 (b = 0b0010: mode 0, hi r2);
    // 0xB86A ld_sync [r8, r2], r10 (b = 0b0110: mode 1, hi r2);
    // 0xD86A st_sync [r8, r2], r10; 0xD82B st [r8, r2], r11.
    let mem = memory(&[(0x345, 0x5E), (0x346, 0x6E)]);
    let img = Image::new().control(cf(1).r0(0, 0x13).ifs(1)).words(&[
        0xC458, // set_const 0x45, r8
        0x1F02, // add r15, r0, r2: r2 = 0x13 -> high nibble 3
        0xB829, // ld [r8, r2], r9       -> M[0x345]
        0xB86A, // ld_sync [r8, r2], r10 -> M[0x345], locks it
        0xD86A, // st_sync [r8, r2], r10
        0xC46B, // set_const 0x46, r11
        0xDB29, // st [r11, r2], r9      -> M[0x346] = 0x5E
        0xF000,
    ]);
    let r = run_ok(mk, &img, &mem, &in_order());
    assert_eq!((r.registers[0][9], r.registers[0][10]), (0x5E, 0x5E));
    assert_eq!(r.memory[0x346], 0x5E);
    assert_eq!(r.memory_stats.lock_acquisitions_per_bank[3], 1);
}

pub fn fence_bits_in_the_header<B: Backend>(mk: Mk<B>) {
    // Byte 0 = 0x41: IF_Num 1, fence acq (bits 7:6 = 01); 0x81: rel; 0x01: no.
    // Two groups, core 0 (10 instructions) then core 1 (3): the acq header makes the second
    // group wait (IF3 at 16); rel on the second group makes IF3 wait (15); no: IF3 at 6.
    let body = |n: usize| {
        let mut i = [0u8; 32];
        i[2 * (n - 1) + 1] = 0xF0; // ready in slot n-1, nops before it
        i
    };
    for (first, second, issue) in [(0x41, 0x01, 16), (0x01, 0x81, 15), (0x01, 0x01, 6)] {
        let img = image(&[
            cf_bytes(first, 1, 0),
            body(10),
            cf_bytes(second, 2, 0),
            body(3),
        ]);
        let program = load(&img).unwrap();
        let mut backend = mk();
        let r = gpu16_machine::run(&mut backend, &program, &[], &in_order()).unwrap();
        assert_eq!(
            r.tasks[1].issue, issue,
            "headers {first:#04x}, {second:#04x}"
        );
        let want = |b: u8| match b >> 6 {
            1 => Fence::Acq,
            2 => Fence::Rel,
            _ => Fence::No,
        };
        assert_eq!(
            (r.tasks[0].fence, r.tasks[1].fence),
            (want(first), want(second))
        );
    }
}

pub fn reserved_bits_are_accepted<B: Backend>(mk: Mk<B>) {
    // Header bits 15:8 and bytes 6..15 set: the run is the same as without them.
    let mut c = cf_bytes(0x01, 1, 1);
    c[1] = 0xFF;
    for b in &mut c[6..16] {
        *b = 0xFF;
    }
    c[16] = 0x21;
    let mut i = [0u8; 32];
    i[1] = 0xF0;
    let program = load(&image(&[c, i])).unwrap();
    let mut backend = mk();
    let r = gpu16_machine::run(&mut backend, &program, &[], &in_order()).unwrap();
    assert_eq!(r.registers[0][0], 0x21);
    assert_eq!(
        r.tasks
            .iter()
            .map(|t| (t.frame, t.issue, t.start, t.end))
            .collect::<Vec<_>>(),
        vec![(1, 1, 5, 5)]
    );
}

pub fn frame_kinds_are_positional<B: Backend>(mk: Mk<B>) {
    // CF(0 IFs), CF(2 IFs), IF, IF, CF(1 IF), IF: frame 1 is a CF because frame 0 announced
    // no IFs, frame 4 because the group of frame 1 ended; only frames 2, 3, 5 are tasks.
    let mut ready_if = [0u8; 32];
    ready_if[1] = 0xF0;
    let img = image(&[
        cf_bytes(0x00, 0, 0),
        cf_bytes(0x02, 1, 0),
        ready_if,
        ready_if,
        cf_bytes(0x01, 2, 0),
        ready_if,
    ]);
    let program = load(&img).unwrap();
    let mut backend = mk();
    let r = gpu16_machine::run(&mut backend, &program, &[], &in_order()).unwrap();
    let frames: Vec<usize> = r.tasks.iter().map(|t| t.frame).collect();
    assert_eq!(frames, vec![2, 3, 5]);
    assert_eq!(r.task_summary.control_frames, 3);
}

pub fn load_error_length<B: Backend>(_mk: Mk<B>) {
    for n in [1, 31, 33, 63] {
        let e = load(&vec![0u8; n]).unwrap_err();
        assert_eq!(e, LoadError::Length { bytes: n });
        assert!(e.to_string().contains(&n.to_string()), "{e}");
    }
    assert_eq!(load(&[]).unwrap_err(), LoadError::Empty);
}

pub fn load_error_group_past_end<B: Backend>(_mk: Mk<B>) {
    // Frames: CF(1), IF, CF(3), IF: the second group needs frames 3, 4, 5.
    let img = image(&[cf_bytes(0x01, 1, 0), [0; 32], cf_bytes(0x03, 1, 0), [0; 32]]);
    let e = load(&img).unwrap_err();
    assert!(
        matches!(
            e,
            LoadError::GroupPastEnd {
                frame: 2,
                if_num: 3,
                ..
            }
        ),
        "{e:?}"
    );
    assert!(e.to_string().contains("frame 2"), "{e}");
    // A lone CF announcing one IF.
    let e = load(&cf_bytes(0x01, 1, 0)).unwrap_err();
    assert!(
        matches!(e, LoadError::GroupPastEnd { frame: 0, .. }),
        "{e:?}"
    );
}

pub fn load_error_fence_3<B: Backend>(_mk: Mk<B>) {
    let img = image(&[
        cf_bytes(0x01, 1, 0),
        [0; 32],
        cf_bytes(0xC1, 1, 0), // fence bits 11
        [0; 32],
    ]);
    let e = load(&img).unwrap_err();
    assert_eq!(e, LoadError::ReservedFence { frame: 2 });
    assert!(e.to_string().contains("frame 2"), "{e}");
}

pub fn load_error_reserved_memory_mode<B: Backend>(_mk: Mk<B>) {
    // ld with mode 2 (b = 0b1000) in frame 3 slot 5, after a ready (never executed: it is
    // still a load error). st with mode 3 (b = 0b1100) likewise.
    for (word, mode) in [(0xB889u16, 2u8), (0xD8C9, 3), (0xB8F9, 3), (0xD8A9, 2)] {
        let mut bad = [0u8; 32];
        bad[1] = 0xF0; // slot 0: ready
        bad[10..12].copy_from_slice(&word.to_le_bytes());
        let img = image(&[cf_bytes(0x01, 1, 0), [0; 32], cf_bytes(0x01, 2, 0), bad]);
        let e = load(&img).unwrap_err();
        match &e {
            LoadError::ReservedMode {
                frame: 3,
                slot: 5,
                detail,
            } => {
                assert_eq!((detail.word, detail.mode), (word, mode));
            }
            other => panic!("word {word:#06x}: {other:?}"),
        }
        assert!(e.to_string().contains("frame 3"), "{e}");
    }
    // Modes 0 and 1 load.
    for word in [0xB809u16, 0xB849, 0xD809, 0xD849] {
        let mut ok = [0u8; 32];
        ok[0..2].copy_from_slice(&word.to_le_bytes());
        assert!(load(&image(&[cf_bytes(0x01, 1, 0), ok])).is_ok());
    }
}

pub fn reserved_mode_in_a_control_frame_is_not_an_error<B: Backend>(mk: Mk<B>) {
    // Init_R0 bytes that would read as `ld` with mode 2 in an IF: a CF's bytes are never
    // decoded as instructions, so the image loads and R0 gets 0x89.
    let mut c = cf_bytes(0x00, 1, 1);
    c[16] = 0x89;
    c[17] = 0xB8; // would be word 0xB889 (ld mode 2) in an IF
    let program = load(&c).unwrap();
    let mut backend = mk();
    let r = gpu16_machine::run(&mut backend, &program, &[], &in_order()).unwrap();
    assert_eq!(r.registers[0][0], 0x89);
    assert_eq!(r.cycles, 1);
}
