//! `--mem-png FILE`: shared memory as a 64 x 64 picture, one byte a pixel, address
//! y * 64 + x (so each bank is four rows of the picture), through a palette. `gray` writes an
//! 8-bit grayscale PNG whose pixels are the bytes themselves, so the picture is also an exact
//! dump; the other palettes write RGB for the eye. `--png-scale N` draws each byte as an
//! N x N square, for a picture big enough to look at.

use gpu16_machine::MEMORY_BYTES;
use std::io::Write;

/// The picture's side in pixels at scale 1.
pub(crate) const SIDE: u32 = 64;

/// The largest `--png-scale`: a 2048 x 2048 picture, 12 MiB of RGB at most.
pub const MAX_SCALE: u32 = 32;

/// How a byte becomes a colour.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum Palette {
    /// The byte as a gray level: 0 black, 255 white.
    #[default]
    Gray,
    /// Black, red, yellow, white as the byte grows.
    Heat,
    /// Hue from blue (0) through green to red (255), full brightness.
    Rainbow,
}

/// The RGB colour of `v` (for `Gray`, all three channels are `v`).
pub(crate) fn color(palette: Palette, v: u8) -> [u8; 3] {
    match palette {
        Palette::Gray => [v; 3],
        Palette::Heat => {
            let x = u32::from(v) * 3;
            let ch = |lo: u32| x.saturating_sub(lo).min(255) as u8;
            [ch(0), ch(255), ch(510)]
        }
        Palette::Rainbow => {
            // Hue from 240 degrees (blue) down to 0 (red), counted in 60-degree sextants of
            // 255 steps each: 4 sextants over the 255 byte values.
            let h = (255 - u32::from(v)) * 4;
            let (sextant, f) = (h / 255, (h % 255) as u8);
            match sextant {
                0 => [255, f, 0],
                1 => [255 - f, 255, 0],
                2 => [0, 255, f],
                3 => [0, 255 - f, 255],
                _ => [0, 0, 255],
            }
        }
    }
}

/// Encode `memory` as a PNG, each byte an `scale` x `scale` square (`scale` is 1 to
/// [`MAX_SCALE`]; anything else is taken as the nearest bound).
pub fn write(
    w: impl Write,
    memory: &[u8; MEMORY_BYTES],
    palette: Palette,
    scale: u32,
) -> Result<(), png::EncodingError> {
    let scale = scale.clamp(1, MAX_SCALE);
    let side = SIDE * scale;
    let mut enc = png::Encoder::new(w, side, side);
    enc.set_depth(png::BitDepth::Eight);
    let channels = match palette {
        Palette::Gray => {
            enc.set_color(png::ColorType::Grayscale);
            1
        }
        _ => {
            enc.set_color(png::ColorType::Rgb);
            3
        }
    };
    let pixel = |v: u8| -> [u8; 3] { color(palette, v) };
    let (scale, side) = (scale as usize, side as usize);
    let mut data = Vec::with_capacity(side * side * channels);
    for row in memory.chunks(SIDE as usize) {
        let start = data.len();
        for &v in row {
            for _ in 0..scale {
                data.extend_from_slice(&pixel(v)[..channels]);
            }
        }
        // The other lines of this row of squares repeat the first.
        for _ in 1..scale {
            data.extend_from_within(start..start + side * channels);
        }
    }
    let mut writer = enc.write_header()?;
    writer.write_image_data(&data)?;
    writer.finish()
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The decoded picture: (width, height, color type, pixel bytes).
    fn decode(bytes: &[u8]) -> (u32, u32, png::ColorType, Vec<u8>) {
        let mut reader = png::Decoder::new(std::io::Cursor::new(bytes))
            .read_info()
            .unwrap();
        let mut buf = vec![0; reader.output_buffer_size().unwrap()];
        let info = reader.next_frame(&mut buf).unwrap();
        buf.truncate(info.buffer_size());
        (info.width, info.height, info.color_type, buf)
    }

    #[test]
    fn each_byte_is_a_square_of_the_scale() {
        let mut memory = [0u8; MEMORY_BYTES];
        memory[0] = 7; // x 0, y 0
        memory[65] = 200; // x 1, y 1
        let mut out = Vec::new();
        write(&mut out, &memory, Palette::Gray, 3).unwrap();
        let (w, h, color, px) = decode(&out);
        assert_eq!((w, h, color), (192, 192, png::ColorType::Grayscale));
        let at = |x: usize, y: usize| px[y * 192 + x];
        // Byte 0 covers pixels (0..3, 0..3), byte 65 covers (3..6, 3..6).
        for y in 0..3 {
            for x in 0..3 {
                assert_eq!(at(x, y), 7);
                assert_eq!(at(x + 3, y + 3), 200);
            }
        }
        assert_eq!((at(3, 0), at(0, 3), at(6, 6)), (0, 0, 0));
        // RGB palettes scale the same way; scale 1 is the exact dump.
        let mut out = Vec::new();
        write(&mut out, &memory, Palette::Heat, 2).unwrap();
        let (w, _, color, px) = decode(&out);
        assert_eq!((w, color), (128, png::ColorType::Rgb));
        assert_eq!(&px[..3], &color_of(Palette::Heat, 7));
        assert_eq!(
            &px[(128 + 1) * 3..(128 + 2) * 3],
            &color_of(Palette::Heat, 7)
        );
        let mut out = Vec::new();
        write(&mut out, &memory, Palette::Gray, 1).unwrap();
        assert_eq!(decode(&out).3, memory.to_vec());
    }

    fn color_of(palette: Palette, v: u8) -> [u8; 3] {
        color(palette, v)
    }
}
