//! `gpu16 run --json --tasks all` writes its object as the run goes (issue 12): the tasks
//! first, one by one, the other keys after the run. What is checked: the streamed object,
//! parsed, equals the one the library builds in memory (`gpu16::run`, whose report keeps
//! every task, and `output::json::run_document`: the path that does not stream), on every
//! example, generated programs of every profile, programs that break a rule, watchdog
//! stops, a timeout and the mcst dialect; and it is one valid object however the run ends.

mod common;

use common::{gpu16, s, scratch, stdout};
use gpu16::input::{load_memory, load_program_full, ProgramFormat};
use gpu16::machine::{Config, Dialect};
use gpu16::output::json::run_document;
use gpu16::BackendKind;
use serde_json::Value;
use std::path::{Path, PathBuf};
use std::process::Output;

/// What a run is given: the program, its memory image, its dialect and its watchdog.
struct Case {
    program: PathBuf,
    mem: Option<PathBuf>,
    dialect: Dialect,
    max_cycles: Option<u64>,
}

impl Case {
    fn new(program: impl Into<PathBuf>) -> Case {
        Case {
            program: program.into(),
            mem: None,
            dialect: Dialect::Spec,
            max_cycles: None,
        }
    }

    /// `gpu16 run --json --tasks all` of the case, on the default backend (auto).
    fn cli(&self) -> Output {
        let mut args = vec!["run", "-q", "--json", "--tasks", "all", s(&self.program)];
        if let Some(m) = &self.mem {
            args.extend(["--mem", s(m)]);
        }
        if self.dialect == Dialect::Mcst {
            args.extend(["--dialect", "mcst"]);
        }
        let limit = self.max_cycles.map(|n| n.to_string());
        if let Some(n) = &limit {
            args.extend(["--max-cycles", n]);
        }
        gpu16(&args)
    }

    /// The object the library builds in memory for the same run (no outputs asked for).
    fn in_memory(&self) -> Value {
        let format = ProgramFormat::of_input(&self.program, None).unwrap();
        let loaded = load_program_full(&self.program, format, self.dialect).unwrap();
        let (program, map) = (loaded.program, loaded.source_map);
        let memory = self
            .mem
            .as_ref()
            .map_or_else(Vec::new, |m| load_memory(m).unwrap());
        let mut config = Config::default();
        if let Some(n) = self.max_cycles {
            config.max_cycles = n;
        }
        let outcome = gpu16::run(BackendKind::Auto, &program, &memory, &config);
        let state = match &outcome {
            Ok(report) => report,
            Err(failure) => &failure.state,
        };
        assert!(
            state.tasks.len() as u64 == state.task_summary.tasks,
            "{}: the in-memory run kept every task",
            self.program.display()
        );
        run_document(&outcome, map.as_ref())
    }

    /// Run the case both ways and check they agree; return the streamed object.
    fn check(&self) -> Value {
        let name = self.program.display();
        let out = self.cli();
        let text = stdout(&out);
        assert!(
            text.starts_with("{\"tasks\":["),
            "{name}: not streamed: {}",
            &text[..text.len().min(200)]
        );
        assert_eq!(text.matches('\n').count(), 1, "{name}: one line");
        let streamed: Value = serde_json::from_str(&text)
            .unwrap_or_else(|e| panic!("{name}: not one JSON object ({e}): {text}"));
        let kept = self.in_memory();
        assert_eq!(streamed, kept, "{name}");
        // The status says what `error` says.
        let failed = streamed.get("error").is_some();
        assert_eq!(out.status.code(), Some(i32::from(failed)), "{name}");
        let tasks = streamed["tasks"].as_array().unwrap();
        assert_eq!(
            tasks.len() as u64,
            streamed["task_summary"]["tasks"].as_u64().unwrap(),
            "{name}: one record per issued task"
        );
        streamed
    }
}

fn examples() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("examples")
}

/// `gpu16 gen` with `args` into `dir`: the program and its memory image.
fn generate(dir: &Path, name: &str, args: &[&str]) -> Case {
    let program = dir.join(format!("{name}.bin"));
    let mem = dir.join(format!("{name}.mem"));
    let mut all = vec!["gen", "-o", s(&program), "--mem-out", s(&mem)];
    all.extend(args);
    let out = gpu16(&all);
    assert!(
        out.status.success(),
        "gen {args:?}: {}",
        common::stderr(&out)
    );
    Case {
        mem: Some(mem),
        ..Case::new(program)
    }
}

