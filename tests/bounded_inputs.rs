//! Hostile inputs through the built binary (issue 14): every input file and every flag that
//! asks for a resource has a documented limit, and going past it fails fast with a message
//! naming the file or flag and the limit. A bad input file exits 1 (2 for `diff`, which then
//! cannot compare); a flag out of range is a usage error, 2. Each command runs under a
//! deadline, so a hang fails the test instead of stalling the suite.

mod common;

use common::{s, scratch};
use std::io::Read;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

/// Far more than any of these commands needs, even in a debug build on a busy machine; the
/// hangs they guard against never end.
const DEADLINE: Duration = Duration::from_secs(60);

/// A finished command: its exit status and what it wrote on stderr.
struct Ran {
    status: Option<i32>,
    stderr: String,
}

/// Run the built binary with `args`, killing it and failing the test if it is still running
/// at the deadline.
fn gpu16(args: &[&str]) -> Ran {
    let mut child = Command::new(env!("CARGO_BIN_EXE_gpu16"))
        .args(args)
        .env_remove("COLUMNS")
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .expect("the binary starts");
    // Drained on a thread, so a chatty child cannot block on a full pipe.
    let mut pipe = child.stderr.take().unwrap();
    let reader = std::thread::spawn(move || {
        let mut text = String::new();
        let _ = pipe.read_to_string(&mut text);
        text
    });
    let started = Instant::now();
    let status = loop {
        if let Some(status) = child.try_wait().expect("the child can be waited for") {
            break status;
        }
        if started.elapsed() > DEADLINE {
            let _ = child.kill();
            let _ = child.wait();
            panic!("gpu16 {args:?} still ran after {DEADLINE:?}: it hangs");
        }
        std::thread::sleep(Duration::from_millis(10));
    };
    Ran {
        status: status.code(),
        stderr: reader.join().unwrap(),
    }
}

/// Run `args` and check the exit status and that stderr holds every one of `names`.
fn expect(args: &[&str], status: i32, names: &[&str]) {
    let ran = gpu16(args);
    assert_eq!(ran.status, Some(status), "{args:?}: {}", ran.stderr);
    for name in names {
        assert!(
            ran.stderr.contains(name),
            "{args:?}: no `{name}` in: {}",
            ran.stderr
        );
    }
    assert!(!ran.stderr.contains("panicked"), "{args:?}: {}", ran.stderr);
}

/// A file of `len` bytes that costs no disk: its length is set, nothing is written.
fn sparse(dir: &Path, name: &str, len: u64) -> PathBuf {
    let p = dir.join(name);
    std::fs::File::create(&p).unwrap().set_len(len).unwrap();
    p
}

fn example(name: &str) -> String {
    format!("{}/examples/{name}", env!("CARGO_MANIFEST_DIR"))
}

#[test]
fn oversized_and_endless_input_files_fail_fast_naming_the_file_and_the_limit() {
    let d = scratch("bounded_inputs", "sizes");
    let counter = example("counter.s");
    let mib = 1u64 << 20;

    // Memory: 4096 raw bytes load; one more is refused, as is an endless device.
    let full = d.join("full.bin");
    std::fs::write(&full, [0u8; 4096]).unwrap();
    expect(&["run", &counter, "-q", "--mem", s(&full)], 0, &[]);
    let over = d.join("over.bin");
    std::fs::write(&over, [0u8; 4097]).unwrap();
    let limit = "at most 4096 bytes";
    expect(
        &["run", &counter, "--mem", s(&over)],
        1,
        &["over.bin: too large", limit, "this file has 4097"],
    );
    if Path::new("/dev/zero").exists() {
        expect(
            &["run", &counter, "--mem", "/dev/zero"],
            1,
            &["/dev/zero: too large", limit],
        );
        // diff cannot compare without its memory: status 2, the same message.
        expect(
            &["diff", &counter, "--mem", "/dev/zero"],
            2,
            &["/dev/zero: too large", limit],
        );
    }
    let mem_hex = sparse(&d, "big.mem.hex", mib + 1);
    expect(
        &["run", &counter, "--mem", s(&mem_hex)],
        1,
        &["big.mem.hex: too large", "a .hex memory text", "(1 MiB)"],
    );

    // Programs, each past its own limit by a little.
    let image = sparse(&d, "big.bin", (1 << 30) + 32);
    expect(
        &["run", s(&image)],
        1,
        &["big.bin: too large", "a program image", "(1 GiB)"],
    );
    let hex = sparse(&d, "big.hex", 256 * mib + 1);
    expect(
        &["disasm", s(&hex)],
        1,
        &["big.hex: too large", "a .hex program text", "(256 MiB)"],
    );
    let source = sparse(&d, "big.s", 16 * mib + 1);
    for command in ["run", "asm", "check"] {
        expect(
            &[command, s(&source)],
            1,
            &["big.s", "too large", "an assembly source", "(16 MiB)"],
        );
    }
    // An included file is read within the same limit.
    let includer = d.join("includer.s");
    std::fs::write(&includer, ".include \"big.s\"\n").unwrap();
    expect(
        &["check", s(&includer)],
        1,
        &["cannot include", "big.s", "too large"],
    );
    std::fs::remove_dir_all(&d).unwrap();
}

#[test]
fn hex_addresses_past_the_image_are_refused_naming_line_column_and_limit() {
    let d = scratch("bounded_inputs", "hex");
    // The reported 14-byte program: it made the process allocate 400 MB.
    let prog = d.join("far.hex");
    std::fs::write(&prog, "@3ffffff 0000\n").unwrap();
    expect(
        &["run", s(&prog)],
        1,
        &[
            "far.hex: line 1, column 1",
            "`@3ffffff`",
            "0x3fffff",
            "4194304 words",
        ],
    );
    let mem = d.join("far.mem.hex");
    std::fs::write(&mem, "00 01\n  @1000 02\n").unwrap();
    expect(
        &["run", &example("counter.s"), "--mem", s(&mem)],
        1,
        &[
            "far.mem.hex: line 2, column 3",
            "`@1000`",
            "past the last address 0xfff",
        ],
    );
    std::fs::remove_dir_all(&d).unwrap();
}

#[test]
fn generator_sizes_are_bounded_at_parsing() {
    for (args, flag, limit) in [
        (
            &[
                "gen",
                "--seed",
                "1",
                "--groups",
                "4294967296",
                "-o",
                "x.bin",
            ][..],
            "--groups",
            "65536",
        ),
        (
            &["gen", "--seed", "1", "--groups", "65537", "-o", "x.bin"][..],
            "--groups",
            "65536",
        ),
        (
            &["fuzz", "--count", "281474976710657"][..],
            "--count",
            "281474976710656",
        ),
    ] {
        expect(args, 2, &[flag, limit]);
    }
}

#[test]
fn thread_counts_and_resource_flags_are_bounded_at_parsing() {
    let counter = example("counter.s");
    for (args, flag, limit) in [
        (
            &["fuzz", "--count", "1", "--jobs", "100000"][..],
            "--jobs",
            "256",
        ),
        (
            &["fuzz", "--count", "1", "--jobs", "0"][..],
            "--jobs",
            "256",
        ),
        (
            &["run", &counter, "--timeline", "--width", "100001"][..],
            "--width",
            "100000",
        ),
        (
            &[
                "run",
                &counter,
                "--trace",
                "t.json",
                "--trace-limit",
                "10000001",
            ][..],
            "--trace-limit",
            "10000000",
        ),
    ] {
        expect(args, 2, &[flag, limit]);
    }
}
