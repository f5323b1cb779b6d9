//! The core's instruction set: decoding and encoding of the 16-bit instruction word, and the
//! semantics of every instruction that touches only the core's own registers. This is the one
//! place the instruction table lives; the interpreter executes it, the JIT mirrors it (and the
//! differential tests hold it to it), and the assembler and disassembler use its names.

use std::fmt;

/// Number of general registers of a core.
pub const REGS: usize = 16;
/// Number of instructions in an instruction frame (and IP values).
pub const FRAME_INSTRS: usize = 16;

/// A two-operand register operation `R[c] = R[a] op R[b]` that writes one byte.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum AluOp {
    Add,
    Sub,
    Div,
    Cmpge,
    And,
    Or,
    Xor,
}

impl AluOp {
    /// The operation's result; every operation is unsigned and wraps at 8 bits.
    #[inline]
    pub fn apply(self, x: u8, y: u8) -> u8 {
        match self {
            AluOp::Add => x.wrapping_add(y),
            AluOp::Sub => x.wrapping_sub(y),
            AluOp::Div => x.checked_div(y).unwrap_or(0xFF),
            AluOp::Cmpge => u8::from(x >= y),
            AluOp::And => x & y,
            AluOp::Or => x | y,
            AluOp::Xor => x ^ y,
        }
    }

    pub fn opcode(self) -> u8 {
        match self {
            AluOp::Add => 0x1,
            AluOp::Sub => 0x2,
            AluOp::Div => 0x4,
            AluOp::Cmpge => 0x5,
            AluOp::And => 0x8,
            AluOp::Or => 0x9,
            AluOp::Xor => 0xa,
        }
    }

    pub fn mnemonic(self) -> &'static str {
        match self {
            AluOp::Add => "add",
            AluOp::Sub => "sub",
            AluOp::Div => "div",
            AluOp::Cmpge => "cmpge",
            AluOp::And => "and",
            AluOp::Or => "or",
            AluOp::Xor => "xor",
        }
    }

    pub const ALL: [AluOp; 7] = [
        AluOp::Add,
        AluOp::Sub,
        AluOp::Div,
        AluOp::Cmpge,
        AluOp::And,
        AluOp::Or,
        AluOp::Xor,
    ];
}

/// `mul`: the 16-bit product as (low byte, high byte).
#[inline]
pub fn mul_wide(x: u8, y: u8) -> (u8, u8) {
    let p = u16::from(x) * u16::from(y);
    (p as u8, (p >> 8) as u8)
}

/// `rshft` / `lshft` by the immediate `k` (only its low three bits count).
#[inline]
pub fn shift(left: bool, x: u8, k: u8) -> u8 {
    let k = k & 7;
    if left {
        x << k
    } else {
        x >> k
    }
}

/// The four memory operations. `ld`/`ld_sync` read, `st`/`st_sync` write.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
#[repr(u8)]
pub enum MemOp {
    Ld = 0,
    LdSync = 1,
    St = 2,
    StSync = 3,
}

impl MemOp {
    pub fn is_read(self) -> bool {
        matches!(self, MemOp::Ld | MemOp::LdSync)
    }
    pub fn is_sync(self) -> bool {
        matches!(self, MemOp::LdSync | MemOp::StSync)
    }
    pub fn mnemonic(self) -> &'static str {
        match self {
            MemOp::Ld => "ld",
            MemOp::LdSync => "ld_sync",
            MemOp::St => "st",
            MemOp::StSync => "st_sync",
        }
    }
    pub fn from_u8(v: u8) -> Option<MemOp> {
        Some(match v {
            0 => MemOp::Ld,
            1 => MemOp::LdSync,
            2 => MemOp::St,
            3 => MemOp::StSync,
            _ => return None,
        })
    }
}

/// The 12-bit shared-memory address formed from the low-byte register value and the
/// high-address register value (only its low four bits count).
#[inline]
pub fn address(low: u8, high: u8) -> u16 {
    (u16::from(high & 0xF) << 8) | u16::from(low)
}

/// A decoded instruction. Register fields are 0..15; `hi` of a memory instruction is 0..3.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Instr {
    Nop,
    Alu {
        op: AluOp,
        a: u8,
        b: u8,
        c: u8,
    },
    /// `R[c] = low byte, R[(c+1) % 16] = high byte` of `R[a] * R[b]`.
    Mul {
        a: u8,
        b: u8,
        c: u8,
    },
    /// `R[c] = R[a] << k` or `>> k`; `k` is an immediate 0..7.
    Shift {
        left: bool,
        a: u8,
        k: u8,
        c: u8,
    },
    /// `ld`/`ld_sync`/`st`/`st_sync`: address `{R[hi][3:0], R[a]}`; `r` is the destination of
    /// a load or the value register of a store.
    Mem {
        op: MemOp,
        a: u8,
        hi: u8,
        r: u8,
    },
    /// `set_const k, d`: `d < 8` loads the core id, `d >= 8` loads `k`.
    SetConst {
        k: u8,
        d: u8,
    },
    Bnz {
        a: u8,
        target: u8,
    },
    Ready,
}

