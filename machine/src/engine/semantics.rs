//! What every instruction does, written once. [`step`] states each instruction's effect on
//! a core's registers over an abstract value domain ([`Semantics`]): which registers it
//! reads, which it writes, how `mul` splits its product, which registers `set_const` loads
//! the core id into, how `div` treats zero, which bits of the high-address register count,
//! and what decides a `bnz`. Every consumer is an implementation of the domain, not another
//! copy of the rules:
//! - concrete bytes (the crate's `Concrete`): the interpreter, through [`execute`] and
//!   [`Access::complete_bytes`];
//! - Cranelift values: the JIT (`gpu16-jit`);
//! - symbolic values: the bank analysis ([`crate::banks`]);
//! - the register footprint ([`Instr::reads`], [`Instr::writes`]): the generator, the JIT's
//!   frame shape and the checker.
//!
//! A domain supplies only primitive operations on its values (add, unsigned divide by a
//! nonzero divisor, ...); the rules that make an instruction out of them live in [`step`].
//! A table-driven test (`machine/tests/semantics.rs`, `jit/tests/semantics.rs`) holds every
//! implementation to the concrete one over exhaustive 8-bit operands.

use crate::isa::{AluOp, Flow, Instr, MemOp, REGS};

/// A value domain in which instructions can be executed, together with the register file
/// the instructions read and write.
pub trait Semantics {
    /// One 8-bit register value.
    type V: Copy;

    /// The value of register `r` (0..15).
    fn reg(&mut self, r: u8) -> Self::V;
    /// Write `v` to register `r` (0..15).
    fn set_reg(&mut self, r: u8, v: Self::V);
    /// The constant `k`.
    fn konst(&mut self, k: u8) -> Self::V;
    /// The id (0..15) of the core executing the instruction.
    fn core_id(&mut self) -> Self::V;

    /// `x + y` modulo 256.
    fn add(&mut self, x: Self::V, y: Self::V) -> Self::V;
    /// `x - y` modulo 256.
    fn sub(&mut self, x: Self::V, y: Self::V) -> Self::V;
    /// Bitwise and.
    fn and(&mut self, x: Self::V, y: Self::V) -> Self::V;
    /// Bitwise or.
    fn or(&mut self, x: Self::V, y: Self::V) -> Self::V;
    /// Bitwise exclusive or.
    fn xor(&mut self, x: Self::V, y: Self::V) -> Self::V;
    /// Unsigned `x / y`; [`step`] never passes a zero `y`.
    fn udiv(&mut self, x: Self::V, y: Self::V) -> Self::V;
    /// 1 if `x >= y` unsigned, else 0.
    fn uge(&mut self, x: Self::V, y: Self::V) -> Self::V;
    /// 1 if `x == 0`, else 0.
    fn is_zero(&mut self, x: Self::V) -> Self::V;
    /// `yes` if `cond` is nonzero, else `no`.
    fn select(&mut self, cond: Self::V, yes: Self::V, no: Self::V) -> Self::V;
    /// The 16-bit product `x * y` as (low byte, high byte).
    fn mul_wide(&mut self, x: Self::V, y: Self::V) -> (Self::V, Self::V);
    /// `x << k` modulo 256, `k` in 0..7.
    fn shl(&mut self, x: Self::V, k: u8) -> Self::V;
    /// `x >> k`, logical, `k` in 0..7.
    fn shr(&mut self, x: Self::V, k: u8) -> Self::V;

    /// `x << y` modulo 256 for a register amount `y`: 0 when `y >= 8`. Built from the
    /// primitives above (a chain of selects over the eight fixed shifts), so every domain has
    /// it; a domain may override it with a native variable shift.
    fn shl_var(&mut self, x: Self::V, y: Self::V) -> Self::V {
        shift_by_register(self, x, y, true)
    }

    /// `x >> y`, logical, for a register amount `y`: 0 when `y >= 8`. As [`Semantics::shl_var`].
    fn shr_var(&mut self, x: Self::V, y: Self::V) -> Self::V {
        shift_by_register(self, x, y, false)
    }
}

