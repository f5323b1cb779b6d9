//! Builders shared by the behaviour suite: one constructor per instruction (operands in the
//! spec's order), control frames, program images assembled frame by frame (with the shared
//! `gpu16_gen::image::Image`), and helpers that run an image on any backend and pull the
//! interesting numbers out of the report.
//!
//! Nothing here computes an expected value: every expectation lives in the tests, worked out
//! by hand (or by a plain reference function written in the test).

#![allow(dead_code)]

use gpu16_machine::engine::backend::Backend;
use gpu16_machine::engine::isa::{AluOp, Instr, MemOp};
use gpu16_machine::{
    Config, ControlFrame, Event, Fence, IssuePolicy, RunError, RunFailure, RunReport,
};

/// A backend constructor; every test takes one, so the suite runs on every backend.
pub type Mk<B> = fn() -> B;

// ---------------------------------------------------------------- instructions

pub fn nop() -> Instr {
    Instr::Nop
}
fn alu(op: AluOp, a: u8, b: u8, c: u8) -> Instr {
    assert!(a < 16 && b < 16 && c < 16);
    Instr::Alu { op, a, b, c }
}
/// `add ra, rb, rc`: rc = ra + rb.
pub fn add(a: u8, b: u8, c: u8) -> Instr {
    alu(AluOp::Add, a, b, c)
}
pub fn sub(a: u8, b: u8, c: u8) -> Instr {
    alu(AluOp::Sub, a, b, c)
}
pub fn div(a: u8, b: u8, c: u8) -> Instr {
    alu(AluOp::Div, a, b, c)
}
pub fn cmpge(a: u8, b: u8, c: u8) -> Instr {
    alu(AluOp::Cmpge, a, b, c)
}
pub fn and(a: u8, b: u8, c: u8) -> Instr {
    alu(AluOp::And, a, b, c)
}
pub fn or(a: u8, b: u8, c: u8) -> Instr {
    alu(AluOp::Or, a, b, c)
}
pub fn xor(a: u8, b: u8, c: u8) -> Instr {
    alu(AluOp::Xor, a, b, c)
}
pub fn mul(a: u8, b: u8, c: u8) -> Instr {
    assert!(a < 16 && b < 16 && c < 16);
    Instr::Mul { a, b, c }
}
/// `rshft ra, k, rc`: rc = ra >> k (k an immediate 0..7).
pub fn rshft(a: u8, k: u8, c: u8) -> Instr {
    assert!(k < 8);
    Instr::Shift {
        left: false,
        a,
        k,
        c,
    }
}
pub fn lshft(a: u8, k: u8, c: u8) -> Instr {
    assert!(k < 8);
    Instr::Shift {
        left: true,
        a,
        k,
        c,
    }
}
fn mem(op: MemOp, a: u8, hi: u8, r: u8) -> Instr {
    assert!(hi < 4, "the high-address register is R0..R3");
    Instr::Mem { op, a, hi, r }
}
/// `ld [ra, rhi], rr`.
pub fn ld(a: u8, hi: u8, r: u8) -> Instr {
    mem(MemOp::Ld, a, hi, r)
}
pub fn ld_sync(a: u8, hi: u8, r: u8) -> Instr {
    mem(MemOp::LdSync, a, hi, r)
}
/// `st [ra, rhi], rr`.
pub fn st(a: u8, hi: u8, r: u8) -> Instr {
    mem(MemOp::St, a, hi, r)
}
pub fn st_sync(a: u8, hi: u8, r: u8) -> Instr {
    mem(MemOp::StSync, a, hi, r)
}
/// `set_const k, rd`.
pub fn set_const(k: u8, d: u8) -> Instr {
    Instr::SetConst { k, d }
}
/// `bnz target, ra`.
pub fn bnz(a: u8, target: u8) -> Instr {
    Instr::Bnz { a, target }
}
pub fn ready() -> Instr {
    Instr::Ready
}

/// A task body that executes exactly `n` instructions: `n - 1` nops, then `ready`.
pub fn len(n: usize) -> Vec<Instr> {
    assert!((1..=16).contains(&n));
    let mut v = vec![nop(); n - 1];
    v.push(ready());
    v
}

// ---------------------------------------------------------------- control frames

/// A control frame for the cores in `active`, fence `no`, no R0 init. `Image::group` fills
/// in IF_Num.
pub fn cf(active: u16) -> ControlFrame {
    ControlFrame {
        if_num: 0,
        fence: Fence::No,
        active,
        init_vect: 0,
        init_r0: [0; 16],
        reserved_header: 0,
        reserved: [0; 10],
    }
}

pub trait CfExt {
    fn fence(self, fence: Fence) -> Self;
    /// Set bit `core` of Init_R0_Vect and Init_R0[core] = value.
    fn r0(self, core: usize, value: u8) -> Self;
    /// Set IF_Num (for frames pushed with `Image::control`).
    fn ifs(self, n: u8) -> Self;
}

