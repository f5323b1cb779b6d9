//! The shrinker: given a program (and memory image) with some property, such as "the two
//! backends diverge on it", greedily try smaller and simpler variants — fewer groups, fewer
//! frames, instructions turned into `ready` or `nop`, fewer cores, no fences or R0 init, less
//! memory — keeping each one that still has the property, until none helps.

use gpu16_machine::frame::FRAME_BYTES;

/// Frames of a program image grouped as (control frame index, instruction frame count),
/// or `None` if the layout is broken.
fn groups(image: &[u8]) -> Option<Vec<(usize, usize)>> {
    if image.is_empty() || !image.len().is_multiple_of(FRAME_BYTES) {
        return None;
    }
    let frames = image.len() / FRAME_BYTES;
    let mut out = Vec::new();
    let mut i = 0;
    while i < frames {
        let n = usize::from(image[i * FRAME_BYTES] & 0x3F);
        if i + n >= frames {
            return None;
        }
        out.push((i, n));
        i += n + 1;
    }
    Some(out)
}

fn frame_range(i: usize) -> std::ops::Range<usize> {
    i * FRAME_BYTES..(i + 1) * FRAME_BYTES
}

/// Every one-step simplification of `image`, most aggressive first.
fn candidates(image: &[u8]) -> Vec<Vec<u8>> {
    let mut out = Vec::new();
    let Some(groups) = groups(image) else {
        return out;
    };
    // Drop a whole group.
    if groups.len() > 1 {
        for &(cf, n) in &groups {
            let mut v = image.to_vec();
            v.drain(cf * FRAME_BYTES..(cf + n + 1) * FRAME_BYTES);
            out.push(v);
        }
    }
    // Drop one instruction frame of a group.
    for &(cf, n) in &groups {
        if n > 1 {
            for j in 1..=n {
                let mut v = image.to_vec();
                v.drain(frame_range(cf + j));
                v[cf * FRAME_BYTES] -= 1;
                out.push(v);
            }
        }
    }
    // Simplify control frames: fewer cores, no fence, no R0 init.
    for &(cf, _) in &groups {
        let base = cf * FRAME_BYTES;
        let mask = u16::from_le_bytes([image[base + 2], image[base + 3]]);
        for c in 0..16 {
            if mask & (1 << c) != 0 && mask.count_ones() > 1 {
                let mut v = image.to_vec();
                v[base + 2..base + 4].copy_from_slice(&(mask & !(1 << c)).to_le_bytes());
                out.push(v);
            }
        }
        if image[base] & 0xC0 != 0 {
            let mut v = image.to_vec();
            v[base] &= 0x3F;
            out.push(v);
        }
        if image[base + 4] != 0 || image[base + 5] != 0 {
            let mut v = image.to_vec();
            v[base + 4] = 0;
            v[base + 5] = 0;
            out.push(v);
        }
    }
    // Simplify instructions: end the frame early, then blank single slots.
    for &(cf, n) in &groups {
        for j in 1..=n {
            let base = (cf + j) * FRAME_BYTES;
            for slot in 0..16 {
                let at = base + 2 * slot;
                let word = u16::from_le_bytes([image[at], image[at + 1]]);
                for replacement in [0xf000u16, 0x0000] {
                    if word != replacement && !(word >> 12 == 0xf && replacement == 0) {
                        let mut v = image.to_vec();
                        v[at..at + 2].copy_from_slice(&replacement.to_le_bytes());
                        out.push(v);
                    }
                }
                // Register fields to r0 one at a time.
                for shift in [8u16, 4, 0] {
                    let field = (word >> shift) & 0xF;
                    if field != 0 && word >> 12 != 0 {
                        let w = word & !(0xF << shift);
                        let mut v = image.to_vec();
                        v[at..at + 2].copy_from_slice(&w.to_le_bytes());
                        out.push(v);
                    }
                }
            }
        }
    }
    out
}

/// Minimize `image` and `memory` while `still(image, memory)` holds. `still` must hold for
/// the inputs. Returns the smallest pair found.
pub fn shrink(
    image: &[u8],
    memory: &[u8],
    mut still: impl FnMut(&[u8], &[u8]) -> bool,
) -> (Vec<u8>, Vec<u8>) {
    let mut image = image.to_vec();
    let mut memory = memory.to_vec();
    loop {
        let mut progressed = false;
        for cand in candidates(&image) {
            if still(&cand, &memory) {
                image = cand;
                progressed = true;
                break;
            }
        }
        // Memory: try none, then halves.
        if !memory.is_empty() {
            for cand in [Vec::new(), memory[..memory.len() / 2].to_vec()] {
                if cand.len() < memory.len() && still(&image, &cand) {
                    memory = cand;
                    progressed = true;
                    break;
                }
            }
        }
        if !progressed {
            return (image, memory);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::{generate, Profile};

    #[test]
    fn shrinks_to_the_one_instruction_that_matters() {
        // Property: some instruction frame contains a `mul` (opcode 3). A minimal program
        // keeps one group with one frame whose only non-ready slot is that mul.
        let g = generate(7, 4, Profile::Alu);
        let has_mul = |img: &[u8], _: &[u8]| {
            groups(img).is_some_and(|gs| {
                gs.iter().any(|&(cf, n)| {
                    (1..=n).any(|j| {
                        let b = &img[frame_range(cf + j)];
                        b.chunks(2).any(|w| w[1] >> 4 == 3)
                    })
                })
            })
        };
        assert!(has_mul(&g.image, &g.memory), "seed 7 should contain a mul");
        let (img, mem) = shrink(&g.image, &g.memory, has_mul);
        assert!(has_mul(&img, &mem));
        assert_eq!(img.len(), 2 * FRAME_BYTES, "one CF and one IF remain");
        assert!(mem.is_empty());
        let words: Vec<u16> = img[32..]
            .chunks(2)
            .map(|w| u16::from_le_bytes([w[0], w[1]]))
            .collect();
        let muls = words.iter().filter(|w| *w >> 12 == 3).count();
        let others = words
            .iter()
            .filter(|w| *w >> 12 != 3 && **w != 0xf000 && **w != 0)
            .count();
        assert_eq!((muls, others), (1, 0), "{words:04x?}");
    }
}
