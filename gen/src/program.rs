//! Random programs that are valid by construction and always terminate: every opcode and
//! operand shape, loops with bounded counters, forward branches, memory accesses with random
//! high registers, well-formed atomic sequences that contend across cores and banks, random
//! masks, fences and R0 init. Unusual but legal shapes too: control frames with no instruction
//! frames, instruction words with ignored bits set, reserved control-frame bits, and streams
//! longer than the 64 frames of the hardware task memory. The same seed gives the same bytes
//! everywhere.
//!
//! [`generate_in`] also writes programs of the MCST dialect: its instruction forms (one-byte
//! `mul`, register shift amounts, any bank register, constants loaded into r0..r7), no
//! atomic sequences, at most 64 frames, ending with a halt frame (what `.halt` writes).

use crate::rng::Rng;
use gpu16_machine::engine::isa::Instr;
use gpu16_machine::engine::isa::{AluOp, MemOp, FRAME_INSTRS};
use gpu16_machine::frame::{FRAME_BYTES, TASK_MEMORY_FRAMES};
use gpu16_machine::{ControlFrame, Dialect, Fence};

/// Percentage of eligible instruction words (`nop`, `ready`, `bnz`, `rshft`/`lshft`,
/// `set_const` into r0..r7) written with some of their ignored bits set.
pub const IGNORED_BITS_PCT: u64 = 12;
/// Percentage of control frames with nonzero reserved bits (header bits 15:8, bytes 6..15).
pub const RESERVED_CF_PCT: u64 = 5;
/// Percentage of the short groups of a stream that have no instruction frame.
const SHORT_EMPTY_PCT: u64 = 15;

/// The most full groups a program may ask for: 65,536. A full group has at most 5 frames
/// (a control frame and up to 4 instruction frames), so a program is at most about 327,680
/// frames (10 MiB), well inside what the CLI loads, and takes about 5 seconds to generate in
/// a debug build. [`generate`] clamps `groups` to `1..=MAX_GROUPS`, so no caller can make it
/// run for hours or allocate without bound; `gpu16 gen --groups` refuses larger values.
pub const MAX_GROUPS: usize = 1 << 16;

/// The most groups an MCST program may have: 12 groups of at most 5 frames and the halt
/// frame fit the 64-frame task memory. [`generate_in`] clamps `groups` to `1..=` this.
pub const MCST_MAX_GROUPS: usize = 12;

/// What kind of programs to favour.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Profile {
    /// Register arithmetic in (nested) loops, no memory.
    Alu,
    /// Many ld/st with random addresses.
    Memory,
    /// Atomic sequences contending on shared bytes and banks.
    Atomics,
    /// Many short tasks with mixed masks, fences and R0 init.
    Scheduler,
    /// A bit of everything.
    Mixed,
    /// Tasks whose cores each touch their own bytes of a shared bank (rows numbered by the
    /// core), at paces that differ (divergent trip counts, a staggered start), beside
    /// tasks that touch the same banks with plain and atomic accesses.
    Private,
}

impl Profile {
    /// Every profile, in declaration order.
    pub const ALL: [Profile; 6] = [
        Profile::Alu,
        Profile::Memory,
        Profile::Atomics,
        Profile::Scheduler,
        Profile::Mixed,
        Profile::Private,
    ];

    /// The lowercase name `gpu16 gen --profile` and the Python binding take.
    pub fn name(self) -> &'static str {
        match self {
            Profile::Alu => "alu",
            Profile::Memory => "memory",
            Profile::Atomics => "atomics",
            Profile::Scheduler => "scheduler",
            Profile::Mixed => "mixed",
            Profile::Private => "private",
        }
    }

    /// The profile whose [`Profile::name`] is `name`, if any ([`Profile::parse`] gives an
    /// error message instead).
    pub fn from_name(name: &str) -> Option<Profile> {
        Profile::ALL.into_iter().find(|p| p.name() == name)
    }

    /// The profile `name` names; otherwise the error `gpu16 gen --profile` and the Python
    /// binding give, listing the names.
    pub fn parse(name: &str) -> Result<Profile, String> {
        Profile::from_name(name).ok_or_else(|| {
            let names: Vec<_> = Profile::ALL.iter().map(|p| p.name()).collect();
            format!("unknown profile `{name}` (one of {})", names.join(", "))
        })
    }
}

