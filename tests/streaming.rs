//! Programs read as a stream of frames (issue 12): a raw image run from a file or from stdin
//! is read frame by frame as the scheduler reaches it, and must give exactly what the same
//! image loaded whole gives: the same report, the same failure and the state it leaves (a
//! fault's state comes from a second run over the stream), and the same load error for a
//! malformed image, even one whose malformed part comes after the run has failed. A pipe
//! cut inside a frame is a load error naming the frame and its byte offset, and leaves no
//! output file.

mod common;

use common::{gpu16_with_stdin, s, scratch, stderr, stdout};
use gpu16::input::stream::FrameStream;
use gpu16::machine::{Config, Program, RunError, TaskLog};
use gpu16::{run_input_observed, run_observed, BackendKind, Engine, ProgramInput, Runner};
use gpu16_gen::{generate, generate_violating, Profile, Violation};
use std::path::Path;
use std::process::Output;

const PROFILES: [Profile; 5] = [
    Profile::Alu,
    Profile::Memory,
    Profile::Atomics,
    Profile::Scheduler,
    Profile::Mixed,
];

fn runners() -> [Runner; 3] {
    [
        BackendKind::Interp.into(),
        BackendKind::Auto.into(),
        Runner {
            backend: BackendKind::Jit,
            engine: Engine::Lockstep,
            hot: None,
        },
    ]
}

fn config() -> Config {
    Config {
        tasks: TaskLog::All,
        max_cycles: 200_000,
        ..Config::default()
    }
}

/// Run the image at `path` loaded whole and read as a stream; both outcomes must be equal.
fn assert_stream_equals_whole(path: &Path, memory: &[u8], what: &str) {
    let image = std::fs::read(path).unwrap();
    let program = Program::from_image(&image).unwrap();
    for runner in runners() {
        let whole = run_observed(runner, &program, memory, &config(), &mut ());
        let mut stream = FrameStream::open(path).unwrap();
        let streamed = run_input_observed(
            runner,
            ProgramInput::Stream(&mut stream),
            memory,
            &config(),
            &mut (),
        );
        assert_eq!(streamed, whole, "{what} on {}", runner.name());
    }
}

#[test]
fn a_streamed_run_equals_the_run_of_the_image_loaded_whole() {
    let dir = scratch("streaming", "equal");
    for seed in 0..12u64 {
        for profile in PROFILES {
            let g = generate(seed, 1 + (seed as usize % 24), profile);
            let path = dir.join(format!("{seed}-{profile:?}.bin"));
            std::fs::write(&path, &g.image).unwrap();
            assert_stream_equals_whole(&path, &g.memory, &format!("seed {seed} {profile:?}"));
        }
    }
}

#[test]
fn a_streamed_run_that_fails_leaves_the_state_the_whole_image_leaves() {
    // Faults take their state from a second run, which reads the stream again.
    let dir = scratch("streaming", "fails");
    let runtime = Violation::ALL.into_iter().filter(|v| !v.breaks_loading());
    let mut failed = 0;
    for seed in 0..6u64 {
        for v in runtime.clone() {
            let g = generate_violating(seed, 8, Profile::Mixed, v);
            let path = dir.join(format!("{seed}-{}.bin", v.name()));
            std::fs::write(&path, &g.image).unwrap();
            assert_stream_equals_whole(&path, &g.memory, &format!("seed {seed} {}", v.name()));
            let program = Program::from_image(&g.image).unwrap();
            failed += usize::from(
                gpu16::run(BackendKind::Interp, &program, &g.memory, &config()).is_err(),
            );
        }
    }
    assert!(
        failed >= 30,
        "only {failed} of 42 programs failed: the test lost its point"
    );
}

