//! `--vcd FILE`: the run as a value-change dump (IEEE 1364 VCD, for GTKWave and friends), one
//! time unit a cycle, so an RTL engineer can lay it beside a waveform of their hardware.
//!
//! Signals (scope `gpu16`):
//! - `tp[5:0]`: the task pointer, the frame index of the last frame the scheduler took up
//!   (a CF in its cycle, an IF from the first cycle of its broadcast), modulo the 64 frames
//!   of the hardware task memory; `frame[31:0]` is the same index unwrapped.
//! - `exec_mask[15:0]`: the cores of the current task still running. The current task is
//!   the one that started last; its mask loads in its first cycle and a core's bit clears in
//!   the cycle after its last instruction.
//! - per core (scope `coreN`): `busy` (1 from the first to the last cycle of its part of a
//!   task, stalls included), `ready` (1 in the cycle of its part's last instruction, when it
//!   signals READY), `stall` (1 in cycles its memory access stalled), `ip[3:0]` (the IP of
//!   the instruction it executes in the cycle, or stalls on; between its parts of tasks the
//!   IP of its last instruction; 0 at reset) and, with `--vcd-regs`, `r0[7:0]`..`r15[7:0]`
//!   (the value the register holds in the cycle: an instruction's write, or a control
//!   frame's R0 init, shows from the cycle after it, as a clocked register file's would).
//!
//! Only value changes are written, after a `$dumpvars` of the values in cycle 0. The dump
//! stops where `--trace-limit` cut the events or the executed instructions, and says so.

use super::core_trace::CoreChanges;
use super::events::Recorder;
use gpu16_machine::Event;
use std::collections::{BTreeMap, HashMap};
use std::io::{self, Write};

const TP: usize = 0;
const FRAME: usize = 1;
const EXEC: usize = 2;
const BUSY: usize = 3;
const READY: usize = 4;
const STALL: usize = 5;

/// Signal index of a per-core signal.
fn core_sig(kind: usize, core: u8) -> usize {
    3 + usize::from(core) * 3 + (kind - BUSY)
}

const SIGNALS: usize = 3 + 16 * 3;

/// Signal index of core `core`'s IP: after the signals above, so their identifiers are the
/// same with or without the new ones.
fn ip_sig(core: u8) -> usize {
    SIGNALS + usize::from(core)
}

/// Signal index of core `core`'s register `reg`.
fn reg_sig(core: u8, reg: u8) -> usize {
    SIGNALS + 16 + usize::from(core) * 16 + usize::from(reg & 15)
}

/// Every signal, the registers included.
const ALL_SIGNALS: usize = SIGNALS + 16 + 16 * 16;

/// Order within a time of a register write: it shows the cycle before's instruction, which
/// is complete even at a cut (see [`write`]).
const EARLIER_CYCLE: u8 = 3;

/// The VCD identifier of signal `n`: printable characters from '!' on, base 94.
fn ident(mut n: usize) -> String {
    let mut s = String::new();
    loop {
        s.push(char::from(b'!' + (n % 94) as u8));
        n /= 94;
        if n == 0 {
            return s;
        }
        n -= 1;
    }
}

fn width(sig: usize) -> u32 {
    match sig {
        TP => 6,
        FRAME => 32,
        EXEC => 16,
        _ if sig >= SIGNALS + 16 => 8,
        _ if sig >= SIGNALS => 4,
        _ => 1,
    }
}

fn value(sig: usize, v: u64, id: &str) -> String {
    if width(sig) == 1 {
        format!("{v}{id}")
    } else {
        format!("b{v:b} {id}")
    }
}

/// (time, order within the time, signal, value): applying them sorted gives every
/// signal's value at every time. Clears come before sets so back-to-back intervals merge.
type Op = (u64, u8, usize, u64);

/// The per-core `ip` and register changes of `cores` (registers only if `registers`); a
/// core that stalled before an instruction shows its IP from the first stalled cycle.
fn core_ops(events: &[Event], cores: &CoreChanges, registers: bool) -> Vec<Op> {
    // (core, cycle retried) -> first stalled cycle; stalls back to back chain.
    let stalls: HashMap<(u8, u64), u64> = events
        .iter()
        .filter_map(|e| match *e {
            Event::Stall { core, from, to, .. } => Some(((core, to), from)),
            _ => None,
        })
        .collect();
    let mut ops = Vec::new();
    for c in &cores.changes {
        if let Some(ip) = c.ip {
            let mut t = c.cycle;
            while let Some(&from) = stalls.get(&(c.core, t)) {
                t = from;
            }
            ops.push((t, 1, ip_sig(c.core), u64::from(ip)));
        }
        if registers {
            for &(r, v) in c.writes.iter().flatten() {
                ops.push((c.cycle + 1, EARLIER_CYCLE, reg_sig(c.core, r), u64::from(v)));
            }
        }
    }
    ops
}