/// Percentages and bounds that shape a profile's programs.
#[derive(Clone, Copy, Debug)]
struct Knobs {
    loop_pct: u64,
    mem_pct: u64,
    atomic_pct: u64,
    jump_pct: u64,
    ready_pct: u64,
    max_iterations: u64,
    max_ifs: u64,
    r0_init_pct: u64,
    /// Control frames with IF_Num = 0.
    empty_group_pct: u64,
    /// Programs padded with short groups into a stream longer than the task memory.
    stream_pct: u64,
    /// Write the MCST dialect's instruction forms (and no atomic sequences).
    mcst: bool,
    /// Instruction frames whose cores each touch their own bytes ([`private_bytes`]).
    private_pct: u64,
}

impl Knobs {
    fn of(profile: Profile) -> Knobs {
        let base = Knobs {
            loop_pct: 20,
            mem_pct: 20,
            atomic_pct: 10,
            jump_pct: 5,
            ready_pct: 4,
            max_iterations: 8,
            max_ifs: 3,
            r0_init_pct: 30,
            empty_group_pct: 5,
            stream_pct: 0,
            mcst: false,
            private_pct: 0,
        };
        match profile {
            Profile::Alu => Knobs {
                loop_pct: 40,
                mem_pct: 0,
                atomic_pct: 0,
                max_iterations: 24,
                ..base
            },
            Profile::Memory => Knobs {
                mem_pct: 55,
                atomic_pct: 0,
                ..base
            },
            Profile::Atomics => Knobs {
                atomic_pct: 45,
                mem_pct: 25,
                loop_pct: 15,
                ..base
            },
            Profile::Scheduler => Knobs {
                loop_pct: 5,
                mem_pct: 15,
                atomic_pct: 5,
                max_iterations: 3,
                max_ifs: 4,
                r0_init_pct: 60,
                empty_group_pct: 12,
                stream_pct: 10,
                ..base
            },
            Profile::Mixed => Knobs {
                stream_pct: 3,
                ..base
            },
            Profile::Private => Knobs {
                private_pct: 60,
                mem_pct: 40,
                atomic_pct: 15,
                max_iterations: 12,
                ..base
            },
        }
    }
}

/// Builds one instruction frame slot by slot. `protected` registers (loop counters, the
/// address registers of an open atomic sequence) are never written by random instructions.
struct FrameBuilder<'r> {
    rng: &'r mut Rng,
    knobs: Knobs,
    /// Slots the live code fills; if fewer than 16, a `ready` follows and the slots after it
    /// are dead code.
    len: usize,
    slots: Vec<Instr>,
    protected: u16,
    /// Slots where a top-level construct starts: the only safe forward-branch targets.
    boundaries: Vec<usize>,
    /// Forward branches whose target is chosen once the frame is complete.
    pending_jumps: Vec<usize>,
}