/// `x` shifted by the register amount `y` from fixed shifts: the largest `k` in 0..8 with
/// `y >= k` picks `x << k` (or `>> k`), and `y >= 8` gives 0.
fn shift_by_register<S: Semantics + ?Sized>(s: &mut S, x: S::V, y: S::V, left: bool) -> S::V {
    let mut v = s.konst(0);
    let eight = s.konst(8);
    let over = s.uge(y, eight);
    let zero = s.konst(0);
    for k in 0..8u8 {
        let shifted = if left { s.shl(x, k) } else { s.shr(x, k) };
        let kv = s.konst(k);
        let reached = s.uge(y, kv);
        v = s.select(reached, shifted, v);
    }
    s.select(over, zero, v)
}

/// A shared-memory access an instruction asks for: its operands as values of the domain.
/// The address is `bank << 8 | row` (bank = A\[11:8\], row = A\[7:0\]).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Access<V> {
    /// Which of `ld`, `ld_sync`, `st`, `st_sync`.
    pub op: MemOp,
    /// The low address byte, `R[a]`.
    pub row: V,
    /// The bank, the low four bits of `R[hi]`.
    pub bank: V,
    /// `R[r]`, the byte a store writes; `None` for a load, which does not read `R[r]`.
    pub value: Option<V>,
    /// The register a load writes, or a store reads.
    pub reg: u8,
}

impl<V: Copy> Access<V> {
    /// Finish the instruction once memory has answered with `byte`: a load writes it to
    /// its register; a store has nothing left to do.
    #[inline]
    pub fn complete<S: Semantics<V = V>>(&self, s: &mut S, byte: V) {
        if self.op.is_read() {
            s.set_reg(self.reg, byte);
        }
    }
}

/// What an executed instruction asks of the core and the machine next.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Effect<V> {
    /// Go on with the next instruction (or end the part after IP 15).
    Next,
    /// `bnz`: continue at `target` if `cond` is nonzero, else as [`Effect::Next`].
    Branch {
        /// The tested register's value.
        cond: V,
        /// The IP (0..15) to continue at if it is nonzero.
        target: u8,
    },
    /// `ready`: the core's part of the task ends.
    Ready,
    /// A memory instruction: the caller performs the access through shared memory, then
    /// calls [`Access::complete`].
    Memory(Access<V>),
}

/// Whether `set_const k, rD` loads the core id (`D < 8`) rather than the constant `k`.
#[inline]
pub(crate) fn loads_core_id(d: u8) -> bool {
    d & 0xF < 8
}

/// Whether the MCST dialect's `set_const k, rD` loads the constant `k` (`D < 8`) rather than
/// the core id: the spec's two modes swapped.
#[inline]
pub(crate) fn mcst_loads_constant(d: u8) -> bool {
    d & 0xF < 8
}

/// The register `mul` writes its high byte to: the one after `c`, wrapping from r15 to r0.
#[inline]
pub(crate) fn mul_high_reg(c: u8) -> u8 {
    (c + 1) & 0xF
}

