//! Every implementation of the one instruction definition agrees with plain Rust over
//! exhaustive 8-bit operands. This file holds the JIT's lowerings, per-core and lockstep
//! (and the interpreter's concrete domain beside them), to hand-written formulas; `machine/src/engine/banks.rs` holds the
//! symbolic domain to the concrete one.
//!
//! One run computes 4096 results: core k (x = its R0, set by the control frame) loops y over
//! 0..255 and stores `x op y` at bank k, row y. Sixteen runs with different R0 values cover
//! all 65,536 operand pairs; the frame is compiled once.

use gpu16_interp::Interpreter;
use gpu16_jit::{Engine, Jit, JitOptions};
use gpu16_machine::engine::backend::Backend;
use gpu16_machine::engine::isa::{AluOp, Instr, MemOp};
use gpu16_machine::frame::{ControlFrame, Fence, InstrFrame};
use gpu16_machine::{run, Config, Program};

/// The operation under test reads x from r0 and y from r9 and leaves its byte in r11.
fn table_frame(op: &[Instr]) -> InstrFrame {
    let mut code = vec![
        Instr::SetConst { k: 0, d: 1 },  // r1 = core id: the bank
        Instr::SetConst { k: 0, d: 9 },  // r9 = y = 0
        Instr::SetConst { k: 1, d: 10 }, // r10 = 1
    ];
    let head = code.len() as u8;
    code.extend_from_slice(op);
    code.extend_from_slice(&[
        Instr::Mem {
            op: MemOp::St,
            a: 9,
            hi: 1,
            r: 11,
        },
        Instr::Alu {
            op: AluOp::Add,
            a: 9,
            b: 10,
            c: 9,
        },
        Instr::Bnz { a: 9, target: head },
        Instr::Ready,
    ]);
    InstrFrame::padded(&code, Instr::Ready)
}

/// Run the table frame with x = 16 * run + core on every core; `expect(x, y)` is the byte.
fn check_table<B: Backend>(
    backend: &mut B,
    name: &str,
    op: &[Instr],
    expect: impl Fn(u8, u8) -> u8,
) {
    let frame = table_frame(op).bytes();
    for run_no in 0..16u8 {
        let r0: Vec<(usize, u8)> = (0..16).map(|c| (c, run_no * 16 + c as u8)).collect();
        let cf = ControlFrame::new(1, Fence::No, 0xFFFF, &r0).encode();
        let program = Program::from_frames(vec![cf, frame]).expect("a valid program");
        let report = run(backend, &program, &[], &Config::default()).expect("runs");
        for core in 0..16u16 {
            let x = run_no * 16 + core as u8;
            for y in 0..=255u8 {
                let got = report.memory[usize::from(core << 8 | u16::from(y))];
                assert_eq!(
                    got,
                    expect(x, y),
                    "{name} on {}: x = {x:#04x}, y = {y:#04x}",
                    backend.name()
                );
            }
        }
    }
}

fn alu(op: AluOp) -> Instr {
    Instr::Alu {
        op,
        a: 0,
        b: 9,
        c: 11,
    }
}

/// The hand-written meaning of each ALU operation (decisions.md's table).
fn formula(op: AluOp) -> fn(u8, u8) -> u8 {
    match op {
        AluOp::Add => |x, y| x.wrapping_add(y),
        AluOp::Sub => |x, y| x.wrapping_sub(y),
        AluOp::And => |x, y| x & y,
        AluOp::Or => |x, y| x | y,
        AluOp::Xor => |x, y| x ^ y,
        AluOp::Cmpge => |x, y| (x >= y) as u8,
        AluOp::Div => |x, y| x.checked_div(y).unwrap_or(0xFF),
    }
}

