//! Comparing a run's final state with an expected one (`run --expect-mem`, `--expect-regs`):
//! the observer that remembers who last wrote each byte and register ([`Writers`]), the
//! differences ([`memory_diffs`], [`register_diffs`]) and how they are shown, as text
//! ([`memory_text`], [`register_text`]) and as `--json`'s `expect_mem` and `expect_regs`
//! ([`memory_json`], [`register_json`]). Reading the dumps is [`gpu16::input::dump`].
//!
//! Who wrote what is worked out from the instructions the run reports
//! ([`Observer::executed`]): a `st` or `st_sync` writes its byte, an instruction writes the
//! registers it names, and a control frame's R0 init (reported as
//! [`Event::ControlFrame`]) writes R0 of the cores it initialises. Asking for them makes the
//! run go one instruction at a time, so the observer is only used when a comparison is asked
//! for.

use gpu16_machine::MEMORY_BYTES;
use gpu16_machine::{Event, Executed, Observer, Program};
use serde_json::{json, Value};
use std::fmt::Write;
use std::path::Path;

/// The most differences the text shows; the rest are counted. JSON lists them all (at most
/// 4096 bytes or 256 registers).
pub(crate) const TEXT_LIMIT: usize = 100;

/// What last wrote a byte or a register.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct Writer {
    /// The core that wrote it (for R0 init, the core initialised).
    pub(crate) core: u8,
    /// The instruction frame it ran, or for R0 init the control frame.
    pub(crate) frame: usize,
    /// The instruction's IP; `None` for a control frame's R0 init.
    pub(crate) ip: Option<u8>,
    /// The cycle of the write.
    pub(crate) cycle: u64,
}

impl Writer {
    /// How the text names it: `core 0, frame 1, IP 4, cycle 9`, or
    /// `R0 init of control frame 0, cycle 0`.
    pub(crate) fn text(&self) -> String {
        match self.ip {
            Some(ip) => format!(
                "core {}, frame {}, IP {ip}, cycle {}",
                self.core, self.frame, self.cycle
            ),
            None => format!(
                "R0 init of control frame {}, cycle {}",
                self.frame, self.cycle
            ),
        }
    }

    /// The JSON object: `core`, `frame`, `ip` (`null` for R0 init), `cycle` and `kind`
    /// (`instruction` or `r0_init`).
    pub(crate) fn json(&self) -> Value {
        json!({
            "core": self.core,
            "frame": self.frame,
            "ip": self.ip,
            "cycle": self.cycle,
            "kind": if self.ip.is_some() { "instruction" } else { "r0_init" },
        })
    }
}

/// An observer that remembers the last writer of every byte of shared memory and every
/// register, as asked.
#[derive(Debug)]
pub struct Writers<'p> {
    program: &'p Program,
    memory: Option<Vec<Option<Writer>>>,
    registers: Option<Box<[[Option<Writer>; 16]; 16]>>,
    /// Each core's last R0 init, kept apart from the instructions' writes because a failed
    /// run reports its events again ([`Observer::rewind_events`]) but not its instructions.
    r0_init: [Option<Writer>; 16],
}

impl<'p> Writers<'p> {
    /// Track the writers of memory (if `memory`) and of registers (if `registers`) of a run
    /// of `program`.
    pub fn new(program: &'p Program, memory: bool, registers: bool) -> Writers<'p> {
        Writers {
            program,
            memory: memory.then(|| vec![None; MEMORY_BYTES]),
            registers: registers.then(|| Box::new([[None; 16]; 16])),
            r0_init: [None; 16],
        }
    }

    /// The last writer of byte `addr`, if tracked and written.
    pub(crate) fn of_byte(&self, addr: usize) -> Option<Writer> {
        self.memory.as_ref()?.get(addr).copied().flatten()
    }

    /// The last writer of `core`'s register `reg`, if tracked and written.
    pub(crate) fn of_register(&self, core: usize, reg: usize) -> Option<Writer> {
        let mut last = self
            .registers
            .as_ref()?
            .get(core)?
            .get(reg)
            .copied()
            .flatten();
        if reg == 0 {
            if let Some(init) = self.r0_init[core] {
                keep(&mut last, init);
            }
        }
        last
    }
}

/// Keep `w` unless what is there was written later (events and instructions are reported in
/// separate streams, so order by cycle).
fn keep(slot: &mut Option<Writer>, w: Writer) {
    if slot.is_none_or(|old| old.cycle <= w.cycle) {
        *slot = Some(w);
    }
}

impl Observer for Writers<'_> {
    const WANTS_EVENTS: bool = true;
    const WANTS_EXECUTED: bool = true;

