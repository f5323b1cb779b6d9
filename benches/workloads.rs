//! The workloads of the speedup table, each run on the interpreter, the JIT and auto side by
//! side so that ratios come from one run: register loops (`compute`, a multiply chain, and
//! `compute-chains`, four independent chains, each with the same computation in plain Rust
//! as the physical limit), loads and stores through each core's
//! own bank and through one shared bank (`memory-own-banks`, `memory-shared-bank`, and
//! `memory-shared-bank-staggered`, the cores in two halves a cycle apart), 16 cores
//! contending on one counter (`atomics`), a 100,000-frame stream of short tasks with mixed
//! masks and fences (`scheduler`), streams whose every frame runs once (`fresh`, and
//! `fresh-60k`, long enough to churn auto's hotness table), and the latency of compiling one
//! frame (`compile`), and the MCST dialect under `mcst-rtl` (`mcst-compute`, register
//! loops that compiled code runs ahead of the slot engine's clock, and `mcst-memory`, the
//! loops with a load and a store, which it steps slot by slot). Throughput is emulated
//! instructions.

use criterion::{criterion_group, criterion_main, BatchSize, Criterion, Throughput};
use gpu16_gen::image::Image;
use gpu16_interp::Interpreter;
use gpu16_jit::{Auto, Jit, JitOptions, OptLevel};
use gpu16_machine::engine::backend::Backend;
use gpu16_machine::engine::isa::{AluOp, Instr, MemOp};
use gpu16_machine::{
    run, Config, ControlFrame, Dialect, Fence, InstrFrame, Program, TaskLog, Timing,
};
use std::hint::black_box;
use std::time::{Duration, Instant};

fn sc(k: u8, d: u8) -> Instr {
    Instr::SetConst { k, d }
}
fn alu(op: AluOp, a: u8, b: u8, c: u8) -> Instr {
    Instr::Alu { op, a, b, c }
}

/// An instruction frame of `instrs`, the rest `nop`.
fn frame_bytes(instrs: &[Instr]) -> [u8; 32] {
    Image::new().code(instrs).bytes().try_into().unwrap()
}

/// A control frame on the cores of `active`, no fence, no R0 init; IF_Num as given.
fn control(if_num: usize, fence: Fence, active: u16) -> ControlFrame {
    ControlFrame {
        if_num: if_num as u8,
        fence,
        active,
        init_vect: 0,
        init_r0: [0; 16],
        reserved_header: 0,
        reserved: [0; 10],
    }
}

/// Control frames each leading `per_cf` copies of a frame from `frames`, on all 16 cores.
fn image(frames: &[[u8; 32]], per_cf: usize) -> Program {
    let mut image = Image::new();
    for group in frames.chunks(per_cf) {
        image = image.control(control(group.len(), Fence::No, 0xFFFF));
        image = group.iter().fold(image, |i, &f| i.raw(f));
    }
    image.program()
}

const OUTER: u8 = 200;
const INNER: u8 = 250;

/// Nested loops on registers only: an outer loop of OUTER and an inner loop of INNER
/// iterations around `body` (four instructions: the inner head is IP 4).
fn nested_loops(body: [Instr; 4]) -> Vec<Instr> {
    let mut f = vec![
        sc(0, 3),     // r3 = core id
        sc(OUTER, 8), // outer counter
        sc(1, 14),    // 1
        sc(INNER, 9), // outer head (IP 3): inner counter
    ];
    f.extend(body);
    f.extend([
        alu(AluOp::Sub, 9, 14, 9),
        Instr::Bnz { a: 9, target: 4 },
        alu(AluOp::Sub, 8, 14, 8),
        Instr::Bnz { a: 8, target: 3 },
        Instr::Ready,
    ]);
    f
}

/// `nested_loops` written in Rust for all 16 cores, `body` standing for its four
/// instructions.
fn native_loops(regs: &mut [[u8; 16]; 16], body: impl Fn(&mut [u8; 16])) {
    for (id, r) in regs.iter_mut().enumerate() {
        r[3] = id as u8;
        r[8] = OUTER;
        r[14] = 1;
        loop {
            r[9] = INNER;
            loop {
                body(r);
                r[9] = r[9].wrapping_sub(r[14]);
                if r[9] == 0 {
                    break;
                }
            }
            r[8] = r[8].wrapping_sub(r[14]);
            if r[8] == 0 {
                break;
            }
        }
    }
}

