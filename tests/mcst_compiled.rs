//! Compiled code in the MCST dialect: the JIT (and `auto` once a frame is hot) runs a core's
//! register-only slots ahead of the slot engine's clock. Hand-worked values from
//! mcst-dialect.md's timing, checked on the interpreter (which steps every slot) and on the
//! compiled backends, with the watchdog landing inside compiled loops, IP 15's end under
//! both timings, taken-branch bubbles and the bank-switch rule reading the B value a
//! compiled slot left.

use gpu16_asm::assemble_in;
use gpu16_interp::Interpreter;
use gpu16_jit::{Auto, Jit};
use gpu16_machine::engine::backend::Backend;
use gpu16_machine::{
    run, Config, Dialect, Program, RunError, RunReport, SlotTiming, TaskLog, Timing,
};

fn program(source: &str) -> Program {
    assemble_in(source, "t.s", Dialect::Mcst)
        .unwrap_or_else(|d| panic!("{d}"))
        .program
}

fn config(timing: Timing, max_cycles: u64) -> Config {
    Config {
        timing,
        max_cycles,
        tasks: TaskLog::All,
        ..Config::default()
    }
}

/// The run's report, or its failure's state with the error, on `backend`.
fn outcome<B: Backend>(
    backend: &mut B,
    p: &Program,
    config: &Config,
) -> (Option<RunError>, RunReport) {
    match run(backend, p, &[], config) {
        Ok(r) => (None, r),
        Err(f) => (Some(f.error), f.state),
    }
}

/// Run on the interpreter, the JIT and `auto` compiling at once; all three must agree (the
/// backend's name aside). The interpreter's outcome, and how many slot forms the JIT
/// compiled.
fn everywhere(p: &Program, config: &Config) -> ((Option<RunError>, RunReport), u64) {
    let reference = outcome(&mut Interpreter::new(), p, config);
    let mut jit = Jit::new();
    let mut auto = Auto::with_threshold(1);
    for (name, mut other) in [
        ("jit", outcome(&mut jit, p, config)),
        ("auto", outcome(&mut auto, p, config)),
    ] {
        other.1.backend.clone_from(&reference.1.backend);
        assert_eq!(other, reference, "{name} differs from the interpreter");
    }
    (reference, jit.stats().slots_compiled)
}

/// 16 cores: 200 outer trips around 250 inner trips of a 6-instruction body, then a store
/// of the result to bank 0 at the core's row.
const LOOPS: &str = "
.cf mask=0xffff
.if
    set_const 200, r1
    set_const 1, r2
    set_const 3, r6
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
    set_const 0, r8
    st [r8, r7], r4
    ready
.halt
";

/// Slots a core runs in `LOOPS`: 3 + 200 * (1 + 250 * 6 + 2) + 3 (set_const, st, ready).
const LOOP_SLOTS: u64 = 3 + 200 * (1 + 250 * 6 + 2) + 3;
/// Under the default timing the CF takes cycle 0 and the broadcast cycles 1-4, so the
/// first slot is cycle 5.
const FIRST_SLOT: u64 = 5;

/// `LOOPS`'s r4, worked out in plain Rust: mul keeps the low byte in this dialect, rshft
/// shifts by a register (r2 = 1).
fn loop_value() -> u8 {
    let mut r4 = 0u8;
    for _ in 0..200 {
        for r3 in (1..=250u8).rev() {
            r4 = r4.wrapping_mul(3).wrapping_add(r3);
            r4 ^= r4 >> 1;
        }
    }
    r4
}

