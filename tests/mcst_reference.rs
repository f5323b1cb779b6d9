//! An independent reference model of the MCST dialect and its timing, and its comparison with
//! gpu16's `--dialect mcst` on random programs under both the default timing and `mcst-rtl`,
//! on the interpreter and on the JIT (whose compiled code runs register-only slots ahead).
//!
//! This file owns:
//! - `Model`: a plain cycle-stepped model of the MCST machine written from
//!   `shared/spec/mcst-dialect.md` alone (sections 2 to 5, with `decisions.md` where the
//!   document defers to it), parameterised by the timing parameters of its section 5.1. It was
//!   written without reading gpu16's implementation (`machine/src/mcst/`) or its tests; the
//!   only gpu16 code it touches is the public `run` API, to compare. (The images it reads
//!   are laid out by the tests' shared builder and random source in `gpu16_gen`; the model
//!   decodes their bytes itself.)
//! - A seeded random generator of MCST images (control frames with random CAV, fences, R0
//!   inits, IF_Num 0-3 and forward stop-CF jumps; instruction frames of every opcode with bank
//!   registers that collide, bounded counter loops, frames that run off IP 15), each ending in
//!   a halt CF; 2,500 programs per timing (`MCST_REFERENCE_SEEDS=n` for a longer hunt).
//! - Hand-worked programs run through the model: table 5.4's micro programs (mcst-rtl), the
//!   bug programs of section 6 (the model keeps the intended semantics), the stop-CF ends and
//!   TP's wrap of 3.4 and 3.1; those are also run through gpu16. And the load rules of 3.1.
//!
//! Where the document is open, the model takes the implementers' stated readings: the first
//! instruction is at s + broadcast + fill; a B2/B3 bubble keeps the previous slot's B value;
//! an ld/st counts as one instruction; an empty mask's task has start = end = s + broadcast - 1;
//! under the default timing a task that runs off IP 15 ends in IP 15's cycle; `cycles` is the
//! index of the ending cycle. Stalls are not compared. The generator avoids what section 7
//! leaves open that the model would have to guess: stop bits on CFs with IF_Num > 0 (the
//! model does "jump, then F = acq" but it is never exercised).

// Cores and banks are numbered 0..16 in the document; loops over those numbers read as it does.
#![allow(clippy::needless_range_loop)]

use gpu16_interp::Interpreter;
use gpu16_jit::Jit;
use std::cell::RefCell;

thread_local! {
    /// One JIT a test thread, its code cache shared by the programs it runs.
    static JIT: RefCell<Jit> = RefCell::new(Jit::new());
}
use gpu16_gen::image::Image;
use gpu16_machine::{Config, ControlFrame, Dialect, Fence, Program, RunReport, TaskLog, Timing};

// ---------------------------------------------------------------------------------------
// Timing parameters (section 5.1)
// ---------------------------------------------------------------------------------------

/// The parameters of mcst-dialect.md section 5.1.
#[derive(Clone, Copy, Debug)]
struct Params {
    name: &'static str,
    /// A CF is processed in this many cycles (1 in both profiles; the model supports 1 only).
    cf_cycles: u64,
    /// An IF broadcast occupies cycles s .. s + broadcast_cycles - 1.
    broadcast_cycles: u64,
    /// A task's first slot executes in cycle s + start_delay.
    start_delay: u64,
    /// A core whose ready executes in cycle x is idle from x + free_delay (1 only).
    free_delay: u64,
    /// Running off IP 15 costs an implicit ready slot (0 or 1).
    ip15_end: u64,
    /// Bubbles after a taken bnz (B1).
    taken_branch_bubble: u64,
    /// An ld granted at once occupies this many cycles (grant .. data).
    load_cycles: u64,
    /// B2 on (0 or 1).
    load_use_bubble: u64,
    /// B3 on (0 or 1).
    branch_after_load_bubble: u64,
    /// The bank-switch rule on (0 or 1).
    bank_switch_cycles: u64,
    /// One access per bank per cycle, round robin, no multicast; off: every access is served
    /// in its cycle, lower core first.
    arbitration: bool,
}

/// decisions.md's defaults (the brackets of table 5.1).
const DEFAULT: Params = Params {
    name: "default",
    cf_cycles: 1,
    broadcast_cycles: 4,
    start_delay: 4,
    free_delay: 1,
    ip15_end: 0,
    taken_branch_bubble: 0,
    load_cycles: 1,
    load_use_bubble: 0,
    branch_after_load_bubble: 0,
    bank_switch_cycles: 0,
    arbitration: false,
};

/// The RTL's values (table 5.1).
const RTL: Params = Params {
    name: "mcst-rtl",
    cf_cycles: 1,
    broadcast_cycles: 4,
    start_delay: 7,
    free_delay: 1,
    ip15_end: 1,
    taken_branch_bubble: 1,
    load_cycles: 2,
    load_use_bubble: 1,
    branch_after_load_bubble: 1,
    bank_switch_cycles: 1,
    arbitration: true,
};

fn gpu16_timing(p: &Params) -> Timing {
    if p.arbitration {
        Timing::mcst_rtl()
    } else {
        Timing::default()
    }
}

// ---------------------------------------------------------------------------------------
// The model
// ---------------------------------------------------------------------------------------

/// One task as section 4 reports it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
struct Task {
    frame: usize,
    mask: u16,
    issue: u64,
    start: u64,
    end: u64,
}

/// What a run reports (section 4), stalls aside.
#[derive(Clone, Debug, PartialEq, Eq)]
struct Outcome {
    cycles: u64,
    registers: [[u8; 16]; 16],
    memory: Vec<u8>,
    instructions: [u64; 16],
    tasks: Vec<Task>,
}

/// A slot as B2/B3 and the B-value exception look back at it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Past {
    /// No slot (before the task's first).
    None,
    Bubble,
    /// An ld: its destination register and the value of R[a] it read.
    Ld {
        dest: usize,
        ra: u8,
    },
    Other,
}

/// An ld or st in flight.
#[derive(Clone, Copy, Debug)]
struct MemSlot {
    store: bool,
    start: u64,
    addr: usize,
    bank: usize,
    /// Destination (ld) or source (st) register c.
    c: usize,
    /// R[a] as the ld read it (for the B-value exception of the next slot).
    ra: u8,
    /// The slot's B value (R[b]).
    b_value: u8,
    /// The cycle it finishes, once its counting grant is known.
    finish: Option<u64>,
}

