//! The VCD's per-core `ip` and, with `--vcd-regs`, registers, through the built binary:
//! values worked out by hand for tiny programs in both dialects, the registers a dump ends
//! with equal to the run's final registers on every example, and `--vcd-regs` refused
//! without `--vcd`.

mod common;

use common::{gpu16, s, stderr};
use std::collections::HashMap;
use std::path::{Path, PathBuf};

fn scratch(test: &str) -> PathBuf {
    common::scratch("vcd_cores", test)
}

/// A value change: (time, "coreN.name", value).
type Change = (u64, String, u64);

/// (time, "coreN.name", value) of every change after `$dumpvars`, and the `$dumpvars`
/// values, read with a parser of its own.
fn read_vcd(text: &str) -> (HashMap<String, u64>, Vec<Change>) {
    let mut names = HashMap::new();
    let mut scope = String::new();
    let mut lines = text.lines();
    for l in lines.by_ref() {
        let f: Vec<&str> = l.split_whitespace().collect();
        match f.first().copied() {
            Some("$scope") => scope = f[2].to_string(),
            Some("$upscope") => scope = "gpu16".into(),
            Some("$var") => {
                names.insert(f[3].to_string(), format!("{scope}.{}", f[4]));
            }
            Some("$enddefinitions") => break,
            _ => {}
        }
    }
    let value = |l: &str| -> (String, u64) {
        match l.strip_prefix('b') {
            Some(rest) => {
                let (v, id) = rest.split_once(' ').unwrap();
                (names[id].clone(), u64::from_str_radix(v, 2).unwrap())
            }
            None => (names[&l[1..]].clone(), u64::from(l.as_bytes()[0] - b'0')),
        }
    };
    let (mut init, mut changes, mut t, mut dumping) = (HashMap::new(), Vec::new(), 0, false);
    for l in lines {
        match l {
            "$dumpvars" => dumping = true,
            "$end" => dumping = false,
            _ if l.starts_with('#') => t = l[1..].parse().unwrap(),
            _ if dumping => {
                let (n, v) = value(l);
                init.insert(n, v);
            }
            _ => {
                let (n, v) = value(l);
                changes.push((t, n, v));
            }
        }
    }
    (init, changes)
}

/// Run `args` with `--vcd` (and `--vcd-regs`) and give the dump's per-core `ip` and `rN`
/// changes, sorted.
fn core_changes(dir: &Path, args: &[&str]) -> Vec<Change> {
    let vcd = dir.join("w.vcd");
    let mut all = vec!["run", "-q"];
    all.extend_from_slice(args);
    all.extend_from_slice(&["--vcd", s(&vcd), "--vcd-regs"]);
    let o = gpu16(&all);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    let (_, changes) = read_vcd(&std::fs::read_to_string(&vcd).unwrap());
    let mut got: Vec<_> = changes
        .into_iter()
        .filter(|(_, n, _)| n.starts_with("core") && (n.contains(".ip") || n.contains(".r")))
        .filter(|(_, n, _)| !n.ends_with(".ready"))
        .collect();
    got.sort();
    got
}

fn c(t: u64, n: &str, v: u64) -> Change {
    (t, n.to_string(), v)
}

/// Two cores, three instructions, R0 init 5 and 7: `add r0, r0, r9` (IP 0), `set_const 0,
/// r10` (IP 1), `ready` (IP 2).
const TWO_CORES: &str =
    ".cf mask=0b11 r0=0:5,1:7\n.if\n    add r0, r0, r9\n    set_const 0, r10\n    ready\n";

#[test]
fn spec_two_cores_three_instructions_by_hand() {
    let d = scratch("spec");
    let src = d.join("two.s");
    std::fs::write(&src, TWO_CORES).unwrap();
    // Spec timing: the CF in cycle 0 sets r0 (shown from 1); broadcast 1-4; both cores run
    // IP 0 in 5, IP 1 in 6, IP 2 in 7. add: r9 = 10 and 14, shown from 6. set_const 0, r10
    // (d >= 8): r10 = 0, no change. The IP is 0 at reset and in 5: no change until 6.
    let mut want = vec![
        c(1, "core0.r0", 5),
        c(1, "core1.r0", 7),
        c(6, "core0.ip", 1),
        c(6, "core1.ip", 1),
        c(6, "core0.r9", 10),
        c(6, "core1.r9", 14),
        c(7, "core0.ip", 2),
        c(7, "core1.ip", 2),
    ];
    want.sort();
    assert_eq!(core_changes(&d, &[s(&src)]), want);
}