impl<'r> FrameBuilder<'r> {
    fn new(rng: &'r mut Rng, knobs: Knobs, len: usize) -> FrameBuilder<'r> {
        FrameBuilder {
            rng,
            knobs,
            len,
            slots: Vec::with_capacity(FRAME_INSTRS),
            protected: 0,
            boundaries: Vec::new(),
            pending_jumps: Vec::new(),
        }
    }

    fn room(&self) -> usize {
        self.len - self.slots.len()
    }

    fn writable(&mut self, filter: impl Fn(u8) -> bool) -> Option<u8> {
        let choices: Vec<u8> = (0..16u8)
            .filter(|&r| self.protected & (1 << r) == 0 && filter(r))
            .collect();
        (!choices.is_empty()).then(|| self.rng.pick(&choices))
    }

    fn reg(&mut self) -> u8 {
        self.rng.below(16) as u8
    }

    /// `set_const k, rD` in the dialect's form.
    fn set_const(&self, k: u8, d: u8) -> Instr {
        if self.knobs.mcst {
            Instr::McstSetConst { k, d }
        } else {
            Instr::SetConst { k, d }
        }
    }

    /// One register-only instruction that writes no protected register.
    fn register_op(&mut self) -> Instr {
        loop {
            let kind = self.rng.below(10);
            let (a, b) = (self.reg(), self.reg());
            let instr = match kind {
                0..=3 => self.writable(|_| true).map(|c| Instr::Alu {
                    op: self.rng.pick(&AluOp::ALL),
                    a,
                    b,
                    c,
                }),
                4 if self.knobs.mcst => self.writable(|_| true).map(|c| Instr::McstMul { a, b, c }),
                5 | 6 if self.knobs.mcst => self.writable(|_| true).map(|c| Instr::McstShift {
                    left: kind == 5,
                    a,
                    b,
                    c,
                }),
                7 | 8 if self.knobs.mcst => {
                    let k = self.rng.byte();
                    self.writable(|_| true)
                        .map(|d| Instr::McstSetConst { k, d })
                }
                4 => {
                    // mul writes two registers; neither may be protected.
                    let p = self.protected;
                    self.writable(|c| p & Instr::Mul { a, b, c }.writes() == 0)
                        .map(|c| Instr::Mul { a, b, c })
                }
                5 | 6 => self.writable(|_| true).map(|c| Instr::Shift {
                    left: kind == 5,
                    a,
                    k: b & 7,
                    c,
                }),
                7 | 8 => {
                    let k = self.rng.byte();
                    self.writable(|_| true).map(|d| Instr::SetConst { k, d })
                }
                _ => Some(Instr::Nop),
            };
            if let Some(i) = instr {
                return i;
            }
        }
    }

    fn memory_op(&mut self) -> Instr {
        // The MCST dialect's bank register is any register.
        let banks = if self.knobs.mcst { 16 } else { 4 };
        let (a, hi) = (self.reg(), self.rng.below(banks) as u8);
        if self.rng.chance(50) {
            let r = self.reg();
            Instr::Mem {
                op: MemOp::St,
                a,
                hi,
                r,
            }
        } else {
            match self.writable(|_| true) {
                Some(r) => Instr::Mem {
                    op: MemOp::Ld,
                    a,
                    hi,
                    r,
                },
                None => Instr::Nop,
            }
        }
    }

    fn simple(&mut self) -> Instr {
        if self.rng.chance(self.knobs.mem_pct) {
            self.memory_op()
        } else {
            self.register_op()
        }
    }

    /// `set_const n, rC; set_const 1, rK; body; sub rC, rK, rC; bnz body, rC`.
    fn counted_loop(&mut self, depth: u32) -> bool {
        if self.room() < 5 {
            return false;
        }
        let mcst = self.knobs.mcst;
        let konst = move |r: u8| (r >= 8) != mcst;
        let Some(counter) = self.writable(konst) else {
            return false;
        };
        self.protected |= 1 << counter;
        let Some(one) = self.writable(konst) else {
            self.protected &= !(1 << counter);
            return false;
        };
        self.protected |= 1 << one;
        let n = self.rng.range(1, self.knobs.max_iterations) as u8;
        self.slots.push(self.set_const(n, counter));
        self.slots.push(self.set_const(1, one));
        let head = self.slots.len();
        let body_max = (self.room() - 2).min(6);
        let body = self.rng.range(1, body_max as u64) as usize;
        let end = self.slots.len() + body;
        while self.slots.len() < end {
            if depth == 0 && end - self.slots.len() >= 5 && self.rng.chance(30) {
                // The inner loop must fit before the outer loop's own tail.
                let saved = self.slots.len();
                if self.counted_loop(depth + 1) && self.slots.len() <= end {
                    continue;
                }
                self.slots.truncate(saved);
            }
            let i = self.simple();
            self.slots.push(i);
        }
        self.slots.push(Instr::Alu {
            op: AluOp::Sub,
            a: counter,
            b: one,
            c: counter,
        });
        self.slots.push(Instr::Bnz {
            a: counter,
            target: head as u8,
        });
        self.protected &= !((1 << counter) | (1 << one));
        true
    }

    /// Optionally point the address registers at a shared byte, then
    /// `ld_sync [a, h], d; register-only body; st_sync [a, h], v`.
    fn atomic_sequence(&mut self, shared_pct: u64) -> bool {
        if self.room() < 4 {
            return false;
        }
        let hi = self.rng.below(4) as u8;
        let low = if self.rng.chance(shared_pct) {
            // A constant low byte (registers r8..r15) and a zeroed or core-id high register
            // make many cores meet on one byte or one bank.
            let Some(a) = self.writable(|r| r >= 8 && r != hi) else {
                return false;
            };
            let k = self.rng.below(4) as u8;
            self.slots.push(Instr::SetConst { k, d: a });
            if self.protected & (1 << hi) == 0 {
                self.slots.push(if self.rng.chance(60) {
                    Instr::Alu {
                        op: AluOp::Xor,
                        a: hi,
                        b: hi,
                        c: hi,
                    }
                } else {
                    Instr::SetConst { k: 0, d: hi }
                });
            }
            a
        } else {
            self.reg()
        };
        if self.room() < 2 {
            return true;
        }
        let saved = self.protected;
        self.protected |= (1 << low) | (1 << hi);
        let Some(dst) = self.writable(|_| true) else {
            self.protected = saved;
            return true;
        };
        self.slots.push(Instr::Mem {
            op: MemOp::LdSync,
            a: low,
            hi,
            r: dst,
        });
        let body = self.rng.range(0, (self.room() - 1).min(3) as u64) as usize;
        for _ in 0..body {
            let i = self.register_op();
            self.slots.push(i);
        }
        let v = if self.rng.chance(70) { dst } else { self.reg() };
        self.slots.push(Instr::Mem {
            op: MemOp::StSync,
            a: low,
            hi,
            r: v,
        });
        self.protected = saved;
        true
    }

    fn build(mut self, shared_pct: u64) -> [Instr; FRAME_INSTRS] {
        while self.room() > 0 {
            self.boundaries.push(self.slots.len());
            let roll = self.rng.below(100);
            let k = self.knobs;
            let done = if roll < k.loop_pct {
                self.counted_loop(0)
            } else if roll < k.loop_pct + k.atomic_pct {
                self.atomic_sequence(shared_pct)
            } else if roll < k.loop_pct + k.atomic_pct + k.jump_pct {
                let cond = self.reg();
                self.pending_jumps.push(self.slots.len());
                self.slots.push(Instr::Bnz { a: cond, target: 0 });
                true
            } else if roll < k.loop_pct + k.atomic_pct + k.jump_pct + k.ready_pct {
                self.slots.push(Instr::Ready);
                true
            } else {
                false
            };
            if !done {
                let i = self.simple();
                self.slots.push(i);
            }
        }
        // A jump may land on the `ready` that ends a short frame; from 16 it is a nop.
        self.boundaries.push(self.len);
        for &j in &self.pending_jumps {
            let later: Vec<usize> = self
                .boundaries
                .iter()
                .copied()
                .filter(|&b| b > j && b < FRAME_INSTRS)
                .collect();
            let target = if later.is_empty() {
                // Only the next slot is left; from the last slot there is no forward target.
                j + 1
            } else {
                self.rng.pick(&later)
            };
            if let Instr::Bnz { a, .. } = self.slots[j] {
                self.slots[j] = if target < FRAME_INSTRS {
                    Instr::Bnz {
                        a,
                        target: target as u8,
                    }
                } else {
                    Instr::Nop
                };
            }
        }
        if self.len < FRAME_INSTRS {
            self.slots.push(Instr::Ready);
            self.protected = 0;
            while self.slots.len() < FRAME_INSTRS {
                let i = self.simple();
                self.slots.push(i);
            }
        }
        let mut out = [Instr::Ready; FRAME_INSTRS];
        out.copy_from_slice(&self.slots);
        out
    }
}

/// A generated program and the shared memory image it starts from.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Generated {
    /// The program image: whole 32-byte frames, valid for the dialect it was generated in
    /// (a [`crate::generate_violating`] image may break one load rule on purpose).
    pub image: Vec<u8>,
    /// The initial shared memory: 0 to 4096 random bytes; the machine zero-fills the rest.
    pub memory: Vec<u8>,
}