/// A multiply chain: its latency bounds the loop, native or emulated.
fn compute_frame() -> Vec<Instr> {
    nested_loops([
        alu(AluOp::Add, 10, 9, 10),
        alu(AluOp::Xor, 11, 10, 11),
        Instr::Mul {
            a: 10,
            b: 11,
            c: 12,
        },
        alu(AluOp::Add, 12, 3, 11),
    ])
}

fn native_body(r: &mut [u8; 16]) {
    r[10] = r[10].wrapping_add(r[9]);
    r[11] ^= r[10];
    let p = u16::from(r[10]) * u16::from(r[11]);
    r[12] = p as u8;
    r[13] = (p >> 8) as u8;
    r[11] = r[12].wrapping_add(r[3]);
}

/// Four one-cycle recurrences and no multiply: the emulated program's own dependencies
/// limit it less than `compute_frame`'s multiply chain does. Each recurrence feeds an xor,
/// so the Rust reference cannot fold a loop into a closed form.
fn compute_chains_frame() -> Vec<Instr> {
    nested_loops([
        alu(AluOp::Add, 10, 9, 10),  // r10 += r9
        alu(AluOp::Xor, 11, 10, 11), // r11 ^= r10
        alu(AluOp::Xor, 12, 9, 12),  // r12 ^= r9
        alu(AluOp::Add, 13, 12, 13), // r13 += r12
    ])
}

fn native_chains_body(r: &mut [u8; 16]) {
    r[10] = r[10].wrapping_add(r[9]);
    r[11] ^= r[10];
    r[12] ^= r[9];
    r[13] = r[13].wrapping_add(r[12]);
}

/// A counted loop with a load and a store every three instructions, each core in its own
/// bank.
fn memory_frame() -> Vec<Instr> {
    let mem = |op, a, hi, r| Instr::Mem { op, a, hi, r };
    vec![
        sc(0, 1),   // r1 = core id: the bank
        sc(250, 8), // counter
        sc(1, 14),
        mem(MemOp::Ld, 9, 1, 10), // head (IP 3)
        alu(AluOp::Add, 10, 8, 10),
        mem(MemOp::St, 9, 1, 10),
        alu(AluOp::Add, 9, 14, 9),
        alu(AluOp::Sub, 8, 14, 8),
        Instr::Bnz { a: 8, target: 3 },
        Instr::Ready,
    ]
}

/// A straight-line frame that differs from every other `n`.
fn fresh_frame(n: u32) -> Vec<Instr> {
    let mut f = vec![
        sc(n as u8, 8),
        sc((n >> 8) as u8, 9),
        sc((n >> 16) as u8, 10),
    ];
    for i in 0..12u8 {
        f.push(alu(
            AluOp::ALL[usize::from(i % 7)],
            8 + i % 3,
            9,
            11 + i % 4,
        ));
    }
    f.push(Instr::Ready);
    f
}

/// One core bank-shared variant of `memory_frame`: every core in bank 0, each at its own
/// bytes (core id * 16 + i), so accesses interleave in (cycle, core id) order.
fn shared_bank_frame() -> Vec<Instr> {
    shared_bank_loop(&[])
}

/// `shared_bank_frame` with the cores in two halves a cycle apart: the odd cores skip a
/// `nop`, so in every cycle one half is at a memory instruction of bank 0 while the other
/// is between two, and the halves never meet at one IP again. Groups at different IPs
/// that share a bank take turns on memory.
fn staggered_shared_bank_frame() -> Vec<Instr> {
    shared_bank_loop(&[
        alu(AluOp::And, 1, 14, 3),      // r3 = core id & 1
        Instr::Bnz { a: 3, target: 8 }, // the odd cores skip the nop
        Instr::Nop,
    ])
}