/// The load error of `image` loaded whole, and the one a streamed run of it gives.
fn both_load_errors(path: &Path, image: &[u8]) -> (String, String) {
    std::fs::write(path, image).unwrap();
    let whole = Program::from_image(image).unwrap_err().to_string();
    let streamed = match FrameStream::open(path) {
        Err(e) => e.message,
        Ok(mut stream) => {
            let r = run_input_observed(
                BackendKind::Interp,
                ProgramInput::Stream(&mut stream),
                &[],
                &config(),
                &mut (),
            );
            match r.map_err(|f| f.error) {
                Err(RunError::Load(e)) => e.to_string(),
                other => panic!("expected a load error, got {other:?}"),
            }
        }
    };
    (whole, streamed)
}

#[test]
fn a_malformed_stream_gives_the_load_error_of_the_whole_image() {
    let dir = scratch("streaming", "malformed");
    for seed in 0..8u64 {
        for v in Violation::ALL.into_iter().filter(|v| v.breaks_loading()) {
            let g = generate_violating(seed, 6, Profile::Mixed, v);
            let (whole, streamed) = both_load_errors(&dir.join("p.bin"), &g.image);
            assert_eq!(streamed, whole, "seed {seed} {}", v.name());
        }
    }
}

#[test]
fn a_run_that_fails_before_a_malformed_tail_still_refuses_the_image() {
    let dir = scratch("streaming", "tail");
    let g = generate_violating(3, 4, Profile::Mixed, Violation::StSyncWithoutSequence);
    let mut image = g.image.clone();
    let tail = image.len() / 32;
    let mut bad = [0u8; 32];
    bad[0] = 0xC0; // a control frame with fence 3
    image.extend_from_slice(&bad);
    let (whole, streamed) = both_load_errors(&dir.join("p.bin"), &image);
    assert_eq!(
        whole,
        format!("frame {tail}: control frame has the reserved fence value 3")
    );
    assert_eq!(streamed, whole);
}

/// The JSON document of a run without its wall-clock figures.
fn document(o: &Output) -> serde_json::Value {
    let mut v: serde_json::Value = serde_json::from_slice(&o.stdout)
        .unwrap_or_else(|e| panic!("{e}: {}{}", stdout(o), stderr(o)));
    if let Some(m) = v.as_object_mut() {
        m.remove("wall_ms");
        m.remove("program");
    }
    v
}

#[test]
fn stdin_runs_as_the_file_does_a_fault_included() {
    let dir = scratch("streaming", "stdin");
    for (seed, v) in [(1u64, None), (2, Some(Violation::StSyncWrongAddress))] {
        let g = match v {
            None => generate(seed, 20, Profile::Scheduler),
            Some(v) => generate_violating(seed, 20, Profile::Atomics, v),
        };
        let path = dir.join("p.bin");
        std::fs::write(&path, &g.image).unwrap();
        let file = common::gpu16(&["run", "--json", "-q", s(&path)]);
        let piped = gpu16_with_stdin(&["run", "--json", "-q", "-"], g.image.clone());
        assert_eq!(
            piped.status.code(),
            file.status.code(),
            "{}",
            stderr(&piped)
        );
        assert_eq!(document(&piped), document(&file));
        if v.is_some() {
            assert_eq!(file.status.code(), Some(1), "the violation faults");
        }
    }
}

#[test]
fn a_pipe_cut_inside_a_frame_names_the_frame_and_its_offset_and_writes_nothing() {
    let dir = scratch("streaming", "cut");
    let g = generate(5, 3, Profile::Alu);
    let frames = g.image.len() / 32;
    let mut image = g.image.clone();
    image.extend_from_slice(&[0u8; 10]);
    let dump = dir.join("mem.bin");
    let o = gpu16_with_stdin(&["run", "-q", "--dump-mem", s(&dump), "-"], image);
    assert_eq!(o.status.code(), Some(1));
    assert_eq!(
        stderr(&o).trim_end(),
        format!(
            "error: -: frame {frames} (byte offset {}) is cut short: the input ends after 10 of its 32 bytes",
            frames * 32
        )
    );
    assert!(stdout(&o).is_empty(), "no report: {}", stdout(&o));
    assert!(
        !dump.exists(),
        "no output file for a program that did not load"
    );
}

