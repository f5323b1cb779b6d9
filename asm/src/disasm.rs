//! Program image to source. The output re-assembles to the same bytes: reserved bits are
//! kept (`.word` for an instruction word with ignored bits set, `reserved=` and `r0_vect=`
//! for control frames), and only the trailing `ready` fill of a frame is left out, since
//! the assembler puts it back. Words and headers are read in the program's dialect: in the
//! MCST dialect a control frame shows `next=` and `stop`, and a halt frame is `.halt`.

use gpu16_machine::engine::isa::{Instr, FRAME_INSTRS};
use gpu16_machine::{ControlFrame, Dialect, FrameKind, Program};
use std::fmt::Write;

const READY: u16 = 0xf000;

/// The `.cf` line of a control frame as the spec reads it, without a comment.
pub fn control_line(cf: &ControlFrame) -> String {
    control_line_in(cf, Dialect::Spec)
}

/// Whether the control frame at index `frame` is what `.halt` writes: a stop frame with
/// no instruction frames whose NextCF is its own index, and nothing else set.
fn is_halt(cf: &ControlFrame, frame: usize) -> bool {
    cf.stop()
        && usize::from(cf.next_cf()) == frame
        && cf.reserved_header & 0x80 == 0
        && *cf
            == ControlFrame {
                if_num: 0,
                fence: gpu16_machine::Fence::No,
                active: 0,
                init_vect: 0,
                init_r0: [0; 16],
                reserved_header: cf.reserved_header,
                reserved: [0; 10],
            }
}

/// The `.cf` line of a control frame as `dialect` reads it, without a comment. In the MCST
/// dialect header bits 13:8 are shown as `next=` and bit 14 as `stop`.
pub fn control_line_in(cf: &ControlFrame, dialect: Dialect) -> String {
    let mut s = format!(".cf mask=0x{:04x} fence={}", cf.active, cf.fence.name());
    let mut header = cf.reserved_header;
    if dialect == Dialect::Mcst {
        if cf.next_cf() != 0 {
            write!(s, " next={}", cf.next_cf()).unwrap();
        }
        if cf.stop() {
            s.push_str(" stop");
        }
        header &= 0x80;
    }
    let listed: Vec<usize> = (0..16)
        .filter(|&i| cf.init_vect >> i & 1 == 1 || cf.init_r0[i] != 0)
        .collect();
    if !listed.is_empty() {
        let pairs: Vec<String> = listed
            .iter()
            .map(|&i| format!("{i}:0x{:02x}", cf.init_r0[i]))
            .collect();
        write!(s, " r0={}", pairs.join(",")).unwrap();
    }
    // `r0=` sets a core's Init_R0_Vect bit; a value for a core whose bit is clear needs
    // the vector spelled out.
    let implied = listed.iter().fold(0u16, |v, &i| v | 1 << i);
    if implied != cf.init_vect {
        write!(s, " r0_vect=0x{:04x}", cf.init_vect).unwrap();
    }
    let reserved: Vec<String> = std::iter::once((1, header))
        .chain(cf.reserved.iter().enumerate().map(|(i, &b)| (i + 6, b)))
        .filter(|&(_, b)| b != 0)
        .map(|(off, b)| format!("{off}:0x{b:02x}"))
        .collect();
    if !reserved.is_empty() {
        write!(s, " reserved={}", reserved.join(",")).unwrap();
    }
    s
}

/// The instruction lines of one frame's words as the spec reads them (trailing `ready`
/// fill left out).
pub fn frame_lines(words: &[u16; FRAME_INSTRS]) -> Vec<String> {
    frame_lines_in(words, Dialect::Spec)
}

/// The instruction lines of one frame's words as `dialect` reads them (trailing `ready`
/// fill left out).
pub fn frame_lines_in(words: &[u16; FRAME_INSTRS], dialect: Dialect) -> Vec<String> {
    frame_lines_labelled(words, dialect, &[])
}

