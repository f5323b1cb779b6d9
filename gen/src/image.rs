//! The program-image builder the tests and benchmarks share: frames appended one by one (a
//! control frame, instruction frames from instructions or raw words, or raw bytes), then
//! read back as the image's bytes or loaded as a [`Program`]. It checks nothing the loader
//! checks, so a test can build a malformed image on purpose and see the load error.

use gpu16_machine::engine::isa::Instr;
use gpu16_machine::engine::isa::FRAME_INSTRS;
use gpu16_machine::frame::FRAME_BYTES;
use gpu16_machine::{ControlFrame, Fence, Program};

/// A program image built frame by frame. Each method appends whole 32-byte frames, so the
/// image's length is always a multiple of the frame size.
#[derive(Clone, Debug, Default)]
pub struct Image {
    frames: Vec<[u8; FRAME_BYTES]>,
}

impl Image {
    /// An image with no frame (which the loader refuses as empty).
    pub fn new() -> Image {
        Image::default()
    }

    /// A control frame with IF_Num set to the number of `bodies`, then one instruction frame
    /// per body (as [`Image::code`] writes it). IF_Num is six bits: keep to 63 bodies.
    pub fn group(mut self, mut control: ControlFrame, bodies: &[&[Instr]]) -> Image {
        control.if_num = u8::try_from(bodies.len()).expect("at most 63 IFs");
        self.frames.push(control.encode());
        for body in bodies {
            self = self.code(body);
        }
        self
    }

    /// [`Image::group`] with bodies of raw words (as [`Image::words`] writes them), for
    /// frames no [`Instr`] spells: reserved bits, or words drawn at random.
    pub fn group_words(mut self, mut control: ControlFrame, bodies: &[&[u16]]) -> Image {
        control.if_num = u8::try_from(bodies.len()).expect("at most 63 IFs");
        self.frames.push(control.encode());
        for body in bodies {
            self = self.words(body);
        }
        self
    }

    /// A control frame exactly as given (IF_Num untouched, so it may announce more or fewer
    /// instruction frames than follow).
    pub fn control(mut self, control: ControlFrame) -> Image {
        self.frames.push(control.encode());
        self
    }

    /// The MCST dialect's stop control frame: IF_Num 0, the stop bit (header bit 14) and
    /// NextCF = `next` (bits 13:8); a halt when `next` is its own index.
    pub fn stop(self, next: u8) -> Image {
        assert!(next < 64, "NextCF is six bits");
        self.control(ControlFrame {
            if_num: 0,
            fence: Fence::No,
            active: 0,
            init_vect: 0,
            init_r0: [0; 16],
            reserved_header: 0x40 | next,
            reserved: [0; 10],
        })
    }

    /// An instruction frame: `body` in slots 0.., the rest `nop` (all-zero words). Each
    /// instruction is written in its canonical encoding ([`Instr::encode`]).
    pub fn code(self, body: &[Instr]) -> Image {
        let words: Vec<u16> = body.iter().map(Instr::encode).collect();
        self.words(&words)
    }

    /// An instruction frame of raw words, the rest zero ([`Image::code_frame`]).
    pub fn words(mut self, words: &[u16]) -> Image {
        self.frames.push(Image::code_frame(words));
        self
    }

    /// A raw 32-byte frame, appended as it is.
    pub fn raw(mut self, bytes: [u8; FRAME_BYTES]) -> Image {
        self.frames.push(bytes);
        self
    }

    /// The bytes of an instruction frame holding `words` in slots 0.. (little-endian, word
    /// k at bytes 2k..2k+2) and zero words after them. Panics beyond 16 words.
    pub fn code_frame(words: &[u16]) -> [u8; FRAME_BYTES] {
        assert!(words.len() <= FRAME_INSTRS, "a frame holds 16 instructions");
        let mut b = [0u8; FRAME_BYTES];
        for (i, w) in words.iter().enumerate() {
            b[2 * i..2 * i + 2].copy_from_slice(&w.to_le_bytes());
        }
        b
    }

    /// How many frames the image has.
    pub fn frames(&self) -> usize {
        self.frames.len()
    }

    /// The image as the loader reads it: the frames' bytes in order.
    pub fn bytes(&self) -> Vec<u8> {
        self.frames.iter().flatten().copied().collect()
    }

    /// The image loaded in the spec dialect. Panics with the load error if the loader
    /// refuses it: for tests whose images are meant to be valid.
    pub fn program(&self) -> Program {
        Program::from_image(&self.bytes()).unwrap_or_else(|e| panic!("load error: {e}"))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_group_counts_its_bodies_and_pads_with_nop() {
        let image = Image::new().group(
            ControlFrame {
                if_num: 9,
                fence: Fence::Acq,
                active: 0x8001,
                init_vect: 0,
                init_r0: [0; 16],
                reserved_header: 0,
                reserved: [0; 10],
            },
            &[&[Instr::Ready], &[Instr::Nop, Instr::Ready]],
        );
        let bytes = image.bytes();
        assert_eq!((image.frames(), bytes.len()), (3, 96));
        // IF_Num 2, fence acq (bits 7:6 = 01), CAV 0x8001.
        assert_eq!(bytes[..4], [0x42, 0x00, 0x01, 0x80]);
        let ready = Instr::Ready.encode().to_le_bytes();
        assert_eq!(bytes[32..34], ready);
        assert!(bytes[34..64].iter().all(|&b| b == 0));
        assert_eq!(bytes[66..68], ready);
        assert_eq!(image.program().len(), 3);
    }

    #[test]
    fn a_stop_frame_has_the_stop_bit_and_next_cf() {
        let bytes = Image::new().stop(5).bytes();
        assert_eq!(bytes[..2], [0x00, 0x45]);
        assert!(bytes[2..].iter().all(|&b| b == 0));
    }
}
