//! Lints on a loaded [`Program`], so they work on binaries as well as on source: reserved
//! bits, masks of 0, groups past the 64-frame task memory, `set_const` into r0..r7 with a
//! constant, atomic-sequence misuse found by a flow analysis of each frame's 16 slots, and
//! unreachable instructions. Findings map back to source lines through a [`SourceMap`].
//!
//! A program of the MCST dialect has no atomic sequences and no streams; its lints are about
//! what its task scheduler reads instead: NextCF and stop, the frames it reads as control
//! frames by following them, whether it reaches a halt, and which frames it never reaches.

use crate::assemble::SourceMap;
use crate::diagnostics::{Diagnostic, Diagnostics, Severity};
use gpu16_machine::engine::isa::{Instr, MemOp, FRAME_INSTRS};
use gpu16_machine::frame::TASK_MEMORY_FRAMES;
use gpu16_machine::{ControlFrame, Dialect, FrameKind, InstrFrame, Program};

/// One lint finding: the frame, the instruction slot if it is about one, and the message.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Finding {
    /// The frame's index in the program.
    pub frame: usize,
    /// The instruction's IP in the frame, 0..15, when the finding is about one.
    pub slot: Option<usize>,
    /// What looks wrong, one sentence without a location.
    pub message: String,
}

/// Every lint finding of `program`, in frame order.
pub fn lint(program: &Program) -> Vec<Finding> {
    let dialect = program.dialect();
    let mut out = Vec::new();
    let mut past_tm_reported = false;
    if dialect == Dialect::Mcst {
        let _ = scheduler_walk(program, &mut out);
    }
    for f in 0..program.len() {
        match program.kind(f) {
            FrameKind::Control if dialect == Dialect::Mcst => {
                // A frame in control position with fence 3 loads only when the scheduler
                // never reads it as one; the walk reports it as never reached.
                if let Ok(cf) = ControlFrame::decode(program.raw(f)) {
                    mcst_control(&cf, f, &mut out);
                    let last = f + usize::from(cf.if_num);
                    if last >= program.len() {
                        out.push(Finding {
                            frame: f,
                            slot: None,
                            message: format!(
                                "this group runs to frame {last}, past the program's last frame {}: its instruction frames from frame {} on are task memory's zero frames (16 `nop`s each)",
                                program.len() - 1,
                                program.len()
                            ),
                        });
                    }
                }
            }
            FrameKind::Control => spec_control(
                program,
                f,
                (0, program.len()),
                &mut past_tm_reported,
                &mut out,
            ),
            FrameKind::Instr { .. } => instr_frame(&program.instr(f), f, &mut out),
        }
    }
    if dialect == Dialect::Mcst {
        // The walk's findings go with their frames (a stable sort keeps the rest in order).
        out.sort_by_key(|f| f.frame);
    }
    out
}

/// What [`lint`] finds in a spec-dialect program read in parts, so that a program of any
/// length is checked in the memory of one part: `part` holds whole groups, frames `base`..
/// of a program of `total` frames, and the findings name frames of the whole program.
/// `past_tm_reported` is carried from part to part (the group past the task memory is
/// reported once). Over the parts in order, the findings are [`lint`]'s of the whole.
pub fn lint_part(
    part: &Program,
    base: usize,
    total: usize,
    past_tm_reported: &mut bool,
) -> Vec<Finding> {
    let mut out = Vec::new();
    for f in 0..part.len() {
        match part.kind(f) {
            FrameKind::Control => spec_control(part, f, (base, total), past_tm_reported, &mut out),
            FrameKind::Instr { .. } => {
                let from = out.len();
                instr_frame(&part.instr(f), f, &mut out);
                for found in &mut out[from..] {
                    found.frame += base;
                }
            }
        }
    }
    out
}

/// The spec dialect's lints of the control frame at `f` of `program`, which is frames
/// `base`.. of a program of `total` frames: its own, then (once) a group past the
/// 64-frame task memory.
fn spec_control(
    program: &Program,
    f: usize,
    (base, total): (usize, usize),
    past_tm_reported: &mut bool,
    out: &mut Vec<Finding>,
) {
    let from = out.len();
    control(program, f, out);
    for found in &mut out[from..] {
        found.frame += base;
    }
    let at = base + f;
    let last = at + usize::from(program.control(f).if_num);
    if last >= TASK_MEMORY_FRAMES && !*past_tm_reported {
        *past_tm_reported = true;
        out.push(Finding {
            frame: at,
            slot: None,
            message: format!(
                "this group runs to frame {last}, past the {TASK_MEMORY_FRAMES}-frame task memory: the program ({total} frames) is a stream the host must keep feeding"
            ),
        });
    }
}