#[derive(Clone, Copy, Debug)]
struct Core {
    running: bool,
    task: usize,
    code: [u16; 16],
    ip: usize,
    /// The cycle the next slot starts in.
    next_at: u64,
    /// B1 bubbles still due.
    b1: u64,
    /// The implicit ready slot after IP 15 is due.
    implicit_ready: bool,
    /// A B2/B3 bubble was already put before the instruction at `ip`.
    bubbled: bool,
    /// The last three slots, most recent first.
    past: [Past; 3],
    /// The B value of the previous slot.
    prev_b: u8,
    mem: Option<MemSlot>,
}

impl Core {
    fn idle() -> Core {
        Core {
            running: false,
            task: 0,
            code: [0; 16],
            ip: 0,
            next_at: 0,
            b1: 0,
            implicit_ready: false,
            bubbled: false,
            past: [Past::None; 3],
            prev_b: 0,
            mem: None,
        }
    }

    fn push(&mut self, slot: Past) {
        self.past = [slot, self.past[0], self.past[1]];
    }
}

/// The group the TS is issuing (section 3.2).
#[derive(Clone, Copy, Debug, Default)]
struct Group {
    cav: u16,
    init_vect: u16,
    init_r0: [u8; 16],
    stop: bool,
    next_cf: usize,
}

const FENCE_NO: u16 = 0;
const FENCE_ACQ: u16 = 1;
const FENCE_REL: u16 = 2;

/// What the random programs exercised, to show the comparison covers the rules.
const STAT_NAMES: [&str; 14] = [
    "tasks",
    "empty-mask tasks",
    "halt ends",
    "frame-sync ends",
    "stop jumps",
    "B1 bubbles",
    "B2/B3 bubbles",
    "implicit readies",
    "loads",
    "stores",
    "requests refused",
    "bank-switch grants lost",
    "bank-switch rescues",
    "CF waits",
];
type Stats = [u64; STAT_NAMES.len()];
const S_TASKS: usize = 0;
const S_EMPTY: usize = 1;
const S_HALT: usize = 2;
const S_SYNC: usize = 3;
const S_JUMP: usize = 4;
const S_B1: usize = 5;
const S_B23: usize = 6;
const S_IMPLICIT: usize = 7;
const S_LD: usize = 8;
const S_ST: usize = 9;
const S_REFUSED: usize = 10;
const S_LOST: usize = 11;
const S_RESCUED: usize = 12;
const S_CF_WAIT: usize = 13;

struct Model {
    p: Params,
    stats: [u64; STAT_NAMES.len()],
    tm: Vec<[u8; 32]>,
    mem: Vec<u8>,
    regs: [[u8; 16]; 16],
    cores: [Core; 16],
    instructions: [u64; 16],
    tasks: Vec<Task>,
    /// Round-robin pointer P of each bank (the last core granted).
    last_grant: [usize; 16],
    // The task scheduler.
    tp: usize,
    n: u16,
    group: Group,
    fence: u16,
    broadcast: Option<u64>,
    /// The first cycle TP stood at its current frame.
    tp_since: u64,
    /// TP reached its frame by a group's NextCF jump.
    by_group_jump: bool,
}

fn word(frame: &[u8; 32], i: usize) -> u16 {
    u16::from_le_bytes([frame[2 * i], frame[2 * i + 1]])
}

/// The ALU of section 2 (opc 1..10).
fn alu(opc: u16, x: u8, y: u8) -> u8 {
    match opc {
        1 => x.wrapping_add(y),
        2 => x.wrapping_sub(y),
        3 => x.wrapping_mul(y),
        4 => x.checked_div(y).unwrap_or(0xFF),
        5 => u8::from(x >= y),
        6 => {
            if y >= 8 {
                0
            } else {
                x >> y
            }
        }
        7 => {
            if y >= 8 {
                0
            } else {
                x << y
            }
        }
        8 => x & y,
        9 => x | y,
        10 => x ^ y,
        _ => unreachable!("not an ALU opcode: {opc}"),
    }
}

impl Model {
    fn new(image: &[u8], memory: &[u8], p: Params) -> Model {
        assert_eq!(p.cf_cycles, 1, "the model processes a CF in one cycle");
        assert_eq!(
            p.free_delay, 1,
            "the model frees a core the cycle after its ready"
        );
        assert!(p.broadcast_cycles >= 1 && p.load_cycles >= 1);
        assert!(image.len().is_multiple_of(32) && image.len() <= 64 * 32);
        let mut tm = vec![[0u8; 32]; 64];
        for (f, chunk) in image.chunks(32).enumerate() {
            tm[f].copy_from_slice(chunk);
        }
        let mut mem = vec![0u8; 4096];
        mem[..memory.len()].copy_from_slice(memory);
        Model {
            p,
            stats: [0; STAT_NAMES.len()],
            tm,
            mem,
            regs: [[0; 16]; 16],
            cores: [Core::idle(); 16],
            instructions: [0; 16],
            tasks: Vec::new(),
            last_grant: [0; 16],
            tp: 0,
            n: 0,
            group: Group::default(),
            fence: FENCE_NO,
            broadcast: None,
            tp_since: 0,
            by_group_jump: false,
        }
    }

    fn idle(&self, mask: u16) -> bool {
        (0..16).all(|i| mask & (1 << i) == 0 || !self.cores[i].running)
    }

    /// Run until the end of section 3.4; `None` past `limit` cycles.
    fn run(mut self, limit: u64) -> Option<(Outcome, Stats)> {
        for t in 0..limit {
            if self.scheduler(t) {
                let outcome = Outcome {
                    cycles: t,
                    registers: self.regs,
                    memory: self.mem,
                    instructions: self.instructions,
                    tasks: self.tasks,
                };
                return Some((outcome, self.stats));
            }
            self.cores_step(t);
        }
        eprintln!(
            "model stuck: tp {} n {} fence {} broadcast {:?} running {:?} ips {:?}",
            self.tp,
            self.n,
            self.fence,
            self.broadcast,
            self.cores.iter().map(|c| c.running).collect::<Vec<_>>(),
            self.cores.iter().map(|c| c.ip).collect::<Vec<_>>()
        );
        None
    }

