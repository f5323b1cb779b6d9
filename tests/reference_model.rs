//! An independent, deliberately naive model of the machine, stepped cycle by cycle: every
//! cycle the task scheduler looks at the frames, then cores 0..15 each execute one
//! instruction, in that order. Stalled accesses retry every cycle. It shares only the
//! instruction table and the byte-level memory rules with the emulator, not the run loop or
//! the scheduler, so it checks the event-driven run loop (cores running ahead, parking,
//! sleeping on locks, per-bank horizons, scheduler bounds) against the plain reading of
//! decisions.md on generated programs.

// The model indexes frames and cores by number on purpose: it mirrors the spec's wording.
#![allow(clippy::needless_range_loop)]

use gpu16::fuzz::Case;
use gpu16::BackendKind;
use gpu16_machine::engine::isa::{Flow, Instr};
use gpu16_machine::engine::memory::{FaultRule, Refusal, SharedMemory};
use gpu16_machine::engine::semantics::execute;
use gpu16_machine::engine::semantics::Effect;
use gpu16_machine::frame::FRAME_BYTES;
use gpu16_machine::{
    Config, ControlFrame, Fence, FrameKind, InstrFrame, IssuePolicy, Program, RunError,
};

#[derive(Debug, PartialEq, Eq)]
struct Task {
    frame: usize,
    mask: u16,
    fence: Fence,
    issue: u64,
    start: u64,
    /// Cores still running it.
    remaining: u16,
    end: u64,
}

#[derive(Debug, PartialEq, Eq)]
#[allow(clippy::large_enum_variant)] // a test value, compared once
enum Outcome {
    Done {
        cycles: u64,
        regs: [[u8; 16]; 16],
        memory: Vec<u8>,
        tasks: Vec<(usize, u16, u64, u64, u64)>,
        instructions: [u64; 16],
        stalls: [u64; 16],
    },
    Fault {
        rule: &'static str,
        frame: usize,
        core: u8,
        ip: u8,
        cycle: u64,
    },
    Watchdog,
}

struct Core {
    regs: [u8; 16],
    ip: u8,
    task: Option<usize>,
    code: [Instr; 16],
    instructions: u64,
    stalls: u64,
}