fn ops(events: &[Event]) -> Vec<Op> {
    let mut ops = Vec::new();
    // Per task (its frame): its first cycle and each core's last cycle.
    let mut tasks: BTreeMap<usize, (u64, Vec<(u8, u64)>)> = BTreeMap::new();
    for e in events {
        match *e {
            Event::ControlFrame { frame, cycle: t } | Event::Broadcast { frame, from: t, .. } => {
                ops.push((t, 1, TP, frame as u64 % 64));
                ops.push((t, 1, FRAME, frame as u64));
            }
            Event::CorePart {
                core,
                frame,
                start,
                end,
            } => {
                ops.push((start, 1, core_sig(BUSY, core), 1));
                ops.push((end + 1, 0, core_sig(BUSY, core), 0));
                ops.push((end, 1, core_sig(READY, core), 1));
                ops.push((end + 1, 0, core_sig(READY, core), 0));
                tasks
                    .entry(frame)
                    .or_insert((start, Vec::new()))
                    .1
                    .push((core, end));
            }
            Event::Stall { core, from, to, .. } => {
                ops.push((from, 1, core_sig(STALL, core), 1));
                ops.push((to, 0, core_sig(STALL, core), 0));
            }
            Event::SchedulerWait { .. } | Event::LockHeld { .. } => {}
        }
    }
    let mut order: Vec<(u64, usize)> = tasks.iter().map(|(&f, t)| (t.0, f)).collect();
    order.sort_unstable();
    for (i, &(start, frame)) in order.iter().enumerate() {
        let next = order.get(i + 1).map_or(u64::MAX, |n| n.0);
        let parts = &tasks[&frame].1;
        let mut mask: u16 = parts.iter().fold(0, |m, p| m | 1 << p.0);
        ops.push((start, 2, EXEC, u64::from(mask)));
        let mut ends: Vec<(u64, u8)> = parts.iter().map(|&(c, e)| (e, c)).collect();
        ends.sort_unstable();
        for (end, core) in ends {
            if end + 1 >= next {
                break;
            }
            mask &= !(1 << core);
            ops.push((end + 1, 2, EXEC, u64::from(mask)));
        }
    }
    ops.sort_by_key(|o| (o.0, o.1));
    ops
}