    fn event(&mut self, event: Event) {
        let (Some(_), Event::ControlFrame { frame, cycle }) = (&self.registers, event) else {
            return;
        };
        let mask = self.program.control(frame).r0_init_mask();
        for core in (0..16u8).filter(|k| mask >> k & 1 == 1) {
            let w = Writer {
                core,
                frame,
                ip: None,
                cycle,
            };
            keep(&mut self.r0_init[usize::from(core)], w);
        }
    }

    fn rewind_events(&mut self, _cycle: u64) {
        self.r0_init = [None; 16];
    }

    fn executed(&mut self, e: &Executed) -> bool {
        let w = Writer {
            core: e.core,
            frame: e.frame,
            ip: Some(e.ip),
            cycle: e.cycle,
        };
        if let (Some(mem), Some((op, addr, _))) = (&mut self.memory, e.memory) {
            if !op.is_read() {
                keep(&mut mem[usize::from(addr) % MEMORY_BYTES], w);
            }
        }
        if let Some(regs) = &mut self.registers {
            for &(r, _) in e.writes.iter().flatten() {
                keep(&mut regs[usize::from(e.core & 15)][usize::from(r & 15)], w);
            }
        }
        true
    }
}

/// A byte of shared memory that differs from the expectation.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct MemoryDiff {
    /// Its address, 0..4095: bank `addr >> 8`, row `addr & 0xff`.
    pub(crate) addr: u16,
    /// The expected byte.
    pub(crate) expected: u8,
    /// The byte the run left.
    pub(crate) actual: u8,
    /// The last instruction that wrote it, if one did.
    pub(crate) writer: Option<Writer>,
}

/// A register that differs from the expectation.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct RegisterDiff {
    /// The core, 0..15.
    pub(crate) core: u8,
    /// The register, 0..15.
    pub(crate) reg: u8,
    /// The expected value.
    pub(crate) expected: u8,
    /// The value the run left.
    pub(crate) actual: u8,
    /// The last instruction (or R0 init) that wrote it, if one did.
    pub(crate) writer: Option<Writer>,
}

/// The bytes where `actual` differs from `expected` (both 4096 bytes), in address order.
pub fn memory_diffs(expected: &[u8], actual: &[u8], writers: Option<&Writers>) -> Vec<MemoryDiff> {
    (0..MEMORY_BYTES)
        .filter_map(|a| {
            let (e, x) = (
                expected.get(a).copied().unwrap_or(0),
                actual.get(a).copied().unwrap_or(0),
            );
            (e != x).then(|| MemoryDiff {
                addr: a as u16,
                expected: e,
                actual: x,
                writer: writers.and_then(|w| w.of_byte(a)),
            })
        })
        .collect()
}

/// The registers where `actual` differs from `expected`, core by core.
pub fn register_diffs(
    expected: &[[u8; 16]; 16],
    actual: &[[u8; 16]; 16],
    writers: Option<&Writers>,
) -> Vec<RegisterDiff> {
    let mut diffs = Vec::new();
    for core in 0..16 {
        for reg in 0..16 {
            let (e, x) = (expected[core][reg], actual[core][reg]);
            if e != x {
                diffs.push(RegisterDiff {
                    core: core as u8,
                    reg: reg as u8,
                    expected: e,
                    actual: x,
                    writer: writers.and_then(|w| w.of_register(core, reg)),
                });
            }
        }
    }
    diffs
}