/// The shared-bank loop: 250 trips adding the counter to the core's own byte of bank 0,
/// after a set-up and `between` (which falls into the loop's head at IP 5 + its length).
fn shared_bank_loop(between: &[Instr]) -> Vec<Instr> {
    let mem = |op, a, hi, r| Instr::Mem { op, a, hi, r };
    let head = 5 + between.len() as u8;
    let mut f = vec![
        sc(0, 1), // r1 = core id
        alu(AluOp::Xor, 2, 2, 2),
        Instr::Shift {
            left: true,
            a: 1,
            k: 4,
            c: 9,
        }, // r9 = 16 * core id: the core's own bytes of bank 0
        sc(250, 8),
        sc(1, 14),
    ];
    f.extend_from_slice(between);
    f.extend([
        mem(MemOp::Ld, 9, 2, 10), // head
        alu(AluOp::Add, 10, 8, 10),
        mem(MemOp::St, 9, 2, 10),
        alu(AluOp::Sub, 8, 14, 8),
        Instr::Bnz { a: 8, target: head },
        Instr::Ready,
    ]);
    f
}

/// Every core adds 1 to the byte at 0x000, 100 times, in atomic sequences.
fn atomics_frame() -> Vec<Instr> {
    let mem = |op, a, hi, r| Instr::Mem { op, a, hi, r };
    vec![
        alu(AluOp::Xor, 2, 2, 2),
        sc(0, 9),
        sc(100, 8),
        sc(1, 14),
        mem(MemOp::LdSync, 9, 2, 10), // head (IP 4)
        alu(AluOp::Add, 10, 14, 10),
        mem(MemOp::StSync, 9, 2, 10),
        alu(AluOp::Sub, 8, 14, 8),
        Instr::Bnz { a: 8, target: 4 },
        Instr::Ready,
    ]
}

/// A histogram of 16 bins, one a bank: core k adds 1 to bin (k / 2 + i) mod 16 in round
/// i, in an atomic sequence, 96 rounds. Bins spread the sequences over banks, so eight of
/// a round's sequences run at once, and each bin is contended by two cores.
fn histogram_frame() -> Vec<Instr> {
    let mem = |op, a, hi, r| Instr::Mem { op, a, hi, r };
    vec![
        sc(0, 1), // r1 = core id
        Instr::Shift {
            left: false,
            a: 1,
            k: 1,
            c: 1,
        }, // r1 = core id / 2: the first bin's bank
        alu(AluOp::Xor, 9, 9, 9), // r9 = 0: the row of every bin
        sc(96, 8), // rounds
        sc(1, 14),
        mem(MemOp::LdSync, 9, 1, 10), // head (IP 5)
        alu(AluOp::Add, 10, 14, 10),
        mem(MemOp::StSync, 9, 1, 10),
        alu(AluOp::Add, 1, 14, 1), // next bank (its low four bits count)
        alu(AluOp::Sub, 8, 14, 8),
        Instr::Bnz { a: 8, target: 5 },
        Instr::Ready,
    ]
}

/// Divergent trip counts: core k runs a multiply-add loop 40 + 24k times, so the cores
/// that started together part ways, one by one.
fn divergent_frame() -> Vec<Instr> {
    vec![
        sc(0, 1), // r1 = core id
        sc(24, 8),
        Instr::Mul { a: 1, b: 8, c: 8 }, // r8 = 24 * id (r9 = high byte, 0)
        sc(40, 10),
        alu(AluOp::Add, 8, 10, 8), // r8 = 40 + 24 * id: the trip count
        sc(1, 14),
        sc(3, 13),
        Instr::Mul {
            a: 12,
            b: 13,
            c: 11,
        }, // head (IP 7): r11/r12 = r12 * 3
        alu(AluOp::Add, 11, 1, 12),
        alu(AluOp::Xor, 12, 8, 12),
        alu(AluOp::Sub, 8, 14, 8),
        Instr::Bnz { a: 8, target: 7 },
        Instr::Ready,
    ]
}

