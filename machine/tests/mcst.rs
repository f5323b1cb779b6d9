//! The MCST dialect's machine, against values worked out by hand from mcst-dialect.md (the
//! table of section 5.4 and the rules of sections 2, 3 and 5), never from the emulator.
//! Images are built byte by byte here, so the assembler is not under test.

use gpu16_machine::{
    run, run_observed, Config, CoreWait, Dialect, Event, Observer, Program, RunError, RunReport,
    StallCause, TaskLog, Timing,
};

/// A control frame: IF_Num, fence, NextCF, stop, Core_Active_Vect, R0 inits.
fn cf(if_num: u8, fence: u8, next: u8, stop: bool, cav: u16, r0: &[(usize, u8)]) -> [u8; 32] {
    let header =
        u16::from(if_num) | u16::from(fence) << 6 | u16::from(next) << 8 | u16::from(stop) << 14;
    let mut b = [0u8; 32];
    b[0..2].copy_from_slice(&header.to_le_bytes());
    b[2..4].copy_from_slice(&cav.to_le_bytes());
    let mut vect = 0u16;
    for &(c, v) in r0 {
        vect |= 1 << c;
        b[16 + c] = v;
    }
    b[4..6].copy_from_slice(&vect.to_le_bytes());
    b
}

/// An instruction frame of these words, zero (nop) after them.
fn code(words: &[u16]) -> [u8; 32] {
    let mut b = [0u8; 32];
    for (i, w) in words.iter().enumerate() {
        b[2 * i..2 * i + 2].copy_from_slice(&w.to_le_bytes());
    }
    b
}

/// The halt frame at index `at`: a stop CF whose NextCF is itself.
fn halt(at: u8) -> [u8; 32] {
    cf(0, 0, at, true, 0, &[])
}

const READY: u16 = 0xf000;
const NOP: u16 = 0x0000;
fn add(a: u16, b: u16, c: u16) -> u16 {
    0x1000 | a << 8 | b << 4 | c
}
fn mul(a: u16, b: u16, c: u16) -> u16 {
    0x3000 | a << 8 | b << 4 | c
}
fn rshft(a: u16, b: u16, c: u16) -> u16 {
    0x6000 | a << 8 | b << 4 | c
}
fn lshft(a: u16, b: u16, c: u16) -> u16 {
    0x7000 | a << 8 | b << 4 | c
}
fn ld(a: u16, b: u16, c: u16) -> u16 {
    0xb000 | a << 8 | b << 4 | c
}
fn st(a: u16, b: u16, c: u16) -> u16 {
    0xd000 | a << 8 | b << 4 | c
}
fn set_const(k: u16, d: u16) -> u16 {
    0xc000 | k << 4 | d
}
fn bnz(target: u16, a: u16) -> u16 {
    0xe000 | a << 8 | target << 4
}

fn program(frames: &[[u8; 32]]) -> Program {
    let image: Vec<u8> = frames.iter().flatten().copied().collect();
    Program::from_image_in(&image, Dialect::Mcst).expect("the image loads")
}

fn config(timing: Timing) -> Config {
    Config {
        timing,
        max_cycles: 1_000_000,
        tasks: TaskLog::All,
        ..Config::default()
    }
}

fn both(frames: &[[u8; 32]], memory: &[u8]) -> (RunReport, RunReport) {
    let p = program(frames);
    let mut interp = gpu16_interp::Interpreter::new();
    let spec = run(&mut interp, &p, memory, &config(Timing::default())).expect("runs");
    let rtl = run(&mut interp, &p, memory, &config(Timing::mcst_rtl())).expect("runs");
    (spec, rtl)
}

fn cycles(frames: &[[u8; 32]]) -> (u64, u64) {
    let (a, b) = both(frames, &[]);
    (a.cycles, b.cycles)
}

