//! disassemble(program) re-assembles to identical bytes: for random images that load
//! (reserved bits, odd R0 vectors and all), for hand-written sources, and for frames with
//! bnz targets inside and past the folded `ready` fill.

use gpu16_asm::{assemble, disassemble};
// The workspace's one random source (SplitMix64), which every generator and test draws from.
use gpu16_gen::rng::Rng;
use gpu16_machine::Program;

/// Random frames, patched just enough to load: a valid fence, an IF_Num that fits, no
/// reserved ld/st mode. Some frames are biased toward `ready` so fill folding is exercised.
fn random_image(rng: &mut Rng, frames: usize) -> Vec<u8> {
    let mut img = Vec::new();
    let mut left = frames;
    while left > 0 {
        let mut cf: Vec<u8> = (0..32).map(|_| rng.byte()).collect();
        if rng.below(2) == 0 {
            cf[1] = 0;
            cf[6..16].fill(0);
        }
        let n = rng.below(left as u64) as u8;
        let fence = rng.below(3) as u8;
        cf[0] = fence << 6 | n;
        img.extend(cf);
        for _ in 0..n {
            let ready_from = rng.below(17) as usize;
            for slot in 0..16 {
                let mut w = rng.next_u64() as u16;
                if slot >= ready_from {
                    w = 0xf000;
                }
                if matches!(w >> 12, 0xb | 0xd) && (w >> 6) & 3 >= 2 {
                    w &= !0x0080;
                }
                img.extend(w.to_le_bytes());
            }
        }
        left -= 1 + n as usize;
    }
    img
}

fn round_trip(img: &[u8]) {
    let program = Program::from_image(img).expect("generated image loads");
    let text = disassemble(&program);
    let again = assemble(&text, "dis.s").unwrap_or_else(|d| panic!("{d}\n{text}"));
    assert_eq!(again.program.image(), img, "\n{text}");
}

#[test]
fn random_loadable_images() {
    let mut rng = Rng::new(0x9e37_79b9_7f4a_7c15);
    for _ in 0..500 {
        let frames = 1 + rng.below(12) as usize;
        round_trip(&random_image(&mut rng, frames));
    }
}

#[test]
fn all_ready_frame_and_targets_in_the_fill() {
    let src = ".cf mask=0xffff\n.if\n.if\nbnz 9, r1\nL: bnz L, r2\n";
    let a = assemble(src, "t.s").unwrap();
    round_trip(&a.program.image());
    let text = disassemble(&a.program);
    // Slot 9 is in the folded fill, so its target stays a number; slot 1 gets a label.
    assert!(text.contains("bnz 9, r1"), "{text}");
    assert!(text.contains("L1:   bnz L1, r2"), "{text}");
}

#[test]
fn reserved_bits_are_shown_and_kept() {
    // nop with operand bits, bnz with bits 3:0, rshft with b[3]; a CF with reserved bytes
    // and an Init_R0 value for a core whose vector bit is clear.
    let mut img = vec![0u8; 64];
    img[0] = 1;
    img[1] = 0x80;
    img[2] = 0xff;
    img[7] = 0x11;
    img[20] = 0x33;
    let words: [u16; 3] = [0x0123, 0xe475, 0x6189];
    for (i, w) in words.iter().enumerate() {
        img[32 + 2 * i..34 + 2 * i].copy_from_slice(&w.to_le_bytes());
    }
    for i in 3..16 {
        img[32 + 2 * i..34 + 2 * i].copy_from_slice(&0xf000u16.to_le_bytes());
    }
    round_trip(&img);
    let text = disassemble(&Program::from_image(&img).unwrap());
    assert!(text.contains("reserved=1:0x80,7:0x11"), "{text}");
    assert!(text.contains("r0=4:0x33 r0_vect=0x0000"), "{text}");
    assert!(text.contains(".word 0x0123"), "{text}");
    assert!(text.contains(".word 0xe475"), "{text}");
    assert!(text.contains(".word 0x6189"), "{text}");
}

