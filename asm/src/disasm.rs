//! Program image to source. The output re-assembles to the same bytes: reserved bits are
//! kept (`.word` for an instruction word with ignored bits set, `reserved=` and `r0_vect=`
//! for control frames), and only the trailing `ready` fill of a frame is left out, since
//! the assembler puts it back.

use gpu16_machine::isa::{Instr, FRAME_INSTRS};
use gpu16_machine::{ControlFrame, FrameKind, Program};
use std::fmt::Write;

const READY: u16 = 0xf000;

/// The `.cf` line of a control frame, without a comment.
pub fn control_line(cf: &ControlFrame) -> String {
    let mut s = format!(".cf mask=0x{:04x} fence={}", cf.active, cf.fence.name());
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
    let reserved: Vec<String> = std::iter::once((1, cf.reserved_header))
        .chain(cf.reserved.iter().enumerate().map(|(i, &b)| (i + 6, b)))
        .filter(|&(_, b)| b != 0)
        .map(|(off, b)| format!("{off}:0x{b:02x}"))
        .collect();
    if !reserved.is_empty() {
        write!(s, " reserved={}", reserved.join(",")).unwrap();
    }
    s
}

/// The instruction lines of one frame's words (trailing `ready` fill left out).
pub fn frame_lines(words: &[u16; FRAME_INSTRS]) -> Vec<String> {
    let used = words.iter().rposition(|&w| w != READY).map_or(0, |i| i + 1);
    let decoded: Vec<Option<Instr>> = words
        .iter()
        .map(|&w| Instr::decode(w).ok().filter(|i| i.encode() == w))
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
            let label = if targets[slot] {
                format!("L{slot}:")
            } else {
                String::new()
            };
            let text = match decoded[slot] {
                Some(Instr::Bnz { a, target }) if targets[usize::from(target)] => {
                    format!("bnz L{target}, r{a}")
                }
                Some(i) => i.to_string(),
                None => {
                    let w = words[slot];
                    match Instr::decode(w) {
                        Ok(i) => format!(
                            ".word 0x{w:04x}   ; {i} with reserved bits 0x{:04x} set",
                            w ^ i.encode()
                        ),
                        Err(e) => format!(".word 0x{w:04x}   ; {e}"),
                    }
                }
            };
            format!("{label:<6}{text}")
        })
        .collect()
}

/// Source text for `program`.
pub fn disassemble(program: &Program) -> String {
    let mut out = format!("; gpu16 program, {} frames\n", program.len());
    for f in 0..program.len() {
        match program.kind(f) {
            FrameKind::Control => {
                let cf = program.control(f);
                let line = control_line(&cf);
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
                for line in frame_lines(&program.instr(f).words) {
                    writeln!(out, "    {line}").unwrap();
                }
            }
        }
    }
    out
}