fn reference(program: &Program, memory: &[u8], config: &Config) -> Outcome {
    let n = program.len();
    let mut mem = SharedMemory::new(memory, config.bank_conflicts);
    let mut cores: Vec<Core> = (0..16)
        .map(|_| Core {
            regs: [0; 16],
            ip: 0,
            task: None,
            code: [Instr::Nop; 16],
            instructions: 0,
            stalls: 0,
        })
        .collect();
    let mut tasks: Vec<Task> = Vec::new();
    let mut processed = vec![false; n];
    let mut ts_free = 0u64;
    let mut last_activity: Option<u64> = None;
    let window = match config.issue {
        IssuePolicy::InOrder => 1,
        IssuePolicy::Lookahead => config.timing.lookahead_window,
    };
    let (cf_cycles, bc) = (
        config.timing.control_frame_cycles,
        config.timing.broadcast_cycles,
    );
    let limit = config.max_cycles;
    let mut t = 0u64;
    loop {
        let head = processed.iter().position(|p| !p);
        let running = cores.iter().any(|c| c.task.is_some());
        if head.is_none() && !running {
            return Outcome::Done {
                cycles: last_activity.map_or(0, |l| l + 1),
                regs: std::array::from_fn(|i| cores[i].regs),
                memory: mem.bytes().to_vec(),
                tasks: tasks
                    .iter()
                    .map(|k| (k.frame, k.mask, k.issue, k.start, k.end))
                    .collect(),
                instructions: std::array::from_fn(|i| cores[i].instructions),
                stalls: std::array::from_fn(|i| cores[i].stalls),
            };
        }
        if t >= limit {
            return Outcome::Watchdog;
        }
        // The task scheduler, seeing every core part that ended before this cycle.
        if let (Some(head), true) = (head, t >= ts_free) {
            let core_free = |c: usize| cores[c].task.is_none();
            let task_done = |k: &Task| k.remaining == 0 && k.end < t;
            let mut waiting = 0u16;
            let mut earlier_unprocessed = false;
            let mut chosen = None;
            for idx in head..n.min(head + window) {
                if processed[idx] {
                    continue;
                }
                let (cores_needed, ok, fence, is_cf) = match program.kind(idx) {
                    FrameKind::Control => {
                        let cf = program.control(idx);
                        let m = cf.r0_init_mask();
                        (m, m & waiting == 0, cf.fence, true)
                    }
                    FrameKind::Instr { control } => {
                        let cf = program.control(control);
                        let rel_ok = cf.fence != Fence::Rel
                            || (!earlier_unprocessed && tasks.iter().all(task_done));
                        // Passing a waiting frame: disjoint from the masks of earlier
                        // unfinished tasks.
                        let pass_ok = !earlier_unprocessed
                            || tasks
                                .iter()
                                .all(|k| k.frame > idx || k.mask & cf.active == 0 || task_done(k));
                        (
                            cf.active,
                            cf.active & waiting == 0 && rel_ok && pass_ok,
                            cf.fence,
                            false,
                        )
                    }
                };
                let acq_ok = tasks
                    .iter()
                    .all(|k| k.fence != Fence::Acq || k.frame > idx || task_done(k));
                let free = (0..16).all(|c| cores_needed & (1 << c) == 0 || core_free(c));
                if ok && acq_ok && free {
                    chosen = Some((idx, is_cf, cores_needed));
                    break;
                }
                if fence != Fence::No || is_cf {
                    break;
                }
                waiting |= cores_needed;
                earlier_unprocessed = true;
            }
            if let Some((idx, is_cf, m)) = chosen {
                let dur = if is_cf { cf_cycles } else { bc };
                if t + dur > limit {
                    return Outcome::Watchdog;
                }
                processed[idx] = true;
                ts_free = t + dur;
                if dur > 0 {
                    last_activity = Some(last_activity.map_or(t + dur - 1, |l| l.max(t + dur - 1)));
                }
                if is_cf {
                    let cf = program.control(idx);
                    for c in 0..16 {
                        if m & (1 << c) != 0 {
                            cores[c].regs[0] = cf.init_r0[c];
                        }
                    }
                } else {
                    let FrameKind::Instr { control } = program.kind(idx) else {
                        unreachable!()
                    };
                    let code = program.instr(idx).instrs;
                    let start = t + bc;
                    let empty_end = start.saturating_sub(1).max(t);
                    tasks.push(Task {
                        frame: idx,
                        mask: m,
                        fence: program.control(control).fence,
                        issue: t,
                        start: if m == 0 { empty_end } else { start },
                        remaining: m,
                        end: empty_end,
                    });
                    for (c, core) in cores.iter_mut().enumerate() {
                        if m & (1 << c) != 0 {
                            core.task = Some(tasks.len() - 1);
                            core.code = code;
                            core.ip = 0;
                        }
                    }
                }
            }
        }
        // Cores in id order, one instruction (or one stalled attempt) each.
        for id in 0..16u8 {
            let c = usize::from(id);
            let Some(k) = cores[c].task else { continue };
            if tasks[k].start > t {
                continue;
            }
            let core = &mut cores[c];
            let instr = core.code[usize::from(core.ip)];
            let fault = |rule: FaultRule, ip: u8| Outcome::Fault {
                rule: rule.name(),
                frame: tasks[k].frame,
                core: id,
                ip,
                cycle: t,
            };
            let effect = execute(instr, &mut core.regs, id);
            if let Effect::Memory(access) = effect {
                let addr = access.address();
                match mem.perform(id, t, access.op, addr, access.value.unwrap_or(0)) {
                    Ok(done) => {
                        if access.op.is_read() {
                            core.regs[usize::from(access.reg)] = done.value;
                        }
                    }
                    Err(Refusal::Stall(_)) => {
                        core.stalls += 1;
                        continue;
                    }
                    Err(Refusal::Fault(rule)) => return fault(rule, core.ip),
                }
            }
            let flow = effect.flow();
            core.instructions += 1;
            last_activity = Some(last_activity.map_or(t, |l| l.max(t)));
            let ended = match flow {
                Flow::Jump(target) => {
                    core.ip = target;
                    false
                }
                Flow::Ready => {
                    if let Some(held) = mem.held(id) {
                        return fault(FaultRule::ReadyWhileHolding { held }, core.ip);
                    }
                    true
                }
                _ if core.ip == 15 => {
                    if let Some(held) = mem.held(id) {
                        return fault(FaultRule::FrameEndWhileHolding { held }, 15);
                    }
                    true
                }
                _ => {
                    core.ip += 1;
                    false
                }
            };
            if ended {
                core.task = None;
                let task = &mut tasks[k];
                task.remaining &= !(1 << c);
                task.end = task.end.max(t);
            }
        }
        t += 1;
    }
}

