//! The 16 x 16 byte transposition between registers by core (`CoreState::regs`) and
//! registers by lane (a lane file's register vectors): the cost of every lockstep entry
//! and exit with many live registers.

/// The 16 x 16 byte matrix `m` transposed: `transpose(m)[j][i] == m[i][j]`.
#[inline]
pub(crate) fn transpose(m: &[[u8; 16]; 16]) -> [[u8; 16]; 16] {
    #[cfg(target_arch = "x86_64")]
    // SAFETY: `transpose_sse2` needs only SSE2, which every x86-64 processor has (it is
    // part of the x86-64 baseline Rust builds for).
    unsafe {
        transpose_sse2(m)
    }
    #[cfg(not(target_arch = "x86_64"))]
    {
        transpose_words(m)
    }
}

/// [`transpose`] in SSE2 (every x86-64 has it): four rounds of interleaves of 16 rows, of
/// bytes, then pairs, quads and eights of them, about 100 instructions where the word
/// form takes several hundred.
#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "sse2")]
fn transpose_sse2(m: &[[u8; 16]; 16]) -> [[u8; 16]; 16] {
    use std::arch::x86_64::{
        __m128i, _mm_cvtsi128_si64, _mm_set_epi64x, _mm_unpackhi_epi16, _mm_unpackhi_epi32,
        _mm_unpackhi_epi64, _mm_unpackhi_epi8, _mm_unpacklo_epi16, _mm_unpacklo_epi32,
        _mm_unpacklo_epi64, _mm_unpacklo_epi8,
    };
    let from_row = |row: &[u8; 16]| {
        let x = u128::from_le_bytes(*row);
        _mm_set_epi64x((x >> 64) as i64, x as i64)
    };
    let to_row = |v: __m128i| {
        let lo = _mm_cvtsi128_si64(v) as u64;
        let hi = _mm_cvtsi128_si64(_mm_unpackhi_epi64(v, v)) as u64;
        (u128::from(lo) | u128::from(hi) << 64).to_le_bytes()
    };
    // Each round interleaves vector `i` with vector `i + 8`, the low halves into slot 2i
    // and the high halves into slot 2i + 1. That keeps the columns in order (after four
    // rounds slot j holds column j) and leaves a column's bytes in the bit-reversed order
    // of the vectors' rows, so row `i` is loaded into vector `i` bit-reversed.
    const ROW_OF: [usize; 16] = [0, 8, 4, 12, 2, 10, 6, 14, 1, 9, 5, 13, 3, 11, 7, 15];
    let v: [__m128i; 16] = std::array::from_fn(|i| from_row(&m[ROW_OF[i]]));
    let v = round(
        &v,
        |a, b| _mm_unpacklo_epi8(a, b),
        |a, b| _mm_unpackhi_epi8(a, b),
    );
    let v = round(
        &v,
        |a, b| _mm_unpacklo_epi16(a, b),
        |a, b| _mm_unpackhi_epi16(a, b),
    );
    let v = round(
        &v,
        |a, b| _mm_unpacklo_epi32(a, b),
        |a, b| _mm_unpackhi_epi32(a, b),
    );
    let v = round(
        &v,
        |a, b| _mm_unpacklo_epi64(a, b),
        |a, b| _mm_unpackhi_epi64(a, b),
    );
    std::array::from_fn(|j| to_row(v[j]))
}

/// One round of [`transpose_sse2`]: slot 2i gets `lo` of vectors i and i + 8, slot 2i + 1
/// their `hi`.
#[cfg(target_arch = "x86_64")]
#[inline(always)]
fn round(
    v: &[std::arch::x86_64::__m128i; 16],
    lo: impl Fn(std::arch::x86_64::__m128i, std::arch::x86_64::__m128i) -> std::arch::x86_64::__m128i,
    hi: impl Fn(std::arch::x86_64::__m128i, std::arch::x86_64::__m128i) -> std::arch::x86_64::__m128i,
) -> [std::arch::x86_64::__m128i; 16] {
    let mut out = *v;
    for i in 0..8 {
        out[2 * i] = lo(v[i], v[i + 8]);
        out[2 * i + 1] = hi(v[i], v[i + 8]);
    }
    out
}

/// [`transpose`] on any target (the x86-64 form is tested against it). Each 8 x 8 block is eight little-endian words, transposed by three rounds of
/// swaps, which keeps an entry's two transpositions to a few dozen word operations rather
/// than 512 byte moves.
#[cfg(any(test, not(target_arch = "x86_64")))]
fn transpose_words(m: &[[u8; 16]; 16]) -> [[u8; 16]; 16] {
    let mut out = [[0u8; 16]; 16];
    for bi in 0..2 {
        for bj in 0..2 {
            let mut x: [u64; 8] = std::array::from_fn(|i| {
                let mut word = [0u8; 8];
                word.copy_from_slice(&m[8 * bi + i][8 * bj..8 * bj + 8]);
                u64::from_le_bytes(word)
            });
            // Swap the off-diagonal 4 x 4, then 2 x 2, then 1 x 1 blocks.
            for (shift, mask, pairs) in [
                (
                    32,
                    0x0000_0000_FFFF_FFFF_u64,
                    [(0, 4), (1, 5), (2, 6), (3, 7)],
                ),
                (16, 0x0000_FFFF_0000_FFFF, [(0, 2), (1, 3), (4, 6), (5, 7)]),
                (8, 0x00FF_00FF_00FF_00FF, [(0, 1), (2, 3), (4, 5), (6, 7)]),
            ] {
                for (a, b) in pairs {
                    let t = ((x[a] >> shift) ^ x[b]) & mask;
                    x[a] ^= t << shift;
                    x[b] ^= t;
                }
            }
            for (i, word) in x.iter().enumerate() {
                out[8 * bj + i][8 * bi..8 * bi + 8].copy_from_slice(&word.to_le_bytes());
            }
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::{transpose, transpose_words};

    /// A matrix whose every byte differs, from `seed`.
    fn matrix(seed: u8) -> [[u8; 16]; 16] {
        std::array::from_fn(|i| {
            std::array::from_fn(|j| ((i * 16 + j) as u8).wrapping_mul(7).wrapping_add(seed))
        })
    }

    #[test]
    fn transpose_moves_every_byte_across_the_diagonal() {
        for seed in [0, 1, 0x5A, 0xFF] {
            let m = matrix(seed);
            for t in [transpose(&m), transpose_words(&m)] {
                for (j, column) in t.iter().enumerate() {
                    for (i, &byte) in column.iter().enumerate() {
                        assert_eq!(byte, m[i][j], "seed {seed}: ({j}, {i})");
                    }
                }
                assert_eq!(transpose(&t), m);
                assert_eq!(transpose_words(&t), m);
            }
        }
    }
}
