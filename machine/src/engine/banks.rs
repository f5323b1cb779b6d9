//! Which banks a core's task can touch, worked out before it runs. Accesses to different
//! banks never interact (locks, sequences and bank conflicts are all per bank), so a core may
//! run ahead of earlier cores that provably never touch its bank. This is what lets cores
//! that each stream through their own bank run natively without taking turns.
//!
//! A frame is analysed once, by executing it in a symbolic domain of the one instruction
//! definition ([`crate::semantics::step`]): for every reachable memory instruction, its bank
//! as an expression over the task's starting state (a constant, the core id, the low bits of
//! a register's value at task start, or unknown). A core's bank set is that expression
//! evaluated with its own id and registers.
//!
//! Where a frame's cores share a constant bank, and no access of it already reaches one
//! byte in every core (a constant bank at a constant row), a second pass runs it for all 16
//! core ids at once (each register's value in every core, or unknown) to tell whether each core's
//! bytes are its own ([`FrameBanks::private_bytes`]): then the cores of one task never meet
//! in memory, and the run loop lets them run apart within the bank too.

use crate::isa::{Instr, FRAME_INSTRS};
use crate::semantics::{step, Access, Concrete, Effect, Semantics};

/// A register's value at some point of a frame, relative to the task's start.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Val {
    Const(u8),
    /// The core id (set_const into r0..r7).
    CoreId,
    /// The register's value when the task started, and-ed with a mask.
    Init(u8, u8),
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

    /// A value that stands for one definite byte (if not a known one).
    fn definite(self) -> bool {
        self != Val::Unknown
    }
}

/// The symbolic domain: registers hold [`Val`]s. Operations on constants fold through the
/// concrete domain; an operation on a value and itself keeps what it can (x - x = 0); the
/// low bits of the core id and of starting registers stay symbolic, because a bank is the
/// low four bits of a register. Everything else is unknown. Identity is by value, so two
/// unknown values are never taken to be equal.
struct Symbolic {
    regs: [Val; 16],
}

/// Apply a concrete primitive to two constants.
fn fold(f: impl FnOnce(&mut Concrete<'_>) -> u8) -> Val {
    Val::Const(f(&mut Concrete {
        regs: &mut [0; 16],
        core_id: 0,
    }))
}

impl Semantics for Symbolic {
    type V = Val;
    fn reg(&mut self, r: u8) -> Val {
        self.regs[usize::from(r & 0xF)]
    }
    fn set_reg(&mut self, r: u8, v: Val) {
        self.regs[usize::from(r & 0xF)] = v;
    }
    fn konst(&mut self, k: u8) -> Val {
        Val::Const(k)
    }
    fn core_id(&mut self) -> Val {
        Val::CoreId
    }
    fn add(&mut self, x: Val, y: Val) -> Val {
        match (x, y) {
            (Val::Const(x), Val::Const(y)) => fold(|c| c.add(x, y)),
            _ => Val::Unknown,
        }
    }
    fn sub(&mut self, x: Val, y: Val) -> Val {
        match (x, y) {
            (Val::Const(x), Val::Const(y)) => fold(|c| c.sub(x, y)),
            _ if x == y && x.definite() => Val::Const(0),
            _ => Val::Unknown,
        }
    }
    fn and(&mut self, x: Val, y: Val) -> Val {
        match (x, y) {
            (Val::Const(x), Val::Const(y)) => fold(|c| c.and(x, y)),
            (Val::Init(r, m), Val::Const(k)) | (Val::Const(k), Val::Init(r, m)) => {
                if m & k == 0 {
                    Val::Const(0)
                } else {
                    Val::Init(r, m & k)
                }
            }
            (Val::Init(r, m), Val::Init(q, n)) if r == q => Val::Init(r, m & n),
            // The core id is 0..15: masking it with all four low bits leaves it.
            (Val::CoreId, Val::Const(k)) | (Val::Const(k), Val::CoreId) if k & 0xF == 0xF => {
                Val::CoreId
            }
            _ if x == y && x.definite() => x,
            _ => Val::Unknown,
        }
    }
    fn or(&mut self, x: Val, y: Val) -> Val {
        match (x, y) {
            (Val::Const(x), Val::Const(y)) => fold(|c| c.or(x, y)),
            _ if x == y && x.definite() => x,
            _ => Val::Unknown,
        }
    }
    fn xor(&mut self, x: Val, y: Val) -> Val {
        match (x, y) {
            (Val::Const(x), Val::Const(y)) => fold(|c| c.xor(x, y)),
            _ if x == y && x.definite() => Val::Const(0),
            _ => Val::Unknown,
        }
    }
    fn udiv(&mut self, x: Val, y: Val) -> Val {
        match (x, y) {
            (Val::Const(x), Val::Const(y)) => fold(|c| c.udiv(x, y)),
            _ => Val::Unknown,
        }
    }
    fn uge(&mut self, x: Val, y: Val) -> Val {
        match (x, y) {
            (Val::Const(x), Val::Const(y)) => fold(|c| c.uge(x, y)),
            _ if x == y && x.definite() => Val::Const(1),
            _ => Val::Unknown,
        }
    }
    fn is_zero(&mut self, x: Val) -> Val {
        match x {
            Val::Const(x) => fold(|c| c.is_zero(x)),
            _ => Val::Unknown,
        }
    }
    fn select(&mut self, cond: Val, yes: Val, no: Val) -> Val {
        match cond {
            Val::Const(0) => no,
            Val::Const(_) => yes,
            _ => yes.join(no),
        }
    }
    fn mul_wide(&mut self, x: Val, y: Val) -> (Val, Val) {
        match (x, y) {
            (Val::Const(x), Val::Const(y)) => {
                let (lo, hi) = Concrete {
                    regs: &mut [0; 16],
                    core_id: 0,
                }
                .mul_wide(x, y);
                (Val::Const(lo), Val::Const(hi))
            }
            _ => (Val::Unknown, Val::Unknown),
        }
    }
    fn shl(&mut self, x: Val, k: u8) -> Val {
        match x {
            Val::Const(x) => fold(|c| c.shl(x, k)),
            _ => Val::Unknown,
        }
    }
    fn shr(&mut self, x: Val, k: u8) -> Val {
        match x {
            Val::Const(x) => fold(|c| c.shr(x, k)),
            _ => Val::Unknown,
        }
    }
}

/// The per-core domain: a value known exactly in every core, as the 16 bytes it holds in
/// cores 0..15 (built from constants and the core id only), or unknown (it depends on a
/// starting register or a loaded byte, or differs between the paths that reach it). Each
/// operation is the concrete one, core by core, so an address known here is the address
/// each core's access has.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum PerCore {
    Known([u8; 16]),
    /// A register's value at task start: unknown, but the same value wherever it is
    /// combined with itself (`xor r2, r2, r2` is 0).
    Start(u8),
    Unknown,
}