fn emulator(backend: BackendKind, program: &Program, memory: &[u8], config: &Config) -> Outcome {
    match gpu16::run(backend, program, memory, config) {
        Ok(r) => Outcome::Done {
            cycles: r.cycles,
            regs: r.registers,
            memory: r.memory.to_vec(),
            tasks: r
                .tasks
                .iter()
                .map(|k| (k.frame, k.mask, k.issue, k.start, k.end))
                .collect(),
            instructions: std::array::from_fn(|i| r.cores[i].instructions),
            stalls: std::array::from_fn(|i| r.cores[i].stalls),
        },
        Err(f) => match f.error {
            RunError::Fault {
                rule,
                frame,
                core,
                ip,
                cycle,
                ..
            } => Outcome::Fault {
                rule: rule.name(),
                frame,
                core,
                ip,
                cycle,
            },
            // The model runs on to its watchdog; a livelock is the emulator proving early
            // that the run would reach it.
            RunError::Watchdog { .. } | RunError::Livelock { .. } => Outcome::Watchdog,
            // The spec dialect's programs, which this model runs, never give an MCST walk's
            // livelock.
            e @ (RunError::Backend { .. }
            | RunError::Internal { .. }
            | RunError::EndlessWalk { .. }
            | RunError::TaskLogFull { .. }
            | RunError::Stopped { .. }
            | RunError::Load(_)) => panic!("{e}"),
        },
    }
}

/// The first field in which the emulator (`got`) differs from the model, readably.
fn first_difference(got: &Outcome, model: &Outcome) -> String {
    match (got, model) {
        (
            Outcome::Done {
                cycles: c1,
                regs: r1,
                memory: m1,
                tasks: t1,
                instructions: i1,
                stalls: s1,
            },
            Outcome::Done {
                cycles: c2,
                regs: r2,
                memory: m2,
                tasks: t2,
                instructions: i2,
                stalls: s2,
            },
        ) => {
            if let Some(a) = (0..m1.len()).find(|&a| m1[a] != m2[a]) {
                return format!("memory 0x{a:03x}: emulator {}, model {}", m1[a], m2[a]);
            }
            for c in 0..16 {
                if r1[c] != r2[c] {
                    return format!(
                        "core {c} registers: emulator {:?}, model {:?}",
                        r1[c], r2[c]
                    );
                }
            }
            if let Some(k) = (0..t1.len().min(t2.len())).find(|&k| t1[k] != t2[k]) {
                return format!("task #{k}: emulator {:?}, model {:?}", t1[k], t2[k]);
            }
            format!(
                "cycles {c1} vs {c2}, tasks {} vs {}, instructions {i1:?} vs {i2:?}, stalls {s1:?} vs {s2:?}",
                t1.len(),
                t2.len()
            )
        }
        (Outcome::Done { .. }, other) => format!("emulator finished; model: {other:?}"),
        (other, Outcome::Done { .. }) => format!("model finished; emulator: {other:?}"),
        (a, b) => format!("emulator {a:?}, model {b:?}"),
    }
}