#[test]
fn an_empty_pipe_is_refused_as_an_empty_image() {
    let o = gpu16_with_stdin(&["run", "-q", "-"], Vec::new());
    assert_eq!(o.status.code(), Some(1));
    assert_eq!(stderr(&o).trim_end(), "error: -: image has no frames");
}

#[test]
fn format_reads_stdin_as_assembly_or_hex() {
    let counter = Path::new(env!("CARGO_MANIFEST_DIR")).join("examples/counter.s");
    let file = common::gpu16(&["run", "--json", "-q", s(&counter)]);
    let source = std::fs::read(&counter).unwrap();
    let piped = gpu16_with_stdin(&["run", "--json", "-q", "--format", "asm", "-"], source);
    assert_eq!(piped.status.code(), Some(0), "{}", stderr(&piped));
    let (a, b) = (document(&file), document(&piped));
    assert_eq!(a["cycles"], b["cycles"]);
    assert_eq!(a["memory"], b["memory"]);
    assert_eq!(a["registers"], b["registers"]);
    // Hand-worked: 16 cores add 1 ten times each to the byte at address 0.
    assert_eq!(&b["memory"].as_str().unwrap()[..2], "a0");

    // The same program as $readmemh words.
    let dir = scratch("streaming", "format");
    let bin = dir.join("counter.bin");
    let o = common::gpu16(&["asm", s(&counter), "-o", s(&bin)]);
    assert!(o.status.success(), "{}", stderr(&o));
    let words: String = std::fs::read(&bin)
        .unwrap()
        .chunks(2)
        .map(|w| format!("{:04x}\n", u16::from_le_bytes([w[0], w[1]])))
        .collect();
    let hex = gpu16_with_stdin(
        &["run", "--json", "-q", "--format", "hex", "-"],
        words.into_bytes(),
    );
    assert_eq!(hex.status.code(), Some(0), "{}", stderr(&hex));
    assert_eq!(document(&hex)["memory"], a["memory"]);
}

/// Core 1 counts r9 down from 200 while core 0, in the next task, faults at once: an engine
/// runs core 1 far past the fault before core 0 gets its turn, so the state the fault leaves
/// (core 1 mid-loop) can only come from the second run over the program.
const RUNS_AHEAD: &str = "
.cf mask=0x0002
.if
    set_const 200, r9
    set_const 1, r10
loop:
    sub r9, r10, r9
    bnz loop, r9
    ready
.cf mask=0x0001
.if
    xor r1, r1, r1
    st_sync [r1, r1], r1
    ready
";

#[test]
fn a_fault_read_from_stdin_leaves_the_state_of_its_cycle() {
    let dir = scratch("streaming", "ahead");
    let source = dir.join("ahead.s");
    std::fs::write(&source, RUNS_AHEAD).unwrap();
    let bin = dir.join("ahead.bin");
    let o = common::gpu16(&["asm", s(&source), "-o", s(&bin)]);
    assert!(o.status.success(), "{}", stderr(&o));
    let image = std::fs::read(&bin).unwrap();
    for backend in ["interp", "auto", "jit"] {
        let args = ["run", "--json", "-q", "--backend", backend];
        let file = common::gpu16(&[&args[..], &[s(&bin)]].concat());
        let piped = gpu16_with_stdin(&[&args[..], &["-"]].concat(), image.clone());
        assert_eq!(file.status.code(), Some(1));
        let (a, b) = (document(&file), document(&piped));
        assert_eq!(b, a, "{backend}");
        assert_eq!(b["error"]["rule"], "st_sync-without-sequence");
        // Core 1 had not finished its 200 trips when core 0 faulted, a few cycles in.
        let r9 = b["registers"][1][9].as_u64().unwrap();
        assert!(
            r9 > 150,
            "core 1's r9 is {r9}: the state is not the fault's cycle"
        );
    }
}

