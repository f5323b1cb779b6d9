//! The unusual but legal shapes the generator promises actually occur, over a few thousand
//! seeds of every profile: control frames with no instruction frames, instruction words with
//! ignored bits set (that still mean the same as their canonical word), reserved control-frame
//! bits, and streams longer than the 64-frame task memory. Every such program still loads,
//! still terminates in the interpreter, and the same seed still gives the same bytes.
//! Everything here is read back from the bytes with the machine crate, not from the generator.

use gpu16_gen::{generate, generate_violating, Profile, Violation};
use gpu16_interp::Interpreter;
use gpu16_machine::engine::isa::Instr;
use gpu16_machine::engine::semantics::execute;
use gpu16_machine::{run, Config, IssuePolicy, Program, TaskLog};

const SEEDS: u64 = 3000;
const FRAME: usize = 32;
const TASK_MEMORY: usize = 64;

/// The groups fuzz cases ask for (1..=6), varied by seed.
fn groups(seed: u64) -> usize {
    1 + (seed % 6) as usize
}

/// What the bytes of the programs of one profile contain.
#[derive(Default, Debug)]
struct Shapes {
    programs: u64,
    empty_cfs: u64,
    /// CFs whose header bits 15:8 or bytes 6..15 are nonzero.
    reserved_cfs: u64,
    ignored_nop: u64,
    ignored_bnz: u64,
    ignored_shift: u64,
    ignored_set_const: u64,
    ignored_ready: u64,
    long: u64,
    max_frames: usize,
}

/// The ignored bits of a word, by the binding machine rules (decisions.md), spelled out here
/// independently of the generator.
fn ignored_mask(word: u16) -> u16 {
    match word >> 12 {
        0x0 | 0xf => 0x0FFF,
        0xe => 0x000F,
        0x6 | 0x7 => 0x0080,
        0xc if word & 0xF < 8 => 0x0FF0,
        _ => 0,
    }
}

/// A word and the same word with its ignored bits cleared act alike on any registers.
fn same_semantics(word: u16) {
    let canon = word & !ignored_mask(word);
    let (a, b) = (Instr::decode(word).unwrap(), Instr::decode(canon).unwrap());
    assert_eq!(a.mnemonic(), b.mnemonic(), "{word:04x}");
    for (core, fill) in [(0u8, 0u8), (5, 0x5a), (15, 0xff)] {
        let mut r1: [u8; 16] = std::array::from_fn(|i| fill.wrapping_mul(i as u8 + 1));
        let mut r2 = r1;
        assert_eq!(
            execute(a, &mut r1, core),
            execute(b, &mut r2, core),
            "{word:04x}"
        );
        assert_eq!(r1, r2, "{word:04x} vs {canon:04x}");
    }
}

/// Walk an image positionally and count its shapes.
fn count(image: &[u8], s: &mut Shapes) {
    assert_eq!(image.len() % FRAME, 0);
    let frames = image.len() / FRAME;
    s.programs += 1;
    s.max_frames = s.max_frames.max(frames);
    s.long += u64::from(frames > TASK_MEMORY);
    let mut i = 0;
    while i < frames {
        let cf = &image[i * FRAME..(i + 1) * FRAME];
        let n = usize::from(cf[0] & 0x3F);
        s.empty_cfs += u64::from(n == 0);
        s.reserved_cfs += u64::from(cf[1] != 0 || cf[6..16].iter().any(|&b| b != 0));
        for f in i + 1..=i + n {
            for w in image[f * FRAME..(f + 1) * FRAME].chunks_exact(2) {
                let word = u16::from_le_bytes([w[0], w[1]]);
                if word & ignored_mask(word) == 0 {
                    continue;
                }
                same_semantics(word);
                match word >> 12 {
                    0x0 => s.ignored_nop += 1,
                    0xe => s.ignored_bnz += 1,
                    0x6 | 0x7 => s.ignored_shift += 1,
                    0xc => s.ignored_set_const += 1,
                    _ => s.ignored_ready += 1,
                }
            }
        }
        i += n + 1;
    }
}