#[test]
fn micro_programs_of_the_table() {
    // m1_ready: 6 -> 9 (+3 for one IF).
    assert_eq!(
        cycles(&[cf(1, 0, 0, false, 1, &[]), code(&[READY]), halt(2)]),
        (6, 9)
    );
    // m2_add_ready: 7 -> 10.
    assert_eq!(
        cycles(&[
            cf(1, 0, 0, false, 1, &[]),
            code(&[add(1, 2, 3), READY]),
            halt(2)
        ]),
        (7, 10)
    );
    // m4_no_ready: sixteen nops run off IP 15: 21 -> 25 (+3, +1 for the implicit ready).
    assert_eq!(
        cycles(&[cf(1, 0, 0, false, 1, &[]), code(&[]), halt(2)]),
        (21, 25)
    );
    // m5_2if: two IFs in one group: 11 -> 17.
    assert_eq!(
        cycles(&[
            cf(2, 0, 0, false, 1, &[]),
            code(&[READY]),
            code(&[READY]),
            halt(3)
        ]),
        (11, 17)
    );
    // m6_2cf: two groups on one core: 11 -> 18 (the second CF waits for the core). The
    // dialect's scheduler makes the CF wait for its core under decisions.md's latencies too
    // (processed in 6, not 5), so the dialect alone gives 12, not the spec's 11.
    assert_eq!(
        cycles(&[
            cf(1, 0, 0, false, 1, &[]),
            code(&[READY]),
            cf(1, 0, 0, false, 1, &[]),
            code(&[READY]),
            halt(4)
        ]),
        (12, 18)
    );
    // m8_ld: 7 -> 11 (a load of bank 0 after R0 = 0: no bank switch).
    assert_eq!(
        cycles(&[
            cf(1, 0, 0, false, 1, &[]),
            code(&[ld(1, 0, 2), READY]),
            halt(2)
        ]),
        (7, 11)
    );
    // m9_ld_use: 8 -> 13 (+1 ld, +1 B2 bubble).
    assert_eq!(
        cycles(&[
            cf(1, 0, 0, false, 1, &[]),
            code(&[ld(1, 0, 2), add(2, 2, 3), READY]),
            halt(2)
        ]),
        (8, 13)
    );
    // m11_ld16: sixteen loads of one byte of bank 0: one a cycle, round robin from core 1,
    // so core 0 is granted in cycle 8 + 15 = 23, finishes in 24, readies in 25: 26 cycles.
    assert_eq!(
        cycles(&[
            cf(1, 0, 0, false, 0xFFFF, &[]),
            code(&[ld(1, 0, 2), READY]),
            halt(2)
        ]),
        (7, 26)
    );
    // m12_st16: sixteen stores: core 0 stores in 23 and readies in 24: 25 cycles.
    assert_eq!(
        cycles(&[
            cf(1, 0, 0, false, 0xFFFF, &[]),
            code(&[st(1, 0, 2), READY]),
            halt(2)
        ]),
        (7, 25)
    );
}

#[test]
fn a_loop_pays_one_bubble_per_taken_branch() {
    // r1 = 3; loop: r1 = r1 + r2 (r2 = 0xFF, i.e. -1); bnz loop, r1; ready.
    // decisions timing: CF 0, broadcast 1-4, set_consts 5, 6, then three trips of add+bnz
    // (7..12), ready 13: 14 cycles. RTL: start 8, set_consts 8, 9; trips: add 10, bnz 11
    // (taken, bubble 12), add 13, bnz 14 (taken, bubble 15), add 16, bnz 17 (not taken),
    // ready 18: 19 cycles = 14 + 3 + 2 taken branches.
    let frames = [
        cf(1, 0, 0, false, 1, &[]),
        code(&[
            set_const(3, 1),
            set_const(0xFF, 2),
            add(1, 2, 1),
            bnz(2, 1),
            READY,
        ]),
        halt(2),
    ];
    let (spec, rtl) = both(&frames, &[]);
    assert_eq!((spec.cycles, rtl.cycles), (14, 19));
    assert_eq!(spec.instructions, 9);
    assert_eq!(rtl.instructions, 9); // bubbles are not instructions
    assert_eq!(rtl.tasks[0].issue, 1);
    assert_eq!(rtl.tasks[0].start, 8);
    assert_eq!(rtl.tasks[0].end, 18);
}

