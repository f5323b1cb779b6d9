//! Random programs that are valid by construction and always terminate: every opcode and
//! operand shape, loops with bounded counters, forward branches, memory accesses with random
//! high registers, well-formed atomic sequences that contend across cores and banks, random
//! masks, fences and R0 init. The same seed gives the same bytes everywhere.

use crate::rng::Rng;
use gpu16_machine::frame::FRAME_BYTES;
use gpu16_machine::isa::{AluOp, MemOp, FRAME_INSTRS};
use gpu16_machine::{ControlFrame, Fence, Instr, InstrFrame};

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
}

impl Profile {
    pub const ALL: [Profile; 5] = [
        Profile::Alu,
        Profile::Memory,
        Profile::Atomics,
        Profile::Scheduler,
        Profile::Mixed,
    ];

    pub fn name(self) -> &'static str {
        match self {
            Profile::Alu => "alu",
            Profile::Memory => "memory",
            Profile::Atomics => "atomics",
            Profile::Scheduler => "scheduler",
            Profile::Mixed => "mixed",
        }
    }

    pub fn from_name(name: &str) -> Option<Profile> {
        Profile::ALL.into_iter().find(|p| p.name() == name)
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
                ..base
            },
            Profile::Mixed => base,
        }
    }
}

/// Builds one instruction frame slot by slot. `protected` registers (loop counters, the
/// address registers of an open atomic sequence) are never written by random instructions.
struct FrameBuilder<'r> {
    rng: &'r mut Rng,
    knobs: Knobs,
    slots: Vec<Instr>,
    protected: u16,
    /// Slots where a top-level construct starts: the only safe forward-branch targets.
    boundaries: Vec<usize>,
    /// Forward branches whose target is chosen once the frame is complete.
    pending_jumps: Vec<usize>,
}

impl FrameBuilder<'_> {
    fn room(&self) -> usize {
        FRAME_INSTRS - self.slots.len()
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
                4 => {
                    let p = self.protected;
                    self.writable(|c| p & (1 << ((c + 1) & 15)) == 0)
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
        let (a, hi) = (self.reg(), self.rng.below(4) as u8);
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
        let Some(counter) = self.writable(|r| r >= 8) else {
            return false;
        };
        self.protected |= 1 << counter;
        let Some(one) = self.writable(|r| r >= 8) else {
            self.protected &= !(1 << counter);
            return false;
        };
        self.protected |= 1 << one;
        let n = self.rng.range(1, self.knobs.max_iterations) as u8;
        self.slots.push(Instr::SetConst { k: n, d: counter });
        self.slots.push(Instr::SetConst { k: 1, d: one });
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
        self.boundaries.push(FRAME_INSTRS);
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
        let mut out = [Instr::Ready; FRAME_INSTRS];
        out.copy_from_slice(&self.slots);
        out
    }
}

/// A generated program and the shared memory image it starts from.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Generated {
    pub image: Vec<u8>,
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

/// Generate a program of `groups` control frames with their instruction frames.
pub fn generate(seed: u64, groups: usize, profile: Profile) -> Generated {
    let mut rng = Rng::new(seed);
    let knobs = Knobs::of(profile);
    let shared_pct = if profile == Profile::Atomics { 70 } else { 30 };
    let mut frames: Vec<[u8; FRAME_BYTES]> = Vec::new();
    for _ in 0..groups.max(1) {
        let if_num = rng.range(1, knobs.max_ifs) as u8;
        let active = mask(&mut rng);
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
        frames.push(
            ControlFrame {
                if_num,
                fence,
                active,
                init_vect,
                init_r0,
                reserved_header: 0,
                reserved: [0; 10],
            }
            .encode(),
        );
        for _ in 0..if_num {
            let builder = FrameBuilder {
                rng: &mut rng,
                knobs,
                slots: Vec::with_capacity(FRAME_INSTRS),
                protected: 0,
                boundaries: Vec::new(),
                pending_jumps: Vec::new(),
            };
            frames.push(InstrFrame::from_instrs(builder.build(shared_pct)).bytes());
        }
    }
    let mem_len = rng.range(0, 4096) as usize;
    let memory = (0..mem_len).map(|_| rng.byte()).collect();
    Generated {
        image: frames.into_iter().flatten().collect(),
        memory,
    }
}