/// One random instruction as source text (its own spelling, not the machine's Display)
/// and the word the spec's table gives it.
fn random_instruction(rng: &mut Rng) -> (String, u16) {
    let r = |rng: &mut Rng| rng.below(16) as u16;
    let (a, b, c) = (r(rng), r(rng), r(rng));
    let w = |opc: u16, a: u16, b: u16, c: u16| opc << 12 | a << 8 | b << 4 | c;
    match rng.below(12) {
        0 => ("nop".into(), 0),
        1 => ("ready".into(), 0xf000),
        2 => {
            let (name, opc) = [
                ("add", 1),
                ("sub", 2),
                ("mul", 3),
                ("div", 4),
                ("cmpge", 5),
                ("and", 8),
                ("or", 9),
                ("xor", 10),
            ][rng.below(8) as usize];
            (format!("{name} r{a},r{b} , R{c}"), w(opc, a, b, c))
        }
        3 | 4 => {
            let k = rng.below(8) as u16;
            let (name, opc) = if rng.below(2) == 0 {
                ("rshft", 6)
            } else {
                ("lshft", 7)
            };
            (format!("{name} r{a}, {k}, r{c}"), w(opc, a, k, c))
        }
        5..=8 => {
            let hi = rng.below(4) as u16;
            let (name, opc, mode) = [
                ("ld", 0xb, 0),
                ("ld_sync", 0xb, 1),
                ("st", 0xd, 0),
                ("st_sync", 0xd, 1),
            ][rng.below(4) as usize];
            (
                format!("{name} [r{a}, r{hi}], r{c}"),
                w(opc, a, mode << 2 | hi, c),
            )
        }
        9 | 10 => {
            let k = rng.byte() as u16;
            (format!("set_const {k:#x}, r{c}"), 0xc000 | k << 4 | c)
        }
        _ => (format!("bnz {b}, r{a}"), w(0xe, a, b, 0)),
    }
}

#[test]
fn generated_sources_assemble_to_the_table_and_round_trip() {
    let mut rng = Rng::new(42);
    for _ in 0..300 {
        let frames = 1 + rng.below(4) as usize;
        let mut src = format!(".cf mask={:#x}\n", rng.next_u64() as u16);
        let mut want = Vec::new();
        for _ in 0..frames {
            src.push_str(".if\n");
            let n = rng.below(17) as usize;
            let mut words = vec![0xf000u16; 16];
            for word in words.iter_mut().take(n) {
                let (line, w) = random_instruction(&mut rng);
                src.push_str(&format!("    {line}\n"));
                *word = w;
            }
            want.push(words);
        }
        let a = assemble(&src, "g.s").unwrap_or_else(|d| panic!("{d}\n{src}"));
        let img = a.program.image();
        for (f, words) in want.iter().enumerate() {
            let at = 32 * (f + 1);
            let got: Vec<u16> = img[at..at + 32]
                .chunks(2)
                .map(|c| u16::from_le_bytes([c[0], c[1]]))
                .collect();
            assert_eq!(&got, words, "\n{src}");
        }
        round_trip(&img);
    }
}

/// The source map keeps each frame's labels, and the labelled disassembly uses them; it
/// re-assembles to the same words.
#[test]
fn labels_are_kept_and_named_by_the_labelled_lines() {
    let src =
        ".cf mask=1\n.if\n  set_const 2, r1\nagain:\n  sub r1, r2, r1\n  bnz again, r1\nend:\n";
    let a = assemble(src, "l.s").unwrap();
    assert!(a.source_map.frames[0].labels.is_empty());
    let labels = &a.source_map.frames[1].labels;
    assert_eq!(labels, &[("again".to_string(), 1), ("end".to_string(), 3)]);
    let words = &a.program.instr(1).words;
    let lines = gpu16_asm::frame_lines_labelled(words, gpu16_machine::Dialect::Spec, labels);
    assert_eq!(
        lines,
        [
            "      set_const 0x02, r1",
            "again: sub r1, r2, r1",
            "      bnz again, r1"
        ]
    );
    let text = format!(".cf mask=1\n.if\n{}\n", lines.join("\n"));
    assert_eq!(
        assemble(&text, "l2.s").unwrap().program.instr(1).words,
        *words
    );
}