impl PerCore {
    /// The value of an operation whose operands are one starting value: `itself`, where
    /// the operation gives a known result for two equal operands.
    fn with_itself(
        x: PerCore,
        y: PerCore,
        itself: impl FnOnce(PerCore) -> PerCore,
    ) -> Option<PerCore> {
        match (x, y) {
            (PerCore::Start(a), PerCore::Start(b)) if a == b => Some(itself(x)),
            _ => None,
        }
    }
}

/// [`PerCore`] registers.
struct PerCoreRegs {
    regs: [PerCore; 16],
}

/// Apply a concrete primitive to two per-core values, core by core.
fn per_core(x: PerCore, y: PerCore, f: impl Fn(&mut Concrete<'_>, u8, u8) -> u8) -> PerCore {
    match (x, y) {
        (PerCore::Known(x), PerCore::Known(y)) => PerCore::Known(std::array::from_fn(|k| {
            f(
                &mut Concrete {
                    regs: &mut [0; 16],
                    core_id: k as u8,
                },
                x[k],
                y[k],
            )
        })),
        _ => PerCore::Unknown,
    }
}

impl Semantics for PerCoreRegs {
    type V = PerCore;
    fn reg(&mut self, r: u8) -> PerCore {
        self.regs[usize::from(r & 0xF)]
    }
    fn set_reg(&mut self, r: u8, v: PerCore) {
        self.regs[usize::from(r & 0xF)] = v;
    }
    fn konst(&mut self, k: u8) -> PerCore {
        PerCore::Known([k; 16])
    }
    fn core_id(&mut self) -> PerCore {
        PerCore::Known(std::array::from_fn(|k| {
            Concrete {
                regs: &mut [0; 16],
                core_id: k as u8,
            }
            .core_id()
        }))
    }
    fn add(&mut self, x: PerCore, y: PerCore) -> PerCore {
        per_core(x, y, |c, x, y| c.add(x, y))
    }
    fn sub(&mut self, x: PerCore, y: PerCore) -> PerCore {
        PerCore::with_itself(x, y, |_| PerCore::Known([0; 16]))
            .unwrap_or_else(|| per_core(x, y, |c, x, y| c.sub(x, y)))
    }
    fn and(&mut self, x: PerCore, y: PerCore) -> PerCore {
        PerCore::with_itself(x, y, |x| x).unwrap_or_else(|| per_core(x, y, |c, x, y| c.and(x, y)))
    }
    fn or(&mut self, x: PerCore, y: PerCore) -> PerCore {
        PerCore::with_itself(x, y, |x| x).unwrap_or_else(|| per_core(x, y, |c, x, y| c.or(x, y)))
    }
    fn xor(&mut self, x: PerCore, y: PerCore) -> PerCore {
        PerCore::with_itself(x, y, |_| PerCore::Known([0; 16]))
            .unwrap_or_else(|| per_core(x, y, |c, x, y| c.xor(x, y)))
    }
    fn udiv(&mut self, x: PerCore, y: PerCore) -> PerCore {
        per_core(x, y, |c, x, y| c.udiv(x, y))
    }
    fn uge(&mut self, x: PerCore, y: PerCore) -> PerCore {
        PerCore::with_itself(x, y, |_| PerCore::Known([1; 16]))
            .unwrap_or_else(|| per_core(x, y, |c, x, y| c.uge(x, y)))
    }
    fn is_zero(&mut self, x: PerCore) -> PerCore {
        per_core(x, x, |c, x, _| c.is_zero(x))
    }
    fn select(&mut self, cond: PerCore, yes: PerCore, no: PerCore) -> PerCore {
        match (cond, yes, no) {
            (PerCore::Known(c), _, _) if c.iter().all(|&c| c != 0) => yes,
            (PerCore::Known(c), _, _) if c.iter().all(|&c| c == 0) => no,
            (PerCore::Known(c), PerCore::Known(y), PerCore::Known(n)) => {
                PerCore::Known(std::array::from_fn(|k| if c[k] != 0 { y[k] } else { n[k] }))
            }
            _ => PerCore::Unknown,
        }
    }
    fn mul_wide(&mut self, x: PerCore, y: PerCore) -> (PerCore, PerCore) {
        (
            per_core(x, y, |c, x, y| c.mul_wide(x, y).0),
            per_core(x, y, |c, x, y| c.mul_wide(x, y).1),
        )
    }
    fn shl(&mut self, x: PerCore, k: u8) -> PerCore {
        per_core(x, x, |c, x, _| c.shl(x, k))
    }
    fn shr(&mut self, x: PerCore, k: u8) -> PerCore {
        per_core(x, x, |c, x, _| c.shr(x, k))
    }
}

/// The uniformity domain: a value is uniform where it is the same in every core of a group
/// that runs the frame together from its start (built from constants, or a register's
/// value combined with itself, as `xor r9, r9, r9`), and varying where it may differ (the
/// core id, a starting register, a loaded byte). A guide for compiled code, not a proof:
/// where lanes that parted meet again their "uniform" values may differ, so code that
/// relies on one checks it.
struct Uniformity {
    regs: [bool; 16],
}

/// A value of [`Uniformity`]: whether it is uniform, and the register it was read from
/// (so that `x - x` and `x ^ x` are known to be 0 whatever `x` is).
#[derive(Clone, Copy, PartialEq, Eq)]
struct Uniform {
    uniform: bool,
    from: Option<u8>,
}

impl Uniform {
    fn value(uniform: bool) -> Uniform {
        Uniform {
            uniform,
            from: None,
        }
    }

    /// The result of an operation on `x` and `y`; `itself` is its uniformity when both
    /// are the same register's value (`None`: as any other pair).
    fn of(x: Uniform, y: Uniform, itself: Option<bool>) -> Uniform {
        match itself {
            Some(u) if x.from.is_some() && x.from == y.from => Uniform::value(u || x.uniform),
            _ => Uniform::value(x.uniform && y.uniform),
        }
    }
}

impl Semantics for Uniformity {
    type V = Uniform;
    fn reg(&mut self, r: u8) -> Uniform {
        Uniform {
            uniform: self.regs[usize::from(r & 0xF)],
            from: Some(r & 0xF),
        }
    }
    fn set_reg(&mut self, r: u8, v: Uniform) {
        self.regs[usize::from(r & 0xF)] = v.uniform;
    }
    fn konst(&mut self, _: u8) -> Uniform {
        Uniform::value(true)
    }
    fn core_id(&mut self) -> Uniform {
        Uniform::value(false)
    }
    fn add(&mut self, x: Uniform, y: Uniform) -> Uniform {
        Uniform::of(x, y, None)
    }
    fn sub(&mut self, x: Uniform, y: Uniform) -> Uniform {
        Uniform::of(x, y, Some(true))
    }
    fn and(&mut self, x: Uniform, y: Uniform) -> Uniform {
        Uniform::of(x, y, None)
    }
    fn or(&mut self, x: Uniform, y: Uniform) -> Uniform {
        Uniform::of(x, y, None)
    }
    fn xor(&mut self, x: Uniform, y: Uniform) -> Uniform {
        Uniform::of(x, y, Some(true))
    }
    fn udiv(&mut self, x: Uniform, y: Uniform) -> Uniform {
        Uniform::of(x, y, None)
    }
    fn uge(&mut self, x: Uniform, y: Uniform) -> Uniform {
        Uniform::of(x, y, Some(true))
    }
    fn is_zero(&mut self, x: Uniform) -> Uniform {
        Uniform::value(x.uniform)
    }
    fn select(&mut self, cond: Uniform, yes: Uniform, no: Uniform) -> Uniform {
        Uniform::value(cond.uniform && yes.uniform && no.uniform)
    }
    fn mul_wide(&mut self, x: Uniform, y: Uniform) -> (Uniform, Uniform) {
        let v = Uniform::of(x, y, None);
        (v, v)
    }
    fn shl(&mut self, x: Uniform, _: u8) -> Uniform {
        Uniform::value(x.uniform)
    }
    fn shr(&mut self, x: Uniform, _: u8) -> Uniform {
        Uniform::value(x.uniform)
    }
}

/// A domain a frame is analysed in: its register state, how two states that reach one
/// instruction join, which way a `bnz` on a value goes if that is known, and the value a
/// load gives.
trait FrameDomain: Semantics + Sized {
    type Reg: Copy + PartialEq;
    fn with_regs(regs: [Self::Reg; 16]) -> Self;
    fn regs(&self) -> [Self::Reg; 16];
    fn join(a: Self::Reg, b: Self::Reg) -> Self::Reg;
    /// `Some(taken)` where the branch on `cond` is known to go one way.
    fn decided(cond: Self::V) -> Option<bool>;
    fn loaded() -> Self::V;
}

impl FrameDomain for Symbolic {
    type Reg = Val;
    fn with_regs(regs: [Val; 16]) -> Symbolic {
        Symbolic { regs }
    }
    fn regs(&self) -> [Val; 16] {
        self.regs
    }
    fn join(a: Val, b: Val) -> Val {
        a.join(b)
    }
    fn decided(cond: Val) -> Option<bool> {
        match cond {
            Val::Const(k) => Some(k != 0),
            _ => None,
        }
    }
    fn loaded() -> Val {
        Val::Unknown
    }
}

impl FrameDomain for Uniformity {
    type Reg = bool;
    fn with_regs(regs: [bool; 16]) -> Uniformity {
        Uniformity { regs }
    }
    fn regs(&self) -> [bool; 16] {
        self.regs
    }
    fn join(a: bool, b: bool) -> bool {
        a && b
    }
    fn decided(_: Uniform) -> Option<bool> {
        None
    }
    fn loaded() -> Uniform {
        Uniform::value(false)
    }
}

impl FrameDomain for PerCoreRegs {
    type Reg = PerCore;
    fn with_regs(regs: [PerCore; 16]) -> PerCoreRegs {
        PerCoreRegs { regs }
    }
    fn regs(&self) -> [PerCore; 16] {
        self.regs
    }
    fn join(a: PerCore, b: PerCore) -> PerCore {
        if a == b {
            a
        } else {
            PerCore::Unknown
        }
    }
    fn decided(cond: PerCore) -> Option<bool> {
        match cond {
            PerCore::Known(c) if c.iter().all(|&c| c != 0) => Some(true),
            PerCore::Known(c) if c.iter().all(|&c| c == 0) => Some(false),
            _ => None,
        }
    }
    fn loaded() -> PerCore {
        PerCore::Unknown
    }
}

/// Execute every reachable instruction of a frame from the state `start` at IP 0 in domain
/// `D`, joining the states that reach an instruction until none changes (a fixpoint: the
/// joins only lose knowledge, and a frame has 16 instructions). `access` sees every memory
/// instruction's access, at its IP, once for each state it is reached in.
fn explore<D: FrameDomain>(
    code: &[Instr; FRAME_INSTRS],
    start: [D::Reg; 16],
    mut access: impl FnMut(usize, &Access<D::V>),
) {
    let mut states: [Option<[D::Reg; 16]>; FRAME_INSTRS] = [None; FRAME_INSTRS];
    states[0] = Some(start);
    let mut work = vec![0usize];
    while let Some(ip) = work.pop() {
        let Some(regs) = states[ip] else { continue };
        let mut s = D::with_regs(regs);
        let next = (ip + 1 < FRAME_INSTRS).then_some(ip + 1);
        let succ = match step(code[ip], &mut s) {
            Effect::Next => [next, None],
            Effect::Ready => [None, None],
            Effect::Branch { cond, target } => match D::decided(cond) {
                Some(false) => [next, None],
                Some(true) => [Some(usize::from(target)), None],
                None => [Some(usize::from(target)), next],
            },
            Effect::Memory(a) => {
                access(ip, &a);
                a.complete(&mut s, D::loaded());
                [next, None]
            }
        };
        for next in succ.into_iter().flatten() {
            let regs = s.regs();
            let merged = match states[next] {
                None => regs,
                Some(old) => std::array::from_fn(|r| D::join(old[r], regs[r])),
            };
            if states[next] != Some(merged) {
                states[next] = Some(merged);
                work.push(next);
            }
        }
    }
}

/// The bank expression of every reachable memory instruction of a frame.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct FrameBanks {
    /// The banks every core may touch whatever its id and registers: the constant ones, or
    /// all 16 where some access's bank is unknown.
    fixed: u16,
    /// Some access's bank is the core id.
    by_id: bool,
    /// The accesses whose bank is a starting register's value under a mask (register,
    /// mask): a core reaches `regs[r] & m`.
    by_register: Vec<(u8, u8)>,
    /// The IPs of memory instructions whose bank is the core id, or a starting register
    /// (which may hold it): where the cores of a group may each reach their own bank.
    own_bank_ips: u16,
    /// The IPs of memory instructions whose row is uniform (see [`Uniformity`]).
    uniform_row_ips: u16,
    /// Every core's accesses touch bytes no other core's touch (see
    /// [`FrameBanks::private_bytes`]).
    private_bytes: bool,
    /// The fewest instructions before a memory instruction on any path from IP 0 (see
    /// [`FrameBanks::first_access`]).
    first_access: u8,
}