/// Execute `instr` in domain `s`: the one definition of every instruction. Register fields
/// are taken modulo 16 (and a memory instruction's high-address register modulo 4, a shift
/// amount modulo 8), as the 16-bit encoding does, so no `Instr` value can index out of the
/// register file.
#[inline(always)]
pub fn step<S: Semantics>(instr: Instr, s: &mut S) -> Effect<S::V> {
    let r = |n: u8| n & 0xF;
    match instr {
        Instr::Nop => Effect::Next,
        Instr::Alu { op, a, b, c } => {
            let x = s.reg(r(a));
            let y = s.reg(r(b));
            let v = match op {
                AluOp::Add => s.add(x, y),
                AluOp::Sub => s.sub(x, y),
                AluOp::And => s.and(x, y),
                AluOp::Or => s.or(x, y),
                AluOp::Xor => s.xor(x, y),
                AluOp::Cmpge => s.uge(x, y),
                AluOp::Div => {
                    // Division by zero gives 0xFF; the divide itself never sees a zero.
                    let zero = s.is_zero(y);
                    let one = s.konst(1);
                    let divisor = s.select(zero, one, y);
                    let q = s.udiv(x, divisor);
                    let ff = s.konst(0xFF);
                    s.select(zero, ff, q)
                }
            };
            s.set_reg(r(c), v);
            Effect::Next
        }
        Instr::Mul { a, b, c } => {
            // Both sources are read before either write (c or c+1 may be a source).
            let x = s.reg(r(a));
            let y = s.reg(r(b));
            let (lo, hi) = s.mul_wide(x, y);
            s.set_reg(r(c), lo);
            s.set_reg(mul_high_reg(c), hi);
            Effect::Next
        }
        Instr::Shift { left, a, k, c } => {
            let x = s.reg(r(a));
            let v = if left {
                s.shl(x, k & 7)
            } else {
                s.shr(x, k & 7)
            };
            s.set_reg(r(c), v);
            Effect::Next
        }
        Instr::SetConst { k, d } => {
            let v = if loads_core_id(d) {
                s.core_id()
            } else {
                s.konst(k)
            };
            s.set_reg(r(d), v);
            Effect::Next
        }
        Instr::McstMul { a, b, c } => {
            let x = s.reg(r(a));
            let y = s.reg(r(b));
            let (lo, _) = s.mul_wide(x, y);
            s.set_reg(r(c), lo);
            Effect::Next
        }
        Instr::McstShift { left, a, b, c } => {
            let x = s.reg(r(a));
            let y = s.reg(r(b));
            let v = if left {
                s.shl_var(x, y)
            } else {
                s.shr_var(x, y)
            };
            s.set_reg(r(c), v);
            Effect::Next
        }
        Instr::McstSetConst { k, d } => {
            let v = if mcst_loads_constant(d) {
                s.konst(k)
            } else {
                s.core_id()
            };
            s.set_reg(r(d), v);
            Effect::Next
        }
        Instr::Mem { op, a, hi, r: reg } => {
            let row = s.reg(r(a));
            // The spec's bank register is r0..r3 (its decoding gives no other); the MCST
            // dialect's is any register.
            let high = s.reg(r(hi));
            let mask = s.konst(0xF);
            let bank = s.and(high, mask);
            let value = (!op.is_read()).then(|| s.reg(r(reg)));
            Effect::Memory(Access {
                op,
                row,
                bank,
                value,
                reg: r(reg),
            })
        }
        Instr::Bnz { a, target } => Effect::Branch {
            cond: s.reg(r(a)),
            target: target & 0xF,
        },
        Instr::Ready => Effect::Ready,
    }
}

/// Concrete execution on a core's register file: the interpreter's domain.
pub(crate) struct Concrete<'r> {
    /// The core's registers r0..r15, read and written in place.
    pub regs: &'r mut [u8; REGS],
    /// The executing core's id (0..15), which `set_const` into r0..r7 loads.
    pub core_id: u8,
}

impl Semantics for Concrete<'_> {
    type V = u8;
    #[inline(always)]
    fn reg(&mut self, r: u8) -> u8 {
        self.regs[usize::from(r & 0xF)]
    }
    #[inline(always)]
    fn set_reg(&mut self, r: u8, v: u8) {
        self.regs[usize::from(r & 0xF)] = v;
    }
    #[inline(always)]
    fn konst(&mut self, k: u8) -> u8 {
        k
    }
    #[inline(always)]
    fn core_id(&mut self) -> u8 {
        self.core_id & 0xF
    }
    #[inline(always)]
    fn add(&mut self, x: u8, y: u8) -> u8 {
        x.wrapping_add(y)
    }
    #[inline(always)]
    fn sub(&mut self, x: u8, y: u8) -> u8 {
        x.wrapping_sub(y)
    }
    #[inline(always)]
    fn and(&mut self, x: u8, y: u8) -> u8 {
        x & y
    }
    #[inline(always)]
    fn or(&mut self, x: u8, y: u8) -> u8 {
        x | y
    }
    #[inline(always)]
    fn xor(&mut self, x: u8, y: u8) -> u8 {
        x ^ y
    }
    #[inline(always)]
    fn udiv(&mut self, x: u8, y: u8) -> u8 {
        // `step` never divides by zero; a zero here would be a bug of a caller outside it.
        x.checked_div(y).unwrap_or(0xFF)
    }
    #[inline(always)]
    fn uge(&mut self, x: u8, y: u8) -> u8 {
        u8::from(x >= y)
    }
    #[inline(always)]
    fn is_zero(&mut self, x: u8) -> u8 {
        u8::from(x == 0)
    }
    #[inline(always)]
    fn select(&mut self, cond: u8, yes: u8, no: u8) -> u8 {
        if cond != 0 {
            yes
        } else {
            no
        }
    }
    #[inline(always)]
    fn mul_wide(&mut self, x: u8, y: u8) -> (u8, u8) {
        let p = u16::from(x) * u16::from(y);
        (p as u8, (p >> 8) as u8)
    }
    #[inline(always)]
    fn shl(&mut self, x: u8, k: u8) -> u8 {
        x << (k & 7)
    }
    #[inline(always)]
    fn shr(&mut self, x: u8, k: u8) -> u8 {
        x >> (k & 7)
    }
    #[inline(always)]
    fn shl_var(&mut self, x: u8, y: u8) -> u8 {
        x.checked_shl(u32::from(y)).unwrap_or(0)
    }
    #[inline(always)]
    fn shr_var(&mut self, x: u8, y: u8) -> u8 {
        x.checked_shr(u32::from(y)).unwrap_or(0)
    }
}

