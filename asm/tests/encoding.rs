//! Every instruction form assembles to the bit pattern of the spec, checked against words
//! encoded by hand from the instruction table (opc 15:12, a 11:8, b 7:4, c 3:0).

use gpu16_asm::assemble;

/// Assemble one frame of `body` and return its 16 words.
fn words(body: &str) -> Vec<u16> {
    let src = format!(".cf mask=1\n.if\n{body}\n");
    let a = assemble(&src, "t.s").unwrap_or_else(|d| panic!("{d}"));
    let img = a.program.image();
    img[32..64]
        .chunks(2)
        .map(|c| u16::from_le_bytes([c[0], c[1]]))
        .collect()
}

fn one(line: &str) -> u16 {
    words(line)[0]
}

#[test]
fn register_operations() {
    assert_eq!(one("nop"), 0x0000);
    assert_eq!(one("add r1, r2, r3"), 0x1123);
    assert_eq!(one("sub r4, r5, r6"), 0x2456);
    assert_eq!(one("mul r15, r0, r7"), 0x3f07);
    assert_eq!(one("div r8, r9, r10"), 0x489a);
    assert_eq!(one("cmpge r11, r12, r13"), 0x5bcd);
    assert_eq!(one("and r1, r1, r1"), 0x8111);
    assert_eq!(one("or r2, r3, r4"), 0x9234);
    assert_eq!(one("xor r14, r15, r0"), 0xaef0);
    assert_eq!(one("ready"), 0xf000);
}

#[test]
fn shifts_take_an_immediate() {
    assert_eq!(one("rshft r1, 3, r2"), 0x6132);
    assert_eq!(one("lshft r9, 7, r9"), 0x7979);
    assert_eq!(one("lshft r0, 0, r1"), 0x7001);
}

#[test]
fn memory_modes_and_the_high_register() {
    // b = mode << 2 | high register.
    assert_eq!(one("ld [r4, r1], r2"), 0xb412);
    assert_eq!(one("ld_sync [r4, r1], r2"), 0xb452);
    assert_eq!(one("st [r4, r1], r5"), 0xd415);
    assert_eq!(one("st_sync [r4, r3], r5"), 0xd475);
    assert_eq!(one("ld [r15, r0], r15"), 0xbf0f);
}

#[test]
fn set_const_and_bnz() {
    assert_eq!(one("set_const 0x2a, r9"), 0xc2a9);
    assert_eq!(one("set_const 255, r15"), 0xcfff);
    assert_eq!(one("set_const -1, r8"), 0xcff8);
    assert_eq!(one("set_const 0, r3"), 0xc003);
    assert_eq!(one("bnz 7, r4"), 0xe470);
    assert_eq!(one("bnz 15, r0"), 0xe0f0);
    let w = words("nop\nloop: sub r1, r2, r1\nbnz loop, r1");
    assert_eq!(&w[..3], &[0x0000, 0x2121, 0xe110]);
    // Forward reference.
    let w = words("bnz end, r1\nnop\nend: ready");
    assert_eq!(w[0], 0xe120);
}

#[test]
fn case_numbers_and_comments() {
    assert_eq!(one("ADD R1, r2, R3 ; comment"), 0x1123);
    assert_eq!(one("set_const 0b101010, r9 // comment"), 0xc2a9);
    assert_eq!(one("set_const 6*7, r9"), 0xc2a9);
    assert_eq!(one(".word 0x1234"), 0x1234);
}

#[test]
fn unused_slots_are_ready() {
    let w = words("add r1, r2, r3");
    assert_eq!(w.len(), 16);
    assert!(w[1..].iter().all(|&x| x == 0xf000));
}

#[test]
fn control_frame_fields() {
    let a = assemble(
        ".cf mask=0x0f0f fence=acq r0=0:5,3:7\n.if\n.if\n.cf mask=0xf0f0 fence=rel\n.if\n.cf mask=0xffff\n",
        "t.s",
    )
    .unwrap();
    let img = a.program.image();
    assert_eq!(img.len(), 6 * 32);
    // Header: IF_Num 2 | acq (1 << 6) = 0x42; active 0x0f0f; init vect bits 0 and 3.
    assert_eq!(&img[0..6], &[0x42, 0x00, 0x0f, 0x0f, 0x09, 0x00]);
    assert_eq!(img[16], 5);
    assert_eq!(img[19], 7);
    assert!(img[6..16].iter().all(|&b| b == 0));
    // Second CF at frame 3: IF_Num 1 | rel (2 << 6) = 0x81.
    assert_eq!(&img[96..100], &[0x81, 0x00, 0xf0, 0xf0]);
    // Third CF: no IFs, fence no.
    assert_eq!(&img[160..164], &[0x00, 0x00, 0xff, 0xff]);
}

#[test]
fn equ_reg_and_repeat() {
    let src = "
.equ N, 3
.reg acc, r9
.cf mask=1
.repeat N, i
.if
    set_const i * 16, acc
.end
";
    let a = assemble(src, "t.s").unwrap_or_else(|d| panic!("{d}"));
    let img = a.program.image();
    assert_eq!(img.len(), 4 * 32);
    assert_eq!(img[0], 3);
    for i in 0..3u16 {
        let at = 32 * (1 + i as usize);
        assert_eq!(
            u16::from_le_bytes([img[at], img[at + 1]]),
            0xc009 | ((i * 16) << 4)
        );
    }
}

#[test]
fn include_is_relative_to_the_including_file() {
    let load = |p: &std::path::Path| -> Result<String, String> {
        match p.to_str() {
            Some("dir/lib.inc") => Ok(".equ K, 0x2a\n".into()),
            other => Err(format!("no file {other:?}")),
        }
    };
    let src = ".include \"lib.inc\"\n.cf mask=1\n.if\nset_const K, r9\n";
    let a = gpu16_asm::assemble_with(src, "dir/main.s", &load).unwrap_or_else(|d| panic!("{d}"));
    assert_eq!(&a.program.image()[32..34], &[0xa9, 0xc2]);
}