fn mask(rng: &mut Rng) -> u16 {
    match rng.below(10) {
        0 => 0xFFFF,
        1 => 1 << rng.below(16),
        2 => 0x00FF << (8 * rng.below(2)),
        3 if rng.chance(30) => 0,
        _ => rng.next_u64() as u16,
    }
}

/// The word of an instruction; now and then with some of its ignored bits set, so the word
/// is not canonical but decodes to an instruction of the same semantics.
pub(crate) fn word(rng: &mut Rng, i: Instr) -> u16 {
    let w = i.encode();
    let ignored = i.ignored_bits();
    if ignored == 0 || !rng.chance(IGNORED_BITS_PCT) {
        return w;
    }
    loop {
        let bits = rng.next_u64() as u16 & ignored;
        if bits != 0 {
            return (w & !ignored) | bits;
        }
    }
}

/// The bytes of an instruction frame, its words written by [`word`].
fn frame_bytes(rng: &mut Rng, instrs: [Instr; FRAME_INSTRS]) -> [u8; FRAME_BYTES] {
    let mut b = [0u8; FRAME_BYTES];
    for (i, instr) in instrs.into_iter().enumerate() {
        b[2 * i..2 * i + 2].copy_from_slice(&word(rng, instr).to_le_bytes());
    }
    b
}