/// The register footprint of an instruction: which registers it reads and writes. Values
/// are nothing; only the register accesses of [`step`] are recorded.
#[derive(Default)]
struct Footprint {
    reads: u16,
    writes: u16,
}

impl Semantics for Footprint {
    type V = ();
    fn reg(&mut self, r: u8) {
        self.reads |= 1 << (r & 0xF);
    }
    fn set_reg(&mut self, r: u8, _: ()) {
        self.writes |= 1 << (r & 0xF);
    }
    fn konst(&mut self, _: u8) {}
    fn core_id(&mut self) {}
    fn add(&mut self, _: (), _: ()) {}
    fn sub(&mut self, _: (), _: ()) {}
    fn and(&mut self, _: (), _: ()) {}
    fn or(&mut self, _: (), _: ()) {}
    fn xor(&mut self, _: (), _: ()) {}
    fn udiv(&mut self, _: (), _: ()) {}
    fn uge(&mut self, _: (), _: ()) {}
    fn is_zero(&mut self, _: ()) {}
    fn select(&mut self, _: (), _: (), _: ()) {}
    fn mul_wide(&mut self, _: (), _: ()) -> ((), ()) {
        ((), ())
    }
    fn shl(&mut self, _: (), _: u8) {}
    fn shr(&mut self, _: (), _: u8) {}
}

impl Footprint {
    fn of(instr: Instr) -> Footprint {
        let mut f = Footprint::default();
        if let Effect::Memory(access) = step(instr, &mut f) {
            access.complete(&mut f, ());
        }
        f
    }
}

impl Instr {
    /// The registers this instruction reads, as a mask (bit r for register r).
    pub fn reads(&self) -> u16 {
        Footprint::of(*self).reads
    }

    /// The registers this instruction writes, as a mask (a load's destination included).
    pub fn writes(&self) -> u16 {
        Footprint::of(*self).writes
    }
}

impl Access<u8> {
    /// The address a concrete access reaches.
    #[inline]
    pub fn address(&self) -> u16 {
        crate::isa::address(self.bank, self.row)
    }
}

impl Effect<u8> {
    /// The control flow of a concrete effect. A memory access goes on with the next
    /// instruction once it is performed.
    #[inline]
    pub fn flow(self) -> Flow {
        match self {
            Effect::Next | Effect::Memory(_) => Flow::Next,
            Effect::Branch { cond, target } if cond != 0 => Flow::Jump(target),
            Effect::Branch { .. } => Flow::Next,
            Effect::Ready => Flow::Ready,
        }
    }
}

impl AluOp {
    /// The operation's result on concrete bytes, as [`step`] defines it.
    pub fn apply(self, x: u8, y: u8) -> u8 {
        let mut regs = [0u8; REGS];
        regs[0] = x;
        regs[1] = y;
        execute(
            Instr::Alu {
                op: self,
                a: 0,
                b: 1,
                c: 2,
            },
            &mut regs,
            0,
        );
        regs[2]
    }
}

impl Instr {
    /// The bits of this instruction's word that have no effect on what it does: operand
    /// bits `nop`, `ready` and `bnz` do not use, bit 7 of a shift amount, and the constant
    /// of a `set_const` that loads the core id.
    pub fn ignored_bits(&self) -> u16 {
        match *self {
            Instr::Nop | Instr::Ready => 0x0FFF,
            Instr::Bnz { .. } => 0x000F,
            Instr::Shift { .. } => 0x0080,
            Instr::SetConst { d, .. } if loads_core_id(d) => 0x0FF0,
            Instr::McstSetConst { d, .. } if !mcst_loads_constant(d) => 0x0FF0,
            _ => 0,
        }
    }
}