    /// The TS's action in cycle `t` (section 3.2), on the cores' state as the cycle began.
    /// True when the run ends in this cycle.
    fn scheduler(&mut self, t: u64) -> bool {
        let bc = self.p.broadcast_cycles;
        if self.broadcast.is_none() && self.n > 0 {
            // Rule 2: TP at an IF of the group.
            if self.idle(self.group.cav) {
                self.broadcast = Some(t);
                let empty = self.group.cav == 0;
                self.stats[S_TASKS] += 1;
                self.stats[S_EMPTY] += u64::from(empty);
                self.tasks.push(Task {
                    frame: self.tp,
                    mask: self.group.cav,
                    issue: t,
                    start: if empty {
                        t + bc - 1
                    } else {
                        t + self.p.start_delay
                    },
                    end: if empty { t + bc - 1 } else { 0 },
                });
            }
        } else if self.broadcast.is_none() {
            let header = word(&self.tm[self.tp], 0);
            let if_num = header & 0x3F;
            let fence = (header >> 6) & 3;
            let next_cf = usize::from((header >> 8) & 0x3F);
            let stop = header & 0x4000 != 0;
            if stop && if_num == 0 {
                // Rule 3, section 3.4.
                let all_idle = self.idle(0xFFFF);
                if next_cf == self.tp {
                    if all_idle {
                        self.stats[S_HALT] += 1;
                        return true; // halt
                    }
                } else if all_idle {
                    if t == self.tp_since && !self.by_group_jump {
                        self.stats[S_JUMP] += 1;
                        self.tp = next_cf; // a plain jump, one cycle
                        self.tp_since = t + 1;
                        self.by_group_jump = false;
                    } else {
                        self.stats[S_SYNC] += 1;
                        return true; // frame sync
                    }
                }
            } else {
                // Rule 4.
                let cav = word(&self.tm[self.tp], 1);
                let need = if self.fence == FENCE_ACQ || fence == FENCE_REL {
                    0xFFFF
                } else {
                    cav
                };
                if self.idle(need) {
                    let f = &self.tm[self.tp];
                    let mut init_r0 = [0u8; 16];
                    init_r0.copy_from_slice(&f[16..32]);
                    self.n = if_num;
                    self.group = Group {
                        cav,
                        init_vect: word(f, 2),
                        init_r0,
                        stop,
                        next_cf,
                    };
                    self.fence = fence;
                    self.tp = (self.tp + 1) % 64;
                    self.tp_since = t + 1;
                    self.by_group_jump = false;
                } else {
                    self.stats[S_CF_WAIT] += 1;
                }
            }
        }
        // Rule 1: the broadcast delivers in its last cycle.
        if let Some(s) = self.broadcast {
            if t == s + bc - 1 {
                self.deliver(s);
                self.broadcast = None;
                self.n -= 1;
                if self.n == 0 && self.group.stop {
                    self.tp = self.group.next_cf;
                    self.by_group_jump = true;
                    self.fence = FENCE_ACQ; // "jump, then F = acq" (3.4)
                } else {
                    self.tp = (self.tp + 1) % 64;
                    self.by_group_jump = false;
                }
                self.tp_since = t + 1;
            }
        }
        false
    }

    /// The IF at TP reaches its cores: IP 0, R0 init (3.3), first slot at s + start_delay.
    fn deliver(&mut self, s: u64) {
        let frame = self.tm[self.tp];
        let mut code = [0u16; 16];
        for (i, w) in code.iter_mut().enumerate() {
            *w = word(&frame, i);
        }
        let task = self.tasks.len() - 1;
        for i in 0..16 {
            if self.group.cav & (1 << i) == 0 {
                continue;
            }
            if self.group.init_vect & (1 << i) != 0 {
                self.regs[i][0] = self.group.init_r0[i];
            }
            self.cores[i] = Core {
                running: true,
                task,
                code,
                next_at: s + self.p.start_delay,
                prev_b: self.regs[i][0],
                ..Core::idle()
            };
        }
    }

    /// The core `i`'s part of its task ends with a ready (explicit or implicit) in cycle `x`.
    fn end_part(&mut self, i: usize, x: u64) {
        let core = &mut self.cores[i];
        core.running = false;
        core.mem = None;
        let task = &mut self.tasks[core.task];
        task.end = task.end.max(x);
    }

    /// After the instruction at IP finished in cycle `x`: go on, or end after IP 15.
    fn advance(&mut self, i: usize, x: u64, taken: Option<usize>) {
        let ip15_end = self.p.ip15_end;
        let bubbles = self.p.taken_branch_bubble;
        let core = &mut self.cores[i];
        core.next_at = x + 1;
        if let Some(target) = taken {
            core.ip = target;
            core.b1 = bubbles;
        } else if core.ip == 15 {
            if ip15_end > 0 {
                core.implicit_ready = true;
                self.stats[S_IMPLICIT] += 1;
            } else {
                self.end_part(i, x);
            }
        } else {
            core.ip += 1;
        }
    }

    /// Whether a B2 or B3 bubble goes before the instruction `w` (section 5.2).
    fn needs_bubble(&self, i: usize, w: u16) -> bool {
        let core = &self.cores[i];
        let opc = w >> 12;
        let a = usize::from((w >> 8) & 15);
        let b = usize::from((w >> 4) & 15);
        let b2 = match core.past[0] {
            Past::Ld { dest, .. } if self.p.load_use_bubble > 0 => {
                ((1..=11).contains(&opc) && (a == dest || b == dest)) || (opc == 14 && a == dest)
            }
            _ => false,
        };
        let b3 = self.p.branch_after_load_bubble > 0
            && opc == 14
            && matches!(core.past[2], Past::Ld { .. });
        b2 || b3
    }

    fn cores_step(&mut self, t: u64) {
        // Phase 1: start each core's slot due in this cycle; collect memory requests.
        let mut requests = [None::<usize>; 16]; // the bank core i requests
        for i in 0..16 {
            if !self.cores[i].running {
                continue;
            }
            if self.cores[i].mem.is_none() && self.cores[i].next_at == t {
                self.start_slot(i, t);
            }
            if let Some(m) = self.cores[i].mem {
                // A st requests until granted; an ld until it finishes, finishing cycle included.
                requests[i] = Some(m.bank);
            }
        }
        // Phase 2: grants.
        let mut granted = [false; 16];
        let mut ld_granted_in = [false; 16];
        if self.p.arbitration {
            for bank in 0..16 {
                let p = self.last_grant[bank];
                let winner = (1..=16)
                    .map(|k| (p + k) % 16)
                    .find(|&c| requests[c] == Some(bank));
                if let Some(c) = winner {
                    granted[c] = true;
                    self.last_grant[bank] = c;
                    if !self.cores[c].mem.unwrap().store {
                        ld_granted_in[bank] = true;
                    }
                }
            }
        } else {
            for i in 0..16 {
                if let Some(bank) = requests[i] {
                    granted[i] = true;
                    if !self.cores[i].mem.unwrap().store {
                        ld_granted_in[bank] = true;
                    }
                }
            }
        }
        for i in 0..16 {
            if requests[i].is_some() && !granted[i] {
                self.stats[S_REFUSED] += 1;
            }
        }
        // Phase 3: memory effects and finishing memory slots, lower core first.
        for i in 0..16 {
            let Some(mut m) = self.cores[i].mem else {
                continue;
            };
            if m.store {
                if granted[i] {
                    self.mem[m.addr] = self.regs[i][m.c];
                    let core = &mut self.cores[i];
                    core.mem = None;
                    core.push(Past::Other);
                    core.prev_b = m.b_value;
                    self.advance(i, t, None);
                }
                continue;
            }
            if m.finish.is_none() && granted[i] {
                let prev = usize::from(self.cores[i].prev_b & 0xF);
                let lost = self.p.bank_switch_cycles > 0
                    && t == m.start
                    && prev != m.bank
                    && !ld_granted_in[prev];
                if lost {
                    self.stats[S_LOST] += 1;
                } else if self.p.bank_switch_cycles > 0 && t == m.start && prev != m.bank {
                    self.stats[S_RESCUED] += 1;
                }
                if !lost {
                    self.regs[i][m.c] = self.mem[m.addr];
                    m.finish = Some(t + self.p.load_cycles - 1);
                }
            }
            if m.finish == Some(t) {
                let core = &mut self.cores[i];
                core.mem = None;
                core.push(Past::Ld {
                    dest: m.c,
                    ra: m.ra,
                });
                core.prev_b = m.b_value;
                self.advance(i, t, None);
            } else {
                self.cores[i].mem = Some(m);
            }
        }
    }