#[test]
fn dialect_semantics() {
    // set_const into r0..r7 loads the constant, into r8..r15 the core id; mul keeps the low
    // byte only and leaves r(c+1); shifts take a register amount, 8 or more giving 0; ld/st
    // take any register as the bank register.
    let frames = [
        cf(1, 0, 0, false, 1 << 5, &[]),
        code(&[
            set_const(0x2A, 1), // r1 = 0x2A
            set_const(0x77, 9), // r9 = core id = 5
            set_const(0x10, 2), // r2 = 0x10
            set_const(0x55, 4), // r4 = 0x55 (mul must not touch it)
            mul(1, 2, 3),       // r3 = 0x2A * 0x10 mod 256 = 0xA0
            set_const(3, 5),    // r5 = 3
            lshft(1, 5, 6),     // r6 = 0x2A << 3 = 0x50 (mod 256)
            rshft(1, 5, 7),     // r7 = 0x2A >> 3 = 5
            set_const(9, 5),    // r5 = 9
            lshft(1, 5, 10),    // r10 = 0 (amount >= 8)
            st(2, 9, 3),        // M[(5 << 8) | 0x10] = 0xA0
            ld(2, 9, 11),       // r11 = M[0x510] = 0xA0
            READY,
        ]),
        halt(2),
    ];
    let (spec, rtl) = both(&frames, &[]);
    for r in [&spec, &rtl] {
        let regs = r.registers[5];
        assert_eq!(regs[1], 0x2A);
        assert_eq!(regs[9], 5);
        assert_eq!(regs[3], 0xA0);
        assert_eq!(regs[4], 0x55);
        assert_eq!(regs[6], 0x50);
        assert_eq!(regs[7], 5);
        assert_eq!(regs[10], 0);
        assert_eq!(regs[11], 0xA0);
        assert_eq!(r.memory[0x510], 0xA0);
    }
}

#[test]
fn a_load_from_another_bank_pays_the_bank_switch() {
    // set_const 1, r1 reads r1 (its b field is the constant's low nibble, 1): B = 0. The ld
    // of bank R1 = 1 then starts in cycle 9 with the previous B's nibble 0: its grant there
    // does not count, the next one (10) does, it finishes in 11, ready 12: 13 cycles.
    // decisions timing: 5, 6, 7: 8 cycles.
    let frames = [
        cf(1, 0, 0, false, 1, &[]),
        code(&[set_const(1, 1), ld(0, 1, 2), READY]),
        halt(2),
    ];
    let memory: Vec<u8> = (0..4096)
        .map(|a| if a == 0x100 { 0x99 } else { 0 })
        .collect();
    let (spec, rtl) = both(&frames, &memory);
    assert_eq!((spec.cycles, rtl.cycles), (8, 13));
    assert_eq!(rtl.registers[0][2], 0x99);
    // The same load of bank 0: no switch, 12 cycles.
    let frames = [
        cf(1, 0, 0, false, 1, &[]),
        code(&[set_const(1, 1), ld(0, 3, 2), READY]),
        halt(2),
    ];
    assert_eq!(cycles(&frames), (8, 12));
}

#[test]
fn r0_init_at_every_if_of_a_group() {
    // Two IFs on core 0 with Init_R0 = 7: the first adds 1 to r0 and stores it; the second
    // stores r0 again, which the init has reset to 7 (section 3.3).
    let frames = [
        cf(2, 0, 0, false, 1, &[(0, 7)]),
        code(&[
            set_const(1, 1),
            add(0, 1, 0),
            set_const(0x20, 2),
            st(2, 3, 0),
            READY,
        ]),
        code(&[set_const(0x21, 2), st(2, 3, 0), READY]),
        halt(3),
    ];
    let (spec, rtl) = both(&frames, &[]);
    for r in [&spec, &rtl] {
        assert_eq!(r.memory[0x20], 8);
        assert_eq!(r.memory[0x21], 7);
    }
}