#[test]
fn nested_loops_take_the_hand_worked_cycles_on_every_backend() {
    let p = program(LOOPS);
    let ((error, r), compiled) = everywhere(&p, &config(Timing::default(), 1 << 32));
    assert_eq!(error, None);
    assert!(compiled >= 1, "the jit compiled no slot form");
    assert_eq!(r.instructions, 16 * LOOP_SLOTS);
    // The ready's slot is FIRST_SLOT + LOOP_SLOTS - 1; the halt is seen in the next cycle.
    assert_eq!(r.cycles, FIRST_SLOT + LOOP_SLOTS);
    for core in 0..16 {
        assert_eq!(r.memory[core], loop_value(), "bank 0, row {core}");
    }

    // mcst-rtl: 3 cycles of pipeline fill, a bubble after each of the 200 * 249 + 199 taken
    // branches, and bank 0 grants the 16 stores one a cycle.
    let ((error, rtl), _) = everywhere(&p, &config(Timing::mcst_rtl(), 1 << 32));
    assert_eq!(error, None);
    assert_eq!(rtl.cycles, r.cycles + 3 + (200 * 249 + 199) + 15);
    assert_eq!(rtl.memory, r.memory);
}

#[test]
fn the_watchdog_stops_compiled_loops_in_the_exact_cycle() {
    let p = program(LOOPS);
    // Around the first slot, inside the loops, at and around polls (every 2^16 cycles), and
    // at the last slots.
    for limit in [
        6,
        7,
        11,
        100,
        1001,
        65_535,
        65_536,
        65_537,
        131_073,
        299_999,
        FIRST_SLOT + LOOP_SLOTS - 3,
        FIRST_SLOT + LOOP_SLOTS - 1,
    ] {
        let ((error, state), _) = everywhere(&p, &config(Timing::default(), limit));
        assert!(
            matches!(error, Some(RunError::Watchdog { .. })),
            "limit {limit}: {error:?}"
        );
        // Every core ran the slots of cycles FIRST_SLOT .. limit - 1.
        assert_eq!(
            state.instructions,
            16 * (limit - FIRST_SLOT),
            "limit {limit}"
        );
        let ((error, _), _) = everywhere(&p, &config(Timing::mcst_rtl(), limit));
        assert!(matches!(error, Some(RunError::Watchdog { .. })));
    }
}

/// One core: r1 = 5 and r2 = 1 in a first task, then a frame whose IP 15 jumps back to IP 0
/// four times and runs off the end the fifth (80 instructions, r3 = 70).
const OFF_THE_END: &str = "
.cf mask=0x1
.if
    set_const 5, r1
    set_const 1, r2
    ready
.cf mask=0x1
.if
top:
    sub r1, r2, r1
    add r3, r2, r3
    add r3, r2, r3
    add r3, r2, r3
    add r3, r2, r3
    add r3, r2, r3
    add r3, r2, r3
    add r3, r2, r3
    add r3, r2, r3
    add r3, r2, r3
    add r3, r2, r3
    add r3, r2, r3
    add r3, r2, r3
    add r3, r2, r3
    add r3, r2, r3
    bnz top, r1
.halt
";

#[test]
fn running_off_ip_15_ends_the_part_as_the_timing_says() {
    let p = program(OFF_THE_END);
    let timing = |slots: SlotTiming| Timing {
        slots,
        ..Timing::default()
    };
    let base = SlotTiming::default();
    let ((error, plain), _) = everywhere(&p, &config(timing(base), 1 << 20));
    assert_eq!(error, None);
    assert_eq!(plain.instructions, 3 + 80);
    assert_eq!(plain.registers[0][3], 70);
    assert_eq!(plain.registers[0][1], 0);
    // The injected ready after IP 15 is one more slot.
    let ((_, injected), _) = everywhere(
        &p,
        &config(
            timing(SlotTiming {
                ip15_end_cycles: 1,
                ..base
            }),
            1 << 20,
        ),
    );
    assert_eq!(injected.cycles, plain.cycles + 1);
    assert_eq!(injected.instructions, plain.instructions);
    // Two bubbles after each of the four taken branches.
    let ((_, bubbled), _) = everywhere(
        &p,
        &config(
            timing(SlotTiming {
                taken_branch_bubbles: 2,
                ..base
            }),
            1 << 20,
        ),
    );
    assert_eq!(bubbled.cycles, plain.cycles + 4 * 2);
    // And the watchdog in every cycle of the run.
    for limit in 1..plain.cycles {
        let ((error, _), _) = everywhere(&p, &config(timing(base), limit));
        assert!(matches!(error, Some(RunError::Watchdog { .. })), "{limit}");
    }
}