/// The fewest instructions a core runs from IP 0 before it reaches a memory instruction,
/// on any path (a `bnz` both ways, whatever the registers); `FRAME_INSTRS` where none is
/// reachable. A breadth-first walk: each IP is reached first by a shortest path.
fn first_access(code: &[Instr; FRAME_INSTRS]) -> u8 {
    let mut seen = 1u16;
    let mut queue = [(0usize, 0u8); FRAME_INSTRS];
    let (mut head, mut tail) = (0, 1);
    while head < tail {
        let (ip, before) = queue[head];
        head += 1;
        if code[ip].is_memory() {
            return before;
        }
        for to in code[ip].successors(ip).into_iter().flatten() {
            if seen & (1 << to) == 0 {
                seen |= 1 << to;
                queue[tail] = (to, before + 1);
                tail += 1;
            }
        }
    }
    FRAME_INSTRS as u8
}

/// Whether, in frame `code`, the bytes each core can touch are its own: the frame has no
/// atomic sequence, every reachable memory instruction's address is known in each core
/// from constants and the core id alone ([`PerCore`]), and no byte is reached by two
/// cores. The cores of one task running it then never meet in memory, whatever their
/// instructions and cycles, so their accesses need not take turns among themselves.
fn private_bytes(code: &[Instr; FRAME_INSTRS]) -> bool {
    if code.iter().any(Instr::is_sync) {
        return false;
    }
    let mut owner = [u8::MAX; 4096];
    let mut private = true;
    explore::<PerCoreRegs>(
        code,
        std::array::from_fn(|r| PerCore::Start(r as u8)),
        |_, a| match (a.bank, a.row) {
            (PerCore::Known(bank), PerCore::Known(row)) => {
                for k in 0..16 {
                    let cell = &mut owner[usize::from(crate::isa::address(bank[k], row[k]))];
                    if *cell == u8::MAX {
                        *cell = k as u8;
                    } else if usize::from(*cell) != k {
                        private = false;
                    }
                }
            }
            _ => private = false,
        },
    );
    private
}

