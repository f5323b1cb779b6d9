//! Every program in `examples/` runs on the real machine and its result matches an
//! independent computation in plain Rust; every example disassembles to source that
//! re-assembles to the same bytes, carries a header comment, and passes `check` (the one
//! expected warning aside).

use gpu16::input::load_memory;
use gpu16_machine::{Config, IssuePolicy, RunReport};
use std::path::{Path, PathBuf};

fn dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("examples")
}

fn assemble(name: &str) -> gpu16_asm::Assembly {
    let path = dir().join(format!("{name}.s"));
    gpu16_asm::assemble_file(&path).unwrap_or_else(|d| panic!("{d}"))
}

/// The example's input memory (4096 bytes, zero where the image says nothing).
fn input(name: &str) -> Vec<u8> {
    let path = dir().join(format!("{name}.mem.hex"));
    let mut m = if path.exists() {
        load_memory(&path).unwrap()
    } else {
        Vec::new()
    };
    m.resize(4096, 0);
    m
}

fn run_with(name: &str, config: &Config) -> RunReport {
    let a = assemble(name);
    gpu16_machine::run(
        &mut gpu16_interp::Interpreter::new(),
        &a.program,
        &input(name),
        config,
    )
    .unwrap_or_else(|f| panic!("{name}: {}", f.error))
}

fn run(name: &str) -> RunReport {
    run_with(name, &Config::default())
}

const ALL: [&str; 10] = [
    "vector_add",
    "dot_product",
    "counter",
    "histogram",
    "matmul",
    "prefix_sum",
    "sort",
    "picture",
    "spec_example1",
    "spec_example2",
];

#[test]
fn vector_add() {
    let m = input("vector_add");
    let r = run("vector_add");
    for bank in 0..16 {
        for j in 0..32 {
            let at = bank * 256 + j;
            assert_eq!(
                r.memory[at + 128],
                m[at].wrapping_add(m[at + 64]),
                "bank {bank} j {j}"
            );
        }
    }
}

#[test]
fn dot_product() {
    let m = input("dot_product");
    let r = run("dot_product");
    let mut total = 0u32;
    for bank in 0..16 {
        let at = bank * 256;
        let partial: u32 = (0..16)
            .map(|k| u32::from(m[at + k]) * u32::from(m[at + 64 + k]))
            .sum();
        let partial = partial as u16;
        assert_eq!(
            u16::from_le_bytes([r.memory[at + 128], r.memory[at + 129]]),
            partial,
            "partial of bank {bank}"
        );
        total += u32::from(partial);
    }
    assert_eq!(
        u16::from_le_bytes([r.memory[0xf0], r.memory[0xf1]]),
        total as u16
    );
    // The data is not trivially small: the products use their high bytes.
    assert!(total > 0xffff);
}

#[test]
fn counter() {
    let r = run("counter");
    assert_eq!(r.memory[0], 16 * 10);
    assert!(r.stalls > 0, "16 cores contend for one lock");
}

#[test]
fn histogram() {
    let m = input("histogram");
    let r = run("histogram");
    let mut bins = [0u8; 16];
    for bank in 0..16 {
        for k in 0..48 {
            let v = m[bank * 256 + k];
            bins[usize::from(v >> 4)] = bins[usize::from(v >> 4)].wrapping_add(1);
        }
    }
    assert_eq!(&r.memory[0xff0..0x1000], &bins);
    assert_eq!(bins.iter().map(|&b| u32::from(b)).sum::<u32>(), 768);
}

#[test]
fn matmul() {
    let m = input("matmul");
    let r = run("matmul");
    for i in 0..8 {
        for j in 0..8 {
            let c = (0..8).fold(0u8, |acc, k| {
                acc.wrapping_add(m[8 * i + k].wrapping_mul(m[0x100 + 8 * k + j]))
            });
            assert_eq!(r.memory[0x200 + 8 * i + j], c, "C[{i}][{j}]");
        }
    }
}