#[test]
fn mcst_two_cores_three_instructions_by_hand() {
    let d = scratch("mcst");
    let src = d.join("two.s");
    std::fs::write(&src, format!("{TWO_CORES}.halt\n")).unwrap();
    // MCST default timing: CF in 0, broadcast 1-4; R0 init on delivery in 4 (shown from
    // 5); both cores run IP 0 in 5, IP 1 in 6, IP 2 in 7. set_const 0, r10 loads the core
    // id in this dialect (d >= 8): core 1's r10 = 1 from 7.
    let mut want = vec![
        c(5, "core0.r0", 5),
        c(5, "core1.r0", 7),
        c(6, "core0.ip", 1),
        c(6, "core1.ip", 1),
        c(6, "core0.r9", 10),
        c(6, "core1.r9", 14),
        c(7, "core0.ip", 2),
        c(7, "core1.ip", 2),
        c(7, "core1.r10", 1),
    ];
    want.sort();
    assert_eq!(core_changes(&d, &["--dialect", "mcst", s(&src)]), want);
}

#[test]
fn mcst_rtl_bank_waits_show_the_waiting_ip() {
    let d = scratch("mcst_rtl");
    // examples/mcst_bank0.s: every core runs set_const 0, r8 (IP 0; r8 = core id), st
    // (IP 1), ready (IP 2), starting in cycle 8 (its task table). Bank 0 serves one store a
    // cycle, round robin from core 1: core k >= 1 stores in 8 + k, core 0 last, in 24; each
    // waits at IP 1 from 9 and readies the cycle after its store.
    let got = core_changes(
        &d,
        &[
            "examples/mcst_bank0.s",
            "--dialect",
            "mcst",
            "--timing",
            "mcst-rtl",
        ],
    );
    let mut want = Vec::new();
    for k in 0..16u64 {
        let store = if k == 0 { 24 } else { 8 + k };
        let core = |n: &str| format!("core{k}.{n}");
        want.push((9, core("ip"), 1));
        want.push((store + 1, core("ip"), 2));
        if k != 0 {
            want.push((9, core("r8"), k));
        }
    }
    want.sort();
    assert_eq!(got, want);
}

#[test]
fn registers_a_dump_ends_with_are_the_runs_final_ones() {
    let d = scratch("final");
    let examples = Path::new(env!("CARGO_MANIFEST_DIR")).join("examples");
    let mut ran = 0;
    for entry in std::fs::read_dir(&examples).unwrap() {
        let p = entry.unwrap().path();
        if p.extension().is_none_or(|e| e != "s") {
            continue;
        }
        let name = p.file_stem().unwrap().to_str().unwrap().to_string();
        let mut args = vec![
            "run".to_string(),
            "-q".into(),
            s(&p).into(),
            "--json".into(),
        ];
        let mem = examples.join(format!("{name}.mem.hex"));
        if mem.exists() {
            args.extend(["--mem".into(), s(&mem).into()]);
        }
        if name.starts_with("mcst") {
            args.extend(["--dialect".into(), "mcst".into()]);
        }
        let vcd = d.join(format!("{name}.vcd"));
        args.extend(["--vcd".into(), s(&vcd).into(), "--vcd-regs".into()]);
        args.extend(["--trace-limit".into(), "10000000".into()]);
        let args: Vec<&str> = args.iter().map(String::as_str).collect();
        let o = gpu16(&args);
        let report: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
        if report.get("error").is_some() {
            continue;
        }
        let text = std::fs::read_to_string(&vcd).unwrap();
        assert!(!text.contains("were cut"), "{name}");
        let (init, changes) = read_vcd(&text);
        let mut regs = init;
        for (_, n, v) in changes {
            regs.insert(n, v);
        }
        for core in 0..16 {
            for r in 0..16 {
                let got = regs[&format!("core{core}.r{r}")];
                let want = report["registers"][core][r].as_u64().unwrap();
                assert_eq!(got, want, "{name}: core {core} r{r}");
            }
        }
        ran += 1;
    }
    assert!(ran >= 8, "only {ran} examples ran");
}