#[test]
fn acq_waits_for_every_core_and_next_cf_jumps() {
    // CF 0: acq on core 0, a 16-slot task. CF 2: core 1, which under acq waits for every
    // core: it is processed only when core 0 is idle. decisions timing: task 1 runs 5..20,
    // CF 2 in 21, broadcast 22-25, core 1 readies in 26: 27 cycles.
    let frames = [
        cf(1, 1, 0, false, 1, &[]),
        code(&[]),
        cf(1, 0, 0, false, 2, &[]),
        code(&[READY]),
        halt(4),
    ];
    let (spec, _) = both(&frames, &[]);
    assert_eq!(spec.cycles, 27);
    assert_eq!(spec.tasks[1].issue, 22);
    // A stop CF with NextCF elsewhere and every core idle jumps: frame 2 jumps to the halt
    // at 5 over frames 3-4 (a task that would store). CF 0 in 0, task 1 broadcast 1-4 and
    // ready in 5; TP reaches 2 in 5 with core 0 busy, so it is a frame sync: the run ends in
    // 6, the first cycle every core is idle.
    let frames = [
        cf(1, 0, 0, false, 1, &[]),
        code(&[READY]),
        cf(0, 0, 5, true, 0, &[]),
        cf(1, 0, 0, false, 1, &[]),
        code(&[set_const(9, 1), st(1, 0, 1), READY]),
        halt(5),
    ];
    let (spec, _) = both(&frames, &[]);
    assert_eq!(spec.cycles, 6);
    assert_eq!(spec.tasks.len(), 1);
    // With an empty CF in front, the stop CF is reached in 6, every core idle: it jumps
    // (cycle 6) to the halt at 5, reached in 7: the run ends in 7, nothing stored.
    let frames = [
        cf(1, 0, 0, false, 1, &[]),
        code(&[READY]),
        cf(0, 0, 0, false, 0, &[]),
        cf(0, 0, 6, true, 0, &[]),
        cf(1, 0, 0, false, 1, &[]),
        code(&[set_const(9, 1), st(1, 0, 1), READY]),
        halt(6),
    ];
    let (spec, _) = both(&frames, &[]);
    assert_eq!(spec.cycles, 7);
    assert_eq!(spec.memory[9], 0);
}

#[test]
fn no_halt_stops_as_a_livelock_after_one_lap() {
    // CF 0 in cycle 0, its IF's broadcast in 1..=4 (TP to 2 as it is delivered), the 62
    // zero frames as empty control frames from cycle 5, one a cycle (they need no core),
    // frame 63 in 66: TP is back at frame 0, and the run stops as cycle 67 begins. The
    // same under both timings: only the task's start differs (5, or 8 with the RTL's fill).
    let p = program(&[cf(1, 0, 0, false, 1, &[]), code(&[READY])]);
    let walk: Vec<usize> = [0].into_iter().chain(2..64).collect();
    for timing in [Timing::default(), Timing::mcst_rtl()] {
        let mut interp = gpu16_interp::Interpreter::new();
        let failure = run(&mut interp, &p, &[], &config(timing)).unwrap_err();
        assert_eq!(
            failure.error,
            RunError::EndlessWalk {
                frame: 0,
                walk: walk.clone(),
                cycle: 67,
                cores: Vec::new(),
                same_state_at: None,
            }
        );
        assert_eq!(failure.error.rule_name(), "livelock");
        assert_eq!(failure.state.cycles, 67);
        assert_eq!(failure.state.task_summary.tasks, 1);
        // Below the proof's cycle the watchdog stops it first.
        let c = Config {
            max_cycles: 60,
            ..config(timing)
        };
        let failure = run(&mut interp, &p, &[], &c).unwrap_err();
        assert!(matches!(
            failure.error,
            RunError::Watchdog { limit: 60, .. }
        ));
        assert_eq!(failure.state.cycles, 60);
    }
}

