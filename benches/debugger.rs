//! The debugger's searches against a plain run of the same program (issue 32's target: a
//! breakpoint hit at the end of a 33M-cycle loop, and a watchpoint on its last write, each
//! within 2x of a plain run). `run` is the plain run; `break` and `watch` are a session
//! answering `break`/`watch` then `continue`; `steps` moves a session near the loop's end
//! and then takes a hundred steps of 1000 cycles; `back` goes to the loop's end and takes
//! ten steps back of a million cycles (time travel). Each on the interpreter and on `auto`;
//! the `16/` rows run the same loop on all 16 cores (lockstep code on `auto`).

use criterion::{criterion_group, criterion_main, Criterion};
use gpu16::debugger::Session;
use gpu16::{BackendKind, Runner};
use gpu16_machine::{Config, Program};
use std::hint::black_box;
use std::time::Duration;

/// One core counts down three nested loops of 255 (33.4M cycles), then stores r9 + 1 at
/// byte 0x005 (IP 12) and ends with `ready` (IP 13, where the breakpoint is).
const LOOP: &str = "\
.cf mask=1
.if
    set_const 1, r8
    set_const 0xff, r12
l3:
    set_const 0xff, r10
outer:
    set_const 0xff, r11
inner:
    sub r11, r8, r11
    bnz inner, r11
    sub r10, r8, r10
    bnz outer, r10
    sub r12, r8, r12
    bnz l3, r12
    set_const 5, r13
    add r9, r8, r9
    st [r13, r1], r9
    ready
";

fn session(program: &Program, runner: Runner) -> Session {
    Session::new(
        program.clone(),
        None,
        Vec::new(),
        runner,
        Config::default(),
        true,
    )
}

fn debugger(c: &mut Criterion) {
    let one = gpu16_asm::assemble(LOOP, "loop.s")
        .expect("the benchmark program assembles")
        .program;
    let sixteen = gpu16_asm::assemble(&LOOP.replace("mask=1", "mask=0xffff"), "loop16.s")
        .expect("the benchmark program assembles")
        .program;
    let mut g = c.benchmark_group("debugger");
    for (shape, program, backend) in [
        ("", &one, BackendKind::Interp),
        ("", &one, BackendKind::Auto),
        ("16/", &sixteen, BackendKind::Auto),
    ] {
        let runner = Runner::from(backend);
        let name = format!("{shape}{}", backend.name());
        let program = program.clone();
        g.bench_function(format!("run/{name}"), |b| {
            b.iter(|| black_box(gpu16::run(runner, &program, &[], &Config::default()).is_ok()))
        });
        // Near the loop's end, a hundred steps of 1000 cycles: each goes on from where the
        // last stopped.
        g.bench_function(format!("steps/{name}"), |b| {
            b.iter(|| {
                let mut s = session(&program, runner);
                s.execute("step 33000000");
                for _ in 0..100 {
                    s.execute("step 1000");
                }
                black_box(s.execute("where").text)
            })
        });
        // Time travel from the loop's end: ten steps back of a million cycles each, then
        // `when` the byte was written (the last instruction, searched for backwards).
        g.bench_function(format!("back/{name}"), |b| {
            b.iter(|| {
                let mut s = session(&program, runner);
                s.execute("step 33400000");
                for _ in 0..10 {
                    s.execute("reverse-step 1000000");
                }
                black_box(s.execute("where").text)
            })
        });
        for (what, line) in [("break", "break 1:13"), ("watch", "watch 5")] {
            g.bench_function(format!("{what}/{name}"), |b| {
                b.iter(|| {
                    let mut s = session(&program, runner);
                    s.execute(line);
                    let reply = s.execute("continue").text;
                    assert!(reply.contains("\"event\""), "{reply}");
                    black_box(reply)
                })
            });
        }
    }
    g.finish();
}

/// Short runs: a plain run takes tens of milliseconds.
fn quick() -> Criterion {
    Criterion::default()
        .warm_up_time(Duration::from_millis(500))
        .measurement_time(Duration::from_secs(3))
        .sample_size(10)
}

criterion_group! {
    name = benches;
    config = quick();
    targets = debugger
}
criterion_main!(benches);
