//! Rule-breaking programs: a valid generated program with exactly one rule broken, so the
//! differential tests compare faults, load errors and watchdog stops too.

use crate::program::{generate, Generated, Profile};
use crate::rng::Rng;
use gpu16_machine::frame::FRAME_BYTES;
use gpu16_machine::isa::{MemOp, FRAME_INSTRS};
use gpu16_machine::{ControlFrame, Instr, InstrFrame};

/// The rule a generated program breaks.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Violation {
    StSyncWithoutSequence,
    StSyncWrongAddress,
    LdSyncWhileHolding,
    AccessWhileHolding,
    ReadyWhileHolding,
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

    pub fn from_name(name: &str) -> Option<Violation> {
        Violation::ALL.into_iter().find(|v| v.name() == name)
    }
}

/// The instructions that break a runtime rule, placed at the start of the first frame.
fn breaking_code(v: Violation) -> Vec<Instr> {
    let set = |k, d| Instr::SetConst { k, d };
    let mem = |op, a| Instr::Mem { op, a, hi: 0, r: 9 };
    match v {
        Violation::StSyncWithoutSequence => vec![set(1, 8), mem(MemOp::StSync, 8)],
        Violation::StSyncWrongAddress => vec![
            set(1, 8),
            set(2, 10),
            mem(MemOp::LdSync, 8),
            mem(MemOp::StSync, 10),
        ],
        Violation::LdSyncWhileHolding => {
            vec![set(1, 8), mem(MemOp::LdSync, 8), mem(MemOp::LdSync, 8)]
        }
        Violation::AccessWhileHolding => {
            vec![set(1, 8), mem(MemOp::LdSync, 8), mem(MemOp::Ld, 8)]
        }
        Violation::ReadyWhileHolding => vec![set(1, 8), mem(MemOp::LdSync, 8), Instr::Ready],
        Violation::FrameEndWhileHolding => {
            let mut v = vec![Instr::Nop; FRAME_INSTRS - 2];
            v.push(set(1, 8));
            v.push(mem(MemOp::LdSync, 8));
            v
        }
        Violation::EndlessLoop => vec![set(1, 8), Instr::Bnz { a: 8, target: 1 }],
        _ => Vec::new(),
    }
}

/// Generate a program that breaks `violation` and otherwise follows every rule.
pub fn generate_violating(
    seed: u64,
    groups: usize,
    profile: Profile,
    violation: Violation,
) -> Generated {
    let mut g = generate(seed, groups, profile);
    let mut rng = Rng::new(seed ^ 0xBAD);
    let frames = g.image.len() / FRAME_BYTES;
    let frame = |i: usize| i * FRAME_BYTES..(i + 1) * FRAME_BYTES;
    let code = breaking_code(violation);
    if !code.is_empty() {
        // The first group's first frame runs first; make sure it runs on some core.
        let mut cf = ControlFrame::decode(g.image[frame(0)].try_into().expect("32 bytes"))
            .expect("generated frames are valid");
        if cf.active == 0 {
            cf.active = 1 << rng.below(16);
        }
        g.image[frame(0)].copy_from_slice(&cf.encode());
        let mut instrs = InstrFrame::decode(g.image[frame(1)].try_into().expect("32 bytes"))
            .expect("generated frames are valid")
            .instrs;
        instrs[..code.len()].copy_from_slice(&code);
        g.image[frame(1)].copy_from_slice(&InstrFrame::from_instrs(instrs).bytes());
        return g;
    }
    match violation {
        Violation::Length => {
            let extra = rng.range(1, FRAME_BYTES as u64 - 1);
            g.image.extend((0..extra).map(|_| rng.byte()));
        }
        Violation::GroupPastEnd => {
            // Find the last control frame and announce more frames than follow it.
            let mut i = 0;
            let mut last = 0;
            while i < frames {
                last = i;
                i += 1 + usize::from(g.image[i * FRAME_BYTES] & 0x3F);
            }
            let header = &mut g.image[last * FRAME_BYTES];
            let n = (*header & 0x3F) + rng.range(1, 3) as u8;
            *header = (*header & 0xC0) | n.min(63);
        }
        Violation::ReservedFence => {
            g.image[0] |= 0xC0;
        }
        Violation::ReservedMode => {
            let slot = rng.below(FRAME_INSTRS as u64) as usize;
            let opc: u16 = if rng.chance(50) { 0xb } else { 0xd };
            let mode = rng.range(2, 3) as u16;
            let (a, hi, c) = (
                rng.below(16) as u16,
                rng.below(4) as u16,
                rng.below(16) as u16,
            );
            let word = (opc << 12) | (a << 8) | (((mode << 2) | hi) << 4) | c;
            let at = FRAME_BYTES + 2 * slot;
            g.image[at..at + 2].copy_from_slice(&word.to_le_bytes());
        }
        _ => unreachable!("runtime violations are handled above"),
    }
    g
}
