//! The kernel classes that used to leave compiled code (issue 30), each a program in
//! `benches/classes/`, run whole on the default backend (`auto`) and on `jit` (the adaptive
//! engine): cores in two halves a cycle apart in one bank (`staggered`), divergent trip
//! counts in one shared bank (`divergent-shared-bank`), a matrix-vector product whose vector
//! every core reads from one bank (`matvec`), a stencil over neighbours' banks
//! (`stencil`), a histogram with atomic bins (`histogram`), one contended counter
//! (`counter`) and fenced reduction rounds (`reduction`); and cores in lockstep whose plain
//! accesses leave their own banks and rows (`gather`: table lookups at rows the data picks;
//! `scatter`: a racy histogram in one bank; `transpose`: each core to another bank and
//! row). Six more rows give the first classes other shapes: three groups a cycle apart
//! (`staggered-thirds`), divergent trip counts over two shared banks and in private banks,
//! a shorter matrix-vector product on 12 cores whose vector bank is also a core's own
//! (`matvec-12-cores`), and stencils at distance 2 and in two groups of four. The
//! mixed-mask stream of short tasks with memory (`mixed-mask-stream`, its full-mask twin,
//! and `narrow-mask-stream`, whose narrow tasks touch memory at their first instruction)
//! are `benches/streams.py`'s, built here; the memory-free stream and the MCST memory
//! loop are `workloads`' `scheduler` and `mcst-memory` rows. Throughput is emulated
//! instructions. The programs use only APIs
//! that 6d9c98e has, so this file runs there too for the before/after table.

use criterion::{criterion_group, criterion_main, Criterion, Throughput};
use gpu16_interp::Interpreter;
use gpu16_jit::{Auto, Jit};
use gpu16_machine::{run, Config, TaskLog};
use std::hint::black_box;
use std::time::Duration;

const CLASSES: [(&str, &str); 16] = [
    ("staggered", include_str!("classes/staggered.s")),
    ("divergent-shared-bank", include_str!("classes/divshared.s")),
    ("matvec", include_str!("classes/matvec.s")),
    ("stencil", include_str!("classes/stencil.s")),
    ("histogram", include_str!("classes/histogram.s")),
    ("counter", include_str!("classes/counter.s")),
    ("reduction", include_str!("classes/reduction.s")),
    ("gather", include_str!("classes/gather.s")),
    ("scatter", include_str!("classes/scatter.s")),
    ("transpose", include_str!("classes/transpose.s")),
    // Other shapes of the classes above, so that no class is judged on one program.
    ("staggered-thirds", include_str!("classes/staggered3.s")),
    ("divergent-two-banks", include_str!("classes/divtwobanks.s")),
    (
        "divergent-private-banks",
        include_str!("classes/divprivate.s"),
    ),
    ("matvec-12-cores", include_str!("classes/matvec12.s")),
    ("stencil-distance-2", include_str!("classes/stencil2.s")),
    (
        "stencil-two-groups",
        include_str!("classes/stencilgroups.s"),
    ),
];

/// The mixed-mask stream of `benches/streams.py` (`full`: its full-mask twin): 4,000 tasks
/// of the reduction's body on masks of widths 1 + (i*7) % 16 at offsets (i*5) % (17 -
/// width), fences no, acq, rel in turn. Issue 30 asks the mixed one to cost no more per
/// task than the full one.
fn stream_source(full: bool) -> String {
    let fences = ["", " fence=acq", " fence=rel"];
    (0..4000u32)
        .map(|i| {
            let width = 1 + (i * 7) % 16;
            let mask = if full {
                0xFFFF
            } else {
                ((1u32 << width) - 1) << ((i * 5) % (17 - width))
            };
            format!(
                ".cf mask=0x{mask:04x}{}\n.if\n    set_const 0, r1\n    set_const {}, r14\n    \
                 add r1, r14, r2\n    xor r9, r9, r9\n    ld [r9, r2], r10\n    \
                 ld [r9, r1], r11\n    add r10, r11, r11\n    st [r9, r1], r11\n    ready\n",
                fences[i as usize % 3],
                1 << (i % 4)
            )
        })
        .collect()
}

/// The narrow-mask stream of `benches/streams.py` (`narrow.s`): 3,000 tasks on masks of
/// widths 1, 2, 3, 4, 8 in turn at offsets (i*5) % (17 - width), fences no, no, acq, no,
/// rel in turn, each touching memory at its first instruction (an `ld` of the bank its
/// core's previous task left in r1, an add, a `st`), then two `set_const`s and `ready`.
fn narrow_stream_source() -> String {
    let fences = ["", "", " fence=acq", "", " fence=rel"];
    let widths = [1u32, 2, 3, 4, 8];
    (0..3000u32)
        .map(|i| {
            let width = widths[i as usize % 5];
            let mask = ((1u32 << width) - 1) << ((i * 5) % (17 - width));
            format!(
                ".cf mask=0x{mask:04x}{}\n.if\n    ld [r9, r1], r10\n    add r10, r14, r10\n    \
                 st [r9, r1], r10\n    set_const 0, r1\n    set_const 1, r14\n    ready\n",
                fences[i as usize % 5],
            )
        })
        .collect()
}

fn config() -> Config {
    Config {
        tasks: TaskLog::Summary,
        ..Config::default()
    }
}

/// Time `once` (a whole run, giving its cycles). A closure rather than a backend, so that
/// the file never names the `Backend` trait, whose path differs between trees.
fn bench(b: &mut criterion::Bencher<'_>, mut once: impl FnMut() -> u64) {
    b.iter(|| black_box(once()));
}

fn classes(c: &mut Criterion) {
    let streams = [
        ("mixed-mask-stream", stream_source(false)),
        ("full-mask-stream", stream_source(true)),
        ("narrow-mask-stream", narrow_stream_source()),
    ];
    let sources = CLASSES.iter().map(|&(name, source)| (name, source)).chain(
        streams
            .iter()
            .map(|(name, source)| (*name, source.as_str())),
    );
    for (name, source) in sources {
        let p = gpu16_asm::assemble(source, name)
            .expect("the benchmark program assembles")
            .program;
        let instructions = run(&mut Interpreter::new(), &p, &[], &config())
            .expect("the benchmark program completes")
            .instructions;
        let mut g = c.benchmark_group(name);
        g.throughput(Throughput::Elements(instructions));
        let mut auto = Auto::new();
        g.bench_function("auto", |b| {
            bench(b, || run(&mut auto, &p, &[], &config()).unwrap().cycles)
        });
        let mut jit = Jit::new();
        g.bench_function("jit", |b| {
            bench(b, || run(&mut jit, &p, &[], &config()).unwrap().cycles)
        });
        g.finish();
    }
}

/// Short runs so that the table comes in minutes on two cores; criterion's own flags
/// (`--measurement-time 10`) give tighter intervals.
fn quick() -> Criterion {
    Criterion::default()
        .warm_up_time(Duration::from_millis(500))
        .measurement_time(Duration::from_secs(2))
        .sample_size(10)
}

criterion_group! {
    name = benches;
    config = quick();
    targets = classes
}
criterion_main!(benches);