#[test]
fn every_example_streams_the_object_the_library_builds() {
    let mut seen = 0;
    for entry in std::fs::read_dir(examples()).unwrap() {
        let path = entry.unwrap().path();
        if path.extension().and_then(|e| e.to_str()) != Some("s") {
            continue;
        }
        let stem = path.file_stem().unwrap().to_str().unwrap().to_string();
        let mem = examples().join(format!("{stem}.mem.hex"));
        let case = Case {
            mem: mem.exists().then_some(mem),
            dialect: if stem.starts_with("mcst") {
                Dialect::Mcst
            } else {
                Dialect::Spec
            },
            ..Case::new(&path)
        };
        let v = case.check();
        assert!(v.get("error").is_none(), "{stem} finished: {}", v["error"]);
        assert!(!v["tasks"].as_array().unwrap().is_empty(), "{stem}");
        if stem == "vector_add" || stem == "mcst_bank0" {
            // Both start with `.cf mask=0xffff` and its `.if`: frame 1 on every core, the
            // first task, issued as the control frame (cycle 0) is done.
            let first = &v["tasks"][0];
            assert_eq!(
                (&first["frame"], &first["mask"], &first["fence"]),
                (&1.into(), &0xffff.into(), &"no".into()),
                "{stem}"
            );
        }
        seen += 1;
    }
    assert_eq!(seen, 11, "the examples in examples/");
}

#[test]
fn generated_programs_of_every_profile_stream_the_object_the_library_builds() {
    let d = scratch("json_stream", "profiles");
    for profile in ["alu", "memory", "atomics", "scheduler", "mixed"] {
        for seed in [1, 7, 42] {
            let name = format!("{profile}-{seed}");
            let seed = seed.to_string();
            let case = generate(&d, &name, &["--seed", &seed, "--profile", profile]);
            let v = case.check();
            assert!(v.get("error").is_none(), "{name}: {}", v["error"]);
            assert!(!v["tasks"].as_array().unwrap().is_empty(), "{name}");
        }
    }
    // A longer stream: many groups, past the 64-frame task memory.
    let case = generate(&d, "long", &["--seed", "3", "--groups", "400"]);
    let v = case.check();
    assert!(v["tasks"].as_array().unwrap().len() > 400);
}

#[test]
fn an_mcst_program_streams_the_object_the_library_builds() {
    let d = scratch("json_stream", "mcst");
    for seed in ["1", "2"] {
        let case = Case {
            dialect: Dialect::Mcst,
            ..generate(&d, seed, &["--seed", seed, "--dialect", "mcst"])
        };
        let v = case.check();
        assert_eq!(v["config"]["dialect"], "mcst");
        assert!(!v["tasks"].as_array().unwrap().is_empty());
    }
}

#[test]
fn runs_that_fault_mid_stream_end_in_one_object_with_their_error() {
    let d = scratch("json_stream", "faults");
    // Each of these programs breaks one rule of the machine after some tasks ran.
    for rule in [
        "st_sync-without-sequence",
        "st_sync-wrong-address",
        "ld_sync-while-holding",
        "access-while-holding",
        "ready-while-holding",
        "frame-end-while-holding",
    ] {
        for seed in ["1", "5"] {
            let name = format!("{rule}-{seed}");
            let case = generate(&d, &name, &["--seed", seed, "--break", rule]);
            let v = case.check();
            assert_eq!(v["error"]["rule"], rule, "{name}");
            assert!(!v["tasks"].as_array().unwrap().is_empty(), "{name}");
        }
    }
}

#[test]
fn watchdog_stops_end_in_one_object_with_unfinished_tasks() {
    let d = scratch("json_stream", "watchdog");
    // An endless loop, stopped by a low watchdog (the default 2^32 cycles take a minute).
    let case = Case {
        max_cycles: Some(100_000),
        ..generate(&d, "endless", &["--seed", "1", "--break", "endless-loop"])
    };
    let v = case.check();
    assert_eq!(v["error"]["rule"], "watchdog");
    // A finished program cut short: some tasks done, the one running has no end.
    let mut case = generate(&d, "cut", &["--seed", "2", "--profile", "alu"]);
    let full = case.check()["cycles"].as_u64().unwrap();
    case.max_cycles = Some(full / 2);
    let v = case.check();
    assert_eq!(v["error"]["rule"], "watchdog");
    let tasks = v["tasks"].as_array().unwrap();
    assert!(tasks.iter().any(|t| t["end"].is_u64()), "{tasks:?}");
    assert!(tasks.iter().any(|t| t["end"].is_null()), "{tasks:?}");
}

/// A long stream: 60,000 tasks of every core counting down 64 x 255, about 33,000 cycles
/// each (2 billion cycles: seconds even compiled), so a 0.3-second timeout stops it in the
/// middle.
const LONG: &str = "\
.repeat 60000
.cf mask=0xffff
.if
    set_const 64, r10
    set_const 1, r9
