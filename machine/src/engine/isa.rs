//! The core's instruction set: decoding and encoding of the 16-bit instruction word, and
//! each instruction's operands and names. This is the one place the instruction table
//! lives; what each instruction does is [`crate::semantics`]'s (which the interpreter
//! executes and the JIT mirrors), and the assembler and disassembler use its names.

use crate::dialect::Dialect;
use std::fmt;

/// Number of general registers of a core.
pub const REGS: usize = 16;
/// Number of instructions in an instruction frame (and IP values).
pub const FRAME_INSTRS: usize = 16;

/// A two-operand register operation `R[c] = R[a] op R[b]` that writes one byte.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum AluOp {
    /// `add` (opcode 0x1): `R[a] + R[b]` modulo 256.
    Add,
    /// `sub` (opcode 0x2): `R[a] - R[b]` modulo 256.
    Sub,
    /// `div` (opcode 0x4): unsigned `R[a] / R[b]`, rounded down; 0xFF when `R[b]` is 0.
    Div,
    /// `cmpge` (opcode 0x5): 1 if `R[a] >= R[b]` unsigned, else 0.
    Cmpge,
    /// `and` (opcode 0x8): bitwise and.
    And,
    /// `or` (opcode 0x9): bitwise or.
    Or,
    /// `xor` (opcode 0xa): bitwise exclusive or (`xor r, r, r` clears `r`).
    Xor,
}

impl AluOp {
    /// The instruction's opcode (bits 15:12).
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

    /// The assembly name (`add`, `sub`, `div`, `cmpge`, `and`, `or`, `xor`).
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

