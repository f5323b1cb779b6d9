//! Rule-breaking programs: a valid generated program with exactly one rule broken, so the
//! differential tests compare faults, load errors and watchdog stops too.

use crate::program::{generate, word, Generated, Profile};
use crate::rng::Rng;
use gpu16_machine::engine::isa::Instr;
use gpu16_machine::engine::isa::{AluOp, MemOp, FRAME_INSTRS};
use gpu16_machine::frame::FRAME_BYTES;

/// The rule a generated program breaks.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Violation {
    /// An `st_sync` by a core that holds no atomic sequence: a fault when it executes.
    StSyncWithoutSequence,
    /// An `st_sync` to an address other than the one its `ld_sync` opened (the two low
    /// address registers are loaded with different constants): a fault.
    StSyncWrongAddress,
    /// A second `ld_sync` while the core already holds a sequence: a fault.
    LdSyncWhileHolding,
    /// A plain `ld` or `st` while the core holds a sequence: a fault.
    AccessWhileHolding,
    /// `ready` while the core holds a sequence: a fault.
    ReadyWhileHolding,
    /// An `ld_sync` followed only by register instructions to the end of the frame, so the
    /// core's part ends holding the sequence: a fault.
    FrameEndWhileHolding,
    /// The image length is not a multiple of 32.
    Length,
    /// The last group announces more instruction frames than the image has.
    GroupPastEnd,
    /// A control frame with fence 3.
    ReservedFence,
    /// An ld/st with a reserved mode.
    ReservedMode,
    /// A loop that never ends: the watchdog must stop it.
    EndlessLoop,
}

impl Violation {
    /// Every violation, in declaration order: what `gpu16 fuzz` and the differential tests
    /// pick from.
    pub const ALL: [Violation; 11] = [
        Violation::StSyncWithoutSequence,
        Violation::StSyncWrongAddress,
        Violation::LdSyncWhileHolding,
        Violation::AccessWhileHolding,
        Violation::ReadyWhileHolding,
        Violation::FrameEndWhileHolding,
        Violation::Length,
        Violation::GroupPastEnd,
        Violation::ReservedFence,
        Violation::ReservedMode,
        Violation::EndlessLoop,
    ];

    /// Whether the program it gives is refused when loaded (a load error), rather than
    /// failing as it runs.
    pub fn breaks_loading(self) -> bool {
        matches!(
            self,
            Violation::Length
                | Violation::GroupPastEnd
                | Violation::ReservedFence
                | Violation::ReservedMode
        )
    }

    /// The kebab-case name the CLI and the Python binding use for it; [`Violation::from_name`]
    /// maps it back.
    pub fn name(self) -> &'static str {
        match self {
            Violation::StSyncWithoutSequence => "st_sync-without-sequence",
            Violation::StSyncWrongAddress => "st_sync-wrong-address",
            Violation::LdSyncWhileHolding => "ld_sync-while-holding",
            Violation::AccessWhileHolding => "access-while-holding",
            Violation::ReadyWhileHolding => "ready-while-holding",
            Violation::FrameEndWhileHolding => "frame-end-while-holding",
            Violation::Length => "length",
            Violation::GroupPastEnd => "group-past-end",
            Violation::ReservedFence => "reserved-fence",
            Violation::ReservedMode => "reserved-mode",
            Violation::EndlessLoop => "endless-loop",
        }
    }

    /// The violation whose [`Violation::name`] is `name`, if any.
    pub fn from_name(name: &str) -> Option<Violation> {
        Violation::ALL.into_iter().find(|v| v.name() == name)
    }
}

/// The groups of a valid image: (control frame index, instruction frame count).
fn layout(image: &[u8]) -> Vec<(usize, usize)> {
    let frames = image.len() / FRAME_BYTES;
    let mut out = Vec::new();
    let mut i = 0;
    while i < frames {
        let n = usize::from(image[i * FRAME_BYTES] & 0x3F);
        out.push((i, n));
        i += n + 1;
    }
    out
}