/// One core: register-only slots, the last of which reads r2 in its b field, then an `ld`
/// from bank 0 (r1 = 0).
fn switch_program(b_value: u8) -> Program {
    program(&format!(
        "
.cf mask=0x1
.if
    set_const 0, r1
    set_const {b_value}, r2
    add r0, r2, r3
    ld [r0, r1], r4
    ready
.halt
"
    ))
}

#[test]
fn the_bank_switch_rule_reads_the_b_value_compiled_slots_leave() {
    // mcst-rtl's bank-switch rule: an ld's grant in its first cycle does not count when
    // the slot before it (`add r0, r2, r3`: B = r2) addressed another bank than the ld's 0.
    let config = config(Timing::mcst_rtl(), 1 << 20);
    let ((error, same), compiled) = everywhere(&switch_program(0), &config);
    assert_eq!(error, None);
    assert!(compiled >= 1);
    let ((_, other), _) = everywhere(&switch_program(5), &config);
    assert_eq!(other.cycles, same.cycles + 1);
    // Bank 0 is r2's low four bits, so 16 is bank 0 again.
    let ((_, wrapped), _) = everywhere(&switch_program(16), &config);
    assert_eq!(wrapped.cycles, same.cycles);
}

#[test]
fn auto_steps_a_frame_until_it_is_hot() {
    // `auto` asks for a frame's slot form only once the engine has wanted it as often as a
    // frame is issued before it is hot (1,000 by default): the one-trip task below never
    // is, so no JIT is built; the loops are, so it is.
    let p = switch_program(0);
    let mut auto = Auto::new();
    run(&mut auto, &p, &[], &config(Timing::default(), 1 << 20)).expect("runs");
    assert!(!auto.jit_built());
    run(
        &mut auto,
        &program(LOOPS),
        &[],
        &config(Timing::default(), 1 << 32),
    )
    .expect("runs");
    // Background compiles are the spec dialect's; slot forms compile where they are asked.
    let first = auto.jit().expect("built").stats();
    assert!(first.slots_compiled >= 1);
    // A later run takes the compiled form at the engine's first want: here 16 cores want
    // it once each before the watchdog stops them, far from hot in this run.
    let stopped = run(
        &mut auto,
        &program(LOOPS),
        &[],
        &config(Timing::default(), 20),
    );
    assert!(stopped.is_err());
    let again = auto.jit().expect("built").stats();
    assert_eq!(again.slots_compiled, first.slots_compiled);
    assert!(again.hits > first.hits);
}

#[test]
fn instruction_frames_past_the_image_run_compiled_too() {
    // One CF whose IF lies past the image's end: task memory there is zero, an IF of 16
    // nops that runs off IP 15 (cycles 5 to 20). Then the zero frames are CFs without IFs,
    // one a cycle from cycle 5, and the task pointer wraps forever: the walk can never end,
    // so the run stops as a livelock as cycle 67 begins, after frame 63 in cycle 66.
    let mut image = vec![0u8; 32];
    image[0] = 1; // IF_Num 1
    image[2] = 1; // CAV: core 0
    let p = Program::from_image_in(&image, Dialect::Mcst).expect("loads");
    let ((error, state), compiled) = everywhere(&p, &config(Timing::default(), 5_000));
    assert!(
        matches!(
            error,
            Some(RunError::EndlessWalk {
                frame: 0,
                cycle: 67,
                ..
            })
        ),
        "{error:?}"
    );
    assert!(compiled >= 1);
    assert!(state.instructions >= 16);
}
