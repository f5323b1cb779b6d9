//! The code cache: a frame compiles once however often it is issued; the bound evicts whole
//! modules, and code still held by a running core survives its module's eviction.

mod common;

use common::{on, run_on};
use gpu16_gen::image::Image;
use gpu16_interp::Interpreter;
use gpu16_jit::{Auto, Engine, Jit, JitOptions};
use gpu16_machine::engine::backend::{Backend, CoreExit};
use gpu16_machine::engine::isa::{AluOp, Instr};
use gpu16_machine::{Config, InstrFrame};

fn frame(k: u8) -> Vec<u16> {
    [
        Instr::SetConst { k, d: 8 },
        Instr::Alu {
            op: AluOp::Add,
            a: 9,
            b: 8,
            c: 9,
        },
        Instr::Ready,
    ]
    .iter()
    .map(Instr::encode)
    .collect()
}

/// A cache of 2 modules x 2 functions. Per-core only, so that each frame is one function
/// and the module counts below are exact.
fn small_jit() -> Jit {
    Jit::with_options(JitOptions {
        frames_per_module: 2,
        max_modules: 2,
        engine: Engine::PerCore,
        ..JitOptions::default()
    })
    .unwrap()
}

#[test]
fn a_frame_issued_many_times_compiles_once() {
    let mut img = Image::new();
    for _ in 0..5 {
        img = img.group_words(on(0xFFFF), &[&frame(7), &frame(7), &frame(9)]);
    }
    let p = img.program();
    let mut jit = Jit::with_options(JitOptions {
        engine: Engine::PerCore,
        ..JitOptions::default()
    })
    .unwrap();
    let got = run_on(&mut jit, &p, &[], &Config::default());
    assert_eq!(
        got,
        run_on(&mut Interpreter::new(), &p, &[], &Config::default())
    );
    // 15 issues of 2 distinct frames: the run loop's frame table asks the JIT once per
    // distinct frame and keeps the code for the other 13 issues, so the cache sees no hit.
    let s = jit.stats();
    assert_eq!((s.compiled, s.hits, s.cached), (2, 0, 2));
    // r9 = 5 * (7 + 7 + 9) = 115 on every core.
    assert_eq!(got.unwrap().registers[3][9], 115);
    run_on(&mut jit, &p, &[], &Config::default()).unwrap();
    let s = jit.stats();
    assert_eq!(s.compiled, 2, "a second run compiles nothing");
    assert_eq!(s.hits, 2, "a second run finds each frame in the cache once");
}

#[test]
fn the_bound_frees_whole_modules_and_later_frames_still_run() {
    // Ten distinct frames through a cache of 2 modules x 2 frames.
    let frames: Vec<Vec<u16>> = (1..=10).map(frame).collect();
    let bodies: Vec<&[u16]> = frames.iter().map(Vec::as_slice).collect();
    let img = Image::new().group_words(on(0b11), &bodies);
    let p = img.program();
    let mut jit = small_jit();
    let got = run_on(&mut jit, &p, &[], &Config::default());
    assert_eq!(
        got,
        run_on(&mut Interpreter::new(), &p, &[], &Config::default())
    );
    assert_eq!(got.unwrap().registers[1][9], 55);
    let s = jit.stats();
    assert_eq!(s.compiled, 10);
    assert!(s.cached <= 4, "{s:?}");
    // Modules 1..3 of 5 were evicted and freed (each is freed once no core holds its code).
    assert_eq!(s.modules_freed, 3, "{s:?}");
    // Evicted frames compile again, correctly.
    let again = run_on(&mut jit, &p, &[], &Config::default());
    assert_eq!(again.unwrap().registers[1][9], 55);
    assert_eq!(jit.stats().compiled, 20);
}

/// A one-core program of `frame(k)`.
fn one_frame(k: u8) -> gpu16_machine::Program {
    Image::new().group_words(on(1), &[&frame(k)]).program()
}

/// Hands the machine's loop one frame handle of a JIT, whatever it issues.
struct Held<'a>(&'a mut Jit, <Jit as Backend>::Code);

/// No slot code of its own (these tests run the spec dialect).
impl gpu16_machine::engine::slot_run::SlotCompiler for Held<'_> {}

impl Backend for Held<'_> {
    type Code = <Jit as Backend>::Code;
    fn name(&self) -> &'static str {
        "jit"
    }
    fn prepare(
        &mut self,
        _: &InstrFrame,
    ) -> Result<Self::Code, gpu16_machine::engine::backend::BackendError> {
        Ok(self.1.clone())
    }
    fn run_core(
        &mut self,
        code: &Self::Code,
        core: &mut gpu16_machine::engine::backend::CoreState,
        port: &mut gpu16_machine::engine::backend::Port<'_>,
    ) -> CoreExit {
        self.0.run_core(code, core, port)
    }
}

#[test]
fn code_held_past_eviction_stays_runnable() {
    let mut jit = small_jit();
    let decode = |k: u8| {
        let mut all = [Instr::Nop; 16];
        for (i, w) in frame(k).into_iter().enumerate() {
            all[i] = Instr::decode(w).unwrap();
        }
        InstrFrame::from_instrs(all)
    };
    // A frame compiles when it first runs: run the held handle once, then eleven others.
    let held = jit.prepare(&decode(1)).unwrap();
    let run_held = |jit: &mut Jit, held: &<Jit as Backend>::Code| {
        run_on(
            &mut Held(jit, held.clone()),
            &one_frame(1),
            &[],
            &Config::default(),
        )
    };
    assert_eq!(run_held(&mut jit, &held).unwrap().registers[0][9], 1);
    for k in 2..=12 {
        run_on(&mut jit, &one_frame(k), &[], &Config::default()).unwrap();
    }
    let s = jit.stats();
    assert_eq!(s.compiled, 12, "{s:?}");
    assert!(s.cached <= 4);
    // 12 frames fill 6 modules; 4 were evicted, but `held` keeps the first one alive.
    assert_eq!(s.modules_freed, 3, "{s:?}");
    assert_eq!(run_held(&mut jit, &held).unwrap().registers[0][9], 1);
    assert_eq!(
        jit.stats().compiled,
        12,
        "the held code ran without compiling again"
    );
    drop(held);
    assert_eq!(
        jit.stats().modules_freed,
        4,
        "dropping the last handle frees its module"
    );
}

#[test]
fn auto_compiles_at_the_threshold_only() {
    let mut img = Image::new();
    for _ in 0..3 {
        img = img.group_words(on(1), &[&frame(3)]);
    }
    let p = img.program();
    let mut auto = Auto::with_threshold(4);
    run_on(&mut auto, &p, &[], &Config::default()).unwrap();
    assert!(
        !auto.jit_built(),
        "three issues stay interpreted, with no JIT built"
    );
    let got = run_on(&mut auto, &p, &[], &Config::default());
    let compiled = auto.jit().map(|j| j.stats().compiled);
    assert_eq!(compiled, Some(1), "the fourth issue compiles");
    assert_eq!(got.unwrap().registers[0][9], 9);
}