/// Execute one instruction on a core's registers with concrete bytes ([`step`] in the
/// `Concrete` domain). A memory instruction comes back as [`Effect::Memory`] for the
/// caller to perform.
#[inline]
pub fn execute(instr: Instr, regs: &mut [u8; REGS], core_id: u8) -> Effect<u8> {
    step(instr, &mut Concrete { regs, core_id })
}

impl Access<u8> {
    /// [`Access::complete`] on concrete bytes, the other half of [`execute`]: write the
    /// byte a load got (`byte`) to its register in `regs` of core `core_id`.
    pub fn complete_bytes(&self, regs: &mut [u8; REGS], core_id: u8, byte: u8) {
        self.complete(&mut Concrete { regs, core_id }, byte);
    }
}

impl Instr {
    /// Whether this is a `set_const` (of either dialect) that loads the core id rather
    /// than its constant `k`: the spec's mode with `D < 8`, the MCST dialect's with `D >= 8`.
    pub fn sets_core_id(&self) -> bool {
        match *self {
            Instr::SetConst { d, .. } => loads_core_id(d),
            Instr::McstSetConst { d, .. } => !mcst_loads_constant(d),
            _ => false,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn footprints_by_hand() {
        let mul = Instr::Mul { a: 1, b: 2, c: 15 };
        assert_eq!(mul.reads(), 0b110);
        assert_eq!(mul.writes(), 1 << 15 | 1);
        let ld = Instr::Mem {
            op: MemOp::Ld,
            a: 4,
            hi: 1,
            r: 4,
        };
        // ld [r4, r1], r4 reads r4 for the address and writes it.
        assert_eq!(ld.reads(), 1 << 4 | 1 << 1);
        assert_eq!(ld.writes(), 1 << 4);
        let ld2 = Instr::Mem {
            op: MemOp::Ld,
            a: 4,
            hi: 1,
            r: 7,
        };
        assert_eq!(ld2.reads(), 1 << 4 | 1 << 1);
        assert_eq!(ld2.writes(), 1 << 7);
        let st = Instr::Mem {
            op: MemOp::StSync,
            a: 4,
            hi: 3,
            r: 9,
        };
        assert_eq!(st.reads(), 1 << 4 | 1 << 3 | 1 << 9);
        assert_eq!(st.writes(), 0);
        assert_eq!(Instr::SetConst { k: 5, d: 3 }.writes(), 1 << 3);
        assert_eq!(Instr::SetConst { k: 5, d: 3 }.reads(), 0);
        assert_eq!(Instr::Bnz { a: 6, target: 0 }.reads(), 1 << 6);
        assert_eq!(Instr::Ready.reads() | Instr::Ready.writes(), 0);
        let sh = Instr::Shift {
            left: true,
            a: 2,
            k: 3,
            c: 2,
        };
        assert_eq!((sh.reads(), sh.writes()), (1 << 2, 1 << 2));
    }

    #[test]
    fn out_of_range_register_fields_wrap_instead_of_panicking() {
        let mut regs = [0u8; 16];
        regs[1] = 7;
        let mut s = Concrete {
            regs: &mut regs,
            core_id: 3,
        };
        let e = step(
            Instr::Alu {
                op: AluOp::Add,
                a: 17,
                b: 33,
                c: 18,
            },
            &mut s,
        );
        assert_eq!(e, Effect::Next);
        assert_eq!(regs[2], 14);
    }

    #[test]
    fn alu_edges() {
        assert_eq!(AluOp::Div.apply(7, 0), 0xFF);
        assert_eq!(AluOp::Div.apply(200, 7), 28);
        assert_eq!(AluOp::Sub.apply(1, 2), 0xFF);
        assert_eq!(AluOp::Cmpge.apply(5, 5), 1);
        assert_eq!(AluOp::Cmpge.apply(4, 5), 0);
        let mut r = [0u8; 16];
        r[1] = 0xFF;
        r[2] = 0x81;
        execute(Instr::Mul { a: 1, b: 1, c: 3 }, &mut r, 0);
        assert_eq!((r[3], r[4]), (0x01, 0xFE));
        execute(
            Instr::Shift {
                left: true,
                a: 2,
                k: 1,
                c: 5,
            },
            &mut r,
            0,
        );
        execute(
            Instr::Shift {
                left: false,
                a: 2,
                k: 9,
                c: 6,
            },
            &mut r,
            0,
        );
        assert_eq!((r[5], r[6]), (0x02, 0x40));
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