/// Reserved control-frame bits: usually none, sometimes some in the header, in bytes 6..15
/// or both. The loader accepts them.
fn reserved_bits(rng: &mut Rng) -> (u8, [u8; 10]) {
    let mut bytes = [0u8; 10];
    if !rng.chance(RESERVED_CF_PCT) {
        return (0, bytes);
    }
    let which = rng.below(3);
    let header = if which != 1 {
        rng.range(1, 255) as u8
    } else {
        0
    };
    if which != 0 {
        for _ in 0..rng.range(1, 3) {
            bytes[rng.below(10) as usize] = rng.range(1, 255) as u8;
        }
    }
    (header, bytes)
}

/// Appends one group: a control frame and its instruction frames. A `short` group (the
/// padding of a stream) has at most two frames of a few live instructions each.
fn push_group(
    rng: &mut Rng,
    knobs: Knobs,
    shared_pct: u64,
    short: bool,
    frames: &mut Vec<[u8; FRAME_BYTES]>,
) -> u8 {
    let if_num = if short {
        if rng.chance(SHORT_EMPTY_PCT) {
            0
        } else {
            rng.range(1, 2) as u8
        }
    } else if rng.chance(knobs.empty_group_pct) {
        0
    } else {
        rng.range(1, knobs.max_ifs) as u8
    };
    // The private profile's groups often take half the cores, so that a later group's
    // tasks run beside an earlier one's on the other half.
    let active = if knobs.private_pct > 0 && rng.chance(50) {
        rng.pick(&[0x00FF, 0xFF00, 0x0F0F, 0xF0F0, 0x5555, 0xAAAA])
    } else {
        mask(rng)
    };
    let fence = match rng.below(10) {
        0..=5 => Fence::No,
        6..=7 => Fence::Acq,
        _ => Fence::Rel,
    };
    let mut init_r0 = [0u8; 16];
    init_r0.iter_mut().for_each(|b| *b = rng.byte());
    let init_vect = if rng.chance(knobs.r0_init_pct) {
        rng.next_u64() as u16
    } else {
        0
    };
    let (mut reserved_header, reserved) = reserved_bits(rng);
    if knobs.mcst {
        // Header bits 13:8 are NextCF, ignored without the stop bit 14, which only the
        // halt frame has.
        reserved_header &= !0x40;
    }
    frames.push(
        ControlFrame {
            if_num,
            fence,
            active,
            init_vect,
            init_r0,
            reserved_header,
            reserved,
        }
        .encode(),
    );
    for _ in 0..if_num {
        let frame = instr_frame(rng, knobs, shared_pct, short);
        frames.push(frame);
    }
    if_num
}

fn instr_frame(rng: &mut Rng, knobs: Knobs, shared_pct: u64, short: bool) -> [u8; FRAME_BYTES] {
    let (knobs, len) = if short {
        let k = Knobs {
            max_iterations: knobs.max_iterations.min(3),
            ..knobs
        };
        (k, rng.range(1, 6) as usize)
    } else {
        (knobs, FRAME_INSTRS)
    };
    let instrs = if !short && !knobs.mcst && rng.chance(knobs.private_pct) {
        private_bytes(rng)
    } else {
        FrameBuilder::new(rng, knobs, len).build(shared_pct)
    };
    frame_bytes(rng, instrs)
}

