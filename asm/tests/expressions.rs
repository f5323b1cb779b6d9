//! Comparison and logical operators in constant expressions, with C precedence and 1/0
//! results, and `fence=` given as an expression. Every expected value is worked by hand.

use gpu16_asm::assemble;
use gpu16_machine::Fence;

/// The value `expr` gives, read back from `set_const EXPR, r8` (word 0xCkk8), so it must be
/// 0..255.
fn value(expr: &str) -> u8 {
    let src = format!(".equ four, 4\n.equ zero, 0\n.cf mask=1\n.if\n set_const {expr}, r8\n");
    let a = assemble(&src, "e.s").unwrap_or_else(|d| panic!("{expr}:\n{d}"));
    let raw = a.program.raw(1);
    let word = u16::from_le_bytes([raw[0], raw[1]]);
    assert_eq!(word & 0xF00F, 0xC008, "{expr}");
    (word >> 4) as u8
}

/// The one error of `expr` in the same place: (column, message).
fn error(expr: &str) -> (usize, String) {
    let src = format!(".equ four, 4\n.equ zero, 0\n.cf mask=1\n.if\n set_const {expr}, r8\n");
    let d = assemble(&src, "e.s").expect_err(expr);
    assert_eq!(d.0.len(), 1, "{d}");
    let (line, col) = d.0[0].position().unwrap();
    assert_eq!(line, 5);
    (col, d.0[0].message.clone())
}

#[test]
fn comparisons_give_one_or_zero() {
    for (expr, want) in [
        ("3 == 3", 1),
        ("3 == 4", 0),
        ("3 != 4", 1),
        ("3 != 3", 0),
        ("2 < 3", 1),
        ("3 < 3", 0),
        ("3 <= 3", 1),
        ("4 <= 3", 0),
        ("4 > 3", 1),
        ("3 > 3", 0),
        ("3 >= 3", 1),
        ("2 >= 3", 0),
        ("-1 < 0", 1), // signed 64-bit comparison
        ("four == 4", 1),
    ] {
        assert_eq!(value(expr), want, "{expr}");
    }
}

#[test]
fn logic_operators_and_not() {
    for (expr, want) in [
        ("1 && 5", 1),
        ("1 && 0", 0),
        ("0 || 7", 1),
        ("0 || 0", 0),
        ("!0", 1),
        ("!9", 0),
        ("!!9", 1),
        ("!zero", 1),
    ] {
        assert_eq!(value(expr), want, "{expr}");
    }
}

#[test]
fn c_precedence() {
    for (expr, want) in [
        // comparison binds looser than arithmetic and shifts: (1 + 2) == 3, (1 << 2) > 3
        ("1 + 2 == 3", 1),
        ("1 << 2 > 3", 1),
        // relational binds tighter than equality: 1 == (2 < 3)
        ("1 == 2 < 3", 1),
        // equality binds tighter than &: 6 & (3 == 3) = 6 & 1 = 0
        ("6 & 3 == 3", 0),
        // && binds tighter than ||: 1 || (0 && 0) = 1
        ("1 || 0 && 0", 1),
        // (0 && 1) || 1 = 1; 0 && (1 || 1) would be 0
        ("0 && 1 || 1", 1),
        // | binds tighter than &&: (2 | 1) && 4 = 1
        ("2 | 1 && 4", 1),
        // unary ! binds tightest: (!0) + 4 = 5
        ("!0 + 4", 5),
        ("!(0 + 4)", 0),
        // a comparison's result takes part in arithmetic: (2 > 1) * 10 + (1 > 2) = 10
        ("(2 > 1) * 10 + (1 > 2)", 10),
    ] {
        assert_eq!(value(expr), want, "{expr}");
    }
}

#[test]
fn short_circuit_skips_arithmetic_errors_not_names() {
    assert_eq!(value("zero != 0 && 8 / zero > 1"), 0);
    assert_eq!(value("zero == 0 || 8 / zero > 1"), 1);
    assert_eq!(value("0 && 9223372036854775807 + 1"), 0);
    // the needed operand is evaluated, and fails as before
    let (col, msg) = error("four != 0 && 8 / zero > 1");
    assert_eq!(
        (col, msg.as_str()),
        (27, "division by zero in a constant expression")
    );
    // a skipped operand's names must still be defined
    let (col, msg) = error("0 && nosuch");
    assert_eq!(
        (col, msg.as_str()),
        (17, "`nosuch` is not defined (no `.equ nosuch`)")
    );
}

#[test]
fn malformed_expressions_are_errors_at_their_token() {
    // the operand missing after `==` is where the `,` stands
    let (col, msg) = error("1 == ");
    assert_eq!((col, msg.as_str()), (17, "expected a number, found `,`"));
    let (col, msg) = error("1 < < 2");
    assert_eq!((col, msg.as_str()), (16, "expected a number, found `<`"));
    // `=` alone is not an operator: the statement sees it after the value
    let (col, msg) = error("1 = 1");
    assert_eq!(col, 14);
    assert!(msg.contains("`=`"), "{msg}");
}

fn fence_of(option: &str) -> Result<Fence, String> {
    let src = format!(".equ two, 2\n.cf mask=1 fence={option}\n");
    match assemble(&src, "f.s") {
        Ok(a) => Ok(a.program.control(0).fence),
        Err(d) => Err(d.0[0].message.clone()),
    }
}

#[test]
fn fence_takes_keywords_or_an_expression_of_its_encoding() {
    assert_eq!(fence_of("acq"), Ok(Fence::Acq));
    assert_eq!(fence_of("REL"), Ok(Fence::Rel));
    assert_eq!(fence_of("0"), Ok(Fence::No));
    assert_eq!(fence_of("1"), Ok(Fence::Acq));
    assert_eq!(fence_of("two"), Ok(Fence::Rel));
    assert_eq!(fence_of("(two == 2) + 1"), Ok(Fence::Rel));
    assert_eq!(fence_of("3 > 2"), Ok(Fence::Acq));
    assert_eq!(
        fence_of("3"),
        Err("fence 3 is reserved (a load error): use 0 no, 1 acq or 2 rel".into())
    );
    assert_eq!(
        fence_of("4"),
        Err("the fence (0 no, 1 acq, 2 rel) must be 0..3, not 4".into())
    );
    assert_eq!(
        fence_of("acquire"),
        Err("fence must be no, acq or rel".into())
    );
    // the field's header bits 7:6 hold the encoding
    let a = assemble(".cf mask=1 fence=1 + 1\n", "f.s").unwrap();
    assert_eq!(a.program.raw(0)[0] >> 6, 2);
}
