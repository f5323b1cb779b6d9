//! Random differential testing: seeded programs, valid and rule-breaking, run under the
//! interpreter (the reference), the JIT and `auto` with several configurations; every
//! outcome (report or failure) must be equal, bit for bit and cycle for cycle.

mod common;

use common::{run_on, Outcome};
use gpu16_gen::image::Image;
// The workspace's one seeded generator: a fixed seed gives the same programs everywhere.
use gpu16_gen::rng::Rng;
use gpu16_interp::Interpreter;
use gpu16_jit::{Auto, Hotness, Jit};
use gpu16_machine::engine::isa::{AluOp, Instr, MemOp};
use gpu16_machine::{Config, ControlFrame, Fence, IssuePolicy, RunError};

/// Loop counters and their decrement: never written by loop bodies.
const COUNTER: u8 = 15;
const ONE: u8 = 14;

/// A register instruction writing only registers outside `keep` (and never r14, r15).
fn reg_op(rng: &mut Rng, keep: u16) -> Instr {
    let pick = |rng: &mut Rng, limit: u8| loop {
        let r = rng.below(u64::from(limit)) as u8;
        if keep & (1 << r) == 0 {
            return r;
        }
    };
    let src = |rng: &mut Rng| rng.below(16) as u8;
    match rng.below(10) {
        0 => Instr::Nop,
        1..=3 => {
            let op = AluOp::ALL[rng.below(7) as usize];
            Instr::Alu {
                op,
                a: src(rng),
                b: src(rng),
                c: pick(rng, 14),
            }
        }
        4 => loop {
            // c + 1 must be free too.
            let c = pick(rng, 13);
            if keep & (1 << (c + 1)) == 0 {
                break Instr::Mul {
                    a: src(rng),
                    b: src(rng),
                    c,
                };
            }
        },
        5 => Instr::Shift {
            left: rng.chance(50),
            a: src(rng),
            k: rng.below(8) as u8,
            c: pick(rng, 14),
        },
        // Small constants into r8..r13 make addresses collide; r1..r7 get the core id.
        _ => {
            let d = pick(rng, 14);
            let k = if rng.chance(70) {
                rng.below(4) as u8
            } else {
                rng.below(255) as u8
            };
            Instr::SetConst { k, d }
        }
    }
}

fn mem(rng: &mut Rng, op: MemOp, keep: u16) -> Instr {
    let r = if op.is_read() {
        loop {
            let r = rng.below(14) as u8;
            if keep & (1 << r) == 0 {
                break r;
            }
        }
    } else {
        rng.below(16) as u8
    };
    Instr::Mem {
        op,
        a: rng.below(16) as u8,
        hi: rng.below(4) as u8,
        r,
    }
}

/// Append one chunk of at most `room` instructions: a register op, a plain access, or a
/// whole atomic sequence.
fn chunk(rng: &mut Rng, out: &mut Vec<Instr>, room: usize, keep: u16) {
    match rng.below(10) {
        0..=3 => out.push(reg_op(rng, keep)),
        4..=6 => {
            let op = if rng.chance(50) { MemOp::Ld } else { MemOp::St };
            out.push(mem(rng, op, keep));
        }
        _ => {
            let body = rng.below(3) as usize;
            if body + 2 > room {
                return out.push(reg_op(rng, keep));
            }
            let (a, hi) = (rng.below(14) as u8, rng.below(4) as u8);
            let keep = keep | 1 << a | 1 << hi;
            let r = loop {
                let r = rng.below(14) as u8;
                if keep & (1 << r) == 0 {
                    break r;
                }
            };
            out.push(Instr::Mem {
                op: MemOp::LdSync,
                a,
                hi,
                r,
            });
            for _ in 0..body {
                out.push(reg_op(rng, keep));
            }
            out.push(Instr::Mem {
                op: MemOp::StSync,
                a,
                hi,
                r: rng.below(16) as u8,
            });
        }
    }
}

/// A frame that keeps every rule: bounded loops, closed sequences.
fn valid_frame(rng: &mut Rng) -> Vec<Instr> {
    let mut f = Vec::new();
    let guard = 1 << COUNTER | 1 << ONE;
    while f.len() < 3 && rng.chance(70) {
        let room = 3 - f.len();
        chunk(rng, &mut f, room, guard);
    }
    if rng.chance(60) {
        f.push(Instr::SetConst { k: 1, d: ONE });
        f.push(Instr::SetConst {
            k: 1 + rng.below(12) as u8,
            d: COUNTER,
        });
        let head = f.len();
        let body_room = 16 - head - 2 - 1;
        let want = 1 + rng.below(body_room as u64 - 1) as usize;
        while f.len() - head < want {
            let room = want - (f.len() - head);
            chunk(rng, &mut f, room, guard);
        }
        f.push(Instr::Alu {
            op: AluOp::Sub,
            a: COUNTER,
            b: ONE,
            c: COUNTER,
        });
        f.push(Instr::Bnz {
            a: COUNTER,
            target: head as u8,
        });
    }
    while f.len() < 16 && rng.chance(80) {
        let room = 16 - f.len();
        chunk(rng, &mut f, room, guard);
    }
    assert!(f.len() <= 16, "chunks fit their room");
    if f.len() < 16 && rng.chance(40) {
        f.push(Instr::Ready);
    }
    f
}

/// A rule breaker: one random instruction replaced by an access or a `ready` out of place.
fn mutate(rng: &mut Rng, f: &mut Vec<Instr>) {
    if f.is_empty() {
        f.push(Instr::Nop);
    }
    let at = rng.below(f.len() as u64) as usize;
    f[at] = match rng.below(5) {
        0 => mem(rng, MemOp::StSync, 0),
        1 => mem(rng, MemOp::LdSync, 0),
        2 => mem(rng, MemOp::Ld, 0),
        3 => Instr::Ready,
        _ => Instr::Bnz {
            a: rng.below(16) as u8,
            target: rng.below(16) as u8,
        },
    };
}