/// Run case `c`'s `program` on each of `backends`; panic at the first that differs from
/// the model, saying where.
fn matches_the_model(seed: u64, c: &Case, program: &Program, backends: &[BackendKind]) {
    let expected = reference(program, &c.memory, &c.config);
    for &backend in backends {
        let got = emulator(backend, program, &c.memory, &c.config);
        if got != expected {
            panic!(
                "seed {seed} ({:?} {:?} {:?}) on {backend:?}: {}",
                c.profile,
                c.violation,
                c.config,
                first_difference(&got, &expected)
            );
        }
    }
}

#[test]
fn emulator_matches_the_cycle_stepped_model_on_generated_programs() {
    let mut compared = 0;
    for seed in 0..1500u64 {
        let c = Case::new(seed, None);
        let Ok(program) = Program::from_image(&c.image) else {
            continue;
        };
        matches_the_model(seed, &c, &program, &[BackendKind::Interp, BackendKind::Jit]);
        compared += 1;
    }
    assert!(compared > 1300, "{compared} programs compared");
}

/// Tasks whose cores each touch their own bytes run apart, out of each other's turns (the
/// run loop leaves them out of each other's horizons); the naive model still steps every
/// core in (cycle, core id) order, beside tasks touching the same banks, with bank
/// conflicts on in some cases (where they must take turns again).
#[test]
fn tasks_with_private_bytes_match_the_cycle_stepped_model() {
    use gpu16_gen::Profile;
    use gpu16_machine::engine::banks::FrameBanks;
    let (mut compared, mut private) = (0, 0);
    for seed in 0..400u64 {
        let c = Case::new(seed, Some(Profile::Private));
        let Ok(program) = Program::from_image(&c.image) else {
            continue;
        };
        private += (0..program.len())
            .filter(|&f| matches!(program.kind(f), FrameKind::Instr { .. }))
            .filter(|&f| FrameBanks::analyse(&program.instr(f).instrs).private_bytes())
            .count();
        let backends = [BackendKind::Interp, BackendKind::Jit, BackendKind::Auto];
        matches_the_model(seed, &c, &program, &backends);
        compared += 1;
    }
    assert!(compared > 350, "{compared} programs compared");
    assert!(private > 400, "only {private} frames with private bytes");
}

#[test]
fn the_model_itself_reproduces_spec_example_1() {
    // Example 1 with frames of three instructions (nop nop ready): hand-worked timeline.
    let cf = |n: u8, mask: u16| {
        ControlFrame {
            if_num: n,
            fence: Fence::Acq,
            active: mask,
            init_vect: 0,
            init_r0: [0; 16],
            reserved_header: 0,
            reserved: [0; 10],
        }
        .encode()
    };
    let mut body = [Instr::Ready; 16];
    body[0] = Instr::Nop;
    body[1] = Instr::Nop;
    let f = InstrFrame::from_instrs(body).bytes();
    let frames: Vec<[u8; FRAME_BYTES]> = vec![cf(4, 0x0f0f), f, f, f, f, cf(2, 0xf0f0), f, f];
    let p = Program::from_frames(frames).unwrap();
    let Outcome::Done { cycles, tasks, .. } = reference(&p, &[], &Config::default()) else {
        panic!("example 1 finishes")
    };
    let starts: Vec<(u64, u64, u64)> = tasks.iter().map(|t| (t.2, t.3, t.4)).collect();
    assert_eq!(
        starts,
        [
            (1, 5, 7),
            (8, 12, 14),
            (15, 19, 21),
            (22, 26, 28),
            (30, 34, 36),
            (37, 41, 43)
        ]
    );
    assert_eq!(cycles, 44);
}

