//! `gpu16 completions` and `gpu16 man`, through the built binary: the scripts and pages
//! name every command and flag, an unknown shell is a usage error, and stdout follows the
//! rules of every command (a closed pipe is quiet, a full disk is an error).

mod common;

use common::{gpu16, s, stderr, stdout};
use std::fs::File;
use std::process::{Command, Stdio};

/// Every subcommand, written out by hand: a new one must be added here, and so be seen to
/// appear in the scripts and pages.
const SUBCOMMANDS: [&str; 12] = [
    "run",
    "asm",
    "disasm",
    "check",
    "gen",
    "debug",
    "dap",
    "serve",
    "diff",
    "fuzz",
    "completions",
    "man",
];

#[test]
fn the_bash_script_completes_every_subcommand_and_their_flags() {
    let o = gpu16(&["completions", "bash"]);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    assert_eq!(stderr(&o), "");
    let script = stdout(&o);
    assert!(script.contains("_gpu16()"), "{script}");
    assert!(script.contains("complete -F _gpu16"), "{script}");
    // The words offered after `gpu16`, in the order the commands are declared.
    assert!(
        script.contains(
            "opts=\"-h -V --help --version run asm disasm check gen debug dap serve diff fuzz completions man help\""
        ),
        "{script}"
    );
    for sub in SUBCOMMANDS {
        // Each subcommand has its case, giving its own flags.
        assert!(
            script.contains(&format!("gpu16,{sub})")),
            "{sub} missing from the bash script"
        );
    }
    for flag in [
        "--mem-format",
        "--dump-mem",
        "--dialect",
        "--json",
        "--groups",
    ] {
        assert!(script.contains(flag), "{flag} missing from the bash script");
    }
}

#[test]
fn every_shell_has_a_script_naming_the_program() {
    for (shell, marker) in [
        ("bash", "complete -F _gpu16"),
        ("zsh", "#compdef gpu16"),
        ("fish", "complete -c gpu16"),
        ("elvish", "edit:completion:arg-completer[gpu16]"),
        ("powershell", "Register-ArgumentCompleter"),
    ] {
        let o = gpu16(&["completions", shell]);
        assert_eq!(o.status.code(), Some(0), "{shell}: {}", stderr(&o));
        let script = stdout(&o);
        assert!(script.contains(marker), "{shell}: no `{marker}`");
        assert!(script.contains("mem-format"), "{shell}: no --mem-format");
    }
}

#[test]
fn an_unknown_shell_is_a_usage_error() {
    for args in [
        &["completions", "tcsh"][..],
        &["completions"],
        &["completions", "bash", "zsh"],
    ] {
        let o = gpu16(args);
        assert_eq!(o.status.code(), Some(2), "{args:?}");
        assert_eq!(stdout(&o), "", "{args:?}");
        assert!(
            stderr(&o).starts_with("error: "),
            "{args:?}: {}",
            stderr(&o)
        );
    }
    let o = gpu16(&["completions", "tcsh"]);
    assert!(
        stderr(&o).contains("invalid value 'tcsh'"),
        "{}",
        stderr(&o)
    );
}

#[test]
fn the_man_page_is_roff_naming_every_subcommand() {
    let o = gpu16(&["man"]);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    let page = stdout(&o);
    assert!(page.contains("\n.TH gpu16 1 "), "{page}");
    assert!(page.contains("\n.SH NAME\n"), "{page}");
    assert!(page.contains("\n.SH SUBCOMMANDS\n"), "{page}");
    for sub in SUBCOMMANDS {
        // roff writes a hyphen as `\-`; each subcommand refers to its own page.
        assert!(
            page.contains(&format!("gpu16\\-{sub}(1)")),
            "{sub} missing from the man page"
        );
    }
}

#[test]
fn man_dir_writes_a_page_per_command() {
    let d = common::scratch("completions", "man_dir");
    let o = gpu16(&["man", "--dir", s(&d)]);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    let mut expected: Vec<String> = vec!["gpu16.1".into()];
    expected.extend(SUBCOMMANDS.iter().map(|sub| format!("gpu16-{sub}.1")));
    let mut written: Vec<String> = std::fs::read_dir(&d)
        .unwrap()
        .map(|e| e.unwrap().file_name().into_string().unwrap())
        .collect();
    written.sort();
    expected.sort();
    assert_eq!(written, expected);
    // Stdout lists each page written.
    assert_eq!(stdout(&o).lines().count(), SUBCOMMANDS.len() + 1);
    let asm = std::fs::read_to_string(d.join("gpu16-asm.1")).unwrap();
    assert!(asm.contains("\n.TH gpu16-asm 1 "), "{asm}");
    assert!(asm.contains("\\-\\-hex"), "{asm}");
    let run = std::fs::read_to_string(d.join("gpu16-run.1")).unwrap();
    assert!(run.contains("\\-\\-mem\\-format"), "{run}");
    // The page of gpu16 is the one `gpu16 man` prints, and each page it refers to is there.
    let top = std::fs::read_to_string(d.join("gpu16.1")).unwrap();
    assert_eq!(top, stdout(&gpu16(&["man"])));
    let refs: Vec<&str> = top
        .split("gpu16\\-")
        .skip(1)
        .filter_map(|rest| rest.split_once("(1)").map(|(sub, _)| sub))
        .collect();
    assert_eq!(refs, SUBCOMMANDS);
}

#[test]
fn man_dir_must_exist() {
    let d = common::scratch("completions", "man_no_dir");
    let missing = d.join("nosuch");
    let o = gpu16(&["man", "--dir", s(&missing)]);
    assert_eq!(o.status.code(), Some(1));
    assert!(
        stderr(&o).contains("cannot write: directory") && stderr(&o).contains("does not exist"),
        "{}",
        stderr(&o)
    );
    assert_eq!(stdout(&o), "");
}

#[test]
fn stdout_rules_hold() {
    for args in [&["completions", "bash"][..], &["man"]] {
        // A full disk is an error, status 1.
        let full = File::options().write(true).open("/dev/full").unwrap();
        let o = Command::new(env!("CARGO_BIN_EXE_gpu16"))
            .args(args)
            .stdout(Stdio::from(full))
            .output()
            .unwrap();
        assert_eq!(o.status.code(), Some(1), "{args:?}");
        assert!(
            stderr(&o).starts_with("error: cannot write to standard output: "),
            "{args:?}: {}",
            stderr(&o)
        );
        // A reader that is gone is not.
        let mut child = Command::new(env!("CARGO_BIN_EXE_gpu16"))
            .args(args)
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .unwrap();
        drop(child.stdout.take());
        let o = child.wait_with_output().unwrap();
        assert_eq!(o.status.code(), Some(0), "{args:?}: {}", stderr(&o));
        assert_eq!(stderr(&o), "", "{args:?}");
    }
}