    /// Start core `i`'s next slot in cycle `t`.
    fn start_slot(&mut self, i: usize, t: u64) {
        let core = self.cores[i];
        if core.b1 > 0 {
            let core = &mut self.cores[i];
            core.b1 -= 1;
            self.stats[S_B1] += 1;
            core.push(Past::Bubble);
            core.prev_b = self.regs[i][0];
            core.next_at = t + 1;
            return;
        }
        if core.implicit_ready {
            self.end_part(i, t);
            return;
        }
        let w = core.code[core.ip];
        if !core.bubbled && self.needs_bubble(i, w) {
            let core = &mut self.cores[i];
            core.bubbled = true;
            self.stats[S_B23] += 1;
            core.push(Past::Bubble); // keeps the previous slot's B value
            core.next_at = t + 1;
            return;
        }
        self.cores[i].bubbled = false;
        let opc = w >> 12;
        let a = usize::from((w >> 8) & 15);
        let b = usize::from((w >> 4) & 15);
        let c = usize::from(w & 15);
        let r = self.regs[i];
        let b_value = match core.past[0] {
            Past::Ld { dest, ra } if dest == b && matches!(opc, 0 | 12 | 14 | 15) => ra,
            _ => r[b],
        };
        self.instructions[i] += 1;
        match opc {
            11 | 13 => {
                self.stats[if opc == 11 { S_LD } else { S_ST }] += 1;
                let bank = usize::from(r[b] & 0xF);
                self.cores[i].mem = Some(MemSlot {
                    store: opc == 13,
                    start: t,
                    addr: (bank << 8) | usize::from(r[a]),
                    bank,
                    c,
                    ra: r[a],
                    b_value,
                    finish: None,
                });
            }
            15 => {
                self.end_part(i, t);
            }
            _ => {
                let mut taken = None;
                match opc {
                    0 => {}
                    1..=10 => self.regs[i][c] = alu(opc, r[a], r[b]),
                    12 => {
                        self.regs[i][c] = if c < 8 {
                            ((w >> 4) & 0xFF) as u8
                        } else {
                            i as u8
                        }
                    }
                    14 => {
                        if r[a] != 0 {
                            taken = Some(b);
                        }
                    }
                    _ => unreachable!(),
                }
                let core = &mut self.cores[i];
                core.push(Past::Other);
                core.prev_b = b_value;
                self.advance(i, t, taken);
            }
        }
    }
}

fn model_run(image: &[u8], memory: &[u8], p: Params) -> Option<Outcome> {
    model_run_stats(image, memory, p).map(|(o, _)| o)
}

fn model_run_stats(image: &[u8], memory: &[u8], p: Params) -> Option<(Outcome, Stats)> {
    Model::new(image, memory, p).run(200_000)
}

// ---------------------------------------------------------------------------------------
// gpu16's side
// ---------------------------------------------------------------------------------------

fn gpu16_run(image: &[u8], memory: &[u8], p: Params) -> Result<Outcome, String> {
    let program = Program::from_image_in(image, Dialect::Mcst).map_err(|e| format!("load: {e}"))?;
    let config = Config {
        timing: gpu16_timing(&p),
        max_cycles: 1 << 20,
        tasks: TaskLog::All,
        ..Config::default()
    };
    let report: RunReport = gpu16_machine::run(&mut Interpreter::new(), &program, memory, &config)
        .map_err(|e| format!("run: {e:?}"))?;
    // The JIT runs register-only slots ahead in compiled code: it must give the same report.
    let compiled =
        JIT.with(|jit| gpu16_machine::run(&mut *jit.borrow_mut(), &program, memory, &config));
    match compiled {
        Ok(mut c) => {
            c.backend.clone_from(&report.backend);
            if c != report {
                return Err("the jit's report differs from the interpreter's".into());
            }
        }
        Err(e) => return Err(format!("jit run: {e:?}")),
    }
    let mut instructions = [0u64; 16];
    for (i, c) in report.cores.iter().enumerate() {
        instructions[i] = c.instructions;
    }
    Ok(Outcome {
        cycles: report.cycles,
        registers: report.registers,
        memory: report.memory.to_vec(),
        instructions,
        tasks: report
            .tasks
            .iter()
            .map(|r| Task {
                frame: r.frame,
                mask: r.mask,
                issue: r.issue,
                start: r.start,
                end: r.end,
            })
            .collect(),
    })
}

// ---------------------------------------------------------------------------------------
// Image building
// ---------------------------------------------------------------------------------------

// Frames are laid out by the tests' one image builder, `gpu16_gen::image::Image` (section
// 3.1's layout); the model above decodes the bytes itself.

/// A control frame without the stop bit or ignored bits set, its fence as the model's
/// `FENCE_*` number.
fn control(if_num: u16, fence: u16, cav: u16, init_vect: u16, init_r0: [u8; 16]) -> ControlFrame {
    ControlFrame {
        if_num: if_num as u8,
        fence: [Fence::No, Fence::Acq, Fence::Rel][usize::from(fence)],
        active: cav,
        init_vect,
        init_r0,
        reserved_header: 0,
        reserved: [0; 10],
    }
}

fn cf(if_num: u16, fence: u16, cav: u16, init_vect: u16, init_r0: [u8; 16]) -> [u8; 32] {
    raw(Image::new().control(control(if_num, fence, cav, init_vect, init_r0)))
}

/// A stop CF (IF_Num 0) whose NextCF is `next`; a halt when `next` is its own index.
fn stop_cf(next: usize) -> [u8; 32] {
    raw(Image::new().stop(next as u8))
}