    /// Every operation, in opcode order.
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

/// The four memory operations. `ld`/`ld_sync` read, `st`/`st_sync` write.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
#[repr(u8)]
pub enum MemOp {
    /// `ld` (opcode 0xb, mode 0): load a byte into a register.
    Ld = 0,
    /// `ld_sync` (opcode 0xb, mode 1): load a byte and lock it for this core, opening an
    /// atomic sequence; other cores' accesses to the byte stall until the `st_sync`.
    LdSync = 1,
    /// `st` (opcode 0xd, mode 0): store a register's byte.
    St = 2,
    /// `st_sync` (opcode 0xd, mode 1): store a byte and release the lock this core holds on
    /// it, closing its atomic sequence.
    StSync = 3,
}

impl MemOp {
    /// `ld` or `ld_sync`.
    pub fn is_read(self) -> bool {
        matches!(self, MemOp::Ld | MemOp::LdSync)
    }
    /// `ld_sync` or `st_sync`.
    pub fn is_sync(self) -> bool {
        matches!(self, MemOp::LdSync | MemOp::StSync)
    }
    /// The assembly name.
    pub fn mnemonic(self) -> &'static str {
        match self {
            MemOp::Ld => "ld",
            MemOp::LdSync => "ld_sync",
            MemOp::St => "st",
            MemOp::StSync => "st_sync",
        }
    }
    /// The operation numbered `v` (its `repr(u8)` value).
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

/// The 12-bit shared-memory address of row `row` of bank `bank`: bank = A\[11:8\],
/// row = A\[7:0\].
#[inline]
pub fn address(bank: u8, row: u8) -> u16 {
    (u16::from(bank & 0xF) << 8) | u16::from(row)
}

/// A decoded instruction. Register fields are 0..15; `hi` of a memory instruction is 0..3.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Instr {
    /// `nop` (opcode 0x0): does nothing for one cycle.
    Nop,
    /// A register operation `R[c] = R[a] op R[b]` (format F1).
    Alu {
        /// Which operation.
        op: AluOp,
        /// The first source register.
        a: u8,
        /// The second source register.
        b: u8,
        /// The destination register.
        c: u8,
    },
    /// `R[c] = low byte, R[(c+1) % 16] = high byte` of `R[a] * R[b]`.
    Mul {
        /// The first source register.
        a: u8,
        /// The second source register.
        b: u8,
        /// The register of the low byte; the high byte goes to the next one.
        c: u8,
    },
    /// `R[c] = R[a] << k` or `>> k`; `k` is an immediate 0..7.
    Shift {
        /// `lshft` (opcode 0x7) if true, `rshft` (0x6, logical) if false.
        left: bool,
        /// The source register.
        a: u8,
        /// The shift amount, 0..7 (bits 6:4 of the word).
        k: u8,
        /// The destination register.
        c: u8,
    },
    /// `ld`/`ld_sync`/`st`/`st_sync`: address `{R[hi][3:0], R[a]}`; `r` is the destination of
    /// a load or the value register of a store.
    Mem {
        /// Which of the four operations.
        op: MemOp,
        /// The register holding the row, address bits 7:0.
        a: u8,
        /// The register (r0..r3) whose low four bits are the bank, address bits 11:8.
        hi: u8,
        /// The register a load writes or a store reads.
        r: u8,
    },
    /// `set_const k, d`: `d < 8` loads the core id, `d >= 8` loads `k`.
    SetConst {
        /// The 8-bit constant (ignored when `d < 8`).
        k: u8,
        /// The destination register.
        d: u8,
    },
    /// `bnz target, a` (opcode 0xe): jump to IP `target` if `R[a]` is nonzero, else go on.
    Bnz {
        /// The register tested.
        a: u8,
        /// The IP (0..15) jumped to.
        target: u8,
    },
    /// `ready` (opcode 0xf): this core's part of the task ends, and the core is free for the
    /// next task from the following cycle.
    Ready,
    /// `mul` of the MCST dialect: `R[c] = R[a] * R[b]` modulo 256; `R[c+1]` is untouched.
    McstMul {
        /// The first source register.
        a: u8,
        /// The second source register.
        b: u8,
        /// The destination register.
        c: u8,
    },
    /// `lshft`/`rshft` of the MCST dialect: the amount is the whole byte `R[b]`; amounts of
    /// 8 or more give 0.
    McstShift {
        /// `lshft` (opcode 0x7) if true, `rshft` (0x6, logical) if false.
        left: bool,
        /// The source register.
        a: u8,
        /// The register holding the amount.
        b: u8,
        /// The destination register.
        c: u8,
    },
    /// `set_const k, d` of the MCST dialect, whose modes are the spec's swapped: `d < 8`
    /// loads `k`, `d >= 8` loads the core id.
    McstSetConst {
        /// The 8-bit constant (ignored when `d >= 8`).
        k: u8,
        /// The destination register.
        d: u8,
    },
}