/// The MCST dialect's lints of one control frame: reserved bits (only header bit 15 and
/// bytes 6..15, since bits 13:8 are NextCF and bit 14 stop), NextCF without stop, stop on a
/// group, masks of 0 and R0 init that has no effect.
fn mcst_control(cf: &ControlFrame, f: usize, out: &mut Vec<Finding>) {
    let mut say = |message: String| {
        out.push(Finding {
            frame: f,
            slot: None,
            message,
        })
    };
    if cf.reserved_header & 0x80 != 0 || cf.reserved.iter().any(|&b| b != 0) {
        say(format!(
            "control frame has reserved bits set (header bit 15 = {}, bytes 6..15 = {:02x?})",
            cf.reserved_header >> 7,
            cf.reserved
        ));
    }
    if !cf.stop() && cf.next_cf() != 0 {
        say(format!(
            "next={} has no effect without `stop`: the task scheduler follows NextCF only from a stop control frame",
            cf.next_cf()
        ));
    }
    if cf.stop() && cf.if_num > 0 {
        say(format!(
            "`stop` on a control frame with instruction frames: the jump to NextCF {} after the group is ambiguous in the RTL (mcst-dialect.md 3.4, 7)",
            cf.next_cf()
        ));
    }
    // A stop frame with no instruction frames (a halt or a frame sync) runs no task.
    if !(cf.stop() && cf.if_num == 0) {
        mask_lints(cf, &mut say);
    } else {
        r0_outside_mask(cf, &mut say);
    }
    if cf.if_num == 0 && cf.init_vect & cf.active != 0 {
        say(
            "R0 init on a control frame with no instruction frames has no effect: the mcst dialect initialises R0 when an instruction frame starts"
                .into(),
        );
    }
}

/// The MCST task scheduler's reading of task memory, which depends only on the image: from
/// frame 0 it reads a control frame, broadcasts its IF_Num instruction frames, and goes on
/// at the next frame or, from a stop frame, at NextCF. Findings: frames it reads as control
/// frames that the image lays out as instruction frames, frames it never reaches, and a
/// walk that never reaches a halt.
/// Returns whether the walk may end the run (a halt, or a frame sync on a walk that runs
/// a task).
fn scheduler_walk(program: &Program, out: &mut Vec<Finding>) -> bool {
    let len = program.len();
    let walk = program.mcst_walk();
    let (cfs, ifs) = (walk.control_frames(), walk.instr_frames);
    let as_cf = |f: usize| cfs & (1 << f) != 0;
    let as_if = |f: usize| ifs & (1 << f) != 0;
    let past_end = walk.path.iter().any(|&p| p >= len);
    // A frame sync ends the run only where the scheduler waits there for a busy core or
    // comes by a group's NextCF jump: never on a walk that runs no task and jumps from no
    // group, whose cores are always idle ([`McstWalk::may_end`]).
    let halts = walk.may_end();
    let frame_sync = walk.frame_sync;
    let mut say = |frame: usize, message: String| {
        out.push(Finding {
            frame,
            slot: None,
            message,
        })
    };
    if !halts {
        let past = if frame_sync {
            ", and its stop frames without instruction frames end a run only where the \
             scheduler waits there for a core or comes by a group's NextCF, which a walk that \
             runs no task never does"
        } else if past_end {
            ", and reads the zero frames past the program's end as empty control frames"
        } else {
            ""
        };
        say(
            0,
            format!("the task scheduler never reaches a halt (`.halt`: a stop control frame with no instruction frames whose NextCF is its own index){past}: the run stops as a livelock once the scheduler comes round its loop (or at the watchdog, if a task never ends)"),
        );
    }
    for f in 0..len {
        if as_cf(f) && matches!(program.kind(f), FrameKind::Instr { .. }) {
            let from = walk.came_from[f].map_or(String::new(), |c| {
                format!(" (after the control frame at frame {c})")
            });
            say(
                f,
                format!("the task scheduler reads this instruction frame as a control frame{from}"),
            );
        }
    }
    let mut f = 0;
    while f < len {
        if as_cf(f) || as_if(f) {
            f += 1;
            continue;
        }
        let start = f;
        while f < len && !as_cf(f) && !as_if(f) {
            f += 1;
        }
        let msg = if f - start == 1 {
            format!("frame {start} is never reached by the task scheduler")
        } else {
            format!(
                "frames {start}..{} are never reached by the task scheduler",
                f - 1
            )
        };
        say(start, msg);
    }
    halts
}

