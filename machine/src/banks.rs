//! Which banks a core's task can touch, worked out before it runs. Accesses to different
//! banks never interact (locks, sequences and bank conflicts are all per bank), so a core may
//! run ahead of earlier cores that provably never touch its bank. This is what lets cores
//! that each stream through their own bank run natively without taking turns.
//!
//! A frame is analysed once: for every reachable memory instruction, the value of its
//! high-address register as a symbolic expression over the task's starting state (a
//! constant, the core id, a register's value at task start, or unknown). A core's bank set is
//! that expression evaluated with its own id and registers.

use crate::isa::{AluOp, Instr, FRAME_INSTRS};

/// A register's value at some point of a frame, relative to the task's start.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Val {
    Const(u8),
    /// The core id (set_const into r0..r7).
    CoreId,
    /// The register's value when the task started.
    Init(u8),
    Unknown,
}

impl Val {
    fn join(self, other: Val) -> Val {
        if self == other {
            self
        } else {
            Val::Unknown
        }
    }
}

/// The high-address register expression of every reachable memory instruction of a frame.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct FrameBanks {
    highs: Vec<Val>,
}

impl FrameBanks {
    pub fn analyse(code: &[Instr; FRAME_INSTRS]) -> FrameBanks {
        let mut states: [Option<[Val; 16]>; FRAME_INSTRS] = [None; FRAME_INSTRS];
        states[0] = Some(std::array::from_fn(|r| Val::Init(r as u8)));
        let mut work = vec![0usize];
        while let Some(ip) = work.pop() {
            let Some(mut s) = states[ip] else { continue };
            match code[ip] {
                Instr::Nop => {}
                Instr::Alu { op, a, b, c } => {
                    s[usize::from(c)] = alu(op, a, b, s[usize::from(a)], s[usize::from(b)]);
                }
                Instr::Mul { a, b, c } => {
                    let (x, y) = (s[usize::from(a)], s[usize::from(b)]);
                    let (lo, hi) = match (x, y) {
                        (Val::Const(x), Val::Const(y)) => {
                            let (lo, hi) = crate::isa::mul_wide(x, y);
                            (Val::Const(lo), Val::Const(hi))
                        }
                        _ => (Val::Unknown, Val::Unknown),
                    };
                    s[usize::from(c)] = lo;
                    s[usize::from((c + 1) & 15)] = hi;
                }
                Instr::Shift { left, a, k, c } => {
                    s[usize::from(c)] = match s[usize::from(a)] {
                        Val::Const(x) => Val::Const(crate::isa::shift(left, x, k)),
                        _ => Val::Unknown,
                    };
                }
                Instr::SetConst { k, d } => {
                    s[usize::from(d)] = if d < 8 { Val::CoreId } else { Val::Const(k) };
                }
                Instr::Mem { op, r, .. } => {
                    if op.is_read() {
                        s[usize::from(r)] = Val::Unknown;
                    }
                }
                Instr::Bnz { .. } | Instr::Ready => {}
            }
            let next = (ip + 1 < FRAME_INSTRS).then_some(ip + 1);
            let succ = match code[ip] {
                Instr::Ready => [None, None],
                Instr::Bnz { a, target } => match s[usize::from(a)] {
                    Val::Const(0) => [next, None],
                    Val::Const(_) => [Some(usize::from(target)), None],
                    _ => [Some(usize::from(target)), next],
                },
                _ => [next, None],
            };
            for next in succ.into_iter().flatten() {
                let merged = match states[next] {
                    None => s,
                    Some(old) => std::array::from_fn(|r| old[r].join(s[r])),
                };
                if states[next] != Some(merged) {
                    states[next] = Some(merged);
                    work.push(next);
                }
            }
        }
        let highs = (0..FRAME_INSTRS)
            .filter_map(|ip| match (code[ip], states[ip]) {
                (Instr::Mem { hi, .. }, Some(s)) => Some(s[usize::from(hi)]),
                _ => None,
            })
            .collect();
        FrameBanks { highs }
    }