fn config(seed: u64) -> Config {
    Config {
        issue: if seed.is_multiple_of(2) {
            IssuePolicy::InOrder
        } else {
            IssuePolicy::Lookahead
        },
        bank_conflicts: seed % 4 >= 2,
        max_cycles: 10_000_000,
        tasks: TaskLog::None,
        ..Config::default()
    }
}

/// Generate, count, load and run the programs of one profile.
fn survey(profile: Profile) -> Shapes {
    let mut s = Shapes::default();
    for seed in 0..SEEDS {
        let g = generate(seed, groups(seed), profile);
        count(&g.image, &mut s);
        let name = profile.name();
        let p = Program::from_image(&g.image)
            .unwrap_or_else(|e| panic!("{name} seed {seed} does not load: {e}"));
        let frames = g.image.len() / FRAME;
        match run(&mut Interpreter::new(), &p, &g.memory, &config(seed)) {
            Ok(r) if frames > TASK_MEMORY => {
                // A stream is padded with short tasks: it stays cheap to run.
                assert!(
                    r.cycles < 100_000,
                    "{name} seed {seed}: {} cycles",
                    r.cycles
                );
            }
            Ok(_) => {}
            Err(f) => panic!("{name} seed {seed} does not finish: {}", f.error),
        }
    }
    s
}

fn check_common(profile: Profile, s: &Shapes) {
    let n = s.programs;
    assert!(s.empty_cfs >= n / 50, "{profile:?}: {s:?}");
    assert!(s.reserved_cfs >= n / 50, "{profile:?}: {s:?}");
    assert!(s.ignored_nop >= 200, "{profile:?}: {s:?}");
    assert!(s.ignored_bnz >= 200, "{profile:?}: {s:?}");
    assert!(s.ignored_shift >= 200, "{profile:?}: {s:?}");
    assert!(s.ignored_set_const >= 200, "{profile:?}: {s:?}");
    assert!(s.ignored_ready >= 200, "{profile:?}: {s:?}");
}

#[test]
fn alu_memory_atomics_shapes_occur_and_programs_finish() {
    for profile in [Profile::Alu, Profile::Memory, Profile::Atomics] {
        let s = survey(profile);
        check_common(profile, &s);
        // These profiles keep to a handful of groups: never a stream.
        assert_eq!(s.long, 0, "{profile:?}: {s:?}");
    }
}

#[test]
fn scheduler_shapes_and_long_streams_occur_and_programs_finish() {
    let s = survey(Profile::Scheduler);
    check_common(Profile::Scheduler, &s);
    assert!(s.long >= SEEDS / 20, "{s:?}");
}

#[test]
fn mixed_shapes_and_long_streams_occur_and_programs_finish() {
    let s = survey(Profile::Mixed);
    check_common(Profile::Mixed, &s);
    assert!(s.long >= SEEDS / 100 && s.long <= SEEDS / 15, "{s:?}");
}

#[test]
fn same_seed_same_bytes_for_every_profile() {
    for profile in Profile::ALL {
        let mut long = false;
        for seed in (0..200).map(|s| s * 7919) {
            let a = generate(seed, groups(seed), profile);
            assert_eq!(
                a,
                generate(seed, groups(seed), profile),
                "{profile:?} {seed}"
            );
            long |= a.image.len() > TASK_MEMORY * FRAME;
            let v = Violation::ALL[(seed % Violation::ALL.len() as u64) as usize];
            assert_eq!(
                generate_violating(seed, 3, profile, v),
                generate_violating(seed, 3, profile, v),
                "{profile:?} {seed} {v:?}"
            );
        }
        if profile == Profile::Scheduler {
            assert!(long, "streams are among the seeds compared");
        }
    }
    assert_ne!(
        generate(1, 3, Profile::Mixed),
        generate(2, 3, Profile::Mixed)
    );
}