/// The heading line: `expected memory (FILE): N differences` or `...: matches`.
fn heading(what: &str, file: &Path, n: usize, unit: &str) -> String {
    match n {
        0 => format!("{what} {}: all {unit} match\n", gpu16::shown::path(file)),
        1 => format!("{what} {}: 1 difference\n", gpu16::shown::path(file)),
        n => format!("{what} {}: {n} differences\n", gpu16::shown::path(file)),
    }
}

fn cut(s: &mut String, n: usize) {
    if n > TEXT_LIMIT {
        let _ = writeln!(s, "  ... and {} more", n - TEXT_LIMIT);
    }
}

/// The text of a memory comparison: a heading, then a line a differing byte (the first
/// [`TEXT_LIMIT`], then a count of the rest):
///
/// ```text
/// --expect-mem m.hex: 1 difference
///   addr  bank  row  expected  actual  last written by
///  0x021     0  0x21     0x22    0x21  core 0, frame 1, IP 1, cycle 6
/// ```
///
/// A byte no instruction wrote is `never written`, or `initial image` if it is inside the
/// `--mem` image (`initial_len` bytes long).
pub fn memory_text(file: &Path, diffs: &[MemoryDiff], initial_len: usize) -> String {
    let mut s = heading("--expect-mem", file, diffs.len(), "4096 bytes");
    if diffs.is_empty() {
        return s;
    }
    s += "   addr  bank   row  expected  actual  last written by\n";
    for d in diffs.iter().take(TEXT_LIMIT) {
        let by = match d.writer {
            Some(w) => w.text(),
            None if usize::from(d.addr) < initial_len => "never written (initial image)".into(),
            None => "never written".into(),
        };
        let _ = writeln!(
            s,
            "  {:#05x}  {:>4}  {:#04x}  {:>8}  {:>6}  {by}",
            d.addr,
            d.addr >> 8,
            d.addr & 0xff,
            format!("{:#04x}", d.expected),
            format!("{:#04x}", d.actual),
        );
    }
    cut(&mut s, diffs.len());
    s
}

/// The text of a register comparison, like [`memory_text`]: a line a differing register,
/// `core`, `reg`, `expected`, `actual` and its last writer (`never written`: zero from
/// reset).
pub fn register_text(file: &Path, diffs: &[RegisterDiff]) -> String {
    let mut s = heading("--expect-regs", file, diffs.len(), "256 registers");
    if diffs.is_empty() {
        return s;
    }
    s += "  core  reg  expected  actual  last written by\n";
    for d in diffs.iter().take(TEXT_LIMIT) {
        let by = d.writer.map_or("never written".into(), |w| w.text());
        let _ = writeln!(
            s,
            "  {:>4}  {:>3}  {:>8}  {:>6}  {by}",
            d.core,
            format!("r{}", d.reg),
            format!("{:#04x}", d.expected),
            format!("{:#04x}", d.actual),
        );
    }
    cut(&mut s, diffs.len());
    s
}

fn writer_json(w: Option<Writer>) -> Value {
    w.as_ref().map_or(Value::Null, Writer::json)
}

/// `--json`'s `expect_mem`: `file` (as given), `format` (`raw`, `hex` or `banks`), `files`
/// (those read, bank order), `differences` (the count) and `diffs`, every differing byte
/// as `{"addr", "bank", "row", "expected", "actual", "writer"}`, `writer` being
/// [`Writer::json`] or `null`.
pub fn memory_json(
    file: &Path,
    dump: &gpu16::input::dump::MemoryDump,
    diffs: &[MemoryDiff],
) -> Value {
    json!({
        "file": file.display().to_string(),
        "format": dump.format(),
        "files": dump.files.iter().map(|f| f.display().to_string()).collect::<Vec<_>>(),
        "differences": diffs.len(),
        "diffs": diffs.iter().map(|d| json!({
            "addr": d.addr,
            "bank": d.addr >> 8,
            "row": d.addr & 0xff,
            "expected": d.expected,
            "actual": d.actual,
            "writer": writer_json(d.writer),
        })).collect::<Vec<_>>(),
    })
}