fn reg(rng: &mut Rng) -> u8 {
    rng.below(16) as u8
}

/// A register that `set_const` loads with its constant (r8..r15).
fn const_reg(rng: &mut Rng) -> u8 {
    rng.range(8, 15) as u8
}

fn mem(op: MemOp, a: u8, hi: u8, r: u8) -> Instr {
    Instr::Mem { op, a, hi, r }
}

/// An `ld_sync` with random registers.
fn ld_sync(rng: &mut Rng) -> Instr {
    mem(MemOp::LdSync, reg(rng), rng.below(4) as u8, reg(rng))
}

/// An instruction that touches neither memory nor control flow.
fn register_op(rng: &mut Rng) -> Instr {
    let (a, b, c) = (reg(rng), reg(rng), reg(rng));
    match rng.below(5) {
        0 => Instr::Mul { a, b, c },
        1 => Instr::Shift {
            left: rng.chance(50),
            a,
            k: b & 7,
            c,
        },
        2 => Instr::SetConst {
            k: rng.byte(),
            d: c,
        },
        3 => Instr::Nop,
        _ => Instr::Alu {
            op: rng.pick(&AluOp::ALL),
            a,
            b,
            c,
        },
    }
}

/// The instructions that break a runtime rule and the IP they start at. Every core that runs
/// them reaches them (the code before them is made straight-line and sequence-free) and
/// breaks the rule there, whatever its registers hold.
fn breaking_code(rng: &mut Rng, v: Violation) -> Option<(usize, Vec<Instr>)> {
    let code = match v {
        Violation::StSyncWithoutSequence => {
            vec![mem(MemOp::StSync, reg(rng), rng.below(4) as u8, reg(rng))]
        }
        Violation::StSyncWrongAddress => {
            // Two low-address registers with different constants, one high register that the
            // ld_sync does not overwrite: the st_sync's address differs from the held one.
            let a = const_reg(rng);
            let b = loop {
                let b = const_reg(rng);
                if b != a {
                    break b;
                }
            };
            let ka = rng.byte();
            let kb = loop {
                let k = rng.byte();
                if k != ka {
                    break k;
                }
            };
            let hi = rng.below(4) as u8;
            let d = loop {
                let d = reg(rng);
                if d != b && d != hi {
                    break d;
                }
            };
            vec![
                Instr::SetConst { k: ka, d: a },
                Instr::SetConst { k: kb, d: b },
                mem(MemOp::LdSync, a, hi, d),
                mem(MemOp::StSync, b, hi, reg(rng)),
            ]
        }
        Violation::LdSyncWhileHolding => vec![ld_sync(rng), ld_sync(rng)],
        Violation::AccessWhileHolding => {
            let op = if rng.chance(50) { MemOp::Ld } else { MemOp::St };
            vec![
                ld_sync(rng),
                mem(op, reg(rng), rng.below(4) as u8, reg(rng)),
            ]
        }
        Violation::ReadyWhileHolding => vec![ld_sync(rng), Instr::Ready],
        Violation::FrameEndWhileHolding => {
            // The ld_sync anywhere, then register-only code to the end of the frame.
            let at = rng.below(FRAME_INSTRS as u64) as usize;
            let mut v = vec![ld_sync(rng)];
            v.extend((at + 1..FRAME_INSTRS).map(|_| register_op(rng)));
            return Some((at, v));
        }
        Violation::EndlessLoop => {
            // `set_const k, rA; bnz t, rA` with k != 0 and t at or before the bnz: the code
            // from t on reloads rA before every test.
            let at = rng.below(FRAME_INSTRS as u64 - 1) as usize;
            let a = const_reg(rng);
            let k = rng.range(1, 255) as u8;
            let target = rng.range(0, at as u64 + 1) as u8;
            return Some((
                at,
                vec![Instr::SetConst { k, d: a }, Instr::Bnz { a, target }],
            ));
        }
        _ => return None,
    };
    let at = rng.below((FRAME_INSTRS - code.len() + 1) as u64) as usize;
    Some((at, code))
}