/// Sixteen random words, reserved ld/st modes turned into valid ones.
fn random_words(rng: &mut Rng) -> Vec<u16> {
    (0..16)
        .map(|_| {
            let w = rng.next_u64() as u16;
            if matches!(w >> 12, 0xb | 0xd) {
                w & !0x80
            } else {
                w
            }
        })
        .collect()
}

struct Case {
    image: Image,
    memory: Vec<u8>,
    /// Whether the program may loop forever (then only small limits are used).
    unbounded: bool,
}

fn program(rng: &mut Rng) -> Case {
    let mut image = Image::new();
    let mut unbounded = false;
    for _ in 0..1 + rng.below(3) {
        let mut frames = Vec::new();
        for _ in 0..1 + rng.below(2) {
            let kind = rng.below(100);
            let words = if kind < 5 {
                unbounded = true;
                random_words(rng)
            } else {
                let mut f = valid_frame(rng);
                if kind < 20 {
                    mutate(rng, &mut f);
                    unbounded = true;
                }
                f.iter().map(Instr::encode).collect()
            };
            frames.push(words);
        }
        let active = match rng.below(4) {
            0 => 0xFFFF,
            1 => 1 << rng.below(16),
            _ => rng.next_u64() as u16,
        };
        let mut r0 = [0u8; 16];
        for v in &mut r0 {
            *v = if rng.chance(80) {
                rng.below(4) as u8
            } else {
                rng.next_u64() as u8
            };
        }
        // Init_R0_Vect is drawn whole: bits of inactive cores too.
        let control = ControlFrame {
            fence: [Fence::No, Fence::No, Fence::Acq, Fence::Rel][rng.below(4) as usize],
            active,
            init_vect: rng.next_u64() as u16,
            init_r0: r0,
            ..ControlFrame::new(0, Fence::No, 0, &[])
        };
        let bodies: Vec<&[u16]> = frames.iter().map(Vec::as_slice).collect();
        image = image.group_words(control, &bodies);
    }
    let memory = if rng.chance(50) {
        Vec::new()
    } else {
        (0..4096).map(|_| rng.below(4) as u8).collect()
    };
    Case {
        image,
        memory,
        unbounded,
    }
}

fn config(rng: &mut Rng, unbounded: bool) -> Config {
    let mut c = Config {
        issue: if rng.chance(50) {
            IssuePolicy::InOrder
        } else {
            IssuePolicy::Lookahead
        },
        bank_conflicts: rng.chance(50),
        ..Config::default()
    };
    if unbounded || rng.chance(30) {
        c.max_cycles = 5 + rng.below(400);
    }
    c
}

#[derive(Default, Debug)]
struct Tally {
    ok: u32,
    faults: u32,
    watchdogs: u32,
}

fn check(rng_seed: u64, programs: u32) -> Tally {
    let mut rng = Rng::new(rng_seed);
    // Small cache bounds so eviction happens during the test too.
    let mut jit = Jit::with_options(gpu16_jit::JitOptions {
        frames_per_module: 8,
        max_modules: 4,
        ..Default::default()
    })
    .unwrap();
    // One switches at the second issue, one inside a task after 50 interpreted instructions,
    // and one compiles in the background from either, switching whenever its code is ready.
    let mut autos = [
        Auto::with_threshold(2),
        Auto::with_hotness(Hotness {
            issues: u32::MAX,
            instructions: 50,
        }),
        Auto::with_options(
            Hotness {
                issues: 2,
                instructions: 50,
            },
            gpu16_jit::JitOptions::default(),
        )
        .unwrap(),
    ];
    let mut interp = Interpreter::new();
    let mut tally = Tally::default();
    for n in 0..programs {
        let case = program(&mut rng);
        let p = case.image.program();
        for _ in 0..2 {
            let cfg = config(&mut rng, case.unbounded);
            let want: Outcome = run_on(&mut interp, &p, &case.memory, &cfg);
            let got = run_on(&mut jit, &p, &case.memory, &cfg);
            assert!(
                got == want,
                "program {n} (seed {rng_seed:#x}) differs under the jit with {cfg:?}\nimage: {:?}\njit: {got:#?}\ninterp: {want:#?}",
                case.image.bytes()
            );
            let got = run_on(&mut autos[n as usize % 3], &p, &case.memory, &cfg);
            assert!(got == want, "program {n} differs under auto with {cfg:?}");
            match &want {
                Ok(_) => tally.ok += 1,
                Err(f) if matches!(f.error, RunError::Fault { .. }) => tally.faults += 1,
                Err(f) if matches!(f.error, RunError::Watchdog { .. }) => tally.watchdogs += 1,
                Err(f) => panic!("unexpected failure {:?}", f.error),
            }
        }
    }
    assert!(jit.stats().modules_freed > 0, "the bounded cache evicted");
    let background = autos[2].jit().map_or(0, |j| j.stats().compiled);
    assert!(background > 0, "background compiles were used");
    tally
}

#[test]
fn jit_and_auto_equal_the_interpreter_on_random_programs() {
    let programs = if cfg!(debug_assertions) { 300 } else { 2500 };
    let tally = check(0x9e37_79b9_7f4a_7c15, programs);
    eprintln!("{tally:?}");
    // Each kind of outcome must actually be exercised.
    let runs = 2 * programs;
    assert!(tally.ok > runs / 5, "{tally:?}");
    assert!(tally.faults > runs / 50, "{tally:?}");
    assert!(tally.watchdogs > runs / 50, "{tally:?}");
}