impl FrameBanks {
    /// Analyse a frame: the bank of each reachable memory instruction as an expression
    /// over the task's starting state.
    pub fn analyse(code: &[Instr; FRAME_INSTRS]) -> FrameBanks {
        let mut banks: [Option<Val>; FRAME_INSTRS] = [None; FRAME_INSTRS];
        let mut fixed_rows: [Option<Val>; FRAME_INSTRS] = [None; FRAME_INSTRS];
        explore::<Symbolic>(
            code,
            std::array::from_fn(|r| Val::Init(r as u8, 0xFF)),
            |ip, a| {
                banks[ip] = Some(banks[ip].map_or(a.bank, |b| b.join(a.bank)));
                fixed_rows[ip] = Some(fixed_rows[ip].map_or(a.row, |r| r.join(a.row)));
            },
        );
        let mut rows: [Option<bool>; FRAME_INSTRS] = [None; FRAME_INSTRS];
        explore::<Uniformity>(code, [false; 16], |ip, a| {
            rows[ip] = Some(rows[ip].unwrap_or(true) && a.row.uniform)
        });
        let own_bank_ips = (0..FRAME_INSTRS)
            .filter(|&ip| matches!(banks[ip], Some(Val::CoreId | Val::Init(..))))
            .fold(0u16, |m, ip| m | 1 << ip);
        // Only where the cores share a bank by a constant (and none is unknown or a
        // starting register's) can private bytes matter, and be proved: the analysis costs
        // a second pass, which a stream of distinct frames would pay at every frame. An
        // access to a constant bank at one constant row on every path (`x ^ x` included),
        // or at a row built from constants alone, reaches one byte in every core that gets
        // there: the frame's bytes are not private, with no second pass. (Where cores that
        // parted meet again, rows built from constants may differ, and the second pass
        // might prove them apart; this only gives that up.)
        let one_byte = (0..FRAME_INSTRS).any(|ip| {
            matches!(banks[ip], Some(Val::Const(_)))
                && (rows[ip] == Some(true) || matches!(fixed_rows[ip], Some(Val::Const(_))))
        });
        let banks: Vec<Val> = banks.into_iter().flatten().collect();
        let candidate = !one_byte
            && banks
                .iter()
                .all(|b| matches!(b, Val::Const(_) | Val::CoreId))
            && banks.iter().any(|b| matches!(b, Val::Const(_)));
        let mut fixed = 0u16;
        for b in &banks {
            fixed |= match *b {
                Val::Const(k) => 1 << (k & 0xF),
                Val::Unknown => 0xFFFF,
                Val::CoreId | Val::Init(..) => 0,
            };
        }
        FrameBanks {
            private_bytes: candidate && private_bytes(code),
            fixed,
            by_id: banks.contains(&Val::CoreId),
            by_register: banks
                .iter()
                .filter_map(|b| match *b {
                    Val::Init(r, m) => Some((r, m)),
                    _ => None,
                })
                .collect(),
            own_bank_ips,
            uniform_row_ips: (0..FRAME_INSTRS)
                .filter(|&ip| rows[ip] == Some(true))
                .fold(0u16, |m, ip| m | 1 << ip),
            first_access: first_access(code),
        }
    }