/// A frame whose cores each touch their own bytes, or nearly: the bank a constant (0 most
/// often), the row the core id shifted left by 0 to 4 plus a constant (one to one on the 16
/// ids; in one frame in three shifted so that cores share rows),
/// loaded and stored in a counted loop whose trip count may depend on the core id, after
/// an optional one-instruction stagger of the odd cores; register work that never writes
/// the address or loop registers fills the loop.
fn private_bytes(rng: &mut Rng) -> [Instr; FRAME_INSTRS] {
    const ID: u8 = 4; // set_const into r0..r7 loads the core id
    const BANK: u8 = 1; // a bank register is r0..r3
    const ROW: u8 = 9;
    const COUNT: u8 = 10;
    const ONE: u8 = 14;
    const TEMP: u8 = 13;
    let alu = |op, a, b, c| Instr::Alu { op, a, b, c };
    let mut slots = vec![
        Instr::SetConst { k: 0, d: ID },
        alu(AluOp::Xor, BANK, BANK, BANK),
        Instr::SetConst { k: 1, d: ONE },
    ];
    let bank = if rng.chance(60) {
        0
    } else {
        rng.below(16) as u8
    };
    if bank != 0 {
        slots.push(Instr::SetConst { k: bank, d: TEMP });
        slots.push(alu(AluOp::Add, BANK, TEMP, BANK));
    }
    // One frame in three is a near miss that two cores share bytes in (a shift past 4
    // wraps core k + 8 onto core k's row mod 256; a right shift pairs cores), which the
    // run loop must not take for private.
    let (left, shift) = if rng.chance(35) {
        if rng.chance(50) {
            (true, rng.range(5, 7) as u8)
        } else {
            (false, rng.range(1, 3) as u8)
        }
    } else {
        (true, rng.below(5) as u8)
    };
    slots.push(Instr::Shift {
        left,
        a: ID,
        k: shift,
        c: ROW,
    });
    if rng.chance(50) {
        slots.push(Instr::SetConst {
            k: rng.byte(),
            d: TEMP,
        });
        slots.push(alu(AluOp::Add, ROW, TEMP, ROW));
    }
    slots.push(Instr::SetConst {
        k: rng.range(1, 12) as u8,
        d: COUNT,
    });
    if rng.chance(50) {
        // Divergent trip counts: + (id & m).
        slots.push(Instr::SetConst {
            k: rng.pick(&[1u8, 3, 7, 15]),
            d: TEMP,
        });
        slots.push(alu(AluOp::And, ID, TEMP, TEMP));
        slots.push(alu(AluOp::Add, COUNT, TEMP, COUNT));
    }
    if rng.chance(40) && slots.len() + 3 <= FRAME_INSTRS - 4 {
        // The odd cores skip a nop: the halves run a cycle apart.
        let at = slots.len() as u8;
        slots.push(alu(AluOp::And, ID, ONE, TEMP));
        slots.push(Instr::Bnz {
            a: TEMP,
            target: at + 3,
        });
        slots.push(Instr::Nop);
    }
    let head = slots.len();
    // The loop: at least one access, then more accesses or register work, then the count.
    let room = FRAME_INSTRS - 2 - head;
    let body = rng.range(1, room.min(6) as u64) as usize;
    let protected: u16 = 1 << BANK | 1 << ROW | 1 << COUNT | 1 << ONE;
    for i in 0..body {
        let access = i == 0 || rng.chance(40);
        let instr = if access {
            let op = if rng.chance(50) { MemOp::Ld } else { MemOp::St };
            // A load writes any register but the protected ones; a store stores any.
            let r = loop {
                let r = rng.below(16) as u8;
                if op == MemOp::St || protected & (1 << r) == 0 {
                    break r;
                }
            };
            Instr::Mem {
                op,
                a: ROW,
                hi: BANK,
                r,
            }
        } else {
            loop {
                let c = rng.below(16) as u8;
                if protected & (1 << c) != 0 {
                    continue;
                }
                let (a, b) = (rng.below(16) as u8, rng.below(16) as u8);
                break alu(rng.pick(&AluOp::ALL), a, b, c);
            }
        };
        slots.push(instr);
    }
    slots.push(alu(AluOp::Sub, COUNT, ONE, COUNT));
    slots.push(Instr::Bnz {
        a: COUNT,
        target: head as u8,
    });
    while slots.len() < FRAME_INSTRS {
        slots.push(Instr::Ready);
    }
    let mut out = [Instr::Ready; FRAME_INSTRS];
    out.copy_from_slice(&slots[..FRAME_INSTRS]);
    out
}

