//! `-` is stdin for every input and stdout for every output, the same way in every command
//! (`asm`, `disasm`, `check`, `gen`, `run`'s output flags), and a message on a closed
//! stderr never turns a status into a panic's 101. Expected bytes come from the same
//! command writing to a named file, and the hand-worked counts of `examples/counter.s`
//! (2 frames, 64 bytes).

mod common;

use common::{gpu16, gpu16_with_stdin, s, scratch, stderr, stdout};
use std::path::Path;
use std::process::{Command, Stdio};

fn example(name: &str) -> String {
    format!("{}/examples/{name}", env!("CARGO_MANIFEST_DIR"))
}

/// The image `asm` writes to a named file for `examples/counter.s`.
fn counter_image(dir: &Path) -> Vec<u8> {
    let out = dir.join("counter.bin");
    let o = gpu16(&["asm", &example("counter.s"), "-o", s(&out)]);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    std::fs::read(out).unwrap()
}

#[test]
fn asm_reads_stdin_and_writes_stdout() {
    let d = scratch("stdin_stdout", "asm");
    let image = counter_image(&d);
    assert_eq!(image.len(), 64);
    let source = std::fs::read(example("counter.s")).unwrap();
    // No -o: stdout is a pipe here, so the image goes there; no file named `-.bin` appears.
    let o = gpu16_with_stdin(&["asm", "-"], source.clone());
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    assert_eq!(o.stdout, image);
    assert_eq!(stderr(&o), "-: 2 frames (64 bytes) -> -\n");
    assert!(!Path::new("-.bin").exists());
    // -o - says so outright, and -o FILE still writes the file.
    let o = gpu16_with_stdin(&["asm", "-", "-o", "-"], source.clone());
    assert_eq!(o.stdout, image);
    let file = d.join("from_stdin.bin");
    let o = gpu16_with_stdin(&["asm", "-", "-o", s(&file)], source);
    assert_eq!(o.status.code(), Some(0));
    assert_eq!(
        stdout(&o),
        format!("-: 2 frames (64 bytes) -> {}\n", s(&file))
    );
    assert_eq!(std::fs::read(&file).unwrap(), image);
    // A file source with -o -.
    let o = gpu16(&["asm", &example("counter.s"), "-o", "-"]);
    assert_eq!(o.stdout, image);
}

#[test]
fn disasm_and_check_read_stdin() {
    let d = scratch("stdin_stdout", "disasm");
    let image = counter_image(&d);
    let file = d.join("counter.bin");
    let from_file = gpu16(&["disasm", s(&file)]);
    let o = gpu16_with_stdin(&["disasm", "-"], image.clone());
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    assert_eq!(o.stdout, from_file.stdout);
    let o = gpu16(&["disasm", s(&file), "-o", "-"]);
    assert_eq!(o.stdout, from_file.stdout);
    let o = gpu16_with_stdin(&["check", "-"], image);
    assert_eq!(stdout(&o), "-: 2 frames, no errors, 0 warnings\n");
    let source = std::fs::read(example("counter.s")).unwrap();
    let o = gpu16_with_stdin(&["check", "-", "--format", "asm"], source.clone());
    assert_eq!(stdout(&o), "-: 2 frames, no errors, 0 warnings\n");
    // Source taken for an image: a load error, not a panic.
    let o = gpu16_with_stdin(&["check", "-"], source);
    assert_eq!(o.status.code(), Some(1));
    assert!(stderr(&o).starts_with("-: "), "{}", stderr(&o));
}

#[test]
fn gen_writes_stdout() {
    let d = scratch("stdin_stdout", "gen");
    let (prog, mem) = (d.join("g.bin"), d.join("g.raw"));
    let o = gpu16(&["gen", "--seed", "9", "-o", s(&prog), "--mem-out", s(&mem)]);
    assert_eq!(o.status.code(), Some(0));
    let o = gpu16(&["gen", "--seed", "9", "-o", "-"]);
    assert_eq!(o.stdout, std::fs::read(&prog).unwrap());
    let o = gpu16(&["gen", "--seed", "9", "-o", s(&prog), "--mem-out", "-"]);
    assert_eq!(o.stdout, std::fs::read(&mem).unwrap());
    let o = gpu16(&["gen", "--seed", "9", "-o", "-", "--mem-out", "-"]);
    assert_eq!(o.status.code(), Some(2));
    assert_eq!(
        stderr(&o),
        "error: -o - and --mem-out - both write stdout: give one of them a file\n"
    );
}