#[test]
fn vcd_regs_without_vcd_is_a_usage_error() {
    let o = gpu16(&["run", "examples/counter.s", "--vcd-regs"]);
    assert_eq!(o.status.code(), Some(2));
    let e = stderr(&o);
    assert!(
        e.contains("--vcd-regs") && e.contains("--vcd <FILE>"),
        "{e}"
    );
}

#[test]
fn a_cut_record_is_named_in_the_vcd_and_the_trace() {
    // prefix_sum reports 191 events; --trace-limit 100 keeps fewer than twice the limit, so
    // the recorder cuts only when its events are first read: the files must still say so.
    let d = scratch("cut");
    let (vcd, trace) = (d.join("p.vcd"), d.join("p.json"));
    let o = gpu16(&[
        "run",
        "-q",
        "examples/prefix_sum.s",
        "--mem",
        "examples/prefix_sum.mem.hex",
        "--trace-limit",
        "100",
        "--vcd",
        s(&vcd),
        "--trace",
        s(&trace),
    ]);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    let note = stderr(&o);
    assert!(
        note.contains("kept the 100 events before cycle 350"),
        "{note}"
    );
    let v = std::fs::read_to_string(&vcd).unwrap();
    assert!(v.contains("events from cycle 350 on were cut"), "{v}");
    // The cores' record (100 changes) is cut too, at a cycle C no later than the events':
    // the dump ends at C and says so.
    let line = v
        .lines()
        .find(|l| l.contains("executed instructions from cycle"))
        .expect("the cores' cut is named");
    let c: u64 = line.split_whitespace().nth(7).unwrap().parse().unwrap();
    assert!(c <= 350, "{line}");
    assert!(
        line.ends_with(&format!("the dump stops at cycle {c} $end")),
        "{line}"
    );
    let last = format!("#{c}");
    assert_eq!(v.lines().rfind(|l| l.starts_with('#')), Some(last.as_str()));
    let t: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(&trace).unwrap()).unwrap();
    assert_eq!(t["otherData"]["truncated"], true, "{}", t["otherData"]);
}

#[test]
fn mcst_rtl_bank_waits_are_stalls_in_the_vcd_and_the_timeline() {
    // examples/mcst_bank0.s under mcst-rtl: core k >= 1 waits for bank 0 from 9 to its store
    // in 8 + k, core 0 until its store in 24 (see the test above).
    let d = scratch("mcst_stalls");
    let vcd = d.join("w.vcd");
    let o = gpu16(&[
        "run",
        "-q",
        "examples/mcst_bank0.s",
        "--dialect",
        "mcst",
        "--timing",
        "mcst-rtl",
        "--vcd",
        s(&vcd),
        "--timeline",
        "--width",
        "8",
    ]);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    let (_, changes) = read_vcd(&std::fs::read_to_string(&vcd).unwrap());
    let stall = |k: u64| -> Vec<(u64, u64)> {
        let name = format!("core{k}.stall");
        changes
            .iter()
            .filter(|(_, n, _)| *n == name)
            .map(|(t, _, v)| (*t, *v))
            .collect()
    };
    assert_eq!(stall(0), [(9, 1), (24, 0)]);
    assert_eq!(stall(1), []);
    for k in 2..16 {
        assert_eq!(stall(k), [(9, 1), (8 + k, 0)], "core {k}");
    }
    // Every stalled core's row marks a stall even at 8 columns for 26 cycles.
    let chart = common::stdout(&o);
    for k in 0..16 {
        let row = chart
            .lines()
            .find(|l| l.starts_with(&format!("core {k} ")))
            .unwrap();
        assert_eq!(row.contains('*'), k != 1, "{row}");
    }
}