fn iframe(words: &[u16]) -> [u8; 32] {
    Image::code_frame(words)
}

/// The one frame of a one-frame image.
fn raw(image: Image) -> [u8; 32] {
    image.bytes().try_into().expect("one frame")
}

fn image(frames: &[[u8; 32]]) -> Vec<u8> {
    frames.iter().fold(Image::new(), |i, &f| i.raw(f)).bytes()
}

fn hex_frames(image: &[u8]) -> String {
    let mut s = String::new();
    for (f, chunk) in image.chunks(32).enumerate() {
        let words: Vec<String> = (0..16)
            .map(|i| {
                format!(
                    "{:04x}",
                    u16::from_le_bytes([chunk[2 * i], chunk[2 * i + 1]])
                )
            })
            .collect();
        s += &format!("  frame {f:2}: {}\n", words.join(" "));
    }
    s
}

// ---------------------------------------------------------------------------------------
// The random program generator
// ---------------------------------------------------------------------------------------

/// The tests' one random source, `gpu16_gen::rng::Rng` (SplitMix64), drawn from as this
/// generator always has (`below` by remainder), so a seed still gives the same program.
struct Rng(gpu16_gen::rng::Rng);

impl Rng {
    /// The stream that starts from SplitMix64 state `state`: `gpu16_gen::rng::Rng::new`
    /// starts from its seed xor the golden-ratio increment, so that xor is undone here.
    fn from_state(state: u64) -> Rng {
        Rng(gpu16_gen::rng::Rng::new(state ^ 0x9E37_79B9_7F4A_7C15))
    }
    fn below(&mut self, n: u64) -> u64 {
        self.0.next_u64() % n
    }
    fn pct(&mut self, p: u64) -> bool {
        self.below(100) < p
    }
    fn reg(&mut self) -> u16 {
        self.below(16) as u16
    }
}

/// A register to write that is not in `keep`.
fn dest(rng: &mut Rng, keep: &[u16]) -> u16 {
    loop {
        let r = rng.reg();
        if !keep.contains(&r) {
            return r;
        }
    }
}

/// A register likely to share a bank nibble with others: small registers are often zero.
fn bank_reg(rng: &mut Rng) -> u16 {
    if rng.pct(50) {
        rng.below(4) as u16
    } else {
        rng.reg()
    }
}

/// A random instruction at `ip` that writes no register of `keep`; bnz only forward, and
/// never to `avoid` (a loop's bnz, which would skip its counter's decrement).
fn random_word(rng: &mut Rng, ip: usize, keep: &[u16], avoid: Option<usize>) -> u16 {
    loop {
        let opc = match rng.below(24) {
            0..=10 => rng.below(16) as u16,
            11..=15 => 11,
            16..=19 => 13,
            20..=21 => 12,
            _ => 14,
        };
        let w = match opc {
            0 | 15 => (opc << 12) | rng.below(0x1000) as u16,
            1..=10 => (opc << 12) | (rng.reg() << 8) | (rng.reg() << 4) | dest(rng, keep),
            11 | 13 => {
                let c = if opc == 11 {
                    dest(rng, keep)
                } else {
                    rng.reg()
                };
                (opc << 12) | (rng.reg() << 8) | (bank_reg(rng) << 4) | c
            }
            12 => {
                let k = if rng.pct(60) {
                    rng.below(16) as u16
                } else {
                    rng.below(256) as u16
                };
                (12 << 12) | (k << 4) | dest(rng, keep)
            }
            _ => {
                if ip >= 15 {
                    continue;
                }
                let target = ip + 1 + rng.below(15 - ip as u64) as usize;
                if avoid == Some(target) {
                    continue;
                }
                let target = target as u16;
                (14 << 12) | (rng.reg() << 8) | (target << 4) | rng.below(16) as u16
            }
        };
        return w;
    }
}

fn random_if(rng: &mut Rng) -> [u8; 32] {
    let mut words = [0u16; 16];
    let mut keep: Vec<u16> = Vec::new();
    let mut fixed = [false; 16];
    let mut body = 0..0;
    let mut avoid = None;
    if rng.pct(30) {
        // A bounded counter loop: rX = k; rY = 1; L: ...; rX -= rY; bnz L, rX.
        let x = 1 + rng.below(7) as u16;
        let y = loop {
            let y = 1 + rng.below(7) as u16;
            if y != x {
                break y;
            }
        };
        let k = 1 + rng.below(3) as u16;
        let l = 2 + rng.below(10) as usize;
        let e = (l + 1 + rng.below(4) as usize).min(15);
        words[0] = 0xC000 | (k << 4) | x;
        words[1] = 0xC010 | y;
        words[e - 1] = 0x2000 | (x << 8) | (y << 4) | x;
        words[e] = 0xE000 | (x << 8) | ((l as u16) << 4);
        for ip in [0, 1, e - 1, e] {
            fixed[ip] = true;
        }
        keep = vec![x, y];
        body = l..e - 1;
        avoid = Some(e);
    }
    for ip in 0..16 {
        if !fixed[ip] {
            let avoid = if body.contains(&ip) { avoid } else { None };
            words[ip] = random_word(rng, ip, &keep, avoid);
        }
    }
    if rng.pct(60) {
        // An explicit ready somewhere; otherwise the frame often runs off IP 15.
        let free: Vec<usize> = (0..16).filter(|&ip| !fixed[ip]).collect();
        let ip = free[rng.below(free.len() as u64) as usize];
        words[ip] = 0xF000 | rng.below(0x1000) as u16;
    } else if rng.pct(50) {
        for (ip, w) in words.iter_mut().enumerate() {
            if !fixed[ip] && *w >> 12 == 15 {
                *w = rng.below(0x1000) as u16; // a nop
            }
        }
    }
    iframe(&words)
}

fn random_cav(rng: &mut Rng) -> u16 {
    match rng.below(100) {
        0..=59 => {
            let mut m = 0u16;
            for _ in 0..1 + rng.below(4) {
                m |= 1 << rng.below(16);
            }
            m
        }
        60..=74 => 0xFFFF,
        75..=81 => 0,
        _ => rng.below(0x10000) as u16,
    }
}