/// The interpreter (bytes), the JIT's per-core form (scalar Cranelift values) and its
/// lockstep form (i8x16 lanes, every core of the table at once).
fn both(name: &str, op: &[Instr], expect: impl Fn(u8, u8) -> u8 + Copy) {
    check_table(&mut Interpreter::new(), name, op, expect);
    for engine in [Engine::PerCore, Engine::Lockstep] {
        let mut jit = Jit::with_options(JitOptions {
            engine,
            ..JitOptions::default()
        })
        .unwrap();
        check_table(&mut jit, name, op, expect);
        let s = jit.stats();
        let compiled = if engine == Engine::Lockstep {
            s.lanes_compiled
        } else {
            s.compiled
        };
        assert_eq!(compiled, 1, "{name}: the {engine:?} form ran");
    }
}

#[test]
fn alu_operations_over_every_operand_pair() {
    for op in AluOp::ALL {
        both(op.mnemonic(), &[alu(op)], formula(op));
    }
}

#[test]
fn mul_low_and_high_bytes_over_every_operand_pair() {
    let mul = Instr::Mul { a: 0, b: 9, c: 11 };
    both("mul (low)", &[mul], |x, y| {
        (u16::from(x) * u16::from(y)) as u8
    });
    // The high byte lands in r12; copy it to r11 for the store.
    let copy = Instr::Alu {
        op: AluOp::Or,
        a: 12,
        b: 12,
        c: 11,
    };
    both("mul (high)", &[mul, copy], |x, y| {
        ((u16::from(x) * u16::from(y)) >> 8) as u8
    });
}

#[test]
fn shifts_by_every_amount_over_every_operand() {
    for k in 0..8u8 {
        for left in [false, true] {
            let sh = Instr::Shift {
                left,
                a: 0,
                k,
                c: 11,
            };
            let name = format!("{} by {k}", if left { "lshft" } else { "rshft" });
            both(&name, &[sh], move |x, _| if left { x << k } else { x >> k });
        }
    }
}

#[test]
fn set_const_loads_the_core_id_below_r8_and_the_constant_from_r8() {
    // r11 = k (d >= 8); the value is the same for every y.
    for k in [0u8, 1, 0x5a, 0xff] {
        both(
            "set_const r11",
            &[Instr::SetConst { k, d: 11 }],
            move |_, _| k,
        );
    }
    // set_const into r3 loads the core id whatever k is; copy it to r11. x = 16*run+core,
    // so the core id is x mod 16.
    let copy = Instr::Alu {
        op: AluOp::Or,
        a: 3,
        b: 3,
        c: 11,
    };
    both(
        "set_const r3",
        &[Instr::SetConst { k: 0xab, d: 3 }, copy],
        |x, _| x % 16,
    );
}

#[test]
fn bnz_decides_on_zero_over_every_operand() {
    // r11 = 1; bnz skips the clear when x != 0: r11 = (x != 0).
    let head = 3u8;
    let code = [
        Instr::SetConst { k: 1, d: 11 },
        Instr::Bnz {
            a: 0,
            target: head + 3,
        },
        Instr::SetConst { k: 0, d: 11 },
    ];
    both("bnz", &code, |x, _| u8::from(x != 0));
}

#[test]
fn out_of_range_instruction_fields_compile_without_panicking() {
    // `Instr` fields are plain integers; the one definition takes them modulo the field
    // width, as the 16-bit encoding does, so no value can index past the register file.
    let wild = [
        Instr::Alu {
            op: AluOp::Add,
            a: 200,
            b: 17,
            c: 99,
        },
        Instr::Mul {
            a: 31,
            b: 32,
            c: 255,
        },
        Instr::Shift {
            left: true,
            a: 16,
            k: 250,
            c: 40,
        },
        Instr::SetConst { k: 1, d: 77 },
        Instr::Mem {
            op: MemOp::Ld,
            a: 20,
            hi: 9,
            r: 33,
        },
        Instr::Bnz { a: 50, target: 66 },
    ];
    let frame = InstrFrame::padded(&wild, Instr::Ready);
    assert!(Jit::new().prepare(&frame).is_ok());
    assert!(Interpreter::new().prepare(&frame).is_ok());
}