#[test]
fn run_outputs_on_stdout_move_the_report_to_stderr() {
    let d = scratch("stdin_stdout", "run");
    let dump = d.join("final.bin");
    let o = gpu16(&["run", &example("counter.s"), "--dump-mem", s(&dump), "-q"]);
    assert_eq!(o.status.code(), Some(0));
    let o = gpu16(&["run", &example("counter.s"), "--dump-mem", "-", "-q"]);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    assert_eq!(o.stdout, std::fs::read(&dump).unwrap());
    assert!(
        stderr(&o).starts_with("cycles 342   instructions 880"),
        "{}",
        stderr(&o)
    );
    let counter = example("counter.s");
    for (other, shown) in [("--json", "--json"), ("--exec-log", "--exec-log -")] {
        let mut args = vec!["run", &counter, "--dump-mem", "-", other];
        if other == "--exec-log" {
            args.push("-");
        }
        let o = gpu16(&args);
        assert_eq!(o.status.code(), Some(2), "{other}");
        let message =
            format!("--dump-mem - and {shown} both write stdout: give one of them a file");
        assert!(
            stdout(&o).contains(&message) || stderr(&o).contains(&message),
            "{other}"
        );
    }
}

#[test]
fn an_output_naming_the_file_stdin_reads_is_refused() {
    let d = scratch("stdin_stdout", "same_file");
    let image = d.join("in.bin");
    std::fs::write(&image, counter_image(&d)).unwrap();
    let before = std::fs::read(&image).unwrap();
    let o = Command::new(env!("CARGO_BIN_EXE_gpu16"))
        .args(["run", "-", "--dump-mem", s(&image)])
        .stdin(std::fs::File::open(&image).unwrap())
        .output()
        .unwrap();
    assert_eq!(o.status.code(), Some(2));
    assert_eq!(
        stderr(&o),
        format!(
            "error: --dump-mem {} and PROGRAM - name the same file: an output must not \
             overwrite an input\n",
            s(&image)
        )
    );
    assert_eq!(std::fs::read(&image).unwrap(), before);
}

/// `debug` reads its commands from stdin, so without `-x` no input may read stdin, by `-`
/// or another name (a usage error, status 2, saying how to do it); with `-x`, the files
/// are the commands, stdin is the program or the memory, and the session ends with the
/// files. `examples/counter.s` ends with its counter at 160 (0xa0: 16 cores, 10 increments
/// each); `examples/vector_add.mem.hex` starts `dc 04 65 aa` at address 0.
#[test]
fn debug_takes_an_input_from_stdin_only_when_the_commands_come_from_x_files() {
    let d = scratch("stdin_stdout", "debug");
    let image = counter_image(&d);
    let mem = std::fs::read(example("vector_add.mem.hex")).unwrap();
    let with_commands = [mem.clone(), b"continue\nquit\n".to_vec()].concat();
    let vector_add = example("vector_add.s");
    let refused: [(Vec<&str>, Vec<u8>, &str); 3] = [
        (vec!["debug", "-"], image.clone(), "PROGRAM -"),
        (
            vec!["debug", "/dev/stdin", "--format", "bin"],
            image.clone(),
            "PROGRAM /dev/stdin",
        ),
        (
            vec!["debug", &vector_add, "--mem", "-"],
            with_commands,
            "--mem -",
        ),
    ];
    for (args, input, named) in refused {
        let o = gpu16_with_stdin(&args, input);
        assert_eq!(o.status.code(), Some(2), "{args:?}: {}", stderr(&o));
        assert_eq!(
            stderr(&o),
            format!(
                "error: {named}: debug reads its commands from stdin (give them with -x FILE \
                 to read the program or the memory from stdin), so no input may read it\n"
            ),
            "{args:?}"
        );
        assert_eq!(stdout(&o), "", "{args:?}");
    }
    let commands = d.join("commands.txt");
    std::fs::write(&commands, "continue\nmem 0 1\n").unwrap();
    let o = gpu16_with_stdin(&["debug", "-", "-x", s(&commands), "--json"], image);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    let last = stdout(&o).lines().last().unwrap().to_string();
    let v: serde_json::Value = serde_json::from_str(&last).unwrap();
    assert_eq!(
        v["replies"][1],
        serde_json::json!({"addr": 0, "bytes": "a0"})
    );
    std::fs::write(&commands, "mem 0 4\n").unwrap();
    let o = gpu16_with_stdin(
        &["debug", &vector_add, "--mem", "-", "-x", s(&commands)],
        mem,
    );
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    assert_eq!(stdout(&o), "0x000: dc 04 65 aa\n");
}

