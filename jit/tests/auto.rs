//! The `auto` backend's bookkeeping: issues counted the same whether the run loop prepares
//! a frame at every issue or reissues its code, the JIT built only at the first hot frame,
//! the hotness table's fixed size, and background compiles that change no result.

mod common;

use common::{on, run_on, single};
use gpu16_gen::image::Image;
use gpu16_interp::Interpreter;
use gpu16_jit::{Auto, AutoCode, CompileMode, Hotness, JitOptions, HOT_TABLE_FRAMES};
use gpu16_machine::engine::backend::Backend;
use gpu16_machine::engine::isa::{AluOp, Instr, MemOp};
use gpu16_machine::{Config, InstrFrame};

/// A frame that differs from every other `n` (below 2^24) and runs 16 instructions.
fn distinct(n: u32) -> InstrFrame {
    let mut instrs = [Instr::Nop; 16];
    instrs[0] = Instr::SetConst { k: n as u8, d: 1 };
    instrs[1] = Instr::SetConst {
        k: (n >> 8) as u8,
        d: 2,
    };
    instrs[2] = Instr::SetConst {
        k: (n >> 16) as u8,
        d: 3,
    };
    instrs[15] = Instr::Ready;
    InstrFrame::from_instrs(instrs)
}

fn issues(code: &AutoCode) -> u32 {
    match code {
        AutoCode::Interpreted(cold) => cold.issues(),
        AutoCode::Compiled(_) => panic!("expected a frame still interpreted"),
    }
}

fn synchronous(hot_issues: u32) -> Auto {
    Auto::with_threshold(hot_issues)
}

#[test]
fn issues_count_through_prepare() {
    let mut auto = synchronous(u32::MAX);
    let f = distinct(7);
    for n in 1..=50 {
        let code = auto.prepare(&f).unwrap();
        assert_eq!(issues(&code), n);
    }
}

#[test]
fn issues_count_through_reissue_and_mixed_with_prepare() {
    let mut auto = synchronous(u32::MAX);
    let f = distinct(8);
    let mut code = auto.prepare(&f).unwrap();
    for n in 2..=30 {
        code = auto.reissue(&code).unwrap();
        assert_eq!(issues(&code), n);
    }
    // A second run prepares it again: the count goes on from the same entry.
    let code = auto.prepare(&f).unwrap();
    assert_eq!(issues(&code), 31);
    let code = auto.reissue(&code).unwrap();
    assert_eq!(issues(&code), 32);
}

#[test]
fn a_synchronous_auto_compiles_at_the_threshold_through_either_path() {
    for reissued in [false, true] {
        let mut auto = synchronous(5);
        let f = distinct(9);
        let mut code = auto.prepare(&f).unwrap();
        for _ in 2..5 {
            code = if reissued {
                auto.reissue(&code).unwrap()
            } else {
                auto.prepare(&f).unwrap()
            };
            assert!(
                matches!(code, AutoCode::Interpreted(_)),
                "below the threshold"
            );
        }
        assert!(!auto.jit_built(), "nothing hot yet, so no JIT");
        code = if reissued {
            auto.reissue(&code).unwrap()
        } else {
            auto.prepare(&f).unwrap()
        };
        assert!(
            matches!(code, AutoCode::Compiled(_)),
            "the fifth issue compiles (reissued: {reissued})"
        );
        assert_eq!(auto.jit().unwrap().stats().compiled, 1);
        // Compiled code stays compiled, through either path, with no second compile.
        assert!(matches!(
            auto.reissue(&code).unwrap(),
            AutoCode::Compiled(_)
        ));
        assert!(matches!(auto.prepare(&f).unwrap(), AutoCode::Compiled(_)));
        assert_eq!(auto.jit().unwrap().stats().compiled, 1);
    }
}