/// Why a 16-bit word is not an instruction of the machine.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct ReservedMode {
    pub word: u16,
    pub mode: u8,
}

impl fmt::Display for ReservedMode {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let name = if self.word >> 12 == 0xb { "ld" } else { "st" };
        write!(
            f,
            "instruction 0x{:04x} is {name} with reserved mode {} (bits 7:6 must be 0 or 1)",
            self.word, self.mode
        )
    }
}

impl Instr {
    /// Decode one instruction word. Only `ld`/`st` with mode 2 or 3 are not instructions.
    pub fn decode(word: u16) -> Result<Instr, ReservedMode> {
        let opc = (word >> 12) as u8;
        let a = ((word >> 8) & 0xF) as u8;
        let b = ((word >> 4) & 0xF) as u8;
        let c = (word & 0xF) as u8;
        Ok(match opc {
            0x0 => Instr::Nop,
            0x3 => Instr::Mul { a, b, c },
            0x6 | 0x7 => Instr::Shift {
                left: opc == 0x7,
                a,
                k: b & 7,
                c,
            },
            0xb | 0xd => {
                let mode = b >> 2;
                let op = match (opc, mode) {
                    (0xb, 0) => MemOp::Ld,
                    (0xb, 1) => MemOp::LdSync,
                    (0xd, 0) => MemOp::St,
                    (0xd, 1) => MemOp::StSync,
                    _ => return Err(ReservedMode { word, mode }),
                };
                Instr::Mem {
                    op,
                    a,
                    hi: b & 3,
                    r: c,
                }
            }
            0xc => Instr::SetConst {
                k: ((word >> 4) & 0xFF) as u8,
                d: c,
            },
            0xe => Instr::Bnz { a, target: b },
            0xf => Instr::Ready,
            _ => {
                let op = AluOp::ALL
                    .into_iter()
                    .find(|op| op.opcode() == opc)
                    .expect("every remaining opcode is an ALU operation");
                Instr::Alu { op, a, b, c }
            }
        })
    }

    /// Encode with every ignored bit zero. `decode(encode(i)) == i` for every valid `i`.
    pub fn encode(&self) -> u16 {
        let w = |opc: u8, a: u8, b: u8, c: u8| -> u16 {
            (u16::from(opc) << 12)
                | (u16::from(a & 0xF) << 8)
                | (u16::from(b & 0xF) << 4)
                | u16::from(c & 0xF)
        };
        match *self {
            Instr::Nop => 0x0000,
            Instr::Alu { op, a, b, c } => w(op.opcode(), a, b, c),
            Instr::Mul { a, b, c } => w(0x3, a, b, c),
            Instr::Shift { left, a, k, c } => w(if left { 0x7 } else { 0x6 }, a, k & 7, c),
            Instr::Mem { op, a, hi, r } => {
                let (opc, mode) = match op {
                    MemOp::Ld => (0xb, 0),
                    MemOp::LdSync => (0xb, 1),
                    MemOp::St => (0xd, 0),
                    MemOp::StSync => (0xd, 1),
                };
                w(opc, a, (mode << 2) | (hi & 3), r)
            }
            Instr::SetConst { k, d } => (0xc << 12) | (u16::from(k) << 4) | u16::from(d & 0xF),
            Instr::Bnz { a, target } => w(0xe, a, target, 0),
            Instr::Ready => 0xf000,
        }
    }

    pub fn mnemonic(&self) -> &'static str {
        match self {
            Instr::Nop => "nop",
            Instr::Alu { op, .. } => op.mnemonic(),
            Instr::Mul { .. } => "mul",
            Instr::Shift { left: true, .. } => "lshft",
            Instr::Shift { left: false, .. } => "rshft",
            Instr::Mem { op, .. } => op.mnemonic(),
            Instr::SetConst { .. } => "set_const",
            Instr::Bnz { .. } => "bnz",
            Instr::Ready => "ready",
        }
    }

    pub fn is_memory(&self) -> bool {
        matches!(self, Instr::Mem { .. })
    }
}