#[test]
fn a_json_run_that_streamed_tasks_before_a_malformed_group_ends_in_one_valid_object() {
    let g = generate(7, 40, Profile::Scheduler);
    let mut image = g.image.clone();
    let bad = image.len() / 32;
    let mut cf = [0u8; 32];
    cf[0] = 0x01; // one instruction frame announced, none follows
    image.extend_from_slice(&cf);
    let o = gpu16_with_stdin(&["run", "--json", "-q", "--tasks", "all", "-"], image);
    assert_eq!(o.status.code(), Some(1));
    let v = document(&o);
    assert!(v["tasks"].as_array().is_some_and(|t| !t.is_empty()), "{v}");
    assert_eq!(v["stage"], "load", "{v}");
    let message = v["error"].as_str().unwrap();
    assert!(
        message.contains(&format!(
            "frame {bad}: control frame announces 1 instruction frames but the image ends after 0 more"
        )),
        "{message}"
    );
}

#[test]
fn the_human_report_with_a_spooled_task_table_is_the_report_built_in_memory() {
    let dir = scratch("streaming", "human");
    for (seed, profile) in [
        (1u64, Profile::Scheduler),
        (2, Profile::Mixed),
        (3, Profile::Atomics),
    ] {
        let g = generate(seed, 30, profile);
        let (path, mem) = (dir.join("p.bin"), dir.join("m.bin"));
        std::fs::write(&path, &g.image).unwrap();
        std::fs::write(&mem, &g.memory).unwrap();
        let o = common::gpu16(&["run", "-q", s(&path), "--mem", s(&mem)]);
        assert!(o.status.success(), "{}", stderr(&o));
        let program = Program::from_image(&g.image).unwrap();
        let report = gpu16::run(BackendKind::Auto, &program, &g.memory, &Config::default())
            .expect("generated programs finish");
        assert!(report.tasks.len() > 30, "the table has lines to spool");
        assert_eq!(stdout(&o), gpu16::output::human::report(&report, &g.memory));
    }
}

/// A full `$TMPDIR` (here, a file-size limit the spool of stdin runs into, with SIGXFSZ
/// ignored so the write fails rather than killing the process) is an error about keeping
/// the stream, naming the frame and the directory, never an unreadable input.
#[cfg(unix)]
#[test]
fn a_spool_that_cannot_be_written_is_not_an_unreadable_input() {
    use std::io::Write as _;
    use std::process::{Command, Stdio};
    let dir = scratch("streaming", "spool-full");
    // 4,096 frames of a legal program, 128 KiB: the spool writes its first 64 KiB as frame
    // 2,047 (byte offset 65,504) is kept, past the 16 KiB the limit allows.
    let group = generate(5, 3, Profile::Alu).image;
    let mut image = Vec::new();
    while image.len() < 4096 * 32 {
        image.extend_from_slice(&group);
    }
    image.truncate(image.len() / group.len() * group.len());
    let mut child = Command::new("sh")
        .args([
            "-c",
            "trap '' XFSZ; ulimit -f 16 && exec \"$0\" run -q -",
            env!("CARGO_BIN_EXE_gpu16"),
        ])
        .env("TMPDIR", &dir)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let mut pipe = child.stdin.take().unwrap();
    let writer = std::thread::spawn(move || {
        let _ = pipe.write_all(&image);
    });
    let o = child.wait_with_output().unwrap();
    writer.join().unwrap();
    assert_eq!(o.status.code(), Some(1), "{}", stderr(&o));
    assert_eq!(
        stderr(&o).trim_end(),
        format!(
            "error: -: frame 2047 (byte offset 65504): cannot keep it: the temporary file in \
             $TMPDIR ({}) that keeps stdin for the run's second pass cannot take it: File too \
             large (os error 27)",
            dir.display()
        )
    );
    assert!(stdout(&o).is_empty(), "no report: {}", stdout(&o));
}