/// Sixteen cores in a register loop of about 20,000 instructions each, issued `times`
/// times; plus loads and stores through each core's bank.
fn hot_loops(times: usize) -> gpu16_machine::Program {
    let body = [
        Instr::SetConst { k: 0, d: 3 },   // r3 = core id
        Instr::SetConst { k: 200, d: 8 }, // outer counter
        Instr::SetConst { k: 1, d: 14 },
        Instr::SetConst { k: 25, d: 9 }, // outer head: inner counter
        Instr::Alu {
            op: AluOp::Add,
            a: 10,
            b: 9,
            c: 10,
        },
        Instr::Mul { a: 10, b: 3, c: 11 },
        Instr::Mem {
            op: MemOp::St,
            a: 3,
            hi: 0,
            r: 11,
        },
        Instr::Mem {
            op: MemOp::Ld,
            a: 3,
            hi: 0,
            r: 12,
        },
        Instr::Alu {
            op: AluOp::Sub,
            a: 9,
            b: 14,
            c: 9,
        },
        Instr::Bnz { a: 9, target: 4 },
        Instr::Alu {
            op: AluOp::Sub,
            a: 8,
            b: 14,
            c: 8,
        },
        Instr::Bnz { a: 8, target: 3 },
        Instr::Ready,
    ];
    let mut img = Image::new();
    for t in 0..times {
        img = img.group(on(if t % 2 == 0 { 0xFFFF } else { 0x0001 }), &[&body]);
    }
    img.program()
}

#[test]
fn the_jit_is_built_at_the_first_hot_frame_only() {
    let mut auto = Auto::new();
    assert!(!auto.jit_built() && auto.jit().is_none());
    // Short tasks of distinct frames: none gets hot.
    for n in 0..20 {
        let f = distinct(n);
        let p = single(0xFFFF, &f.instrs);
        run_on(&mut auto, &p, &[], &Config::default()).unwrap();
    }
    assert!(!auto.jit_built(), "twenty cold frames build no JIT");
    // A group's run is counted when it ends: the loop's second issue finds it past its
    // instruction budget.
    run_on(&mut auto, &hot_loops(2), &[], &Config::default()).unwrap();
    assert!(
        auto.jit_built(),
        "a frame past its instruction budget builds it"
    );
}

#[test]
fn background_compiles_give_the_interpreters_reports() {
    let config = Config::default();
    for (p, hot) in [
        (hot_loops(3), Hotness::default()),
        (
            hot_loops(6),
            Hotness {
                issues: 2,
                instructions: 100,
            },
        ),
    ] {
        let want = run_on(&mut Interpreter::new(), &p, &[], &config);
        assert!(want.is_ok());
        let mut auto = Auto::with_options(hot, JitOptions::default()).unwrap();
        assert_eq!(auto.mode(), CompileMode::Background);
        // Runs that switch whenever the code arrives, then runs with it surely in use.
        for _ in 0..3 {
            assert_eq!(run_on(&mut auto, &p, &[], &config), want);
        }
        auto.wait_for_compiles();
        assert_eq!(auto.compiles_pending(), 0);
        for _ in 0..2 {
            assert_eq!(run_on(&mut auto, &p, &[], &config), want);
        }
        let stats = auto.jit().expect("the loop got hot").stats();
        assert!(
            stats.compiled >= 1 && stats.lanes_compiled >= 1,
            "{stats:?}"
        );
    }
}

#[test]
fn the_hotness_table_keeps_its_size_over_100000_distinct_frames() {
    let mut auto = synchronous(40);
    assert_eq!(auto.counted_capacity(), HOT_TABLE_FRAMES);
    // A warm frame among the stream: issued twice, then again every 2,500 fresh frames,
    // it must stay counted (it has more issues than the frames around it) and compile at
    // its 40th issue.
    let warm = distinct(1 << 23);
    auto.prepare(&warm).unwrap();
    auto.prepare(&warm).unwrap();
    let mut warm_issues = 2;
    let mut warm_code = None;
    for n in 0..100_000 {
        let code = auto.prepare(&distinct(n)).unwrap();
        assert!(matches!(code, AutoCode::Interpreted(_)));
        if n % 2_500 == 0 && warm_issues < 40 {
            warm_issues += 1;
            warm_code = Some(auto.prepare(&warm).unwrap());
        }
        assert!(auto.counted() <= HOT_TABLE_FRAMES);
    }
    assert_eq!(warm_issues, 40);
    assert!(
        matches!(warm_code, Some(AutoCode::Compiled(_))),
        "the warm frame was counted through the stream"
    );
    assert_eq!(auto.counted_capacity(), HOT_TABLE_FRAMES);
    assert!(auto.counted() > HOT_TABLE_FRAMES / 2, "the table is in use");
}