fn random_cf(rng: &mut Rng, if_num: u16) -> [u8; 32] {
    let cav = random_cav(rng);
    let fence = match rng.below(10) {
        0..=5 => FENCE_NO,
        6..=7 => FENCE_ACQ,
        _ => FENCE_REL,
    };
    let init_vect = match rng.below(10) {
        0..=3 => 0,
        4..=6 => cav,
        _ => rng.below(0x10000) as u16,
    };
    let mut init_r0 = [0u8; 16];
    for v in init_r0.iter_mut() {
        *v = if rng.pct(50) {
            rng.below(4) as u8
        } else {
            rng.below(256) as u8
        };
    }
    let mut f = control(if_num, fence, cav, init_vect, init_r0);
    if rng.pct(10) {
        // Ignored fields: NextCF without stop, bit 15, words 3-7.
        f.reserved_header = rng.below(64) as u8 | if rng.pct(50) { 0x80 } else { 0 };
        for b in f.reserved.iter_mut() {
            *b = rng.below(256) as u8;
        }
    }
    raw(Image::new().control(f))
}

/// A random image of at most 64 frames ending in a halt, and a memory image.
fn random_program(seed: u64) -> (Vec<u8>, Vec<u8>) {
    let mut rng = Rng::from_state(seed.wrapping_mul(0x2545_F491_4F6C_DD1D) ^ 0x5EED);
    let mut frames: Vec<[u8; 32]> = Vec::new();
    let mut cf_at: Vec<usize> = Vec::new();
    let mut jumps: Vec<usize> = Vec::new();
    let groups = if rng.pct(10) {
        1 + rng.below(16)
    } else {
        1 + rng.below(6)
    };
    let jumpy = rng.pct(20);
    for _ in 0..groups {
        let if_num = if rng.pct(5) { 0 } else { 1 + rng.below(3) };
        if frames.len() + if_num as usize + 3 > 64 {
            break;
        }
        if jumpy && !frames.is_empty() && rng.pct(40) {
            jumps.push(frames.len());
            frames.push([0; 32]); // patched below
        }
        cf_at.push(frames.len());
        frames.push(random_cf(&mut rng, if_num as u16));
        for _ in 0..if_num {
            frames.push(random_if(&mut rng));
        }
    }
    let halt = frames.len();
    cf_at.push(halt);
    frames.push(stop_cf(halt));
    for &j in &jumps {
        let later: Vec<usize> = cf_at.iter().copied().filter(|&c| c > j).collect();
        let target = later[rng.below(later.len() as u64) as usize];
        frames[j] = stop_cf(target);
    }
    let small = rng.pct(50);
    let memory: Vec<u8> = (0..4096)
        .map(|_| {
            if small && rng.pct(70) {
                rng.below(4) as u8
            } else {
                rng.below(256) as u8
            }
        })
        .collect();
    (image(&frames), memory)
}

// ---------------------------------------------------------------------------------------
// Comparison
// ---------------------------------------------------------------------------------------

fn describe(seed: u64, p: &Params, img: &[u8], model: &Outcome, gpu: &Result<Outcome, String>) {
    eprintln!(
        "=== seed {seed} timing {} ({} frames)\n{}",
        p.name,
        img.len() / 32,
        hex_frames(img)
    );
    let gpu = match gpu {
        Ok(g) => g,
        Err(e) => {
            eprintln!("  gpu16 failed: {e}\n  model: cycles {}", model.cycles);
            return;
        }
    };
    if model.cycles != gpu.cycles {
        eprintln!("  cycles: model {} gpu16 {}", model.cycles, gpu.cycles);
    }
    for c in 0..16 {
        if model.registers[c] != gpu.registers[c] {
            eprintln!(
                "  core {c} registers:\n    model {:02x?}\n    gpu16 {:02x?}",
                model.registers[c], gpu.registers[c]
            );
        }
    }
    let diffs: Vec<usize> = (0..4096)
        .filter(|&a| model.memory[a] != gpu.memory[a])
        .collect();
    for &a in diffs.iter().take(8) {
        eprintln!(
            "  M[{a:#05x}]: model {:#04x} gpu16 {:#04x}",
            model.memory[a], gpu.memory[a]
        );
    }
    if model.instructions != gpu.instructions {
        eprintln!(
            "  instructions:\n    model {:?}\n    gpu16 {:?}",
            model.instructions, gpu.instructions
        );
    }
    if model.tasks != gpu.tasks {
        eprintln!("  tasks (frame mask issue start end):");
        for k in 0..model.tasks.len().max(gpu.tasks.len()) {
            let show = |t: Option<&Task>| match t {
                Some(t) => format!(
                    "{:2} {:04x} {:4} {:4} {:4}",
                    t.frame, t.mask, t.issue, t.start, t.end
                ),
                None => "-".into(),
            };
            let (m, g) = (model.tasks.get(k), gpu.tasks.get(k));
            eprintln!(
                "    {} model {}  gpu16 {}",
                if m == g { " " } else { "*" },
                show(m),
                show(g)
            );
        }
    }
}

/// Compare model and gpu16 on `count` seeds; the number of programs compared and the
/// mismatching seeds.
fn compare(p: Params, seeds: std::ops::Range<u64>) -> (usize, Vec<u64>, Stats) {
    let mut compared = 0;
    let mut bad = Vec::new();
    let mut total: Stats = [0; STAT_NAMES.len()];
    let mut max_cycles = 0;
    for seed in seeds {
        let (img, memory) = random_program(seed);
        let (model, stats) = model_run_stats(&img, &memory, p)
            .unwrap_or_else(|| panic!("seed {seed}: the model did not end\n{}", hex_frames(&img)));
        for (t, s) in total.iter_mut().zip(stats) {
            *t += s;
        }
        max_cycles = max_cycles.max(model.cycles);
        let gpu = gpu16_run(&img, &memory, p);
        compared += 1;
        if gpu.as_ref() != Ok(&model) {
            if bad.len() < 3 {
                describe(seed, &p, &img, &model, &gpu);
            }
            bad.push(seed);
        }
    }
    eprintln!("{}: longest run {max_cycles} cycles", p.name);
    (compared, bad, total)
}

/// Seeds per timing; `MCST_REFERENCE_SEEDS` raises it for a longer hunt.
const SEEDS: u64 = 2500;

fn check_profile(p: Params) {
    let seeds = std::env::var("MCST_REFERENCE_SEEDS")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(SEEDS);
    let (compared, bad, stats) = compare(p, 0..seeds);
    eprintln!(
        "{}: {compared} programs compared, {} disagree",
        p.name,
        bad.len()
    );
    for (name, n) in STAT_NAMES.iter().zip(stats) {
        eprintln!("  {name}: {n}");
    }
    assert!(
        bad.is_empty(),
        "{}: {} of {compared} programs disagree; seeds {:?}",
        p.name,
        bad.len(),
        &bad[..bad.len().min(40)]
    );
}

#[test]
fn random_programs_default_timing() {
    check_profile(DEFAULT);
}

#[test]
fn random_programs_mcst_rtl() {
    check_profile(RTL);
}

// ---------------------------------------------------------------------------------------
// The model against the document's table 5.4 (mcst-rtl)
// ---------------------------------------------------------------------------------------

