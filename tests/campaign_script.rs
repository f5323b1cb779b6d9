//! `fuzz/campaign.sh` drives the built binary through its rotation and tallies what each
//! engine agreed on; the counts here are worked by hand from the rotation (ten steps: each
//! of the four spec engines and the MCST dialect twice). Its usage errors exit 2 with a
//! message, never 1, which a script waiting on the campaign reads as a divergence; a
//! divergence exits 1 and names where its reproducer went.

mod common;

use common::{s, scratch};
use std::path::Path;
use std::process::{Command, Output};

fn campaign(args: &[&str]) -> Output {
    let script = Path::new(env!("CARGO_MANIFEST_DIR")).join("fuzz/campaign.sh");
    Command::new("bash")
        .arg(script)
        .args(args)
        .env_remove("COLUMNS")
        .output()
        .expect("bash runs the script")
}

fn text(b: &[u8]) -> String {
    String::from_utf8_lossy(b).into_owned()
}

/// `campaign.sh run` on the built binary: `steps` steps of 2 programs each from seed
/// `seed`, logged to `log`, with `extra` options.
fn run_steps(log: &Path, seed: &str, steps: &str, extra: &[&str]) -> Output {
    let bin = env!("CARGO_BIN_EXE_gpu16");
    let mut args = vec!["run", bin, seed, "--steps", steps, "--count", "2", "--log"];
    args.push(s(log));
    args.extend_from_slice(extra);
    campaign(&args)
}

#[test]
fn a_rotation_is_tallied_per_engine() {
    let dir = scratch("campaign_script", "rotation");
    let log = dir.join("campaign.log");
    let o = run_steps(&log, "500", "10", &[]);
    assert_eq!(o.status.code(), Some(0), "{}", text(&o.stderr));
    let lines = std::fs::read_to_string(&log).unwrap();
    let steps: Vec<Vec<&str>> = lines.lines().map(|l| l.split('\t').collect()).collect();
    assert_eq!(steps.len(), 10, "{lines}");
    for (k, step) in steps.iter().enumerate() {
        // time, binary, step, first seed, count, engine, verdict, fuzz arguments
        assert_eq!(step.len(), 8, "{lines}");
        assert_eq!(step[2], k.to_string());
        assert_eq!(
            step[3],
            (500 + 2 * k).to_string(),
            "each step on the next seeds"
        );
        assert_eq!((step[4], step[6]), ("2", "agree"));
        assert_eq!(step[1].len(), 12);
    }
    let engines: Vec<&str> = steps.iter().map(|s| s[5]).collect();
    assert_eq!(
        engines,
        [
            "lockstep", "percore", "adaptive", "auto", "adaptive", "auto", "mcst", "percore",
            "lockstep", "mcst"
        ]
    );

    let o = campaign(&["tally", "--log", s(&log)]);
    assert_eq!(o.status.code(), Some(0), "{}", text(&o.stderr));
    let tally = text(&o.stdout);
    let mut rows: Vec<(String, u64, u64, String)> = tally
        .lines()
        .skip(1)
        .map(|l| {
            let f: Vec<&str> = l.split_whitespace().collect();
            (
                f[1].to_string(),
                f[2].parse().unwrap(),
                f[3].parse().unwrap(),
                f[4].to_string(),
            )
        })
        .collect();
    rows.sort();
    let want = [
        ("adaptive", 4, "504..509"),
        ("auto", 4, "506..511"),
        ("lockstep", 4, "500..517"),
        ("mcst", 4, "512..519"),
        ("percore", 4, "502..515"),
    ];
    assert_eq!(rows.len(), want.len(), "{tally}");
    for (row, (engine, agreed, seeds)) in rows.iter().zip(want) {
        assert_eq!(
            (row.0.as_str(), row.1, row.2, row.3.as_str()),
            (engine, agreed, 0, seeds),
            "{tally}"
        );
    }
}

