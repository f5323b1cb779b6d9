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
//!   signals READY), `stall` (1 in cycles its memory access stalled).
//!
//! Only value changes are written, after a `$dumpvars` of the values in cycle 0.

use super::events::Recorder;
use gpu16_machine::Event;
use std::collections::BTreeMap;
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
    let end = cut.map_or(cycles, |c| c.min(cycles));
    let ops = ops(rec.events());
    let ids: Vec<String> = (0..SIGNALS).map(ident).collect();
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
        writeln!(w, "$upscope $end")?;
    }
    writeln!(w, "$upscope $end")?;
    writeln!(w, "$enddefinitions $end")?;

    let mut now = [0u64; SIGNALS];
    let mut dumped = now;
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
    dumped.copy_from_slice(&now);
    let mut last = 0;
    // A cut run stops before the cut cycle, whose events are incomplete; a whole run ends
    // with the cycle in which its last core became free.
    let shown = |t: u64| if cut.is_some() { t < end } else { t <= end };
    while i < ops.len() && shown(ops[i].0) {
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
    use crate::output::testprog::*;
    use crate::BackendKind;
    use gpu16_machine::{Config, Program};
    use std::collections::HashMap;

    fn dump(p: &Program) -> String {
        let mut rec = Recorder::new(10_000);
        let r =
            crate::run_observed(BackendKind::Interp, p, &[], &Config::default(), &mut rec).unwrap();
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
}
