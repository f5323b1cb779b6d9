//! The execution log (`run --exec-log FILE`): one line per executed instruction, in the
//! (cycle, core id) order of decisions.md, like QEMU's `-d exec` or Spike's `-l`:
//!
//! ```text
//! CYCLE CORE FRAME IP  instruction  effect
//! 7 0 1 2  ld [r0, r1], r5  r5=0x07 from 0x012
//! ```
//!
//! The instruction is written as `disasm` writes it (labels aside: a `bnz` names its target
//! IP). The effect lists each register written with its new value; a load adds `from` and
//! its address, a store is `mem[ADDR]=VALUE`; `ld_sync` adds `lock ADDR` and `st_sync`
//! `unlock ADDR`. The log holds at most `--exec-log-limit` lines (the first ones); a log
//! that was cut says so on stderr. Without a cut its line count equals `instructions`.

use gpu16_machine::engine::isa::MemOp;
use gpu16_machine::{Executed, Observer};
use std::io::{self, Write};

/// An observer that keeps the first `limit` executed instructions of a run.
#[derive(Debug)]
pub struct ExecLog {
    limit: usize,
    kept: Vec<Executed>,
    /// More instructions executed than were kept.
    cut: bool,
}

impl ExecLog {
    /// The default `--exec-log-limit`: lines kept.
    pub const DEFAULT_LIMIT: u64 = 1_000_000;
    /// The largest `--exec-log-limit`: each kept line is a record of about 48 bytes until
    /// the run ends, so 10,000,000 lines hold about half a gigabyte.
    pub const MAX_LIMIT: u64 = 10_000_000;

    /// A log keeping at most `limit` lines.
    pub fn new(limit: u64) -> ExecLog {
        ExecLog {
            limit: usize::try_from(limit.min(Self::MAX_LIMIT)).unwrap_or(usize::MAX),
            kept: Vec::new(),
            cut: false,
        }
    }

    /// The instructions kept, in execution order.
    pub fn kept(&self) -> &[Executed] {
        &self.kept
    }

    /// The note for stderr when the log was cut at its limit.
    pub fn cut_note(&self) -> Option<String> {
        self.cut.then(|| {
            format!(
                "note: the execution log was cut at its limit of {} lines (--exec-log-limit)",
                self.limit
            )
        })
    }

    /// Write every kept line.
    pub fn write(&self, w: &mut impl Write) -> io::Result<()> {
        for e in &self.kept {
            writeln!(w, "{}", line(e))?;
        }
        Ok(())
    }
}

impl Observer for ExecLog {
    const WANTS_EVENTS: bool = false;
    const WANTS_EXECUTED: bool = true;

    fn executed(&mut self, e: &Executed) -> bool {
        if self.kept.len() < self.limit {
            self.kept.push(*e);
            true
        } else {
            self.cut = true;
            false
        }
    }

    fn rewind_events(&mut self, _cycle: u64) {}
}

/// One line of the log.
pub fn line(e: &Executed) -> String {
    let mut text = format!("{} {} {} {}  {}", e.cycle, e.core, e.frame, e.ip, e.instr);
    let mut effect = Vec::new();
    for (r, v) in e.writes.iter().flatten() {
        match e.memory {
            Some((op, addr, _)) if op.is_read() => {
                effect.push(format!("r{r}=0x{v:02x} from 0x{addr:03x}"))
            }
            _ => effect.push(format!("r{r}=0x{v:02x}")),
        }
    }
    if let Some((op, addr, value)) = e.memory {
        if !op.is_read() {
            effect.push(format!("mem[0x{addr:03x}]=0x{value:02x}"));
        }
        match op {
            MemOp::LdSync => effect.push(format!("lock 0x{addr:03x}")),
            MemOp::StSync => effect.push(format!("unlock 0x{addr:03x}")),
            MemOp::Ld | MemOp::St => {}
        }
    }
    if !effect.is_empty() {
        text += "  ";
        text += &effect.join(" ");
    }
    text
}

#[cfg(test)]
mod tests {
    use super::*;
    use gpu16_machine::engine::isa::{AluOp, Instr};

    fn executed(
        instr: Instr,
        writes: [Option<(u8, u8)>; 2],
        memory: Option<(MemOp, u16, u8)>,
    ) -> Executed {
        Executed {
            cycle: 7,
            core: 3,
            frame: 1,
            ip: 2,
            instr,
            writes,
            memory,
            before: [0; 16],
        }
    }

    #[test]
    fn lines_name_what_each_instruction_did() {
        let add = Instr::Alu {
            op: AluOp::Add,
            a: 1,
            b: 2,
            c: 3,
        };
        assert_eq!(
            line(&executed(add, [Some((3, 9)), None], None)),
            "7 3 1 2  add r1, r2, r3  r3=0x09"
        );
        let ld_sync = Instr::Mem {
            op: MemOp::LdSync,
            a: 0,
            hi: 1,
            r: 5,
        };
        assert_eq!(
            line(&executed(
                ld_sync,
                [Some((5, 7)), None],
                Some((MemOp::LdSync, 0x112, 7))
            )),
            "7 3 1 2  ld_sync [r0, r1], r5  r5=0x07 from 0x112 lock 0x112"
        );
        let st = Instr::Mem {
            op: MemOp::StSync,
            a: 0,
            hi: 1,
            r: 5,
        };
        assert_eq!(
            line(&executed(st, [None, None], Some((MemOp::StSync, 0x112, 8)))),
            "7 3 1 2  st_sync [r0, r1], r5  mem[0x112]=0x08 unlock 0x112"
        );
        assert_eq!(
            line(&executed(Instr::Ready, [None, None], None)),
            "7 3 1 2  ready"
        );
    }

    #[test]
    fn the_log_keeps_its_first_lines_and_says_when_it_was_cut() {
        let mut log = ExecLog::new(2);
        let e = executed(Instr::Nop, [None, None], None);
        assert!(log.executed(&e));
        assert!(log.executed(&e));
        assert_eq!(log.cut_note(), None);
        assert!(!log.executed(&e));
        assert_eq!(log.kept().len(), 2);
        assert!(log.cut_note().unwrap().contains("limit of 2 lines"));
    }
}