/// `--json`'s `expect_regs`: `file`, `differences` and `diffs`, every differing register
/// as `{"core", "reg", "expected", "actual", "writer"}`.
pub fn register_json(file: &Path, diffs: &[RegisterDiff]) -> Value {
    json!({
        "file": file.display().to_string(),
        "differences": diffs.len(),
        "diffs": diffs.iter().map(|d| json!({
            "core": d.core,
            "reg": d.reg,
            "expected": d.expected,
            "actual": d.actual,
            "writer": writer_json(d.writer),
        })).collect::<Vec<_>>(),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_rewind_forgets_r0_inits_and_keeps_the_instructions() {
        use crate::run_output::testprog::{cf, iff, program, set};
        use gpu16_machine::engine::isa::Instr;
        use gpu16_machine::Fence;
        // CF0 inits R0 of core 1 (reported at 0, and again at 30 by a first run that went
        // past its failure); core 1's set_const r0 at 10 is an instruction.
        let p = program(&[
            cf(1, Fence::No, 0b10, &[(1, 7)]),
            iff(&[set(5, 0), Instr::Ready]),
        ]);
        let mut w = Writers::new(&p, false, true);
        let init = |cycle| Event::ControlFrame { frame: 0, cycle };
        w.event(init(0));
        let write = Executed {
            cycle: 10,
            core: 1,
            frame: 1,
            ip: 0,
            instr: set(5, 0),
            writes: [Some((0, 5)), None],
            memory: None,
            before: [0; 16],
        };
        assert!(w.executed(&write));
        w.event(init(30));
        assert_eq!(
            w.of_register(1, 0).map(|x| (x.ip, x.cycle)),
            Some((None, 30))
        );
        // The failure is at 20: the run reports again the events before it.
        w.rewind_events(20);
        w.event(init(0));
        assert_eq!(
            w.of_register(1, 0).map(|x| (x.ip, x.cycle)),
            Some((Some(0), 10))
        );
        assert_eq!(w.of_register(0, 0), None);
    }

    #[test]
    fn memory_text_names_bank_row_and_writer() {
        let w = Writer {
            core: 3,
            frame: 1,
            ip: Some(4),
            cycle: 9,
        };
        let diffs = [
            MemoryDiff {
                addr: 0x321,
                expected: 0x22,
                actual: 0x21,
                writer: Some(w),
            },
            MemoryDiff {
                addr: 0x005,
                expected: 1,
                actual: 0,
                writer: None,
            },
        ];
        let mut sorted = diffs;
        sorted.sort_by_key(|d| d.addr);
        assert_eq!(
            memory_text(Path::new("m.hex"), &sorted, 8),
            "--expect-mem m.hex: 2 differences\n\
             \x20  addr  bank   row  expected  actual  last written by\n\
             \x20 0x005     0  0x05      0x01    0x00  never written (initial image)\n\
             \x20 0x321     3  0x21      0x22    0x21  core 3, frame 1, IP 4, cycle 9\n"
        );
        assert_eq!(
            memory_text(Path::new("m.hex"), &[], 0),
            "--expect-mem m.hex: all 4096 bytes match\n"
        );
        let many = vec![sorted[0]; 103];
        let text = memory_text(Path::new("m"), &many, 0);
        assert_eq!(text.lines().count(), 2 + 100 + 1);
        assert!(text.ends_with("  ... and 3 more\n"));
    }
}