/// `--engines` runs only the named engines' steps: each keeps its number in the rotation,
/// and the skipped ones take no seeds. Worked by hand from the rotation: percore is step 1
/// and 7, mcst 6 and 9.
#[test]
fn engines_runs_only_their_steps_of_the_rotation() {
    let dir = scratch("campaign_script", "engines");
    let log = dir.join("campaign.log");
    let o = run_steps(&log, "700", "5", &["--engines", "mcst,percore"]);
    assert_eq!(o.status.code(), Some(0), "{}", text(&o.stderr));
    let lines = std::fs::read_to_string(&log).unwrap();
    let steps: Vec<(&str, &str, &str)> = lines
        .lines()
        .map(|l| {
            let f: Vec<&str> = l.split('\t').collect();
            (f[2], f[3], f[5])
        })
        .collect();
    assert_eq!(
        steps,
        [
            ("1", "700", "percore"),
            ("6", "702", "mcst"),
            ("7", "704", "percore"),
            ("9", "706", "mcst"),
            ("11", "708", "percore"),
        ],
        "{lines}"
    );
}

#[test]
fn usage_errors_exit_2_with_a_message() {
    let dir = scratch("campaign_script", "usage");
    let bin = env!("CARGO_BIN_EXE_gpu16");
    let missing = dir.join("none");
    let file = dir.join("a-file");
    std::fs::write(&file, b"").unwrap();
    let log = dir.join("usage.log");
    let cases: [(Vec<&str>, &str); 12] = [
        (vec![], "Usage"),
        (vec!["run", "/no/such/gpu16", "1"], "not an executable file"),
        (
            vec!["run", bin, "twelve"],
            "FIRST_SEED must be a whole number",
        ),
        (vec!["run", bin, "1", "--count", "0"], "--count must be 1"),
        (
            vec!["run", bin, "1", "--log", "/no/such/dir/log"],
            "no directory for the log",
        ),
        (vec!["tally", "--log", s(&missing)], "no log at"),
        (
            vec!["run", bin, "1", "--log", s(&log), "--out", s(&file)],
            "exists and is not a directory",
        ),
        (
            vec!["run", bin, "1", "--log", s(&log), "--engines", "auto,gpu"],
            "no engine 'gpu' in the rotation (lockstep percore adaptive auto mcst)",
        ),
        (
            vec!["run", bin, "1", "--log", s(&log), "--engines", ""],
            "--engines names no engine",
        ),
        (
            vec!["run", bin, "1", "--log", s(&log), "--engines", ",,"],
            "--engines names no engine",
        ),
        // Names are not globs: `*` is refused, not expanded to the files of the directory.
        (
            vec!["run", bin, "1", "--log", s(&log), "--engines", "*"],
            "no engine '*' in the rotation",
        ),
        (
            vec!["run", bin, "1", "--log", s(&log), "--engines", "auto, mcst"],
            "no engine ' mcst' in the rotation",
        ),
    ];
    for (args, message) in cases {
        let o = campaign(&args);
        assert_eq!(o.status.code(), Some(2), "{args:?}");
        assert!(
            text(&o.stderr).contains(message),
            "{args:?}: {}",
            text(&o.stderr)
        );
    }
    // A directory where the log should be is refused before any step runs.
    let o = campaign(&["run", bin, "1", "--steps", "1", "--log", s(&dir)]);
    assert_eq!(o.status.code(), Some(2));
    assert!(text(&o.stderr).contains("is not a file"));
}