/// Whether a run of `program` may end other than at the watchdog: always in the spec
/// dialect; in the MCST dialect, where the task scheduler's walk reaches a halt, or a frame
/// sync on a walk that runs a task (the lint of a walk that never does is [`lint`]'s). A
/// finer test than `Program::can_end`, for which any stop frame without instruction frames
/// counts.
pub fn may_end(program: &Program) -> bool {
    program.dialect() != Dialect::Mcst || scheduler_walk(program, &mut Vec::new())
}

fn control(program: &Program, f: usize, out: &mut Vec<Finding>) {
    let cf = program.control(f);
    let mut say = |message: String| {
        out.push(Finding {
            frame: f,
            slot: None,
            message,
        })
    };
    if cf.reserved_header != 0 || cf.reserved.iter().any(|&b| b != 0) {
        say(format!(
            "control frame has reserved bits set (header bits 15:8 = 0x{:02x}, bytes 6..15 = {:02x?})",
            cf.reserved_header, cf.reserved
        ));
    }
    mask_lints(&cf, &mut say);
}

/// The lints of a group's mask, in every dialect: a mask of 0, then R0 init outside it.
fn mask_lints(cf: &ControlFrame, say: &mut impl FnMut(String)) {
    if cf.active == 0 {
        say(format!(
            "mask is 0: the {} instruction frame{} of this group run on no core",
            cf.if_num,
            if cf.if_num == 1 { "" } else { "s" }
        ));
    }
    r0_outside_mask(cf, say);
}

/// R0 init for cores outside the mask has no effect.
fn r0_outside_mask(cf: &ControlFrame, say: &mut impl FnMut(String)) {
    let outside = cf.init_vect & !cf.active;
    if outside != 0 {
        let cores: Vec<String> = (0..16)
            .filter(|i| outside >> i & 1 == 1)
            .map(|i| i.to_string())
            .collect();
        say(format!(
            "R0 init for cores {} that are not in the mask has no effect",
            cores.join(",")
        ));
    }
}

/// The lint of `set_const k, rD` into a register that takes the core id rather than `k`
/// (the spec's r0..r7, the mcst dialect's r8..r15), for a constant `k` other than 0: the
/// one definition both `gpu16 check` and `gpu16 asm` report.
fn set_const_core_id(i: Instr) -> Option<String> {
    match i {
        Instr::SetConst { k, d } if i.sets_core_id() && k != 0 => Some(format!(
            "set_const into r{d} loads the core id, not 0x{k:02x}: only r8..r15 take a constant"
        )),
        Instr::McstSetConst { k, d } if i.sets_core_id() && k != 0 => Some(format!(
            "set_const into r{d} loads the core id, not 0x{k:02x}: in the mcst dialect only r0..r7 take a constant"
        )),
        _ => None,
    }
}

/// Only the `set_const` findings of [`lint`] (a constant written into a register that
/// takes the core id instead), in frame and slot order: the likely mistake `gpu16 asm`
/// warns about as it assembles. [`check`] reports the same ones among the others.
pub fn lint_set_const(program: &Program) -> Vec<Finding> {
    let mut out = Vec::new();
    for f in 0..program.len() {
        if let FrameKind::Instr { .. } = program.kind(f) {
            let frame = program.instr(f);
            for (slot, &i) in frame.instrs.iter().enumerate() {
                if let Some(message) = set_const_core_id(i) {
                    out.push(Finding {
                        frame: f,
                        slot: Some(slot),
                        message,
                    });
                }
            }
        }
    }
    out
}

/// Flow states at a slot: bit 16 = not holding; bit k < 16 = holding the sequence opened
/// by the ld_sync at slot k.
const FREE: u32 = 1 << 16;

fn instr_frame(frame: &InstrFrame, f: usize, out: &mut Vec<Finding>) {
    let mut found: Vec<(usize, String)> = Vec::new();
    for (slot, (&w, &i)) in frame.words.iter().zip(frame.instrs.iter()).enumerate() {
        if i.encode() != w {
            found.push((
                slot,
                format!(
                    "instruction word 0x{w:04x} has ignored bits set (0x{:04x}); it runs as `{i}`",
                    w ^ i.encode()
                ),
            ));
        }
        if let Some(message) = set_const_core_id(i) {
            found.push((slot, message));
        }
    }
    let reached = flow(&frame.instrs, &mut found);
    // Unreached `ready` and `nop` words are fill, not code someone meant to run.
    let dead = |s: usize| reached[s] == 0 && !matches!(frame.words[s], 0x0000 | 0xf000);
    let mut slot = 0;
    while slot < FRAME_INSTRS {
        if !dead(slot) {
            slot += 1;
            continue;
        }
        let start = slot;
        while slot < FRAME_INSTRS && dead(slot) {
            slot += 1;
        }
        let msg = if slot - start == 1 {
            format!("instruction {start} is unreachable")
        } else {
            format!("instructions {start}..{} are unreachable", slot - 1)
        };
        found.push((start, msg));
    }
    found.sort_by_key(|(s, _)| *s);
    found.dedup();
    out.extend(found.into_iter().map(|(slot, message)| Finding {
        frame: f,
        slot: Some(slot),
        message,
    }));
}