impl fmt::Display for Instr {
    /// Assembly in the spec's operand order; bnz targets are shown as numbers.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match *self {
            Instr::Nop | Instr::Ready => write!(f, "{}", self.mnemonic()),
            Instr::Alu { a, b, c, .. } | Instr::Mul { a, b, c } => {
                write!(f, "{} r{a}, r{b}, r{c}", self.mnemonic())
            }
            Instr::Shift { a, k, c, .. } => write!(f, "{} r{a}, {k}, r{c}", self.mnemonic()),
            Instr::Mem { a, hi, r, .. } => write!(f, "{} [r{a}, r{hi}], r{r}", self.mnemonic()),
            Instr::SetConst { k, d } => write!(f, "set_const 0x{k:02x}, r{d}"),
            Instr::Bnz { a, target } => write!(f, "bnz {target}, r{a}"),
        }
    }
}

/// Where control goes after a register-only instruction.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Flow {
    /// Go on with the next instruction (or end the frame after IP 15).
    Next,
    /// A taken `bnz`: continue at this IP.
    Jump(u8),
    /// `ready`: the core's part of the task ends.
    Ready,
    /// A memory instruction: the caller performs it through shared memory.
    Memory,
}

/// Execute one instruction that does not touch shared memory on a core's registers.
/// This function is the executable definition of every register instruction.
#[inline]
pub fn execute(instr: Instr, regs: &mut [u8; REGS], core_id: u8) -> Flow {
    match instr {
        Instr::Nop => Flow::Next,
        Instr::Alu { op, a, b, c } => {
            regs[c as usize] = op.apply(regs[a as usize], regs[b as usize]);
            Flow::Next
        }
        Instr::Mul { a, b, c } => {
            let (lo, hi) = mul_wide(regs[a as usize], regs[b as usize]);
            regs[c as usize] = lo;
            regs[((c + 1) & 0xF) as usize] = hi;
            Flow::Next
        }
        Instr::Shift { left, a, k, c } => {
            regs[c as usize] = shift(left, regs[a as usize], k);
            Flow::Next
        }
        Instr::SetConst { k, d } => {
            regs[d as usize] = if d < 8 { core_id & 0xF } else { k };
            Flow::Next
        }
        Instr::Bnz { a, target } => {
            if regs[a as usize] != 0 {
                Flow::Jump(target)
            } else {
                Flow::Next
            }
        }
        Instr::Ready => Flow::Ready,
        Instr::Mem { .. } => Flow::Memory,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_word_decodes_or_is_a_reserved_mode() {
        for word in 0..=u16::MAX {
            match Instr::decode(word) {
                Ok(i) => assert_eq!(Instr::decode(i.encode()), Ok(i), "word {word:04x}"),
                Err(e) => {
                    assert!(matches!(word >> 12, 0xb | 0xd));
                    assert!(e.mode >= 2);
                }
            }
        }
    }

    #[test]
    fn hand_encoded_words() {
        // add r1, r2, r3 -> 0x1123
        assert_eq!(
            Instr::decode(0x1123),
            Ok(Instr::Alu {
                op: AluOp::Add,
                a: 1,
                b: 2,
                c: 3
            })
        );
        // ld_sync [r4, r1], r2 -> opc b, a=4, b = mode 1 <<2 | 1 = 5, c = 2
        assert_eq!(
            Instr::decode(0xb452),
            Ok(Instr::Mem {
                op: MemOp::LdSync,
                a: 4,
                hi: 1,
                r: 2
            })
        );
        assert_eq!(Instr::SetConst { k: 0x2a, d: 9 }.encode(), 0xc2a9);
        assert_eq!(Instr::Bnz { a: 4, target: 7 }.encode(), 0xe470);
        assert!(Instr::decode(0xb482).is_err()); // bits 7:6 = 2
        assert!(Instr::decode(0xd4c2).is_err()); // bits 7:6 = 3
        assert!(Instr::decode(0xb472).is_ok()); // bits 7:6 = 1: ld_sync
    }

    #[test]
    fn alu_edges() {
        assert_eq!(AluOp::Div.apply(7, 0), 0xFF);
        assert_eq!(AluOp::Div.apply(200, 7), 28);
        assert_eq!(AluOp::Sub.apply(1, 2), 0xFF);
        assert_eq!(AluOp::Cmpge.apply(5, 5), 1);
        assert_eq!(AluOp::Cmpge.apply(4, 5), 0);
        assert_eq!(mul_wide(0xFF, 0xFF), (0x01, 0xFE));
        assert_eq!(shift(true, 0x81, 1), 0x02);
        assert_eq!(shift(false, 0x81, 9), 0x40);
    }

    #[test]
    fn mul_into_r15_writes_r0() {
        let mut r = [0u8; 16];
        r[1] = 200;
        r[2] = 3;
        execute(Instr::Mul { a: 1, b: 2, c: 15 }, &mut r, 0);
        assert_eq!((r[15], r[0]), (600u16 as u8, (600u16 >> 8) as u8));
    }
}