#[test]
fn prefix_sum() {
    let m = input("prefix_sum");
    let r = run("prefix_sum");
    let mut sum = 0u8;
    for (k, &x) in m[..48].iter().enumerate() {
        sum = sum.wrapping_add(x);
        assert_eq!(r.memory[64 + k], sum, "P[{k}]");
    }
    // Each task waited for the one before it.
    let tasks = &r.tasks;
    assert_eq!(tasks.len(), 48);
    for w in tasks.windows(2) {
        assert!(w[1].start > w[0].end);
    }
}

#[test]
fn sort() {
    let m = input("sort");
    let r = run("sort");
    let mut v = m[..16].to_vec();
    v.sort();
    assert_eq!(&r.memory[16..32], &v[..]);
}

#[test]
fn picture() {
    let r = run("picture");
    for y in 0..64u8 {
        for x in 0..64u8 {
            let want = if x & y == 0 { x + y + 64 } else { 0 };
            assert_eq!(
                r.memory[64 * usize::from(y) + usize::from(x)],
                want,
                "pixel ({x}, {y})"
            );
        }
    }
}

/// Memory of the spec examples: task k wrote 16c + k at row k of bank c of its cores.
fn spec_memory(r: &RunReport) {
    for c in 0..16usize {
        for k in 0..6usize {
            let mask: u16 = if k < 4 { 0x0f0f } else { 0xf0f0 };
            let want = if mask >> c & 1 == 1 {
                (16 * c + k) as u8
            } else {
                0
            };
            assert_eq!(r.memory[256 * c + k], want, "core {c} task {k}");
        }
    }
}

/// The task of the instruction frame at image index `frame`.
fn task(r: &RunReport, frame: usize) -> gpu16_machine::TaskRecord {
    r.tasks.iter().find(|t| t.frame == frame).cloned().unwrap()
}

#[test]
fn spec_example1_acq_serializes_the_groups() {
    let r = run("spec_example1");
    spec_memory(&r);
    // Frames: CF0, IF0..IF3 = 1..4, CF1, IF4 = 6, IF5 = 7.
    assert!(task(&r, 6).start > task(&r, 4).end);
    for f in 1..4 {
        assert!(
            task(&r, f + 1).start > task(&r, f).end,
            "same cores run one after another"
        );
    }
}

#[test]
fn spec_example2_without_a_fence_the_groups_overlap() {
    let r = run("spec_example2");
    spec_memory(&r);
    assert!(
        task(&r, 6).start <= task(&r, 4).end,
        "in order, IF4 overlaps IF3"
    );
    let r = run_with(
        "spec_example2",
        &Config {
            issue: IssuePolicy::Lookahead,
            ..Config::default()
        },
    );
    spec_memory(&r);
    assert!(
        task(&r, 6).start < task(&r, 4).start,
        "lookahead runs IF4 alongside IF0..IF3"
    );
}

#[test]
fn every_example_round_trips_through_the_disassembler() {
    for name in ALL {
        let a = assemble(name);
        let text = gpu16_asm::disassemble(&a.program);
        let again = gpu16_asm::assemble(&text, "dis.s").unwrap_or_else(|d| panic!("{name}: {d}"));
        assert_eq!(again.program.image(), a.program.image(), "{name}");
    }
}

#[test]
fn every_example_has_a_header_and_checks_clean() {
    for name in ALL {
        let text = std::fs::read_to_string(dir().join(format!("{name}.s"))).unwrap();
        assert!(text.starts_with(&format!("; {name}.s: ")), "{name} header");
        let a = assemble(name);
        let found = gpu16_asm::lint(&a.program);
        if name == "prefix_sum" {
            assert_eq!(found.len(), 1, "{found:?}");
            assert!(found[0].message.contains("past the 64-frame task memory"));
        } else {
            assert!(found.is_empty(), "{name}: {found:?}");
        }
    }
}