/// A frame sync on the loop (frame 3) could end the run, but under the default timing the
/// task (one `ready`) has always ended when the scheduler arrives there, so it jumps back
/// to frame 0 each time. CF 0 in cycle 0, its IF's broadcast in 1..=4, the task's `ready`
/// and CF 2 in 5, the frame sync finds every core idle in 6 and jumps: TP is at frame 0
/// after cycle 6. The same again from cycle 7: CF 0 in 7, broadcast 8..=11, `ready` and CF 2
/// in 12, the jump in 13, in the state of cycle 6 (same registers, memory and scheduler,
/// the scheduler busy for one cycle more). So the run stops as cycle 14 begins. Under the
/// RTL's timing the task starts 3 cycles later (fill), the scheduler waits at the frame
/// sync from cycle 6 for core 0, whose `ready` is in 8, and the run ends in cycle 9.
#[test]
fn a_frame_sync_that_always_finds_its_cores_idle_stops_as_a_livelock() {
    let p = program(&[
        cf(1, 0, 0, false, 1, &[]),
        code(&[READY]),
        cf(0, 0, 0, false, 0, &[]),
        cf(0, 0, 0, true, 0, &[]),
    ]);
    let failure = run(
        &mut gpu16_interp::Interpreter::new(),
        &p,
        &[],
        &config(Timing::default()),
    )
    .unwrap_err();
    assert_eq!(
        failure.error,
        RunError::EndlessWalk {
            frame: 0,
            walk: vec![0, 2, 3],
            cycle: 14,
            cores: Vec::new(),
            same_state_at: Some(6),
        }
    );
    assert_eq!(failure.error.rule_name(), "livelock");
    assert_eq!(
        (failure.state.cycles, failure.state.task_summary.tasks),
        (14, 2)
    );
    let rtl = run(
        &mut gpu16_interp::Interpreter::new(),
        &p,
        &[],
        &config(Timing::mcst_rtl()),
    )
    .expect("the frame sync waits for core 0, and the run ends");
    assert_eq!((rtl.cycles, rtl.task_summary.tasks), (9, 1));
}

/// The loop of the test above with a task that counts in memory byte 0 (`ld`, +1, `st`):
/// frames 2..=11 are ten empty CFs, one a cycle, so the task (5 slots from cycle 5 of a lap)
/// has ended when the frame sync (frame 12) is reached in cycle 15 of the lap, which jumps
/// back: a lap is 16 cycles. The machine's state at frame 0 differs from lap to lap until
/// the byte wraps, so only then is the run proven endless, after at least 256 more tasks,
/// and the two states proven equal are a whole number of 256-lap rounds apart.
#[test]
fn a_loop_that_counts_in_memory_is_endless_only_once_its_count_repeats() {
    let counter = code(&[
        ld(0, 0, 1),
        set_const(1, 2),
        add(1, 2, 1),
        st(0, 0, 1),
        READY,
    ]);
    let mut frames = vec![cf(1, 0, 0, false, 1, &[]), counter];
    frames.extend((2..=11).map(|_| cf(0, 0, 0, false, 0, &[])));
    frames.push(cf(0, 0, 0, true, 0, &[]));
    let failure = run(
        &mut gpu16_interp::Interpreter::new(),
        &program(&frames),
        &[],
        &config(Timing::default()),
    )
    .unwrap_err();
    let RunError::EndlessWalk {
        frame,
        walk,
        cycle,
        same_state_at: Some(at),
        ..
    } = failure.error
    else {
        panic!("not a livelock by the state: {:?}", failure.error);
    };
    assert_eq!((frame, walk), (0, [0].into_iter().chain(2..=12).collect()));
    // Arrivals at frame 0 are in cycles 15 + 16k; the run stops the cycle after one.
    assert_eq!((at % 16, cycle % 16), (15, 0));
    let laps = (cycle - 1 - at) / 16;
    assert!(laps > 0 && laps % 256 == 0, "{laps} laps apart");
    let tasks = failure.state.task_summary.tasks;
    assert_eq!(tasks, (cycle - 1 - 15) / 16 + 1);
    assert!(tasks > 256, "{tasks}");
    assert_eq!(u64::from(failure.state.memory[0]), tasks % 256);
}

