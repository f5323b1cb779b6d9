//! `--mem-png FILE`: shared memory as a 64 x 64 picture, one byte a pixel, address
//! y * 64 + x (so each bank is four rows of the picture), through a palette. `gray` writes an
//! 8-bit grayscale PNG whose pixels are the bytes themselves, so the picture is also an exact
//! dump; the other palettes write RGB for the eye.

use gpu16_machine::memory::MEMORY_BYTES;
use std::io::Write;

/// The picture's side in pixels.
pub const SIDE: u32 = 64;

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
pub fn color(palette: Palette, v: u8) -> [u8; 3] {
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

/// Encode `memory` as a PNG.
pub fn write(
    w: impl Write,
    memory: &[u8; MEMORY_BYTES],
    palette: Palette,
) -> Result<(), png::EncodingError> {
    let mut enc = png::Encoder::new(w, SIDE, SIDE);
    enc.set_depth(png::BitDepth::Eight);
    let data: Vec<u8> = match palette {
        Palette::Gray => {
            enc.set_color(png::ColorType::Grayscale);
            memory.to_vec()
        }
        _ => {
            enc.set_color(png::ColorType::Rgb);
            memory.iter().flat_map(|&v| color(palette, v)).collect()
        }
    };
    let mut writer = enc.write_header()?;
    writer.write_image_data(&data)?;
    writer.finish()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn decode(bytes: &[u8]) -> (png::OutputInfo, Vec<u8>) {
        let mut reader = png::Decoder::new(std::io::Cursor::new(bytes))
            .read_info()
            .unwrap();
        let mut buf = vec![0; reader.output_buffer_size().unwrap()];
        let info = reader.next_frame(&mut buf).unwrap();
        buf.truncate(info.buffer_size());
        (info, buf)
    }

    fn memory() -> Box<[u8; MEMORY_BYTES]> {
        let mut m = Box::new([0u8; MEMORY_BYTES]);
        m[0] = 255; // x 0, y 0
        m[65] = 7; // x 1, y 1
        m[0x105] = 10; // bank 1 row 5: x 5, y 4
        m[4095] = 128; // x 63, y 63
        m
    }

    #[test]
    fn gray_pixels_are_the_bytes() {
        let mut out = Vec::new();
        write(&mut out, &memory(), Palette::Gray).unwrap();
        let (info, px) = decode(&out);
        assert_eq!((info.width, info.height), (64, 64));
        assert_eq!(info.color_type, png::ColorType::Grayscale);
        assert_eq!(px.len(), 4096);
        let at = |x: usize, y: usize| px[y * 64 + x];
        assert_eq!(
            (at(0, 0), at(1, 1), at(5, 4), at(63, 63)),
            (255, 7, 10, 128)
        );
        assert_eq!(px.iter().filter(|&&v| v != 0).count(), 4);
    }

    #[test]
    fn colour_palettes() {
        let mut out = Vec::new();
        write(&mut out, &memory(), Palette::Heat).unwrap();
        let (info, px) = decode(&out);
        assert_eq!(info.color_type, png::ColorType::Rgb);
        let at = |x: usize, y: usize| &px[3 * (y * 64 + x)..3 * (y * 64 + x) + 3];
        assert_eq!(at(0, 0), [255, 255, 255]);
        assert_eq!(at(1, 1), [21, 0, 0]);
        assert_eq!(at(63, 63), [255, 129, 0]);
        assert_eq!(at(2, 0), [0, 0, 0]);
        assert_eq!(color(Palette::Rainbow, 0), [0, 0, 255]);
        assert_eq!(color(Palette::Rainbow, 255), [255, 0, 0]);
        // Halfway up the scale: hue 119.5 degrees, just short of pure green.
        assert_eq!(color(Palette::Rainbow, 128), [2, 255, 0]);
        assert_eq!(color(Palette::Gray, 9), [9, 9, 9]);
    }
}