/// Generate a program that breaks `violation` and otherwise follows every rule. The rule is
/// broken in a random instruction frame (a runtime rule at a random IP, with random
/// registers) or a random control frame.
pub fn generate_violating(
    seed: u64,
    groups: usize,
    profile: Profile,
    violation: Violation,
) -> Generated {
    let mut g = generate(seed, groups, profile);
    let mut rng = Rng::new(seed ^ 0xBAD);
    let groups = layout(&g.image);
    // Every instruction frame as (its control frame, itself); a generated program has one.
    let ifs: Vec<(usize, usize)> = groups
        .iter()
        .flat_map(|&(cf, n)| (cf + 1..=cf + n).map(move |f| (cf, f)))
        .collect();
    let frame = |i: usize| i * FRAME_BYTES..(i + 1) * FRAME_BYTES;
    if let Some((at, code)) = breaking_code(&mut rng, violation) {
        let (cf, f) = rng.pick(&ifs);
        // The frame must run on some core.
        let active = &mut g.image[cf * FRAME_BYTES + 2..cf * FRAME_BYTES + 4];
        if active == [0, 0] {
            active.copy_from_slice(&(1u16 << rng.below(16)).to_le_bytes());
        }
        let bytes = &mut g.image[frame(f)];
        let mut words: Vec<u16> = bytes
            .chunks_exact(2)
            .map(|w| u16::from_le_bytes([w[0], w[1]]))
            .collect();
        // Before the code: no jump, no ready, no atomic sequence, so every core runs
        // straight into it holding nothing. Other words keep their (maybe raw) encoding.
        for w in &mut words[..at] {
            let i = Instr::decode(*w).expect("generated frames are valid");
            if matches!(i, Instr::Bnz { .. } | Instr::Ready)
                || matches!(i, Instr::Mem { op, .. } if op.is_sync())
            {
                *w = 0;
            }
        }
        for (w, i) in words[at..].iter_mut().zip(code) {
            *w = word(&mut rng, i);
        }
        for (b, w) in bytes.chunks_exact_mut(2).zip(words) {
            b.copy_from_slice(&w.to_le_bytes());
        }
        return g;
    }
    match violation {
        Violation::Length => {
            let extra = rng.range(1, FRAME_BYTES as u64 - 1);
            g.image.extend((0..extra).map(|_| rng.byte()));
        }
        Violation::GroupPastEnd => {
            // Announce more frames than follow the last control frame.
            let (last, _) = *groups.last().expect("a program has a control frame");
            let header = &mut g.image[last * FRAME_BYTES];
            let n = (*header & 0x3F) + rng.range(1, 3) as u8;
            *header = (*header & 0xC0) | n.min(63);
        }
        Violation::ReservedFence => {
            let (cf, _) = rng.pick(&groups);
            g.image[cf * FRAME_BYTES] |= 0xC0;
        }
        Violation::ReservedMode => {
            let (_, f) = rng.pick(&ifs);
            let slot = rng.below(FRAME_INSTRS as u64) as usize;
            let opc: u16 = if rng.chance(50) { 0xb } else { 0xd };
            let mode = rng.range(2, 3) as u16;
            let (a, hi, c) = (
                rng.below(16) as u16,
                rng.below(4) as u16,
                rng.below(16) as u16,
            );
            let word = (opc << 12) | (a << 8) | (((mode << 2) | hi) << 4) | c;
            let at = f * FRAME_BYTES + 2 * slot;
            g.image[at..at + 2].copy_from_slice(&word.to_le_bytes());
        }
        _ => unreachable!("runtime violations are handled above"),
    }
    g
}