/// As above, but the task takes 9 more slots when its count comes back to 0 (`bnz` over
/// nine `nop`s otherwise): then it is still running when the scheduler reaches the frame
/// sync, which waits for it, and the run ends. Every state before differs in memory, so
/// nothing is proven: the 256th task (lap 255, from cycle 16 * 255 = 4080) has its
/// `ready` at IP 14 in cycle 4080 + 5 + 14 = 4099, and the run ends in cycle 4100.
#[test]
fn a_loop_whose_states_all_differ_is_not_called_endless() {
    let mut words = vec![
        ld(0, 0, 1),
        set_const(1, 2),
        add(1, 2, 1),
        st(0, 0, 1),
        bnz(14, 1),
    ];
    words.extend([NOP; 9]);
    words.push(READY);
    let mut frames = vec![cf(1, 0, 0, false, 1, &[]), code(&words)];
    frames.extend((2..=11).map(|_| cf(0, 0, 0, false, 0, &[])));
    frames.push(cf(0, 0, 0, true, 0, &[]));
    let r = run(
        &mut gpu16_interp::Interpreter::new(),
        &program(&frames),
        &[],
        &config(Timing::default()),
    )
    .expect("ends when the count wraps");
    assert_eq!(
        (r.cycles, r.task_summary.tasks, r.memory[0]),
        (4100, 256, 0)
    );
}

#[test]
fn loading_in_the_dialect() {
    // d680 (st [r6, r8], r0) is a reserved mode in the spec and an instruction here.
    let image: Vec<u8> = [cf(1, 0, 0, false, 1, &[]), code(&[0xd680, READY]), halt(2)]
        .iter()
        .flatten()
        .copied()
        .collect();
    assert!(Program::from_image_in(&image, Dialect::Spec).is_err());
    assert!(Program::from_image_in(&image, Dialect::Mcst).is_ok());
    // 65 frames do not fit task memory.
    let long = vec![0u8; 65 * 32];
    let e = Program::from_image_in(&long, Dialect::Mcst).unwrap_err();
    assert!(e.to_string().contains("65 frames"), "{e}");
    // A fence-3 frame the scheduler reads as a CF (frame 2, after the group) is an error;
    // one it only reads as code is not.
    let bad: Vec<u8> = [cf(1, 0, 0, false, 1, &[]), code(&[READY]), code(&[0x00C0])]
        .iter()
        .flatten()
        .copied()
        .collect();
    let e = Program::from_image_in(&bad, Dialect::Mcst).unwrap_err();
    assert!(e.to_string().contains("frame 2"), "{e}");
    let fine: Vec<u8> = [cf(1, 0, 0, false, 1, &[]), code(&[0x00C0, READY]), halt(2)]
        .iter()
        .flatten()
        .copied()
        .collect();
    assert!(Program::from_image_in(&fine, Dialect::Mcst).is_ok());
    let _ = NOP;
}

#[test]
fn a_branch_three_slots_after_a_load_waits_a_bubble() {
    // ld 8-9, nop 10, nop 11, B3 bubble 12, bnz (not taken) 13, ready 14: 15 cycles;
    // decisions timing 5..9: 10.
    let frames = [
        cf(1, 0, 0, false, 1, &[]),
        code(&[ld(1, 0, 2), NOP, NOP, bnz(0, 3), READY]),
        halt(2),
    ];
    assert_eq!(cycles(&frames), (10, 15));
}

#[test]
fn a_nop_after_a_load_into_its_b_field_carries_the_row() {
    // r6 = 3 (the row), r1 = 3 (the second load's bank). ld [r6, r0], r5 in 10-11. The nop
    // word 0x0050 has b field 5, the load's destination, so its B value is the load's row
    // R6 = 3: the second load, of bank 3, switches nothing: 13-14, ready 15: 16 cycles.
    let frames = [
        cf(1, 0, 0, false, 1, &[]),
        code(&[
            set_const(3, 6),
            set_const(3, 1),
            ld(6, 0, 5),
            0x0050,
            ld(7, 1, 9),
            READY,
        ]),
        halt(2),
    ];
    assert_eq!(cycles(&frames), (11, 16));
    // A plain nop carries R[0] = 0: the load of bank 3 switches, takes 3 cycles: 17.
    let frames = [
        cf(1, 0, 0, false, 1, &[]),
        code(&[
            set_const(3, 6),
            set_const(3, 1),
            ld(6, 0, 5),
            NOP,
            ld(7, 1, 9),
            READY,
        ]),
        halt(2),
    ];
    assert_eq!(cycles(&frames), (11, 17));
}