/// [`frame_lines_in`] with the source's label names, (name, slot) as
/// [`FrameSource::labels`](crate::FrameSource::labels) lists them: a slot with a label is
/// marked with its first name, and a `bnz` to it names it, instead of `L<slot>`.
pub fn frame_lines_labelled(
    words: &[u16; FRAME_INSTRS],
    dialect: Dialect,
    labels: &[(String, usize)],
) -> Vec<String> {
    let name = |slot: usize| {
        labels
            .iter()
            .find(|(_, s)| *s == slot)
            .map(|(n, _)| n.as_str())
    };
    let used = words.iter().rposition(|&w| w != READY).map_or(0, |i| i + 1);
    let decoded: Vec<Option<Instr>> = words
        .iter()
        .map(|&w| {
            Instr::decode_in(w, dialect)
                .ok()
                .filter(|i| i.encode() == w)
        })
        .collect();
    let mut targets = [false; FRAME_INSTRS];
    for i in decoded.iter().take(used).flatten() {
        if let Instr::Bnz { target, .. } = *i {
            if usize::from(target) < used {
                targets[usize::from(target)] = true;
            }
        }
    }
    (0..used)
        .map(|slot| {
            let label = match name(slot) {
                Some(n) => format!("{n}:"),
                None if targets[slot] => format!("L{slot}:"),
                None => String::new(),
            };
            let text = match decoded[slot] {
                Some(Instr::Bnz { a, target }) if name(usize::from(target)).is_some() => {
                    format!(
                        "bnz {}, r{a}",
                        name(usize::from(target)).unwrap_or_default()
                    )
                }
                Some(Instr::Bnz { a, target }) if targets[usize::from(target)] => {
                    format!("bnz L{target}, r{a}")
                }
                Some(i) => i.to_string(),
                None => {
                    let w = words[slot];
                    match Instr::decode_in(w, dialect) {
                        Ok(i) => format!(
                            ".word 0x{w:04x}   ; {i} with reserved bits 0x{:04x} set",
                            w ^ i.encode()
                        ),
                        Err(e) => format!(".word 0x{w:04x}   ; {e}"),
                    }
                }
            };
            if label.len() < 6 {
                format!("{label:<6}{text}")
            } else {
                format!("{label} {text}")
            }
        })
        .collect()
}

/// Source text for `program`, in its dialect ([`Program::dialect`]; assemble an MCST
/// program's text with `--dialect mcst`).
pub fn disassemble(program: &Program) -> String {
    let mut out = disassembly_header(program.dialect(), program.len());
    out += &disassemble_part(program, 0, program.len());
    out
}

/// The first line of [`disassemble`]'s text for a program of `frames` frames.
pub fn disassembly_header(dialect: Dialect, frames: usize) -> String {
    match dialect {
        Dialect::Spec => format!("; gpu16 program, {frames} frames\n"),
        d => format!("; gpu16 program ({d} dialect), {frames} frames\n"),
    }
}

/// The text of [`disassemble`] after its header, for `part`: whole groups, frames `base`..
/// of a program of `total` frames (frame numbers are the whole program's). A program read
/// in parts is disassembled in the memory of one part: the header, then each part's text
/// in order, is [`disassemble`]'s text of the whole.
pub fn disassemble_part(part: &Program, base: usize, total: usize) -> String {
    let dialect = part.dialect();
    let mut out = String::new();
    for p in 0..part.len() {
        let f = base + p;
        match part.kind(p) {
            FrameKind::Control => {
                let Ok(cf) = ControlFrame::decode(part.raw(p)) else {
                    // Only the MCST dialect loads such a frame: one its scheduler never
                    // reads as a control frame. The syntax has no way to write it.
                    writeln!(
                        out,
                        "\n; frame {f}: a control-frame position with the reserved fence 3, never read by the task scheduler; it cannot be written in source"
                    )
                    .unwrap();
                    continue;
                };
                if dialect == Dialect::Mcst && is_halt(&cf, f) {
                    writeln!(out, "\n{:<48} ; frame {f}, stop, NextCF {f}", ".halt").unwrap();
                    continue;
                }
                let mut line = control_line_in(&cf, dialect);
                // A group that runs past the image's end (MCST: into the zero frames).
                if f + usize::from(cf.if_num) >= total {
                    write!(line, " if_num={}", cf.if_num).unwrap();
                }
                let n = cf.if_num;
                let plural = if n == 1 { "" } else { "s" };
                writeln!(
                    out,
                    "\n{line:<48} ; frame {f}, {n} instruction frame{plural}"
                )
                .unwrap();
            }
            FrameKind::Instr { .. } => {
                writeln!(out, "{:<48} ; frame {f}", ".if").unwrap();
                for line in frame_lines_in(&part.instr(p).words, dialect) {
                    writeln!(out, "    {line}").unwrap();
                }
            }
        }
    }
    out
}