    /// The fewest instructions a core of a task of this frame runs before its first memory
    /// access, whatever its registers: a task that starts in cycle `s` touches memory in
    /// cycle `s + first_access * INSTRUCTION_CYCLES` at the earliest (stalls only delay
    /// it). Before that nothing it does reaches another core: it cannot fault (a core
    /// faults only at a memory instruction, or ending while it holds a sequence, which
    /// only a memory instruction opens). `None` where no path reaches memory.
    pub fn first_access(&self) -> Option<u64> {
        (usize::from(self.first_access) < FRAME_INSTRS).then_some(u64::from(self.first_access))
    }

    /// Whether the memory instruction at `ip` may reach one row in every core of a group:
    /// its row is built from constants only (a guide: where cores that parted meet again,
    /// their rows may differ, and compiled code that relies on one row checks it).
    pub fn may_reach_one_row(&self, ip: usize) -> bool {
        self.uniform_row_ips & (1 << (ip & 0xF)) != 0
    }

    /// Whether the memory instruction at `ip` may reach, for every core of a group, the
    /// bank numbered like the core: its bank is the core id or a starting register.
    pub fn may_reach_own_bank(&self, ip: usize) -> bool {
        self.own_bank_ips & (1 << (ip & 0xF)) != 0
    }

    /// Whether the bytes each core can touch are its own: the frame has no atomic sequence,
    /// every reachable access's bank and row are known in each core from constants and the
    /// core id alone, and no byte is reached by two cores (worked out only where the cores
    /// share a constant bank, the one place it matters). The cores of a task running the
    /// frame then never touch one byte, so (without the bank-conflict model, under which two
    /// accesses to one bank in a cycle interact) their accesses need not take turns among
    /// themselves, only with other tasks' cores.
    pub fn private_bytes(&self) -> bool {
        self.private_bytes
    }