#[test]
fn a_load_granted_in_the_previous_bank_rescues_a_bank_switch() {
    // add r4, r4, r4 carries B = R4 = 0. Then each core loads from bank R0: core 0 (R0 = 1)
    // switches from nibble 0 to bank 1, but core 1's load is granted in bank 0 in the same
    // cycle (9), so core 0's grant counts: both finish in 10, ready in 11: 12 cycles.
    let both_cores = [
        cf(1, 0, 0, false, 0b11, &[(0, 1), (1, 0)]),
        code(&[add(4, 4, 4), ld(5, 0, 6), READY]),
        halt(2),
    ];
    assert_eq!(cycles(&both_cores).1, 12);
    // Core 0 alone: no rescue, its load takes 3 cycles: 13.
    let alone = [
        cf(1, 0, 0, false, 0b01, &[(0, 1)]),
        code(&[add(4, 4, 4), ld(5, 0, 6), READY]),
        halt(2),
    ];
    assert_eq!(cycles(&alone).1, 13);
}

#[test]
fn round_robin_starts_after_the_last_core_granted() {
    // Cores 0 and 1 store their R0 (1 and 2) at 0x40 in bank 0, in the same cycle. With the
    // pointer at its reset value 0, core 1 is granted first.
    let frames = [
        cf(1, 0, 0, false, 0b11, &[(0, 1), (1, 2)]),
        code(&[set_const(0x40, 1), st(1, 2, 0), READY]),
        halt(2),
    ];
    let (spec, rtl) = both(&frames, &[]);
    // decisions timing: both store in cycle 6, core 0 then core 1: core 1's byte stays.
    assert_eq!(spec.memory[0x40], 2);
    // RTL: core 1 stores in 9, core 0 in 10 (round robin from core 1): core 0's byte stays.
    assert_eq!(rtl.memory[0x40], 1);
    // set_const 8, st (9 for core 1, 10 for core 0), ready 10 / 11: 12 cycles.
    assert_eq!(rtl.cycles, 12);
    // Core 0's store waited in cycle 9 while core 1 had the bank: the one stalled cycle,
    // reported as an event the trace, the VCD and the timeline draw.
    struct Stalls(Vec<Event>);
    impl Observer for Stalls {
        fn event(&mut self, event: Event) {
            if matches!(event, Event::Stall { .. }) {
                self.0.push(event);
            }
        }
        fn rewind_events(&mut self, _cycle: u64) {
            self.0.clear();
        }
    }
    let mut stalls = Stalls(Vec::new());
    let mut interp = gpu16_interp::Interpreter::new();
    let c = config(Timing::mcst_rtl());
    let r = run_observed(&mut interp, &program(&frames), &[], &c, &mut stalls).expect("runs");
    assert_eq!(r.stalls, 1);
    // When cycle 10 begins, core 0 is waiting for its turn at the bank (it asked in 9),
    // and core 1, served in 9, runs on.
    let at_10 = Config {
        max_cycles: 10,
        ..c
    };
    let failure = run(&mut interp, &program(&frames), &[], &at_10).expect_err("stops at 10");
    let RunError::Watchdog { cores, .. } = failure.error else {
        panic!("{:?}", failure.error)
    };
    let waits: Vec<(u8, CoreWait)> = cores.iter().map(|c| (c.core, c.wait.clone())).collect();
    assert_eq!(waits, [(0, CoreWait::BankConflict), (1, CoreWait::Running)]);
    assert_eq!(
        stalls.0,
        [Event::Stall {
            core: 0,
            from: 9,
            to: 10,
            cause: StallCause::BankConflict,
            addr: 0x40
        }]
    );
}