/// A stream of `frames` frames: groups of up to 63 short tasks with masks and fences that
/// vary from group to group.
fn scheduler_stream(frames: usize) -> Program {
    let masks = [0xFFFF, 0x00FF, 0xFF00, 0x0F0F, 0x0001, 0x8000, 0x3C3C];
    let fences = [Fence::No, Fence::No, Fence::Acq, Fence::No, Fence::Rel];
    let body = frame_bytes(&[sc(5, 9), alu(AluOp::Add, 9, 9, 9), Instr::Ready]);
    let mut image = Image::new();
    let mut g = 0;
    while image.frames() < frames {
        let n = (frames - image.frames() - 1).clamp(1, 63);
        let cf = control(n, fences[g % fences.len()], masks[g % masks.len()]);
        image = (0..n).fold(image.control(cf), |i, _| i.raw(body));
        g += 1;
    }
    image.program()
}

fn stream_config() -> Config {
    Config {
        tasks: TaskLog::Summary,
        ..Config::default()
    }
}

fn instructions(p: &Program) -> u64 {
    run(&mut Interpreter::new(), p, &[], &Config::default())
        .expect("benchmark programs complete")
        .instructions
}

fn bench_run<B: Backend>(b: &mut criterion::Bencher<'_>, backend: &mut B, p: &Program) {
    bench_run_with(b, backend, p, &stream_config());
}

fn bench_run_with<B: Backend>(
    b: &mut criterion::Bencher<'_>,
    backend: &mut B,
    p: &Program,
    config: &Config,
) {
    b.iter(|| black_box(run(backend, p, &[], config).unwrap().cycles));
}

/// A group that runs `p` on the three backends, each kept across samples (its code cache
/// warm, as in a long stream).
fn three_backends(c: &mut Criterion, name: &str, p: &Program) {
    three_backends_with(c, name, p, &stream_config());
}

/// [`three_backends`] under `config`.
fn three_backends_with(c: &mut Criterion, name: &str, p: &Program, config: &Config) {
    let n = instructions(p);
    let mut g = c.benchmark_group(name);
    g.throughput(Throughput::Elements(n));
    let mut backend = Interpreter::new();
    g.bench_function("interp", |b| bench_run_with(b, &mut backend, p, config));
    let mut backend = Jit::new();
    g.bench_function("jit", |b| bench_run_with(b, &mut backend, p, config));
    let mut backend = Auto::new();
    g.bench_function("auto", |b| bench_run_with(b, &mut backend, p, config));
    g.finish();
}