impl CfExt for ControlFrame {
    fn fence(mut self, fence: Fence) -> Self {
        self.fence = fence;
        self
    }
    fn r0(mut self, core: usize, value: u8) -> Self {
        self.init_vect |= 1 << core;
        self.init_r0[core] = value;
        self
    }
    fn ifs(mut self, n: u8) -> Self {
        self.if_num = n;
        self
    }
}

/// The mask of the listed cores.
pub fn cores(ids: &[usize]) -> u16 {
    ids.iter().fold(0, |m, &c| m | (1 << c))
}

// ---------------------------------------------------------------- images

/// The program-image builder every test shares (`gpu16_gen::image`).
pub use gpu16_gen::image::Image;

// ---------------------------------------------------------------- running

pub fn in_order() -> Config {
    Config::default()
}

pub fn lookahead() -> Config {
    Config {
        issue: IssuePolicy::Lookahead,
        ..Config::default()
    }
}

pub fn banked() -> Config {
    Config {
        bank_conflicts: true,
        ..Config::default()
    }
}

pub fn limited(max_cycles: u64) -> Config {
    Config {
        max_cycles,
        ..Config::default()
    }
}

pub fn run<B: Backend>(
    mk: Mk<B>,
    image: &Image,
    memory: &[u8],
    config: &Config,
) -> Result<RunReport, Box<RunFailure>> {
    let mut backend = mk();
    gpu16_machine::run(&mut backend, &image.program(), memory, config)
}

/// Run with a zero memory and the given configuration; the run must succeed.
pub fn run_ok<B: Backend>(mk: Mk<B>, image: &Image, memory: &[u8], config: &Config) -> RunReport {
    match run(mk, image, memory, config) {
        Ok(r) => r,
        Err(f) => panic!("run failed: {}", f.error),
    }
}

/// Default configuration, zero memory.
pub fn simple<B: Backend>(mk: Mk<B>, image: &Image) -> RunReport {
    run_ok(mk, image, &[], &in_order())
}

/// The run must fail; returns its error.
pub fn run_err<B: Backend>(mk: Mk<B>, image: &Image, memory: &[u8], config: &Config) -> RunError {
    match run(mk, image, memory, config) {
        Ok(r) => panic!("run succeeded in {} cycles, expected a failure", r.cycles),
        Err(f) => f.error,
    }
}

/// Instructions 0..5 of a frame whose cores part ways: r9 = 1 and r10 = `rounds`, then a
/// core with R0 != 0 jumps to IP6 (what the caller appends) while the others count r10 down
/// to zero and end. From a start cycle S: IP0 at S, IP1 at S + 1, the bnz at S + 2; a round
/// (sub, bnz) every 2 cycles from S + 3; the counters' ready at S + 3 + 2 * rounds.
pub fn count_down_unless_r0(rounds: u8) -> Vec<Instr> {
    vec![
        set_const(1, 9),
        set_const(rounds, 10),
        bnz(0, 6),
        sub(10, 9, 10),
        bnz(10, 3),
        ready(),
    ]
}

/// A run that must fail, with the events it reported in a fixed order (by first cycle,
/// then as `Debug` prints them): engines report them in their own order.
pub fn failed_with_events<B: Backend>(
    mk: Mk<B>,
    image: &Image,
    config: &Config,
) -> (Box<RunFailure>, Vec<Event>) {
    let mut backend = mk();
    let mut events: Vec<Event> = Vec::new();
    match gpu16_machine::run_observed(&mut backend, &image.program(), &[], config, &mut events) {
        Ok(r) => panic!("run succeeded in {} cycles, expected a failure", r.cycles),
        Err(f) => (f, in_cycle_order(events)),
    }
}

/// `events` by first cycle, then as `Debug` prints them.
pub fn in_cycle_order(mut events: Vec<Event>) -> Vec<Event> {
    let first = |e: &Event| match *e {
        Event::ControlFrame { cycle, .. } => cycle,
        Event::Broadcast { from, .. }
        | Event::SchedulerWait { from, .. }
        | Event::LockHeld { from, .. }
        | Event::Stall { from, .. } => from,
        Event::CorePart { start, .. } => start,
    };
    events.sort_by_cached_key(|e| (first(e), format!("{e:?}")));
    events
}

/// The task timeline in issue order: (frame, issue, start, end).
pub fn timeline(r: &RunReport) -> Vec<(usize, u64, u64, u64)> {
    r.tasks
        .iter()
        .map(|t| (t.frame, t.issue, t.start, t.end))
        .collect()
}

pub fn stalls(r: &RunReport) -> [u64; 16] {
    std::array::from_fn(|i| r.cores[i].stalls)
}

pub fn instructions(r: &RunReport) -> [u64; 16] {
    std::array::from_fn(|i| r.cores[i].instructions)
}

/// A 4096-byte memory image, zero except the given bytes.
pub fn memory(bytes: &[(u16, u8)]) -> Vec<u8> {
    let mut m = vec![0u8; 4096];
    for &(a, v) in bytes {
        m[usize::from(a)] = v;
    }
    m
}