    /// The banks core `id` can touch in this task, starting from registers `regs`.
    // Inlined: a task start asks it once per core.
    #[inline]
    pub fn for_core(&self, id: u8, regs: &[u8; 16]) -> u16 {
        let mut mask = self.fixed | u16::from(self.by_id) << (id & 0xF);
        for &(r, m) in &self.by_register {
            mask |= 1 << (regs[usize::from(r & 0xF)] & m & 0xF);
        }
        mask
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::isa::{AluOp, MemOp};

    #[test]
    fn the_first_access_is_the_fewest_instructions_on_any_path() {
        let ld = Instr::Mem {
            op: MemOp::Ld,
            a: 8,
            hi: 0,
            r: 9,
        };
        let first = |instrs: &[Instr]| {
            let mut code = [Instr::Nop; FRAME_INSTRS];
            code[..instrs.len()].copy_from_slice(instrs);
            FrameBanks::analyse(&code).first_access()
        };
        let bnz = |target| Instr::Bnz { a: 9, target };
        // Straight: the ld at IP 3 comes after three instructions.
        assert_eq!(first(&[Instr::Nop, Instr::Nop, Instr::Nop, ld]), Some(3));
        assert_eq!(first(&[ld, Instr::Ready]), Some(0));
        // A bnz may jump over the long way: IP 0 -> 5 (taken), whatever r9 holds.
        let mut code = vec![bnz(5), Instr::Nop, ld, Instr::Ready, Instr::Nop, Instr::Nop];
        assert_eq!(first(&code), Some(2));
        code[2] = Instr::Nop;
        code[3] = Instr::Nop;
        code.extend([Instr::Nop, ld]);
        // Not taken: IP 1..7 is 7 instructions; taken: 0 -> 5, 6, 7 is 3.
        assert_eq!(first(&code), Some(3));
        // A ready before the only access, and one that cannot be reached past it.
        assert_eq!(first(&[Instr::Nop, Instr::Ready, ld]), None);
    }

    #[test]
    fn rows_built_from_constants_are_uniform_and_the_core_id_is_not() {
        let xor9 = Instr::Alu {
            op: AluOp::Xor,
            a: 9,
            b: 9,
            c: 9,
        };
        let add = |a, b, c| Instr::Alu {
            op: AluOp::Add,
            a,
            b,
            c,
        };
        let f = frame(&[
            xor9,                            // 0: r9 = 0
            Instr::SetConst { k: 1, d: 14 }, // 1
            Instr::SetConst { k: 0, d: 1 },  // 2: r1 = core id
            mem(MemOp::Ld, 9, 1),            // 3: row r9: uniform
            mem(MemOp::Ld, 1, 1),            // 4: row r1: the core id
            add(9, 14, 9),                   // 5: r9 += 1, still uniform
            mem(MemOp::St, 9, 1),            // 6
            Instr::Bnz { a: 9, target: 3 },  // 7: the loop joins uniform states
            mem(MemOp::Ld, 5, 1),            // 8: r5 was loaded: not uniform
            mem(MemOp::Ld, 2, 1),            // 9: r2 is a starting register
        ]);
        let banks = FrameBanks::analyse(&f);
        let uniform: Vec<usize> = (0..16).filter(|&ip| banks.may_reach_one_row(ip)).collect();
        assert_eq!(uniform, vec![3, 6]);
    }

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
    fn own_bank_candidates_are_core_id_and_starting_register_banks() {
        // IP 1: bank r1 = core id; IP 2: bank r0, a starting register; IP 4: bank r2 = 0.
        let f = frame(&[
            Instr::SetConst { k: 0, d: 1 },
            mem(MemOp::Ld, 9, 1),
            mem(MemOp::St, 9, 0),
            Instr::Alu {
                op: AluOp::Xor,
                a: 2,
                b: 2,
                c: 2,
            },
            mem(MemOp::Ld, 9, 2),
        ]);
        let b = FrameBanks::analyse(&f);
        let own: Vec<usize> = (0..FRAME_INSTRS)
            .filter(|&ip| b.may_reach_own_bank(ip))
            .collect();
        assert_eq!(own, vec![1, 2]);
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

    /// The symbolic domain folds constants exactly as the concrete one computes: every
    /// register instruction over every pair of constant operands (and every shift amount,
    /// set_const target and bnz decision) gives the same registers and effect.
    #[test]
    fn symbolic_constants_agree_with_concrete_bytes_on_every_operand_pair() {
        let mut instrs: Vec<Instr> = AluOp::ALL
            .into_iter()
            .map(|op| Instr::Alu {
                op,
                a: 1,
                b: 2,
                c: 3,
            })
            .collect();
        instrs.push(Instr::Mul { a: 1, b: 2, c: 15 });
        for k in 0..8 {
            instrs.push(Instr::Shift {
                left: true,
                a: 1,
                k,
                c: 4,
            });
            instrs.push(Instr::Shift {
                left: false,
                a: 1,
                k,
                c: 4,
            });
        }
        instrs.push(Instr::SetConst { k: 0x5a, d: 9 });
        instrs.push(Instr::Bnz { a: 1, target: 7 });
        for instr in instrs {
            for x in 0..=255u8 {
                for y in 0..=255u8 {
                    let mut regs = [0u8; 16];
                    regs[1] = x;
                    regs[2] = y;
                    let mut sym = Symbolic {
                        regs: regs.map(Val::Const),
                    };
                    let e_sym = step(instr, &mut sym);
                    let e_con = step(
                        instr,
                        &mut Concrete {
                            regs: &mut regs,
                            core_id: 5,
                        },
                    );
                    assert_eq!(sym.regs, regs.map(Val::Const), "{instr} on {x:#x}, {y:#x}");
                    match (e_sym, e_con) {
                        (
                            Effect::Branch {
                                cond: Val::Const(a),
                                target: t,
                            },
                            Effect::Branch { cond: b, target: u },
                        ) => {
                            assert_eq!((a != 0, t), (b != 0, u), "{instr} on {x:#x}");
                        }
                        (Effect::Next, Effect::Next) => {}
                        other => panic!("{instr}: effects differ: {other:?}"),
                    }
                }
            }
        }
    }

    #[test]
    fn bank_of_symbolic_values_keeps_the_low_four_bits() {
        // ld [r9, r2] where r2 = init r2: the bank is the low four bits of its start value;
        // set_const into r1 loads the core id: bank = id.
        let f = frame(&[
            mem(MemOp::Ld, 9, 2),
            Instr::SetConst { k: 0, d: 1 },
            mem(MemOp::St, 9, 1),
        ]);
        let b = FrameBanks::analyse(&f);
        let mut regs = [0u8; 16];
        regs[2] = 0xF3;
        assert_eq!(b.for_core(9, &regs), 1 << 3 | 1 << 9);
    }

    /// `op rA, rB, rC`.
    fn alu(op: AluOp, a: u8, b: u8, c: u8) -> Instr {
        Instr::Alu { op, a, b, c }
    }

    /// The prologue of the private-bytes frames below: r1 = core id, r2 = 0 (bank 0 by
    /// clearing a starting register), r14 = 1.
    fn ids_in_bank_0() -> Vec<Instr> {
        vec![
            Instr::SetConst { k: 0, d: 1 },
            alu(AluOp::Xor, 2, 2, 2),
            Instr::SetConst { k: 1, d: 14 },
        ]
    }

    fn private(instrs: &[Instr]) -> bool {
        FrameBanks::analyse(&frame(instrs)).private_bytes()
    }

    #[test]
    fn rows_numbered_by_the_core_in_one_bank_are_private() {
        // Row 16 * id of bank 0, loaded, bumped and stored in a loop (`staggered.s`).
        let mut f = ids_in_bank_0();
        f.extend([
            Instr::Shift {
                left: true,
                a: 1,
                k: 4,
                c: 9,
            }, // 3: r9 = 16 id
            Instr::SetConst { k: 250, d: 8 }, // 4
            mem(MemOp::Ld, 9, 2),             // 5
            alu(AluOp::Add, 5, 8, 5),         // 6
            mem(MemOp::St, 9, 2),             // 7
            alu(AluOp::Sub, 8, 14, 8),        // 8
            Instr::Bnz { a: 8, target: 5 },   // 9
        ]);
        assert!(private(&f));
        // The row the core id itself, and id + 100 (both one to one on 0..15).
        let mut g = ids_in_bank_0();
        g.extend([mem(MemOp::St, 1, 2), Instr::SetConst { k: 100, d: 9 }]);
        g.extend([alu(AluOp::Add, 1, 9, 9), mem(MemOp::Ld, 9, 2)]);
        assert!(private(&g));
    }

    #[test]
    fn divergent_trip_counts_keep_the_rows_private() {
        // Core k loops 4 + (k mod 8) times: the counter differs per core and is unknown
        // after the join, the row (its id) stays known.
        let mut f = ids_in_bank_0();
        f.extend([
            Instr::SetConst { k: 7, d: 13 }, // 3
            alu(AluOp::And, 1, 13, 8),       // 4: r8 = id mod 8
            Instr::SetConst { k: 4, d: 6 },  // 5
            alu(AluOp::Add, 8, 6, 8),        // 6: r8 += 4
            mem(MemOp::Ld, 1, 2),            // 7
            alu(AluOp::Add, 5, 1, 5),        // 8
            mem(MemOp::St, 1, 2),            // 9
            alu(AluOp::Sub, 8, 14, 8),       // 10
            Instr::Bnz { a: 8, target: 7 },  // 11
        ]);
        assert!(private(&f));
    }

    #[test]
    fn bytes_two_cores_can_reach_are_not_private() {
        let with = |tail: &[Instr]| {
            let mut f = ids_in_bank_0();
            f.extend_from_slice(tail);
            private(&f)
        };
        // Row id / 2: cores 2k and 2k + 1 meet.
        assert!(!with(&[
            Instr::Shift {
                left: false,
                a: 1,
                k: 1,
                c: 9
            },
            mem(MemOp::Ld, 9, 2)
        ]));
        // One row for all: a constant.
        assert!(!with(&[
            Instr::SetConst { k: 3, d: 9 },
            mem(MemOp::St, 9, 2)
        ]));
        // One row for all, cleared from a starting register (`x ^ x`).
        assert!(!with(&[alu(AluOp::Xor, 9, 9, 9), mem(MemOp::St, 9, 2)]));
        // Row id at one instruction, id + 1 at another: core k's second meets core k+1's first.
        assert!(!with(&[
            mem(MemOp::Ld, 1, 2),
            alu(AluOp::Add, 1, 14, 9),
            mem(MemOp::St, 9, 2),
        ]));
        // Row 16 * id: as private as bank 0's rows are, until the bank is the core id
        // shifted out of the low four bits (every core in bank 0 at row 0).
        assert!(with(&[
            Instr::Shift {
                left: true,
                a: 1,
                k: 4,
                c: 9
            },
            mem(MemOp::St, 9, 2),
        ]));
        assert!(!with(&[
            Instr::Shift {
                left: true,
                a: 1,
                k: 4,
                c: 3
            },
            alu(AluOp::Xor, 9, 9, 9),
            mem(MemOp::St, 9, 3),
        ]));
    }

    #[test]
    fn addresses_not_known_in_every_core_are_not_private() {
        let with = |tail: &[Instr]| {
            let mut f = ids_in_bank_0();
            f.extend_from_slice(tail);
            private(&f)
        };
        // A starting register's row (another task left it; two cores may hold one value).
        assert!(!with(&[mem(MemOp::Ld, 7, 2)]));
        // A loaded byte's row.
        assert!(!with(&[mem(MemOp::Ld, 1, 2), mem(MemOp::St, 5, 2)]));
        // A row that moves in a loop: its value at the loop's head joins two values.
        assert!(!with(&[
            mem(MemOp::Ld, 1, 2),
            alu(AluOp::Add, 1, 14, 1),
            Instr::Bnz { a: 1, target: 3 },
        ]));
    }

    #[test]
    fn atomic_sequences_are_never_private() {
        // Locks are per bank: a sequence held by one core blocks another's in the bank.
        let mut f = ids_in_bank_0();
        f.extend([mem(MemOp::LdSync, 1, 2), mem(MemOp::StSync, 1, 2)]);
        assert!(!private(&f));
    }
}