/// Which states reach each slot; atomic-sequence findings go to `found`. Every bnz may go
/// either way (register values are not tracked), so a finding means some path of the
/// frame's control flow breaks the rule.
fn flow(instrs: &[Instr; FRAME_INSTRS], found: &mut Vec<(usize, String)>) -> [u32; FRAME_INSTRS] {
    let mut at = [0u32; FRAME_INSTRS];
    at[0] = FREE;
    let mut work = vec![0usize];
    let held = |s: u32| (0..16).find(|k| s >> k & 1 == 1);
    while let Some(i) = work.pop() {
        let s = at[i];
        let instr = instrs[i];
        let mut next = s;
        let mut succ: Vec<Option<usize>> = vec![(i + 1 < FRAME_INSTRS).then_some(i + 1)];
        match instr {
            Instr::Ready => {
                if let Some(k) = held(s) {
                    found.push((
                        i,
                        format!(
                            "ready inside the atomic sequence opened by ld_sync at instruction {k}"
                        ),
                    ));
                }
                succ.clear();
            }
            Instr::Mem { op, .. } => match op {
                MemOp::Ld | MemOp::St => {
                    if let Some(k) = held(s) {
                        found.push((
                            i,
                            format!("{} inside the atomic sequence opened by ld_sync at instruction {k}", op.mnemonic()),
                        ));
                    }
                }
                MemOp::LdSync => {
                    if let Some(k) = held(s) {
                        found.push((
                            i,
                            format!("ld_sync inside the atomic sequence opened at instruction {k} (sequences do not nest)"),
                        ));
                    }
                    next = 1 << i;
                }
                MemOp::StSync => {
                    if s & FREE != 0 {
                        found.push((
                            i,
                            "st_sync with no open atomic sequence (no ld_sync before it)".into(),
                        ));
                    }
                    next = FREE;
                }
            },
            Instr::Bnz { target, .. } => succ.push(Some(usize::from(target))),
            _ => {}
        }
        for t in succ {
            match t {
                Some(t) => {
                    if at[t] | next != at[t] {
                        at[t] |= next;
                        work.push(t);
                    }
                }
                None => {
                    if let Some(k) = held(next) {
                        found.push((
                            i,
                            format!("the atomic sequence opened by ld_sync at instruction {k} can reach the end of the frame without st_sync"),
                        ));
                    }
                }
            }
        }
    }
    at
}

/// The findings of `program` as warnings: at their source lines when `map` is given, else
/// as `file: frame F, instruction S`.
pub fn check(program: &Program, map: Option<&SourceMap>, file: &str) -> Diagnostics {
    warnings(lint(program), map, file)
}

/// `findings` (of [`lint`] or [`lint_set_const`]) as warnings, one each and in their order,
/// as [`check`] reports them: at their source lines when `map` is given, else as
/// `file: frame F, instruction S`.
pub fn warnings(findings: Vec<Finding>, map: Option<&SourceMap>, file: &str) -> Diagnostics {
    Diagnostics(
        findings
            .into_iter()
            .map(
                |f| match map.and_then(|m| m.span(f.frame, f.slot).map(|s| (m, s))) {
                    Some((m, span)) => {
                        let in_fill = f.slot.filter(|&s| s >= m.frames[f.frame].slots.len());
                        match in_fill {
                            Some(s) => Diagnostic::warning(
                                span,
                                format!("instruction {s} (`ready` fill): {}", f.message),
                            ),
                            None => Diagnostic::warning(span, f.message),
                        }
                    }
                    None => {
                        let at = match f.slot {
                            Some(s) => format!("{file}: frame {}, instruction {s}", f.frame),
                            None => format!("{file}: frame {}", f.frame),
                        };
                        Diagnostic::bare(Severity::Warning, at, f.message)
                    }
                },
            )
            .collect(),
    )
}