#[test]
fn a_run_without_end_keeps_a_bounded_task_log() {
    // No halt, and a frame sync that never ends the run: a task on core 0, an empty CF that
    // waits for every core (so all are idle as the scheduler reaches frame 3), and a frame
    // sync at 3 that finds them idle in its first cycle, so it jumps to frame 0 for ever.
    // The task counts in memory from byte 0 up, little-endian and carrying into the next
    // byte (r3 the byte's address, r2 = 1), so the machine is never in the same state twice
    // as the scheduler comes back to frame 0, and no livelock is proven: the scheduler
    // issues a task a lap without end. With every task logged the run stops when the log
    // is full, long before the watchdog.
    let count = code(&[
        set_const(1, 2),
        set_const(0, 3),
        ld(3, 4, 1),
        add(1, 2, 1),
        st(3, 4, 1),
        bnz(8, 1),
        add(3, 2, 3),
        bnz(2, 2),
        READY,
    ]);
    let p = program(&[
        cf(1, 0, 0, false, 1, &[]),
        count,
        cf(0, 0, 0, false, 0xFFFF, &[]),
        cf(0, 0, 0, true, 1, &[]),
    ]);
    assert!(p.can_end() && p.mcst_walk().may_end());
    let mut interp = gpu16_interp::Interpreter::new();
    let c = Config {
        max_cycles: 1 << 32,
        ..config(Timing::default())
    };
    let failure = run(&mut interp, &p, &[], &c).unwrap_err();
    match failure.error {
        RunError::TaskLogFull { limit, .. } => {
            // The machine's documented limit: 2^22 records, about 200 MiB.
            assert_eq!(limit, 1 << 22);
            assert_eq!(failure.state.tasks.len(), limit);
            // The 2^22 tasks logged all ran (the run stops as the next one is issued), so
            // the count is 2^22, little-endian.
            assert_eq!(failure.state.memory[..4], [0, 0, 0x40, 0]);
        }
        e => panic!("{e}"),
    }
    // Without the log it runs to the watchdog.
    let c = Config {
        tasks: TaskLog::Summary,
        max_cycles: 100_000,
        ..config(Timing::default())
    };
    let failure = run(&mut interp, &p, &[], &c).unwrap_err();
    assert!(matches!(
        failure.error,
        RunError::Watchdog { limit: 100_000, .. }
    ));
    assert!(program(&[cf(1, 0, 0, false, 1, &[]), code(&[READY]), halt(2)]).can_end());
}

#[test]
fn a_one_cycle_broadcast_starts_its_task() {
    // broadcast=1, the documented minimum, used to leave the delivery due in the cycle it
    // began, after that cycle's delivery check: no task ever started and the run hung to
    // the watchdog. Hand-worked with the dialect's other latencies at their defaults:
    // m1_ready: CF in 0, broadcast in 1, ready in 2: 3 cycles (6 with broadcast=4).
    // m5_2if: CF 0, broadcast 1, ready 2, second broadcast 3 (core 0 idle from 3), ready
    // 4: 5 cycles (11).
    let timing = Timing {
        broadcast_cycles: 1,
        ..Timing::default()
    };
    let mut interp = gpu16_interp::Interpreter::new();
    let run_with = |frames: &[[u8; 32]], interp: &mut gpu16_interp::Interpreter| {
        run(interp, &program(frames), &[], &config(timing)).expect("runs")
    };
    let one = run_with(
        &[cf(1, 0, 0, false, 1, &[]), code(&[READY]), halt(2)],
        &mut interp,
    );
    assert_eq!(one.cycles, 3);
    assert_eq!((one.tasks[0].issue, one.tasks[0].start), (1, 2));
    let two = run_with(
        &[
            cf(2, 0, 0, false, 1, &[]),
            code(&[READY]),
            code(&[READY]),
            halt(3),
        ],
        &mut interp,
    );
    assert_eq!(two.cycles, 5);
    assert_eq!(
        two.tasks
            .iter()
            .map(|t| (t.issue, t.start))
            .collect::<Vec<_>>(),
        [(1, 2), (3, 4)]
    );
}