/// Why a 16-bit word is not an instruction of the machine.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct ReservedMode {
    /// The whole instruction word.
    pub word: u16,
    /// Its mode, bits 7:6: 2 or 3, which no `ld` or `st` defines.
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
    /// Decode one instruction word as the spec reads it. Only `ld`/`st` with mode 2 or 3 are
    /// not instructions.
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

    /// Decode one instruction word as the MCST dialect reads it: every word is an
    /// instruction. `mul`, the shifts and `set_const` have their dialect forms; `ld`/`st`
    /// take the whole b field as the bank register and have no modes.
    pub fn decode_mcst(word: u16) -> Instr {
        let opc = (word >> 12) as u8;
        let a = ((word >> 8) & 0xF) as u8;
        let b = ((word >> 4) & 0xF) as u8;
        let c = (word & 0xF) as u8;
        match opc {
            0x3 => Instr::McstMul { a, b, c },
            0x6 | 0x7 => Instr::McstShift {
                left: opc == 0x7,
                a,
                b,
                c,
            },
            0xb | 0xd => Instr::Mem {
                op: if opc == 0xb { MemOp::Ld } else { MemOp::St },
                a,
                hi: b,
                r: c,
            },
            0xc => Instr::McstSetConst {
                k: ((word >> 4) & 0xFF) as u8,
                d: c,
            },
            _ => Instr::decode(word).expect("only ld/st words have reserved modes"),
        }
    }

    /// Decode one instruction word in `dialect`.
    pub fn decode_in(word: u16, dialect: Dialect) -> Result<Instr, ReservedMode> {
        match dialect {
            Dialect::Spec => Instr::decode(word),
            Dialect::Mcst => Ok(Instr::decode_mcst(word)),
        }
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
                // A lock operation's bank register is r0..r3 (mode bits above it); a plain
                // one's is any register in the MCST dialect, and r0..r3 in the spec's.
                let b = if mode == 0 {
                    hi & 0xF
                } else {
                    (mode << 2) | (hi & 3)
                };
                w(opc, a, b, r)
            }
            Instr::SetConst { k, d } | Instr::McstSetConst { k, d } => {
                (0xc << 12) | (u16::from(k) << 4) | u16::from(d & 0xF)
            }
            Instr::McstMul { a, b, c } => w(0x3, a, b, c),
            Instr::McstShift { left, a, b, c } => w(if left { 0x7 } else { 0x6 }, a, b, c),
            Instr::Bnz { a, target } => w(0xe, a, target, 0),
            Instr::Ready => 0xf000,
        }
    }

    /// The assembly name of the instruction (`lshft`/`rshft` for a shift).
    pub fn mnemonic(&self) -> &'static str {
        match self {
            Instr::Nop => "nop",
            Instr::Alu { op, .. } => op.mnemonic(),
            Instr::Mul { .. } | Instr::McstMul { .. } => "mul",
            Instr::Shift { left: true, .. } | Instr::McstShift { left: true, .. } => "lshft",
            Instr::Shift { left: false, .. } | Instr::McstShift { left: false, .. } => "rshft",
            Instr::Mem { op, .. } => op.mnemonic(),
            Instr::SetConst { .. } | Instr::McstSetConst { .. } => "set_const",
            Instr::Bnz { .. } => "bnz",
            Instr::Ready => "ready",
        }
    }

    /// Whether it accesses shared memory (`ld`, `ld_sync`, `st`, `st_sync`): the only
    /// instructions other cores can observe.
    pub fn is_memory(&self) -> bool {
        matches!(self, Instr::Mem { .. })
    }
    /// Whether it is half of an atomic sequence (`ld_sync`, `st_sync`).
    pub fn is_sync(&self) -> bool {
        matches!(self, Instr::Mem { op, .. } if op.is_sync())
    }

    /// The IPs a core may go to after this instruction at `ip`, whatever its registers:
    /// the next one (none past IP 15) and a `bnz`'s target; none after `ready`.
    pub(crate) fn successors(&self, ip: usize) -> [Option<usize>; 2] {
        let next = (ip + 1 < FRAME_INSTRS).then_some(ip + 1);
        match self {
            Instr::Ready => [None, None],
            Instr::Bnz { target, .. } => [next, Some(usize::from(*target) & 0xF)],
            _ => [next, None],
        }
    }
}

impl fmt::Display for Instr {
    /// Assembly in the spec's operand order; bnz targets are shown as numbers.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match *self {
            Instr::Nop | Instr::Ready => write!(f, "{}", self.mnemonic()),
            Instr::Alu { a, b, c, .. }
            | Instr::Mul { a, b, c }
            | Instr::McstMul { a, b, c }
            | Instr::McstShift { a, b, c, .. } => {
                write!(f, "{} r{a}, r{b}, r{c}", self.mnemonic())
            }
            Instr::Shift { a, k, c, .. } => write!(f, "{} r{a}, {k}, r{c}", self.mnemonic()),
            Instr::Mem { a, hi, r, .. } => write!(f, "{} [r{a}, r{hi}], r{r}", self.mnemonic()),
            Instr::SetConst { k, d } | Instr::McstSetConst { k, d } => {
                write!(f, "set_const 0x{k:02x}, r{d}")
            }
            Instr::Bnz { a, target } => write!(f, "bnz {target}, r{a}"),
        }
    }
}

/// Where control goes after an executed instruction.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Flow {
    /// Go on with the next instruction (or end the frame after IP 15).
    Next,
    /// A taken `bnz`: continue at this IP.
    Jump(u8),
    /// `ready`: the core's part of the task ends.
    Ready,
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
}