/// `diff -` reads the program from stdin as `run -` does (a raw image, or what `--format`
/// says), and `diff - --mem -` is a usage error: stdin is read once.
#[test]
fn diff_reads_its_program_from_stdin() {
    let d = scratch("stdin_stdout", "diff");
    let image = counter_image(&d);
    let o = gpu16_with_stdin(&["diff", "-"], image.clone());
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    assert_eq!(stdout(&o), "identical\n");
    let source = std::fs::read(example("counter.s")).unwrap();
    let o = gpu16_with_stdin(&["diff", "-", "--format", "asm"], source);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    assert_eq!(stdout(&o), "identical\n");
    let o = gpu16_with_stdin(&["diff", "-", "--mem", "-"], image);
    assert_eq!(o.status.code(), Some(2));
    assert_eq!(
        stderr(&o),
        "error: PROGRAM - and --mem - both read stdin: at most one input may be `-`\n"
    );
}

#[cfg(unix)]
#[test]
fn a_closed_stderr_keeps_the_status() {
    // The reader of stderr is gone before the command writes its error: status 1, as with
    // stderr open, never a panic's 101.
    for args in [
        vec!["run", "no-such-file.s"],
        vec!["check", "no-such-file.s"],
        vec!["asm", "no-such-file.s"],
    ] {
        let mut child = Command::new(env!("CARGO_BIN_EXE_gpu16"))
            .args(&args)
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(Stdio::piped())
            .spawn()
            .unwrap();
        drop(child.stderr.take());
        let status = child.wait().unwrap();
        assert_eq!(status.code(), Some(1), "{args:?}");
    }
}

/// An image on stdin is read in parts as a named file is (copied to a temporary file
/// first), so its findings and load errors name frames of the whole image across parts (a
/// part is at least 16,384 frames). 20,000 groups of a control frame of mask 1 that
/// initialises core 2's r0 (one finding each) and one instruction frame: 40,000 frames,
/// and one more finding, that the image is a stream past the 64-frame task memory.
#[test]
fn an_image_on_stdin_is_read_in_parts() {
    let d = scratch("stdin_stdout", "parts");
    std::fs::write(d.join("g.s"), ".cf mask=1 r0=2:5\n.if\n    ready\n").unwrap();
    let o = gpu16(&["asm", s(&d.join("g.s")), "-o", s(&d.join("g.bin"))]);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    let group = std::fs::read(d.join("g.bin")).unwrap();
    assert_eq!(group.len(), 64);
    let image = group.repeat(20_000);
    let o = gpu16_with_stdin(&["check", "-"], image.clone());
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    let out = stdout(&o);
    assert!(
        out.ends_with("-: 40000 frames, no errors, 20001 warnings\n"),
        "{}",
        &out[out.len().saturating_sub(300)..]
    );
    assert!(
        out.contains("-: frame 39998: warning: R0 init"),
        "the last group's finding"
    );
    let o = gpu16_with_stdin(&["check", "-", "--json"], image.clone());
    let v: serde_json::Value = serde_json::from_str(&stdout(&o)).unwrap();
    assert_eq!(v["frames"], 40_000);
    assert_eq!(v["warnings"], 20_001);
    assert_eq!(v["diagnostics"].as_array().unwrap().len(), 20_001);
    let o = gpu16_with_stdin(&["disasm", "-"], image.clone());
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    assert!(stdout(&o).starts_with("; gpu16 program, 40000 frames\n"));
    // A reserved fence (bits 7:6 of the header, 3) in the control frame of group 19,000:
    // frame 38,000, in the third part.
    let mut bad = image;
    bad[38_000 * 32] |= 0xc0;
    for command in ["check", "disasm"] {
        let o = gpu16_with_stdin(&[command, "-"], bad.clone());
        assert_eq!(o.status.code(), Some(1), "{command}");
        assert!(
            stderr(&o).contains("-: frame 38000: control frame has the reserved fence value 3"),
            "{command}: {}",
            stderr(&o)
        );
        // Nothing written before the error.
        assert_eq!(stdout(&o), "", "{command}");
    }
}