/// A register-loop group: the three backends, `extra` benchmarks, and the same loops in
/// Rust (checked to compute the same registers first).
/// `body` is a function item, so the Rust loops are compiled with it inlined.
fn loops_group(
    c: &mut Criterion,
    name: &str,
    frame: Vec<Instr>,
    body: impl Fn(&mut [u8; 16]) + Copy,
    extra: impl FnOnce(&mut criterion::BenchmarkGroup<'_, criterion::measurement::WallTime>, &Program),
) {
    let p = image(&[frame_bytes(&frame)], 1);
    let n = instructions(&p);
    let mut regs = [[0u8; 16]; 16];
    native_loops(&mut regs, body);
    let want = run(&mut Interpreter::new(), &p, &[], &Config::default()).unwrap();
    assert_eq!(
        regs, want.registers,
        "the native closure computes the same thing"
    );
    let mut g = c.benchmark_group(name);
    g.throughput(Throughput::Elements(n));
    let mut backend = Interpreter::new();
    g.bench_function("interp", |b| bench_run(b, &mut backend, &p));
    let mut backend = Jit::new();
    g.bench_function("jit", |b| bench_run(b, &mut backend, &p));
    let mut backend = Auto::new();
    g.bench_function("auto", |b| bench_run(b, &mut backend, &p));
    extra(&mut g, &p);
    g.bench_function("native", |b| {
        b.iter(|| {
            let mut regs = black_box([[0u8; 16]; 16]);
            native_loops(&mut regs, body);
            black_box(regs)
        })
    });
    g.finish();
}

fn compute(c: &mut Criterion) {
    loops_group(c, "compute", compute_frame(), native_body, |g, p| {
        let mut backend = Jit::with_options(JitOptions {
            opt_level: OptLevel::Speed,
            ..JitOptions::default()
        })
        .unwrap();
        g.bench_function("jit-opt-speed", |b| bench_run(b, &mut backend, p));
        // Auto's first run: one core interpreted until the frame is hot, then compiled.
        g.bench_function("auto-first-run", |b| {
            b.iter_batched(
                Auto::new,
                |mut a| {
                    let cycles = run(&mut a, p, &[], &Config::default()).unwrap().cycles;
                    (a, black_box(cycles))
                },
                BatchSize::PerIteration,
            )
        });
    });
}

fn compute_chains(c: &mut Criterion) {
    loops_group(
        c,
        "compute-chains",
        compute_chains_frame(),
        native_chains_body,
        |_, _| {},
    );
}

fn memory(c: &mut Criterion) {
    three_backends(
        c,
        "memory-own-banks",
        &image(&[frame_bytes(&memory_frame()); 8], 8),
    );
    three_backends(
        c,
        "memory-shared-bank",
        &image(&[frame_bytes(&shared_bank_frame()); 8], 8),
    );
    let p = image(&[frame_bytes(&staggered_shared_bank_frame()); 8], 8);
    let r = run(&mut Interpreter::new(), &p, &[], &Config::default()).unwrap();
    // Each task adds 250 + 249 + ... + 1 = 31,375 to each core's byte (16 * id): 8 tasks
    // add 251,000, which is 120 mod 256; the halves a cycle apart.
    for core in 0..16 {
        assert_eq!(r.memory[16 * core], 120, "core {core}'s byte");
        assert_eq!(r.registers[core][3], (core & 1) as u8, "core {core}'s half");
    }
    // An even core runs 8 + 250 * 5 + 1 = 1,259 instructions, an odd one 1,258. The first
    // task starts at 5 (CF at 0, broadcast 1-4) and ends at 5 + 1,258; each next one
    // broadcasts once the cores are free, so starts 1,263 cycles later.
    assert_eq!(r.instructions, 8 * 8 * (1259 + 1258));
    assert_eq!(r.cycles, 5 + 7 * 1263 + 1258 + 1);
    three_backends(c, "memory-shared-bank-staggered", &p);
}

fn atomics(c: &mut Criterion) {
    let p = image(&[frame_bytes(&atomics_frame()); 4], 4);
    let r = run(&mut Interpreter::new(), &p, &[], &Config::default()).unwrap();
    assert_eq!(
        r.memory[0],
        (16 * 100 * 4 % 256) as u8,
        "every increment counted"
    );
    three_backends(c, "atomics", &p);
}

fn histogram(c: &mut Criterion) {
    let p = image(&[frame_bytes(&histogram_frame()); 4], 4);
    let r = run(&mut Interpreter::new(), &p, &[], &Config::default()).unwrap();
    // 16 cores x 96 rounds x 4 tasks spread evenly: each bin counts 384, i.e. 128 mod 256.
    for bank in 0..16 {
        assert_eq!(r.memory[bank << 8], (384 % 256) as u8, "bin {bank}");
    }
    three_backends(c, "histogram", &p);
}

fn divergent(c: &mut Criterion) {
    three_backends(
        c,
        "divergent",
        &image(&[frame_bytes(&divergent_frame()); 8], 8),
    );
}

fn scheduler(c: &mut Criterion) {
    three_backends(c, "scheduler", &scheduler_stream(100_000));
}

fn fresh(c: &mut Criterion) {
    fresh_group(c, "fresh", 256, true);
}

/// 60,000 frames each run once: as many distinct frames as `auto`'s hotness table holds
/// fifteen times over, so it shows what counting costs once the table churns. No `jit`
/// row: it would compile all 60,000.
fn fresh_60k(c: &mut Criterion) {
    fresh_group(c, "fresh-60k", 60_000, false);
}

/// `frames` distinct frames each run once on all 16 cores, a new backend per run (no frame
/// seen before); with `jit`, also the JIT compiling every one.
fn fresh_group(c: &mut Criterion, name: &str, frames: u32, jit: bool) {
    let frames: Vec<[u8; 32]> = (0..frames).map(|n| frame_bytes(&fresh_frame(n))).collect();
    let p = image(&frames, 16);
    let n = instructions(&p);
    let mut g = c.benchmark_group(name);
    g.throughput(Throughput::Elements(n));
    g.sample_size(10);
    let mut fresh_run = |name: &str, make: &dyn Fn() -> Box<dyn FnMut(&Program) -> u64>| {
        g.bench_function(name, |b| {
            // The backend is returned so that its drop falls outside the timing.
            b.iter_batched(
                make,
                |mut f| {
                    let cycles = f(&p);
                    (f, black_box(cycles))
                },
                BatchSize::PerIteration,
            )
        });
    };
    fresh_run("interp", &|| {
        let mut i = Interpreter::new();
        Box::new(move |p| run(&mut i, p, &[], &Config::default()).unwrap().cycles)
    });
    fresh_run("auto", &|| {
        let mut a = Auto::new();
        Box::new(move |p| {
            let cycles = run(&mut a, p, &[], &Config::default()).unwrap().cycles;
            assert!(!a.jit_built(), "no frame of a fresh stream gets hot");
            cycles
        })
    });
    if jit {
        fresh_run("jit", &|| {
            let mut j = Jit::new();
            Box::new(move |p| run(&mut j, p, &[], &Config::default()).unwrap().cycles)
        });
    }
    g.finish();
}

fn compile(c: &mut Criterion) {
    let mut g = c.benchmark_group("compile");
    g.throughput(Throughput::Elements(1));
    for (name, opt, lockstep) in [
        ("jit", OptLevel::None, false),
        ("jit-lockstep", OptLevel::None, true),
        ("jit-opt-speed", OptLevel::Speed, false),
        ("jit-lockstep-opt-speed", OptLevel::Speed, true),
    ] {
        let mut next = 0u32;
        g.bench_function(name, |b| {
            b.iter_custom(|iters| {
                let mut jit = Jit::with_options(JitOptions {
                    opt_level: opt,
                    ..JitOptions::default()
                })
                .unwrap();
                let mut total = Duration::ZERO;
                for _ in 0..iters {
                    next += 1;
                    let mut f = compute_frame();
                    f[1] = sc(next as u8, 8);
                    f[3] = sc((next >> 8) as u8, 9);
                    let mut all = [Instr::Nop; 16];
                    all[..f.len()].copy_from_slice(&f);
                    let frame = InstrFrame::from_instrs(all);
                    let t = Instant::now();
                    jit.precompile(&frame, lockstep).unwrap();
                    total += t.elapsed();
                }
                total
            })
        });
    }
    // From the cache: the same 32 bytes again.
    let mut jit = Jit::new();
    let mut all = [Instr::Nop; 16];
    let f = compute_frame();
    all[..f.len()].copy_from_slice(&f);
    let frame = InstrFrame::from_instrs(all);
    jit.precompile(&frame, false).unwrap();
    g.bench_function("jit-cached", |b| {
        b.iter(|| black_box(jit.prepare(&frame).unwrap()))
    });
    g.finish();
}

/// 16 cores of the MCST dialect: 40 outer trips around 250 inner ones, each inner trip a
/// multiply, an add, a shift and an xor (`mcst-compute`), or a load, an add and a store in
/// the core's own bank, a multiply and an add (`mcst-memory`); then a store of the result.
/// The programs are files, so that `benches/steady.sh` counts them too.
fn mcst_program(memory: bool) -> Program {
    let (file, source) = if memory {
        ("mcst/memory.s", include_str!("mcst/memory.s"))
    } else {
        ("mcst/compute.s", include_str!("mcst/compute.s"))
    };
    gpu16_asm::assemble_in(source, file, Dialect::Mcst)
        .expect("the benchmark program assembles")
        .program
}

fn mcst(c: &mut Criterion) {
    let config = Config {
        timing: Timing::mcst_rtl(),
        ..stream_config()
    };
    three_backends_with(c, "mcst-compute", &mcst_program(false), &config);
    three_backends_with(c, "mcst-memory", &mcst_program(true), &config);
}

/// Short runs by default so that `cargo bench` finishes in minutes on two cores; pass
/// criterion's own flags (`--measurement-time 10`) for tighter intervals.
fn quick() -> Criterion {
    Criterion::default()
        .warm_up_time(Duration::from_millis(700))
        .measurement_time(Duration::from_secs(2))
        .sample_size(20)
}

criterion_group! {
    name = benches;
    config = quick();
    targets = compute, compute_chains, memory, atomics, histogram, divergent, scheduler, fresh,
        fresh_60k, compile, mcst
}
criterion_main!(benches);