/// One group of one IF on `cav` running `words`, then a halt.
fn one_if(cav: u16, init_vect: u16, init_r0: [u8; 16], words: &[u16]) -> Vec<u8> {
    image(&[
        cf(1, FENCE_NO, cav, init_vect, init_r0),
        iframe(words),
        stop_cf(2),
    ])
}

fn rtl_cycles(img: &[u8]) -> u64 {
    model_run(img, &[], RTL).expect("ends").cycles
}

#[test]
fn model_reproduces_table_5_4() {
    let ready = 0xF000;
    // m1_ready: one core, one IF: ready.
    assert_eq!(rtl_cycles(&one_if(1, 0, [0; 16], &[ready])), 9);
    // m2_add_ready: add r0, r0, r0; ready.
    assert_eq!(rtl_cycles(&one_if(1, 0, [0; 16], &[0x1000, ready])), 10);
    // m4_no_ready: 16 nops, running off IP 15 (+1 implicit ready).
    assert_eq!(rtl_cycles(&one_if(1, 0, [0; 16], &[0; 16])), 25);
    // m5_2if: one CF with two IFs of ready.
    let m5 = image(&[
        cf(2, FENCE_NO, 1, 0, [0; 16]),
        iframe(&[ready]),
        iframe(&[ready]),
        stop_cf(3),
    ]);
    assert_eq!(rtl_cycles(&m5), 17);
    // m6_2cf: two groups on core 0; the second CF waits for the first task's end.
    let m6 = image(&[
        cf(1, FENCE_NO, 1, 0, [0; 16]),
        iframe(&[ready]),
        cf(1, FENCE_NO, 1, 0, [0; 16]),
        iframe(&[ready]),
        stop_cf(4),
    ]);
    assert_eq!(rtl_cycles(&m6), 18);
    // m7_loop10: R0 = 10 by the CF; set_const 1, r1; L: sub r0, r1, r0; bnz L, r0; ready.
    let mut init = [0u8; 16];
    init[0] = 10;
    assert_eq!(
        rtl_cycles(&one_if(1, 1, init, &[0xC011, 0x2010, 0xE010, ready])),
        39
    );
    // m8_ld: ld [r0, r0], r1; ready.
    assert_eq!(rtl_cycles(&one_if(1, 0, [0; 16], &[0xB001, ready])), 11);
    // m9_ld_use: ld [r0, r0], r1; add r1, r1, r2 (B2); ready.
    assert_eq!(
        rtl_cycles(&one_if(1, 0, [0; 16], &[0xB001, 0x1112, ready])),
        13
    );
    // m11_ld16: 16 cores load bank 0: one grant a cycle, round robin from core 1.
    assert_eq!(
        rtl_cycles(&one_if(0xFFFF, 0, [0; 16], &[0xB001, ready])),
        26
    );
    // m12_st16: 16 cores store to bank 0.
    assert_eq!(
        rtl_cycles(&one_if(0xFFFF, 0, [0; 16], &[0xD001, ready])),
        25
    );
    // A bank switch (5.3, 5.4 "+1 per bank switch"): set_const 0x01, r1 reads R1 = 0 as its
    // B value; the ld's bank is 1, so its first grant does not count: 8 + 3 + 1 + 1 = 13.
    assert_eq!(
        rtl_cycles(&one_if(1, 0, [0; 16], &[0xC011, 0xB012, ready])),
        13
    );
}

/// The task timeline of 5.5 and the m11 grant order, as the model sees them.
#[test]
fn model_timeline_of_m11() {
    let out = model_run(&one_if(0xFFFF, 0, [0; 16], &[0xB001, 0xF000]), &[], RTL).unwrap();
    assert_eq!(
        out.tasks,
        vec![Task {
            frame: 1,
            mask: 0xFFFF,
            issue: 1,
            start: 8,
            end: 25
        }]
    );
    assert_eq!(out.instructions, [2; 16]);
}

/// The hand-worked programs give gpu16 the same numbers as the model, under both timings.
#[test]
fn hand_programs_agree_with_gpu16() {
    let mut init = [0u8; 16];
    init[0] = 10;
    let programs = [
        one_if(1, 0, [0; 16], &[0xF000]),
        one_if(1, 0, [0; 16], &[0; 16]),
        one_if(1, 1, init, &[0xC011, 0x2010, 0xE010, 0xF000]),
        one_if(1, 0, [0; 16], &[0xB001, 0x1112, 0xF000]),
        one_if(0xFFFF, 0, [0; 16], &[0xB001, 0xF000]),
        one_if(0xFFFF, 0, [0; 16], &[0xD001, 0xF000]),
        one_if(1, 0, [0; 16], &[0xC011, 0xB012, 0xF000]),
    ];
    for p in [DEFAULT, RTL] {
        for img in &programs {
            let model = model_run(img, &[], p).unwrap();
            let gpu = gpu16_run(img, &[], p);
            if gpu.as_ref() != Ok(&model) {
                describe(0, &p, img, &model, &gpu);
                panic!("hand program disagrees under {}", p.name);
            }
        }
    }
}

// ---------------------------------------------------------------------------------------
// Section 6's RTL bugs: the model keeps the intended semantics, and gpu16 agrees with it
// ---------------------------------------------------------------------------------------

/// The model's outcome of `img`, after checking gpu16 agrees under both timings.
fn agreed(name: &str, img: &[u8], memory: &[u8], p: Params) -> Outcome {
    let mut out = None;
    for q in [DEFAULT, RTL] {
        let model = model_run(img, memory, q).expect("the model ends");
        let gpu = gpu16_run(img, memory, q);
        if gpu.as_ref() != Ok(&model) {
            describe(0, &q, img, &model, &gpu);
            panic!("{name}: gpu16 disagrees with the model under {}", q.name);
        }
        if q.name == p.name {
            out = Some(model);
        }
    }
    out.unwrap()
}

fn nops() -> [u16; 16] {
    [0; 16]
}

