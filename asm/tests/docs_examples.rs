//! The examples of the sections of docs/assembly.md about operators, macros, conditional
//! assembly and `.data` assemble, to the words and bytes their comments say (worked by
//! hand from the encoding table).

use gpu16_asm::{assemble, Assembly};
use gpu16_machine::Fence;

/// The ```asm blocks from the "## Operators" heading up to "## Diagnostics".
fn examples() -> Vec<String> {
    let path = concat!(env!("CARGO_MANIFEST_DIR"), "/../docs/assembly.md");
    let doc = std::fs::read_to_string(path).unwrap();
    let start = doc.find("\n## Operators\n").expect("Operators section");
    let end = doc.find("\n## Diagnostics\n").expect("Diagnostics section");
    doc[start..end]
        .split("```asm\n")
        .skip(1)
        .map(|b| b[..b.find("```").unwrap()].to_string())
        .collect()
}

fn assembled(src: &str) -> Assembly {
    assemble(src, "m.s").unwrap_or_else(|d| panic!("{src}\n{d}"))
}

fn words(a: &Assembly, f: usize) -> Vec<u16> {
    a.program
        .raw(f)
        .chunks(2)
        .map(|c| u16::from_le_bytes([c[0], c[1]]))
        .collect()
}

#[test]
fn every_example_assembles_as_its_comments_say() {
    let ex = examples();
    assert_eq!(ex.len(), 5, "operators, macros (2), conditional, data");

    let a = assembled(&ex[0]);
    assert_eq!(a.program.control(0).active, 0x000F);
    assert_eq!(a.program.control(0).fence, Fence::Rel);
    assert_eq!(words(&a, 1)[..2], [0xC018, 0xC109]);

    let a = assembled(&ex[1]);
    assert_eq!(
        words(&a, 1)[..11],
        [
            0xC038, 0xC08F, 0x18F8, // set_const 3, r8; addi r8, 8
            0xC01E, 0x28E8, 0xE830, // again@2 at slot 3
            0xC029, // set_const 2, r9
            0xC01E, 0x29E9, 0xE970, // again@3 at slot 7
            0xF000
        ]
    );

    let a = assembled(&ex[2]);
    assert_eq!(words(&a, 1)[..4], [0, 0, 0, 0xF000]);

    let a = assembled(&ex[3]);
    assert_eq!(a.program.len(), 8);
    for (k, word) in [0xC008, 0xC818, 0xC028, 0xC838].into_iter().enumerate() {
        assert_eq!(a.program.control(2 * k).active, 1 << k);
        assert_eq!(words(&a, 2 * k + 1)[0], word, "k = {k}");
    }

    let a = assembled(&ex[4]);
    let m = a.memory.as_ref().expect("has .data");
    assert_eq!(m[0x100..0x103], [1, 2, 3]);
    assert_eq!(m[0x30A..0x30C], [7, 8]);
    assert_eq!(m[0x200..0x204], [0, 1, 4, 9]);
    assert_eq!(m.iter().filter(|&&b| b != 0).count(), 8);
    assert_eq!(words(&a, 1)[..3], [0xC001, 0xC028, 0xB819]);
}

#[test]
fn the_diagnostic_shown_for_macros() {
    let ex = examples();
    let bad = ex[1].replace("addi r8, 2 * 4 ", "addi r8, 300   ");
    let d = assemble(&bad, "m.s").expect_err("300 does not fit");
    let want = "m.s:2:15: error: the constant must be -128..255, not 300
        set_const \\value, r15
                  ^^^^^^
    note: in the expansion of macro `addi`, invoked at m.s:15:5";
    assert_eq!(d.0.len(), 1);
    assert_eq!(d.0[0].to_string(), want);
    let doc = std::fs::read_to_string(concat!(env!("CARGO_MANIFEST_DIR"), "/../docs/assembly.md"))
        .unwrap();
    assert!(doc.contains(want), "docs/assembly.md shows this diagnostic");
}