    /// The banks core `id` can touch in this task, starting from registers `regs`.
    pub fn for_core(&self, id: u8, regs: &[u8; 16]) -> u16 {
        let mut mask = 0u16;
        for v in &self.highs {
            mask |= match *v {
                Val::Const(k) => 1 << (k & 0xF),
                Val::CoreId => 1 << (id & 0xF),
                Val::Init(r) => 1 << (regs[usize::from(r)] & 0xF),
                Val::Unknown => return 0xFFFF,
            };
        }
        mask
    }
}

fn alu(op: AluOp, a: u8, b: u8, x: Val, y: Val) -> Val {
    match (x, y) {
        (Val::Const(x), Val::Const(y)) => Val::Const(op.apply(x, y)),
        // x - x and x ^ x are 0 whatever x is; x & x and x | x are x.
        _ if a == b => match op {
            AluOp::Sub | AluOp::Xor => Val::Const(0),
            AluOp::And | AluOp::Or => x,
            _ => Val::Unknown,
        },
        _ => Val::Unknown,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::isa::MemOp;

    fn frame(instrs: &[Instr]) -> [Instr; FRAME_INSTRS] {
        let mut f = [Instr::Ready; FRAME_INSTRS];
        f[..instrs.len()].copy_from_slice(instrs);
        f
    }

    fn mem(op: MemOp, a: u8, hi: u8) -> Instr {
        Instr::Mem { op, a, hi, r: 5 }
    }

    #[test]
    fn core_id_high_register_is_the_cores_own_bank() {
        let f = frame(&[
            Instr::SetConst { k: 0, d: 1 },
            mem(MemOp::Ld, 9, 1),
            Instr::Bnz { a: 9, target: 1 },
        ]);
        let b = FrameBanks::analyse(&f);
        assert_eq!(b.for_core(3, &[0; 16]), 1 << 3);
        assert_eq!(b.for_core(15, &[0; 16]), 1 << 15);
    }

    #[test]
    fn starting_registers_and_constants() {
        let f = frame(&[
            mem(MemOp::St, 9, 2),
            Instr::Alu {
                op: AluOp::Xor,
                a: 3,
                b: 3,
                c: 3,
            },
            mem(MemOp::Ld, 9, 3),
        ]);
        let b = FrameBanks::analyse(&f);
        let mut regs = [0u8; 16];
        regs[2] = 0x27; // bank 7: only the low four bits count
        assert_eq!(b.for_core(0, &regs), (1 << 7) | 1);
    }

    #[test]
    fn a_loaded_or_merged_high_register_is_any_bank() {
        let loaded = frame(&[mem(MemOp::Ld, 9, 1), mem(MemOp::Ld, 9, 1)]);
        // r5 is the load's destination; make it the high register of a later access.
        let loaded2 = frame(&[
            Instr::Mem {
                op: MemOp::Ld,
                a: 9,
                hi: 0,
                r: 2,
            },
            mem(MemOp::Ld, 9, 2),
        ]);
        assert_eq!(FrameBanks::analyse(&loaded).for_core(0, &[1; 16]), 1 << 1);
        assert_eq!(FrameBanks::analyse(&loaded2).for_core(0, &[0; 16]), 0xFFFF);
        // A loop that bumps the high register reaches many banks: unknown.
        let bumped = frame(&[
            Instr::SetConst { k: 1, d: 9 },
            mem(MemOp::St, 9, 1),
            Instr::Alu {
                op: AluOp::Add,
                a: 1,
                b: 9,
                c: 1,
            },
            Instr::Bnz { a: 9, target: 1 },
        ]);
        assert_eq!(FrameBanks::analyse(&bumped).for_core(0, &[0; 16]), 0xFFFF);
    }

    #[test]
    fn unreachable_accesses_do_not_count() {
        let f = frame(&[Instr::Ready, mem(MemOp::Ld, 9, 1)]);
        assert_eq!(FrameBanks::analyse(&f).for_core(0, &[0; 16]), 0);
    }
}