/// Write the dump of a run that took `cycles` cycles.
pub fn write(w: &mut impl Write, rec: &mut Recorder, cycles: u64) -> io::Result<()> {
    let cut = rec.cut_at();
    let cores = rec.cores().map(|(c, r)| (c.clone(), r));
    let cores_cut = cores.as_ref().and_then(|(c, _)| c.cut_at);
    let mut end = [Some(cycles), cut, cores_cut]
        .into_iter()
        .flatten()
        .min()
        .unwrap_or(cycles);
    if let Some(c) = cores_cut {
        // A stall that ends at or past the instructions' cut has no IP to show (the IP is
        // the instruction it retries): stop before it rather than show a wrong one.
        for e in rec.events() {
            if let Event::Stall { from, to, .. } = *e {
                if to >= c {
                    end = end.min(from);
                }
            }
        }
    }
    let is_cut = cut.is_some() || cores_cut.is_some();
    let mut ops = ops(rec.events());
    if let Some((changes, registers)) = &cores {
        ops.extend(core_ops(rec.events(), changes, *registers));
        ops.sort_by_key(|o| (o.0, o.1));
    }
    let registers = cores.as_ref().is_some_and(|c| c.1);
    let signals = match (&cores, registers) {
        (None, _) => SIGNALS,
        (Some(_), false) => SIGNALS + 16,
        (Some(_), true) => ALL_SIGNALS,
    };
    let ids: Vec<String> = (0..signals).map(ident).collect();
    writeln!(w, "$version gpu16 {} $end", env!("CARGO_PKG_VERSION"))?;
    writeln!(
        w,
        "$comment one time unit = one machine cycle; the run took {cycles} cycles $end"
    )?;
    if let Some(c) = cut {
        writeln!(
            w,
            "$comment events from cycle {c} on were cut by --trace-limit; the dump stops there $end"
        )?;
    }
    if let Some(c) = cores_cut {
        writeln!(
            w,
            "$comment the cores' executed instructions from cycle {c} on were cut by \
             --trace-limit; the dump stops at cycle {end} $end"
        )?;
    }
    writeln!(w, "$timescale 1ns $end")?;
    writeln!(w, "$scope module gpu16 $end")?;
    writeln!(w, "$var wire 6 {} tp [5:0] $end", ids[TP])?;
    writeln!(w, "$var wire 32 {} frame [31:0] $end", ids[FRAME])?;
    writeln!(w, "$var wire 16 {} exec_mask [15:0] $end", ids[EXEC])?;
    for core in 0..16u8 {
        writeln!(w, "$scope module core{core} $end")?;
        for (kind, name) in [(BUSY, "busy"), (READY, "ready"), (STALL, "stall")] {
            writeln!(w, "$var wire 1 {} {name} $end", ids[core_sig(kind, core)])?;
        }
        if cores.is_some() {
            writeln!(w, "$var wire 4 {} ip [3:0] $end", ids[ip_sig(core)])?;
        }
        if registers {
            for r in 0..16u8 {
                writeln!(w, "$var wire 8 {} r{r} [7:0] $end", ids[reg_sig(core, r)])?;
            }
        }
        writeln!(w, "$upscope $end")?;
    }
    writeln!(w, "$upscope $end")?;
    writeln!(w, "$enddefinitions $end")?;

    // A cut dump stops before the cut cycle, whose events are incomplete, but shows the
    // register writes of the cycle before it, complete; a whole run ends with the cycle in
    // which its last core became free.
    ops.retain(|&(t, order, _, _)| match is_cut {
        true => t < end || (t == end && order == EARLIER_CYCLE),
        false => t <= end,
    });
    let mut now = vec![0u64; signals];
    let mut i = 0;
    // Cycle 0 goes into $dumpvars; later cycles only as changes.
    while i < ops.len() && ops[i].0 == 0 {
        now[ops[i].2] = ops[i].3;
        i += 1;
    }
    writeln!(w, "#0")?;
    writeln!(w, "$dumpvars")?;
    for (sig, v) in now.iter().enumerate() {
        writeln!(w, "{}", value(sig, *v, &ids[sig]))?;
    }
    writeln!(w, "$end")?;
    let mut dumped = now.clone();
    let mut last = 0;
    while i < ops.len() {
        let t = ops[i].0;
        let mut touched = Vec::new();
        while i < ops.len() && ops[i].0 == t {
            now[ops[i].2] = ops[i].3;
            touched.push(ops[i].2);
            i += 1;
        }
        touched.sort_unstable();
        touched.dedup();
        let changed: Vec<usize> = touched
            .into_iter()
            .filter(|&s| now[s] != dumped[s])
            .collect();
        if changed.is_empty() {
            continue;
        }
        writeln!(w, "#{t}")?;
        for s in changed {
            writeln!(w, "{}", value(s, now[s], &ids[s]))?;
            dumped[s] = now[s];
        }
        last = t;
    }
    if last < end {
        writeln!(w, "#{end}")?;
    }
    w.flush()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::run_output::core_trace::CoreTrace;
    use crate::run_output::testprog::*;
    use gpu16::BackendKind;
    use gpu16_machine::{Config, Program};
    use std::collections::HashMap;

    fn dump(p: &Program) -> String {
        let mut rec = Recorder::new(10_000);
        let r =
            gpu16::run_observed(BackendKind::Interp, p, &[], &Config::default(), &mut rec).unwrap();
        let mut out = Vec::new();
        write(&mut out, &mut rec, r.cycles).unwrap();
        String::from_utf8(out).unwrap()
    }

    /// A value change: (time, "scope.name", value).
    type Change = (u64, String, u64);

    /// The $dumpvars values by name, and the changes after them.
    fn changes(vcd: &str) -> (HashMap<String, u64>, Vec<Change>) {
        let mut names = HashMap::new();
        let mut scope = Vec::new();
        let mut lines = vcd.lines();
        for line in lines.by_ref() {
            let f: Vec<&str> = line.split_whitespace().collect();
            match f[0] {
                "$scope" => scope.push(f[2].to_string()),
                "$upscope" => {
                    scope.pop();
                }
                "$var" => {
                    names.insert(f[3].to_string(), format!("{}.{}", scope.join("."), f[4]));
                }
                "$enddefinitions" => break,
                _ => {}
            }
        }
        let parse = |l: &str| -> (String, u64) {
            if let Some(rest) = l.strip_prefix('b') {
                let (v, id) = rest.split_once(' ').unwrap();
                (names[id].clone(), u64::from_str_radix(v, 2).unwrap())
            } else {
                (names[&l[1..]].clone(), u64::from(l.as_bytes()[0] - b'0'))
            }
        };
        let mut init = HashMap::new();
        let mut out = Vec::new();
        let mut t = 0;
        let mut in_dump = false;
        for l in lines {
            match l {
                "$dumpvars" => in_dump = true,
                "$end" => in_dump = false,
                _ if l.starts_with('#') => t = l[1..].parse().unwrap(),
                _ if in_dump => {
                    let (n, v) = parse(l);
                    init.insert(n, v);
                }
                _ => {
                    let (n, v) = parse(l);
                    out.push((t, n, v));
                }
            }
        }
        (init, out)
    }

    #[test]
    fn header_is_well_formed() {
        let v = dump(&lock_pair());
        assert!(v.contains("$timescale 1ns $end"));
        assert!(v.contains("$var wire 16 # exec_mask [15:0] $end"));
        let (init, _) = changes(&v);
        assert_eq!(init.len(), 3 + 16 * 3);
        assert!(init.values().all(|&x| x == 0));
        assert!(init.contains_key("gpu16.core15.stall"));
        let last = v.lines().rfind(|l| l.starts_with('#'));
        assert_eq!(last, Some("#12"), "{v}");
    }

    #[test]
    fn lock_pair_changes_by_hand() {
        // testprog::lock_pair: frame 1 broadcast from 1; cores 0, 1 start in 5; core 1
        // stalls 6-7; core 0's last instruction in 9, core 1's in 11.
        let (_, got) = changes(&dump(&lock_pair()));
        let c = |t: u64, n: &str, v: u64| (t, format!("gpu16.{n}"), v);
        let want = vec![
            c(1, "tp", 1),
            c(1, "frame", 1),
            c(5, "exec_mask", 0b11),
            c(5, "core0.busy", 1),
            c(5, "core1.busy", 1),
            c(6, "core1.stall", 1),
            c(8, "core1.stall", 0),
            c(9, "core0.ready", 1),
            c(10, "exec_mask", 0b10),
            c(10, "core0.busy", 0),
            c(10, "core0.ready", 0),
            c(11, "core1.ready", 1),
            c(12, "exec_mask", 0),
            c(12, "core1.busy", 0),
            c(12, "core1.ready", 0),
        ];
        let mut got = got;
        let mut want = want;
        got.sort();
        want.sort();
        assert_eq!(got, want);
    }

    #[test]
    fn exec_mask_follows_the_task_that_started_last() {
        // testprog::fences: frame 1 on core 0 runs 5-7, frame 3 on core 1 13-16, frame 5 on
        // core 2 in 21; tp visits 0, 1, 2, 3, 4, 5 at 0, 1, 8, 9, 13, 17.
        let (_, got) = changes(&dump(&fences()));
        let of = |n: &str| -> Vec<(u64, u64)> {
            got.iter()
                .filter(|x| x.1 == format!("gpu16.{n}"))
                .map(|x| (x.0, x.2))
                .collect()
        };
        assert_eq!(
            of("exec_mask"),
            [(5, 1), (8, 0), (13, 2), (17, 0), (21, 4), (22, 0)]
        );
        assert_eq!(of("tp"), [(1, 1), (8, 2), (9, 3), (13, 4), (17, 5)]);
    }
    /// The dump of `p` with the per-core signals, keeping at most `limit` changes of them.
    fn dump_cores(p: &Program, registers: bool, limit: usize) -> String {
        let mut obs = (Recorder::new(10_000), CoreTrace::new(Some(p), limit));
        let r =
            gpu16::run_observed(BackendKind::Interp, p, &[], &Config::default(), &mut obs).unwrap();
        let (mut rec, cores) = obs;
        rec.set_cores(cores.finish(), registers);
        let mut out = Vec::new();
        write(&mut out, &mut rec, r.cycles).unwrap();
        String::from_utf8(out).unwrap()
    }

    /// The changes of the per-core `ip` and `rN` signals, sorted.
    fn core_changes(vcd: &str) -> Vec<Change> {
        let (_, got) = changes(vcd);
        let mut got: Vec<Change> = got
            .into_iter()
            .filter(|c| c.1.contains(".ip") || c.1.contains(".r"))
            .filter(|c| !c.1.ends_with(".ready"))
            .collect();
        got.sort();
        got
    }

    #[test]
    fn lock_pair_ip_and_registers_by_hand() {
        // testprog::lock_pair, R0 = 1 on both cores from the CF in cycle 0 (shown from 1).
        // Core 0: set_const 5, r8 in 5 (r8 = 5 from 6); ld_sync [r8, r0], r9 of 0x105 in 6
        // (reads 0: no change); add r9, r8, r9 in 7 (r9 = 5 from 8); st_sync in 8; ready
        // in 9. Core 1: set_const in 5; its ld_sync stalls in 6 and 7 (IP 1 from 6) and
        // reads core 0's 5 in 8 (from 9); add in 9 (r9 = 10 from 10); st_sync 10; ready 11.
        let got = core_changes(&dump_cores(&lock_pair(), true, 10_000));
        let c = |t: u64, n: &str, v: u64| (t, format!("gpu16.{n}"), v);
        let mut want = vec![
            c(1, "core0.r0", 1),
            c(6, "core0.r8", 5),
            c(6, "core0.ip", 1),
            c(7, "core0.ip", 2),
            c(8, "core0.r9", 5),
            c(8, "core0.ip", 3),
            c(9, "core0.ip", 4),
            c(1, "core1.r0", 1),
            c(6, "core1.r8", 5),
            c(6, "core1.ip", 1),
            c(9, "core1.r9", 5),
            c(9, "core1.ip", 2),
            c(10, "core1.r9", 10),
            c(10, "core1.ip", 3),
            c(11, "core1.ip", 4),
        ];
        want.sort();
        assert_eq!(got, want);
    }

    #[test]
    fn without_registers_only_the_ip_is_added() {
        let v = dump_cores(&lock_pair(), false, 10_000);
        let (init, _) = changes(&v);
        assert_eq!(init.len(), 3 + 16 * 4);
        assert!(init.contains_key("gpu16.core15.ip"));
        assert!(v.contains(" ip [3:0] $end"));
        assert!(!v.contains(" r0 [7:0] $end"));
        // The signals of before keep their identifiers.
        assert!(v.contains("$var wire 16 # exec_mask [15:0] $end"));
        let with = dump_cores(&lock_pair(), true, 10_000);
        assert_eq!(changes(&with).0.len(), 3 + 16 * 4 + 16 * 16);
    }

    #[test]
    fn a_cut_stops_the_dump_and_says_where() {
        // Limit 5: the changes by cycle are the two R0 inits (0), the set_consts (5, 5),
        // core 0's ld_sync (6), its add (7), ...: the sixth is in cycle 7, so the cut is
        // there. Core 1's stall from 6 retries at 8, past the cut: its IP in 6 is not
        // known, so the dump stops at 6. Limit 3: the cut is at 5, where the dump stops.
        let v = dump_cores(&lock_pair(), true, 5);
        assert!(
            v.contains("executed instructions from cycle 7 on were cut by --trace-limit; the dump stops at cycle 6"),
            "{v}"
        );
        assert_eq!(v.lines().rfind(|l| l.starts_with('#')), Some("#6"));
        let c = |t: u64, n: &str, v: u64| (t, format!("gpu16.{n}"), v);
        let mut want = vec![
            c(1, "core0.r0", 1),
            c(1, "core1.r0", 1),
            c(6, "core0.r8", 5),
            c(6, "core1.r8", 5),
            c(6, "core0.ip", 1),
        ];
        want.sort();
        // Cycle 6 itself is not shown (the cut dump stops before it), except the register
        // writes of cycle 5, complete.
        want.retain(|x| x.0 < 6 || x.1.contains(".r"));
        assert_eq!(core_changes(&v), want);
        let v = dump_cores(&lock_pair(), true, 3);
        assert!(v.contains("from cycle 5 on were cut"), "{v}");
        assert_eq!(v.lines().rfind(|l| l.starts_with('#')), Some("#5"));
    }
}