/// A stream of short tasks on masks of every width and place, with every fence, whose
/// frames reach memory after 0 to 5 instructions: the run lets a running task access memory
/// up to the first access of the tasks still to issue (`TaskScheduler::first_access_bound`),
/// so a task's last accesses and the next task's first ones meet in one bank, in cycles
/// on both sides of that bound, in both orders of core ids. The naive model knows no bound.
fn short_task_stream(seed: u64) -> (Program, Config) {
    use gpu16_machine::engine::isa::{AluOp, MemOp};
    let mut state = seed.wrapping_mul(0x9E37_79B9_7F4A_7C15) | 1;
    let mut draw = |n: u64| {
        state ^= state << 13;
        state ^= state >> 7;
        state ^= state << 17;
        state % n
    };
    let mut frames = Vec::new();
    for _ in 0..8 + draw(24) {
        // Mostly narrow masks, so that tasks run side by side.
        let width = if draw(4) == 0 {
            1 + draw(16)
        } else {
            1 + draw(4)
        };
        let mask = (((1u32 << width) - 1) << draw(17 - width)) as u16;
        let fence = [Fence::No, Fence::No, Fence::No, Fence::Acq, Fence::Rel][draw(5) as usize];
        frames.push(ControlFrame::new(1, fence, mask, &[]).encode());
        // Banks come from r1..r3: zero (every register starts so, and only r1 is ever set:
        // to the core id), so that accesses of different tasks meet; rows from r8 (zero)
        // or a value register; values in r9..r11 are constants and sums with the core id.
        let mut code = [Instr::Nop; 16];
        let before = if draw(2) == 0 {
            draw(2) as usize
        } else {
            4 + draw(9) as usize
        };
        for slot in code.iter_mut().take(before) {
            *slot = match draw(5) {
                0 => Instr::SetConst { k: 0, d: 1 },
                1 => Instr::SetConst {
                    k: 1 + draw(3) as u8,
                    d: 9 + draw(3) as u8,
                },
                2 => Instr::Alu {
                    op: AluOp::Add,
                    a: 9 + draw(3) as u8,
                    b: 1,
                    c: 9 + draw(3) as u8,
                },
                // A bank of its own for the task: later tasks meet it or not.
                3 => Instr::Alu {
                    op: AluOp::Add,
                    a: 9 + draw(3) as u8,
                    b: 8,
                    c: 2 + draw(2) as u8,
                },
                _ => Instr::Nop,
            };
        }
        let accesses = 1 + draw(4) as usize;
        for slot in code.iter_mut().skip(before).take(accesses) {
            let load = draw(2) == 0;
            *slot = Instr::Mem {
                op: if load { MemOp::Ld } else { MemOp::St },
                a: if draw(4) == 0 { 9 } else { 8 },
                hi: 1 + draw(3) as u8,
                r: 9 + draw(3) as u8,
            };
        }
        // Past IP 15 the part ends with no `ready`.
        if let Some(slot) = code.get_mut(before + accesses) {
            *slot = Instr::Ready;
        }
        frames.push(InstrFrame::from_instrs(code).bytes());
    }
    let config = Config {
        issue: if draw(4) == 0 {
            IssuePolicy::Lookahead
        } else {
            IssuePolicy::InOrder
        },
        bank_conflicts: draw(3) == 0,
        ..Config::default()
    };
    (
        Program::from_frames(frames).expect("well-formed frames"),
        config,
    )
}

#[test]
fn short_task_streams_match_the_cycle_stepped_model() {
    let memory: Vec<u8> = (0..4096u32).map(|a| (a * 7 + a / 256 + 1) as u8).collect();
    for seed in 0..600u64 {
        let (program, config) = short_task_stream(seed);
        let expected = reference(&program, &memory, &config);
        for backend in [BackendKind::Interp, BackendKind::Jit, BackendKind::Auto] {
            let got = emulator(backend, &program, &memory, &config);
            assert!(
                got == expected,
                "stream {seed} ({config:?}) on {backend:?}: {}",
                first_difference(&got, &expected)
            );
        }
    }
}
