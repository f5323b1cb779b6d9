//! `.data`: initial shared memory given in the source, by byte address or by bank and row,
//! and the image an assembly carries. Addresses are worked by hand from the spec's
//! A = bank << 8 | row.

use gpu16_asm::assemble;

const HEAD: &str = ".cf mask=1\n.if\n    ready\n";

fn memory(src: &str) -> Option<Vec<u8>> {
    assemble(&format!("{HEAD}{src}"), "d.s")
        .unwrap_or_else(|d| panic!("{d}"))
        .memory
}

/// The only error of `src` after HEAD: (line, col, message).
fn only(src: &str) -> (usize, usize, String) {
    let d = assemble(&format!("{HEAD}{src}"), "d.s").expect_err("expected an error");
    assert_eq!(d.0.len(), 1, "{d}");
    let (l, c) = d.0[0].position().unwrap();
    (l, c, d.0[0].message.clone())
}

#[test]
fn no_data_no_image() {
    assert_eq!(memory(""), None);
}

#[test]
fn by_address_fills_consecutive_bytes() {
    let m = memory(".data 0x100, 1, 2, 0xff, -1\n").unwrap();
    assert_eq!(m.len(), 4096);
    assert_eq!(m[0x100..0x104], [1, 2, 0xFF, 0xFF]);
    assert_eq!(m.iter().filter(|&&b| b != 0).count(), 4);
}

#[test]
fn by_bank_and_row() {
    // bank 3 row 10 = 0x30a; bank 15 row 255 = 0xfff
    let m = memory(".data bank=3 row=10, 7, 8\n.data row=255 bank=15, 9\n").unwrap();
    assert_eq!(m[0x30A..0x30C], [7, 8]);
    assert_eq!(m[0xFFF], 9);
}

#[test]
fn expressions_repeat_and_counters() {
    // bytes 0x200 + k = k * 3 for k = 0..3; the last address 0xfff by expression
    let m =
        memory(".repeat 4, k\n.data 0x200 + k, k * 3\n.end\n.data (1 << 12) - 1, 5 > 4\n").unwrap();
    assert_eq!(m[0x200..0x204], [0, 3, 6, 9]);
    assert_eq!(m[0xFFF], 1);
}

#[test]
fn the_same_value_twice_is_no_conflict_a_different_one_is() {
    let m = memory(".data 0x10, 4\n.data bank=0 row=16, 4\n").unwrap();
    assert_eq!(m[0x10], 4);
    assert_eq!(
        only(".data 0x10, 4\n.data bank=0 row=15, 1, 5\n"),
        (
            5,
            25,
            "address 0x010 (bank 0, row 16) already holds 0x04 from line 4; this gives 0x05".into()
        )
    );
}

#[test]
fn out_of_range() {
    assert_eq!(
        only(".data 0xffe, 1, 2, 3\n"),
        (
            4,
            20,
            "this byte would be at address 0x1000, past the end of shared memory (4096 bytes, 0x000..0xfff)"
                .into()
        )
    );
    assert_eq!(
        only(".data bank=2 row=254, 1, 2, 3\n"),
        (
            4,
            29,
            "this byte would be past row 255 of bank 2 (a `.data bank= row=` stays in its bank)"
                .into()
        )
    );
    assert_eq!(
        only(".data 4096, 1\n"),
        (
            4,
            7,
            "a shared-memory address must be 0..4095, not 4096".into()
        )
    );
    assert_eq!(
        only(".data bank=16 row=0, 1\n"),
        (4, 12, "the bank must be 0..15, not 16".into())
    );
    assert_eq!(
        only(".data 0, 256\n"),
        (4, 10, "a byte must be -128..255, not 256".into())
    );
}

#[test]
fn malformed() {
    assert_eq!(
        only(".data 0x10\n"),
        (
            4,
            11,
            "expected `,` before the first byte of `.data`, found the end of the line".into()
        )
    );
    assert_eq!(
        only(".data bank=1, 2\n"),
        (
            4,
            1,
            "`.data bank=B row=R, ...` needs both bank= and row=".into()
        )
    );
    assert_eq!(
        only(".data bank=1 col=2, 2\n"),
        (
            4,
            14,
            "unknown option `col` of `.data` (known: bank, row)".into()
        )
    );
    assert_eq!(
        only(".data 0, 1 / 0\n"),
        (4, 12, "division by zero in a constant expression".into())
    );
}

#[test]
fn data_inside_a_macro() {
    let src = ".macro fill at, v\n.data \\at, \\v, \\v\n.endm\n    fill 0x40, 6\n";
    let m = memory(src).unwrap();
    assert_eq!(m[0x40..0x42], [6, 6]);
}