outer:
    set_const 255, r8
inner:
    sub r8, r9, r8
    bnz inner, r8
    sub r10, r9, r10
    bnz outer, r10
.end
";

#[test]
fn a_run_stopped_by_its_timeout_ends_in_one_object_with_the_tasks_so_far() {
    let d = scratch("json_stream", "timeout");
    let src = d.join("long.s");
    std::fs::write(&src, LONG).unwrap();
    let out = gpu16(&["run", "-q", "--json", "--timeout", "0.3", s(&src)]);
    assert_eq!(out.status.code(), Some(1), "{}", common::stderr(&out));
    let text = stdout(&out);
    assert!(text.starts_with("{\"tasks\":["));
    let v: Value = serde_json::from_str(&text).expect("one JSON object");
    assert_eq!(v["error"]["rule"], "timeout");
    let tasks = v["tasks"].as_array().unwrap();
    assert!(tasks.len() > 1, "{} tasks in 0.3 s", tasks.len());
    assert!(tasks.len() < 60_000, "{} tasks in 0.3 s", tasks.len());
    assert_eq!(
        tasks.len() as u64,
        v["task_summary"]["tasks"].as_u64().unwrap()
    );
    // The state is the one a watchdog at the cycle the stop reached gives, built in memory.
    let cycle = v["error"]["cycle"].as_u64().unwrap();
    let kept = Case {
        max_cycles: Some(cycle),
        ..Case::new(&src)
    }
    .in_memory();
    assert_eq!(kept["error"]["rule"], "watchdog");
    for key in [
        "tasks",
        "cycles",
        "registers",
        "memory",
        "task_summary",
        "stats",
    ] {
        assert_eq!(v[key], kept[key], "{key} at cycle {cycle}");
    }
}

#[test]
fn expected_memory_that_differs_ends_the_streamed_object_with_its_error() {
    let d = scratch("json_stream", "expect");
    let zeros = d.join("zeros.bin");
    std::fs::write(&zeros, [0u8; 4096]).unwrap();
    let program = examples().join("vector_add.s");
    let mem = examples().join("vector_add.mem.hex");
    let out = gpu16(&[
        "run",
        "-q",
        "--json",
        s(&program),
        "--mem",
        s(&mem),
        "--expect-mem",
        s(&zeros),
    ]);
    assert_eq!(out.status.code(), Some(1));
    let text = stdout(&out);
    assert!(text.starts_with("{\"tasks\":["));
    let mut v: Value = serde_json::from_str(&text).expect("one JSON object");
    assert_eq!(v["error"]["rule"], "expect");
    assert!(v["expect_mem"]["differences"].as_u64().unwrap() > 0);
    // The rest is the finished run's object.
    let object = v.as_object_mut().unwrap();
    object.remove("error");
    object.remove("expect_mem");
    let case = Case {
        mem: Some(mem),
        ..Case::new(program)
    };
    assert_eq!(v, case.in_memory());
}

#[test]
fn a_program_that_cannot_load_prints_its_own_object_and_nothing_streamed() {
    let d = scratch("json_stream", "load");
    let bad = d.join("bad.bin");
    std::fs::write(&bad, [0u8; 33]).unwrap();
    let out = gpu16(&["run", "-q", "--json", "--tasks", "all", s(&bad)]);
    assert_eq!(out.status.code(), Some(1));
    let v: Value = serde_json::from_str(&stdout(&out)).expect("one JSON object");
    assert_eq!(v["stage"], "load");
    assert!(v.get("tasks").is_none(), "{v}");
}

#[test]
fn tasks_summary_keeps_the_whole_object_and_an_exec_log_on_stdout_comes_first() {
    // Only --tasks all streams. With the execution log on stdout the object goes to a
    // temporary file as the run goes and is copied out after the log (issue 33: a long
    // run's tasks kept as values took gigabytes): the same object, tasks first.
    let program = examples().join("counter.s");
    let whole: Value =
        serde_json::from_str(&stdout(&gpu16(&["run", "-q", "--json", s(&program)]))).unwrap();
    for (extra, opening) in [
        (&["--tasks", "summary"][..], "{\"backend\":"),
        (&["--exec-log", "-"][..], "{\"tasks\":[{"),
    ] {
        let mut args = vec!["run", "-q", "--json", s(&program)];
        args.extend(extra);
        let text = stdout(&gpu16(&args));
        let at = text
            .find(opening)
            .unwrap_or_else(|| panic!("{extra:?}: {text}"));
        let object: Value = serde_json::from_str(&text[at..]).expect("one JSON object");
        if extra[0] == "--exec-log" {
            assert!(at > 0, "the log comes first");
            assert_eq!(object, whole);
        }
    }
}