/// Generate a program in `dialect`: [`generate`] for the spec; for the MCST dialect
/// `groups` (clamped to `1..=`[`MCST_MAX_GROUPS`]) groups of the dialect's instructions and
/// a halt frame after them (a stop frame with no instruction frames whose NextCF is its own
/// index), at most 64 frames in all. The profile `atomics` is `memory`-like there, having no
/// atomic sequences to favour.
pub fn generate_in(seed: u64, groups: usize, profile: Profile, dialect: Dialect) -> Generated {
    match dialect {
        Dialect::Spec => generate(seed, groups, profile),
        Dialect::Mcst => generate_mcst(seed, groups, profile),
    }
}

fn generate_mcst(seed: u64, groups: usize, profile: Profile) -> Generated {
    let mut rng = Rng::new(seed);
    let knobs = Knobs {
        atomic_pct: 0,
        stream_pct: 0,
        mcst: true,
        ..Knobs::of(profile)
    };
    let mut frames: Vec<[u8; FRAME_BYTES]> = Vec::new();
    let mut ifs = 0usize;
    for _ in 0..groups.clamp(1, MCST_MAX_GROUPS) {
        ifs += usize::from(push_group(&mut rng, knobs, 0, false, &mut frames));
    }
    if ifs == 0 {
        frames[0][0] += 1;
        let frame = instr_frame(&mut rng, knobs, 0, false);
        frames.insert(1, frame);
    }
    let index = frames.len() as u8;
    frames.push(
        ControlFrame {
            if_num: 0,
            fence: Fence::No,
            active: 0,
            init_vect: 0,
            init_r0: [0; 16],
            reserved_header: 0x40 | index,
            reserved: [0; 10],
        }
        .encode(),
    );
    debug_assert!(frames.len() <= TASK_MEMORY_FRAMES);
    let mem_len = rng.range(0, 4096) as usize;
    let memory = (0..mem_len).map(|_| rng.byte()).collect();
    Generated {
        image: frames.into_iter().flatten().collect(),
        memory,
    }
}

/// Generate a program of `groups` control frames with their instruction frames (`groups`
/// clamped to `1..=`[`MAX_GROUPS`]). Now and then (per the profile) short groups pad it into
/// a stream longer than the hardware task memory, the `groups` full groups spread among
/// them.
pub fn generate(seed: u64, groups: usize, profile: Profile) -> Generated {
    let mut rng = Rng::new(seed);
    let knobs = Knobs::of(profile);
    let shared_pct = if profile == Profile::Atomics { 70 } else { 30 };
    let mut frames: Vec<[u8; FRAME_BYTES]> = Vec::new();
    let stream = TASK_MEMORY_FRAMES as u64;
    let target = if rng.chance(knobs.stream_pct) {
        rng.range(stream + 1, stream + 24) as usize
    } else {
        0
    };
    let mut full_left = groups.clamp(1, MAX_GROUPS) as u64;
    let mut ifs = 0usize;
    while full_left > 0 || frames.len() < target {
        let short = if full_left == 0 {
            true
        } else if frames.len() >= target {
            false
        } else {
            // About two frames a short group: spread the full groups over the stream.
            let short_left = (target - frames.len()) as u64 / 2 + 1;
            rng.below(full_left + short_left) >= full_left
        };
        if !short {
            full_left -= 1;
        }
        ifs += usize::from(push_group(&mut rng, knobs, shared_pct, short, &mut frames));
    }
    if ifs == 0 {
        // Every group came out empty: give the first one an instruction frame.
        frames[0][0] += 1;
        let frame = instr_frame(&mut rng, knobs, shared_pct, false);
        frames.insert(1, frame);
    }
    let mem_len = rng.range(0, 4096) as usize;
    let memory = (0..mem_len).map(|_| rng.byte()).collect();
    Generated {
        image: frames.into_iter().flatten().collect(),
        memory,
    }
}