/// A step that diverges stops the run with status 1, logs `diverge`, and names the
/// directory `--out` gave. The binary here is a stand-in that behaves as `gpu16 fuzz` does
/// on a divergence (it writes its reproducer into `--out` and exits 1): a real divergence
/// cannot be asked of the real binary.
#[test]
fn a_divergence_stops_the_run_and_names_the_reproducer() {
    use std::os::unix::fs::PermissionsExt;
    let dir = scratch("campaign_script", "divergence");
    let fake = dir.join("gpu16");
    std::fs::write(
        &fake,
        "#!/bin/sh\n\
         while [ $# -gt 0 ]; do [ \"$1\" = --out ] && out=$2; shift; done\n\
         mkdir -p \"$out\" && echo case > \"$out/repro.s\"\n\
         echo 'diverged at seed 7' >&2\n\
         exit 1\n",
    )
    .unwrap();
    std::fs::set_permissions(&fake, std::fs::Permissions::from_mode(0o755)).unwrap();
    let log = dir.join("campaign.log");
    let out = dir.join("cases");
    let o = campaign(&[
        "run",
        s(&fake),
        "7",
        "--steps",
        "3",
        "--log",
        s(&log),
        "--out",
        s(&out),
    ]);
    assert_eq!(o.status.code(), Some(1), "{}", text(&o.stderr));
    let err = text(&o.stderr);
    assert!(err.contains("diverged at seed 7"), "{err}");
    assert!(err.contains(&format!("reproducer in {}", s(&out))), "{err}");
    assert!(out.join("repro.s").is_file());
    let lines = std::fs::read_to_string(&log).unwrap();
    let steps: Vec<Vec<&str>> = lines.lines().map(|l| l.split('\t').collect()).collect();
    assert_eq!(steps.len(), 1, "the run stops at the first step: {lines}");
    assert_eq!(
        (steps[0][3], steps[0][5], steps[0][6]),
        ("7", "lockstep", "diverge")
    );
    // Without `--out`, the reproducer goes beside the log.
    let o = campaign(&["run", s(&fake), "9", "--log", s(&log)]);
    assert_eq!(o.status.code(), Some(1));
    assert!(dir.join("fuzz-campaign-repro/repro.s").is_file());
}

/// A stopped campaign logs no step: stopping the script (SIGTERM) or the step's binary
/// (SIGTERM) ends the run with status 143 and leaves the log as it was, so that a tally's
/// "not" column counts failed steps only. The stand-in binary notes its pid and waits.
#[test]
fn a_stopped_step_is_not_logged() {
    use std::os::unix::fs::PermissionsExt;
    use std::time::{Duration, Instant};
    let dir = scratch("campaign_script", "stopped");
    let fake = dir.join("gpu16");
    let pid_file = dir.join("pid");
    std::fs::write(
        &fake,
        format!(
            "#!/bin/sh\necho $$ > '{}.tmp' && mv '{0}.tmp' '{0}'\nexec sleep 60\n",
            s(&pid_file)
        ),
    )
    .unwrap();
    std::fs::set_permissions(&fake, std::fs::Permissions::from_mode(0o755)).unwrap();
    let script = Path::new(env!("CARGO_MANIFEST_DIR")).join("fuzz/campaign.sh");
    let log = dir.join("campaign.log");
    let running = |pid: &str| Path::new(&format!("/proc/{pid}")).exists();
    // Which process gets the signal: the script, or the step's binary.
    for stop_the_script in [true, false] {
        let _ = std::fs::remove_file(&pid_file);
        let mut run = Command::new("bash")
            .arg(&script)
            .args(["run", s(&fake), "1", "--log", s(&log)])
            .stderr(std::process::Stdio::piped())
            .spawn()
            .expect("bash runs the script");
        let started = Instant::now();
        while !pid_file.exists() {
            assert!(
                started.elapsed() < Duration::from_secs(20),
                "the step never began"
            );
            std::thread::sleep(Duration::from_millis(20));
        }
        let step_pid = std::fs::read_to_string(&pid_file)
            .unwrap()
            .trim()
            .to_string();
        let target = if stop_the_script {
            run.id().to_string()
        } else {
            step_pid.clone()
        };
        let killed = Command::new("kill")
            .args(["-TERM", &target])
            .status()
            .unwrap();
        assert!(killed.success());
        let status = loop {
            if let Some(status) = run.try_wait().unwrap() {
                break status;
            }
            assert!(
                started.elapsed() < Duration::from_secs(20),
                "the run never stopped"
            );
            std::thread::sleep(Duration::from_millis(20));
        };
        let err = text(&run.wait_with_output().unwrap().stderr);
        assert_eq!(
            status.code(),
            Some(143),
            "script stopped: {stop_the_script}: {err}"
        );
        assert!(err.contains("not logged"), "{err}");
        assert_eq!(std::fs::read_to_string(&log).unwrap(), "", "nothing logged");
        // The step's binary does not outlive the run.
        let gone = Instant::now();
        while running(&step_pid) {
            assert!(
                gone.elapsed() < Duration::from_secs(10),
                "the step outlived the run"
            );
            std::thread::sleep(Duration::from_millis(20));
        }
    }
}