#[test]
fn section_6_bugs_are_not_reproduced() {
    // R1: cmpge r5,r5,r1; add r1,r1,r1; add r1,r5,r2; st [r5,r3],r2 stores 2.
    let r1 = one_if(1, 0, [0; 16], &[0x5551, 0x1111, 0x1152, 0xD532, 0xF000]);
    assert_eq!(agreed("R1", &r1, &[], RTL).memory[0], 2);

    // R2: ld [r1,r3],r2 with M[1] = 0; bnz 5, r2 does not branch (r4 = 7 is set).
    let r2 = one_if(
        1,
        0,
        [0; 16],
        &[0xC011, 0xB132, 0xE250, 0xC074, 0xF000, 0xF000],
    );
    assert_eq!(agreed("R2", &r2, &[], RTL).registers[0][4], 7);

    // R6: ld [r4,r3],r2; ld [r1,r3],r6 loads M[0] then M[1].
    let r6 = one_if(1, 0, [0; 16], &[0xC011, 0xB432, 0xB136, 0xF000]);
    let out = agreed("R6", &r6, &[0xAA, 0xBB], RTL);
    assert_eq!((out.registers[0][2], out.registers[0][6]), (0xAA, 0xBB));

    // R7: 16 cores ld [r4,r0],r2; st [r0,r3],r6 keep all 16 stores (R0 = core id).
    let ids: [u8; 16] = std::array::from_fn(|i| i as u8);
    let r7 = one_if(0xFFFF, 0xFFFF, ids, &[0xC5A6, 0xB402, 0xD036, 0xF000]);
    assert_eq!(agreed("R7", &r7, &[], RTL).memory[..16], [0x5A; 16]);

    // R10: CF acq core 0 (long); CF no core 1: the second waits for core 0.
    let r10 = image(&[
        cf(1, FENCE_ACQ, 1, 0, [0; 16]),
        iframe(&nops()),
        cf(1, FENCE_NO, 2, 0, [0; 16]),
        iframe(&[0xF000]),
        stop_cf(4),
    ]);
    let t = agreed("R10", &r10, &[], RTL).tasks;
    assert!(t[1].issue > t[0].end, "{t:?}");
    assert_eq!(t[1].issue, 26);

    // R10b: CF acq; CF IF_Num 0 acq; CF no core 1 (long); CF acq core 2: the last does not
    // wait for core 1 (F is no after the no CF).
    let r10b = image(&[
        cf(1, FENCE_ACQ, 1, 0, [0; 16]),
        iframe(&[0xF000]),
        cf(0, FENCE_ACQ, 0, 0, [0; 16]),
        cf(1, FENCE_NO, 2, 0, [0; 16]),
        iframe(&nops()),
        cf(1, FENCE_ACQ, 4, 0, [0; 16]),
        iframe(&[0xF000]),
        stop_cf(7),
    ]);
    let t = agreed("R10b", &r10b, &[], RTL).tasks;
    assert!(t[2].issue < t[1].end, "{t:?}");

    // R11: CF no core 0 (long); CF rel core 1: the rel CF waits for core 0.
    let r11 = image(&[
        cf(1, FENCE_NO, 1, 0, [0; 16]),
        iframe(&nops()),
        cf(1, FENCE_REL, 2, 0, [0; 16]),
        iframe(&[0xF000]),
        stop_cf(4),
    ]);
    let t = agreed("R11", &r11, &[], RTL).tasks;
    assert!(t[1].issue > t[0].end, "{t:?}");
    // ... and CF rel; CF no does not hang.
    let r11b = image(&[
        cf(1, FENCE_REL, 1, 0, [0; 16]),
        iframe(&[0xF000]),
        cf(1, FENCE_NO, 2, 0, [0; 16]),
        iframe(&[0xF000]),
        stop_cf(4),
    ]);
    assert_eq!(agreed("R11b", &r11b, &[], RTL).tasks.len(), 2);
}

/// Section 3.4's ends and jumps, and TP's wrap from 63 to 0 (3.1).
#[test]
fn stop_frames_and_wrap() {
    // Frame sync: a stop CF with NextCF 4 reached while core 0 runs: the run ends when it
    // is idle, and the group at 4 never runs.
    let sync = image(&[
        cf(1, FENCE_NO, 1, 0, [0; 16]),
        iframe(&nops()),
        stop_cf(4),
        stop_cf(3),
        cf(1, FENCE_NO, 2, 0, [0; 16]),
        iframe(&[0xF000]),
        stop_cf(6),
    ]);
    let out = agreed("frame sync", &sync, &[], RTL);
    assert_eq!((out.tasks.len(), out.cycles), (1, 25));
    // A plain jump: every core idle in the TS's first cycle at the stop CF.
    let jump = image(&[
        cf(0, FENCE_NO, 0, 0, [0; 16]),
        stop_cf(3),
        stop_cf(2),
        cf(1, FENCE_NO, 2, 0, [0; 16]),
        iframe(&[0xF000]),
        stop_cf(5),
    ]);
    let out = agreed("jump", &jump, &[], RTL);
    // CF 0 in 0, jump in 1, CF 3 in 2, broadcast 3..6, ready 10, halt seen in 11.
    assert_eq!((out.tasks[0].issue, out.cycles), (3, 11));
    // Wrap: CF 0 (empty); stop CF 1 jumps to 60; a long task at 60-61; the zero frames 62
    // and 63 are empty CFs; TP wraps to 0, and the stop CF at 1 now waits: frame sync.
    let mut frames = vec![[0u8; 32]; 62];
    frames[0] = cf(0, FENCE_NO, 0, 0, [0; 16]);
    frames[1] = stop_cf(60);
    frames[60] = cf(1, FENCE_NO, 1, 0, [0; 16]);
    frames[61] = iframe(&nops());
    let wrap = image(&frames);
    let out = agreed("wrap", &wrap, &[], DEFAULT);
    // Default timing: CF 0 in 0, jump in 1, CF 60 in 2, broadcast 3..6, nops 7..22; the TS
    // walks 62, 63, 0 in 7, 8, 9 and waits at 1 from 10: the run ends in 23.
    assert_eq!((out.tasks.len(), out.cycles), (1, 23));
}

/// Section 3.1: an image over 64 frames and a fence of 3 are load errors; every ld/st word
/// loads (no modes).
#[test]
fn load_rules_of_section_3_1() {
    let mut frames = vec![cf(0, FENCE_NO, 0, 0, [0; 16]); 64];
    frames[63] = stop_cf(63);
    assert!(Program::from_image_in(&image(&frames), Dialect::Mcst).is_ok());
    frames.push(stop_cf(0));
    assert!(Program::from_image_in(&image(&frames), Dialect::Mcst).is_err());
    let fence3 = one_if(1, 0, [0; 16], &[0xF000]);
    let mut bad = fence3.clone();
    bad[0] |= 3 << 6;
    assert!(Program::from_image_in(&fence3, Dialect::Mcst).is_ok());
    assert!(Program::from_image_in(&bad, Dialect::Mcst).is_err());
    // d680 = st [r6, r8], r0 and b680 = ld [r6, r8], r0 (mode bits under decisions.md).
    let modes = one_if(1, 0, [0; 16], &[0xD680, 0xB680, 0xDFC0, 0xBFC0, 0xF000]);
    assert!(Program::from_image_in(&modes, Dialect::Mcst).is_ok());
}
