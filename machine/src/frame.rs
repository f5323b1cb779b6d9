//! Task-memory frames and program images: the byte layout of control and instruction frames,
//! the positional decoding of an image (a CF, then IF_Num IFs, then a CF again), and the load
//! errors of a malformed image, each naming its frame; and the MCST dialect's task
//! scheduler walk of task memory (`McstWalk`), the one reading of which frames it takes as
//! control frames and whether its walk can end a run.

use crate::dialect::Dialect;
use crate::isa::{Instr, FRAME_INSTRS};
use std::fmt;
use std::sync::Arc;

/// Size of one task-memory frame in bytes.
pub const FRAME_BYTES: usize = 32;
/// Frames the hardware task memory holds (TP is 6 bits); longer images are host-fed streams.
pub const TASK_MEMORY_FRAMES: usize = 64;

/// The barrier semantics of the tasks of a control frame's instruction frames.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Default)]
pub enum Fence {
    /// No barrier.
    #[default]
    No,
    /// Acquire: later frames wait until this task completes.
    Acq,
    /// Release: this task waits until every earlier task completes.
    Rel,
}

impl Fence {
    /// The fence as the assembler writes it (`fence=no|acq|rel`): `no`, `acq` or `rel`.
    pub fn name(self) -> &'static str {
        match self {
            Fence::No => "no",
            Fence::Acq => "acq",
            Fence::Rel => "rel",
        }
    }
    /// Its value in the control frame's header bits 7:6: 0, 1 or 2 (3 is reserved).
    pub fn bits(self) -> u8 {
        match self {
            Fence::No => 0,
            Fence::Acq => 1,
            Fence::Rel => 2,
        }
    }
}

/// A decoded control frame.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct ControlFrame {
    /// IF_Num, header bits 5:0: how many instruction frames follow it (0..63), each a
    /// task on the `active` cores.
    pub if_num: u8,
    /// Header bits 7:6: the fence of every task of its group.
    pub fence: Fence,
    /// Core_Active_Vect (bytes 2..4, little-endian): bit k set runs core k in the group's
    /// tasks.
    pub active: u16,
    /// Init_R0_Vect (bytes 4..6): bit k set initialises core k's R0 (only for an active core,
    /// see [`ControlFrame::r0_init_mask`]).
    pub init_vect: u16,
    /// Init_R0 (bytes 16..32): the value for core k's R0 is byte k.
    pub init_r0: [u8; 16],
    /// Header bits 15:8: reserved in the spec; in the MCST dialect bits 13:8 are NextCF and
    /// bit 14 the stop bit ([`ControlFrame::next_cf`], [`ControlFrame::stop`]).
    pub reserved_header: u8,
    /// Bytes 6..16, reserved.
    pub reserved: [u8; 10],
}

impl ControlFrame {
    /// A control frame with no reserved bits set: `if_num` instruction frames on the `active`
    /// cores, initialising R0 of each (core, value) in `r0`.
    pub fn new(if_num: u8, fence: Fence, active: u16, r0: &[(usize, u8)]) -> ControlFrame {
        let mut init_r0 = [0u8; 16];
        let mut init_vect = 0u16;
        for &(c, v) in r0 {
            init_r0[c & 15] = v;
            init_vect |= 1 << (c & 15);
        }
        ControlFrame {
            if_num,
            fence,
            active,
            init_vect,
            init_r0,
            reserved_header: 0,
            reserved: [0; 10],
        }
    }

    /// MCST dialect: NextCF, header bits 13:8, the frame the task pointer goes to after a
    /// stop (0..63).
    pub fn next_cf(&self) -> u8 {
        self.reserved_header & 0x3F
    }

    /// MCST dialect: the stop bit, header bit 14.
    pub fn stop(&self) -> bool {
        self.reserved_header & 0x40 != 0
    }

    /// The cores whose R0 this frame initializes: set in both Init_R0_Vect and Core_Active_Vect.
    pub fn r0_init_mask(&self) -> u16 {
        self.init_vect & self.active
    }

    /// Decode a control frame's 32 bytes, keeping reserved bits. The only error is the
    /// reserved fence value, returned as `Err(3)`.
    pub fn decode(bytes: &[u8; FRAME_BYTES]) -> Result<ControlFrame, u8> {
        let header = u16::from_le_bytes([bytes[0], bytes[1]]);
        let fence = match (header >> 6) & 3 {
            0 => Fence::No,
            1 => Fence::Acq,
            2 => Fence::Rel,
            _ => return Err(3),
        };
        let mut init_r0 = [0u8; 16];
        init_r0.copy_from_slice(&bytes[16..32]);
        let mut reserved = [0u8; 10];
        reserved.copy_from_slice(&bytes[6..16]);
        Ok(ControlFrame {
            if_num: (header & 0x3F) as u8,
            fence,
            active: u16::from_le_bytes([bytes[2], bytes[3]]),
            init_vect: u16::from_le_bytes([bytes[4], bytes[5]]),
            init_r0,
            reserved_header: (header >> 8) as u8,
            reserved,
        })
    }

    /// The frame's 32 bytes, reserved bits included, so `decode(encode(f)) == f` whenever
    /// `if_num` is below 64 (only its low 6 bits are stored).
    pub fn encode(&self) -> [u8; FRAME_BYTES] {
        let mut b = [0u8; FRAME_BYTES];
        let header = u16::from(self.if_num & 0x3F)
            | (u16::from(self.fence.bits()) << 6)
            | (u16::from(self.reserved_header) << 8);
        b[0..2].copy_from_slice(&header.to_le_bytes());
        b[2..4].copy_from_slice(&self.active.to_le_bytes());
        b[4..6].copy_from_slice(&self.init_vect.to_le_bytes());
        b[6..16].copy_from_slice(&self.reserved);
        b[16..32].copy_from_slice(&self.init_r0);
        b
    }
}

/// An instruction frame: its raw words and their decoding.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct InstrFrame {
    /// The 16 instruction words as stored (little-endian, instruction k at bytes 2k..2k+2),
    /// ignored bits included.
    pub words: [u16; FRAME_INSTRS],
    /// The decoding of each word; IP k executes `instrs[k]`.
    pub instrs: [Instr; FRAME_INSTRS],
}

impl InstrFrame {
    /// Decode as the spec reads it; on a reserved ld/st mode returns the slot and the
    /// problem.
    pub fn decode(
        bytes: &[u8; FRAME_BYTES],
    ) -> Result<InstrFrame, (usize, crate::isa::ReservedMode)> {
        InstrFrame::decode_in(bytes, Dialect::Spec)
    }

    /// Decode as `dialect` reads it (the MCST dialect has no reserved words).
    pub fn decode_in(
        bytes: &[u8; FRAME_BYTES],
        dialect: Dialect,
    ) -> Result<InstrFrame, (usize, crate::isa::ReservedMode)> {
        let mut words = [0u16; FRAME_INSTRS];
        let mut instrs = [Instr::Nop; FRAME_INSTRS];
        for i in 0..FRAME_INSTRS {
            words[i] = u16::from_le_bytes([bytes[2 * i], bytes[2 * i + 1]]);
            instrs[i] = Instr::decode_in(words[i], dialect).map_err(|e| (i, e))?;
        }
        Ok(InstrFrame { words, instrs })
    }

    /// `code` followed by `fill` up to 16 instructions (at most 16 are taken).
    pub fn padded(code: &[Instr], fill: Instr) -> InstrFrame {
        let mut instrs = [fill; FRAME_INSTRS];
        let n = code.len().min(FRAME_INSTRS);
        instrs[..n].copy_from_slice(&code[..n]);
        InstrFrame::from_instrs(instrs)
    }

    /// The frame of these 16 instructions, each encoded with its ignored bits zero.
    pub fn from_instrs(instrs: [Instr; FRAME_INSTRS]) -> InstrFrame {
        InstrFrame {
            words: instrs.map(|i| i.encode()),
            instrs,
        }
    }

    /// The frame's 32 bytes, from its `words`.
    pub fn bytes(&self) -> [u8; FRAME_BYTES] {
        let mut b = [0u8; FRAME_BYTES];
        for (i, w) in self.words.iter().enumerate() {
            b[2 * i..2 * i + 2].copy_from_slice(&w.to_le_bytes());
        }
        b
    }
}

/// What a frame of an image is, by its position.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum FrameKind {
    /// A control frame, which leads a group.
    Control,
    /// An instruction frame and the index of the control frame that leads its group.
    Instr {
        /// The index of its group's control frame.
        control: usize,
    },
}

/// The MCST dialect's task scheduler walking task memory from frame 0: which frames it
/// reads as control frames and which it broadcasts, and how its walk ends. The walk depends
/// only on task memory (IF_Num, the stop bit and NextCF), never on what the cores compute:
/// after a control frame at `p` with `n` instruction frames comes `p + n + 1`, or NextCF if
/// it has the stop bit (after its group's last broadcast, or by a jump when `n` is 0). Each
/// frame has one successor, so the walk is a path that ends at a halt, at a frame with the
/// reserved fence value 3 (a load error), or back at a frame it has read: a loop it goes
/// round for as long as the run lasts. The loader, `check`, the run's warnings and the
/// MCST run's livelock proof all read task memory through this one walk.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct McstWalk {
    /// The frames read as control frames, in the order the walk first reaches them.
    pub path: Vec<usize>,
    /// The frames broadcast as instruction frames (bit `p` for frame `p`).
    pub instr_frames: u64,
    /// For each frame read as a control frame but frame 0, the control frame the walk
    /// came from.
    pub came_from: [Option<usize>; TASK_MEMORY_FRAMES],
    /// The halt it ends at: a stop frame with no instruction frames whose NextCF is its own
    /// index.
    pub halt: Option<usize>,
    /// The frame with the reserved fence value 3 it ends at.
    pub reserved_fence: Option<usize>,
    /// The frame it comes back to, where it ends neither at a halt nor at a reserved fence.
    pub loops_to: Option<usize>,
    /// Whether it reads a frame sync: a stop frame with no instruction frames and another
    /// NextCF, which ends a run where the scheduler waits there for a busy core or comes by
    /// a group's NextCF jump (mcst-dialect.md section 3.4), and is jumped over otherwise.
    pub frame_sync: bool,
    /// Whether a group on it runs a task: instruction frames and a mask that is not 0.
    pub runs_a_task: bool,
    /// Whether a stop group with instruction frames is on it: its last broadcast jumps to
    /// NextCF.
    pub group_jumps: bool,
}

impl McstWalk {
    /// The walk over `image`, zero frames past its end.
    pub fn of(image: &[[u8; FRAME_BYTES]]) -> McstWalk {
        let frame = |p: usize| image.get(p).copied().unwrap_or([0; FRAME_BYTES]);
        let mut walk = McstWalk {
            path: Vec::new(),
            instr_frames: 0,
            came_from: [None; TASK_MEMORY_FRAMES],
            halt: None,
            reserved_fence: None,
            loops_to: None,
            frame_sync: false,
            runs_a_task: false,
            group_jumps: false,
        };
        let mut read = 0u64;
        let mut p = 0usize;
        loop {
            if read & (1 << p) != 0 {
                walk.loops_to = Some(p);
                return walk;
            }
            read |= 1 << p;
            walk.path.push(p);
            let bytes = frame(p);
            let header = u16::from_le_bytes([bytes[0], bytes[1]]);
            if (header >> 6) & 3 == 3 {
                walk.reserved_fence = Some(p);
                return walk;
            }
            let n = usize::from(header & 0x3F);
            let stop = header & 0x4000 != 0;
            let next_cf = usize::from((header >> 8) & 0x3F);
            for k in 1..=n {
                walk.instr_frames |= 1 << ((p + k) % TASK_MEMORY_FRAMES);
            }
            walk.runs_a_task |= n > 0 && bytes[2..4] != [0, 0];
            let next = match (stop, n) {
                (true, 0) if next_cf == p => {
                    walk.halt = Some(p);
                    return walk;
                }
                (true, 0) => {
                    walk.frame_sync = true;
                    next_cf
                }
                (true, _) => {
                    walk.group_jumps = true;
                    next_cf
                }
                (false, _) => (p + n + 1) % TASK_MEMORY_FRAMES,
            };
            if read & (1 << next) == 0 {
                walk.came_from[next] = Some(p);
            }
            p = next;
        }
    }

    /// The frames read as control frames, as a mask (bit `p` for frame `p`).
    pub fn control_frames(&self) -> u64 {
        self.path.iter().fold(0, |m, &p| m | 1 << p)
    }

    /// Whether the walk reads a stop frame with no instruction frames (a halt or a frame
    /// sync), the only frames at which a run can end.
    pub fn reaches_a_stop(&self) -> bool {
        self.halt.is_some() || self.frame_sync
    }

    /// Whether a run can end other than at the watchdog: the walk reaches a halt (or a
    /// reserved fence, which does not load), or a frame sync that something can make end a
    /// run: a task that may still run when the scheduler arrives, or a group's NextCF jump.
    /// When false, the run goes round the loop back to [`McstWalk::loops_to`] for ever.
    pub fn may_end(&self) -> bool {
        self.halt.is_some()
            || self.reserved_fence.is_some()
            || (self.frame_sync && (self.runs_a_task || self.group_jumps))
    }
}

/// A program image whose layout has been checked: frames are kept as raw bytes (the image
/// itself) and decoded when the scheduler reaches them, so a long stream costs its own size.
/// A clone shares the image (a debugger's session and its live machine, say, hold one).
#[derive(Clone, Debug, Default)]
pub struct Program {
    frames: Arc<Vec<[u8; FRAME_BYTES]>>,
    /// How its words and headers are read.
    dialect: Dialect,
    /// For each frame, the index of its group's control frame (its own index for a CF):
    /// four bytes a frame, so a long stream costs little more than its image.
    group: Arc<Vec<u32>>,
}

/// A malformed program image.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum LoadError {
    /// The image is not a whole number of 32-byte frames.
    Length {
        /// The image's length in bytes.
        bytes: usize,
    },
    /// The image has no frames.
    Empty,
    /// A control frame announces more instruction frames than the image has left.
    GroupPastEnd {
        /// The control frame's index.
        frame: usize,
        /// The number of instruction frames it announces.
        if_num: u8,
        /// The number of frames in the image.
        frames: usize,
    },
    /// A control frame has the reserved fence value 3.
    ReservedFence {
        /// The control frame's index.
        frame: usize,
    },
    /// The image has more frames than the machine model indexes (2^32 - 1 at most).
    TooLong {
        /// The number of frames in the image.
        frames: usize,
    },
    /// The MCST dialect's task memory holds 64 frames (its NextCF field addresses no more).
    TooManyFrames {
        /// The number of frames in the image.
        frames: usize,
        /// The most the dialect allows.
        max: usize,
    },
    /// A stream ended inside a frame (a pipe closed early, a file cut short).
    Truncated {
        /// The index of the frame cut short.
        frame: usize,
        /// Its byte offset in the stream.
        offset: u64,
        /// How many of its 32 bytes arrived.
        bytes: usize,
    },
    /// A stream could not be read.
    Read {
        /// The index of the frame being read.
        frame: usize,
        /// Its byte offset in the stream.
        offset: u64,
        /// Why the read failed.
        message: String,
    },
    /// A frame was read but could not be kept for the run's second pass: a stream that
    /// cannot be read twice (stdin) is kept, as it is read, in a temporary file, and that
    /// file could not take it (a full or missing `$TMPDIR`). The input itself is fine.
    Keep {
        /// The index of the frame that could not be kept.
        frame: usize,
        /// Its byte offset in the stream.
        offset: u64,
        /// Where it was to be kept, and why that failed.
        message: String,
    },
    /// An instruction word is `ld` or `st` with a reserved mode (2 or 3).
    ReservedMode {
        /// The instruction frame's index.
        frame: usize,
        /// The instruction's IP in the frame, 0..15.
        slot: usize,
        /// The word and its mode.
        detail: crate::isa::ReservedMode,
    },
}

impl fmt::Display for LoadError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            LoadError::Length { bytes } => write!(
                f,
                "image is {bytes} bytes, not a multiple of the 32-byte frame size ({} whole frames and {} bytes left over)",
                bytes / FRAME_BYTES,
                bytes % FRAME_BYTES
            ),
            LoadError::Empty => write!(f, "image has no frames"),
            LoadError::GroupPastEnd { frame, if_num, frames } => write!(
                f,
                "frame {frame}: control frame announces {if_num} instruction frames but the image ends after {} more",
                frames - frame - 1
            ),
            LoadError::ReservedFence { frame } => {
                write!(f, "frame {frame}: control frame has the reserved fence value 3")
            }
            LoadError::ReservedMode { frame, slot, detail } => {
                write!(f, "frame {frame}, instruction {slot}: {detail}")
            }
            LoadError::TooManyFrames { frames, max } => write!(
                f,
                "image has {frames} frames; the mcst dialect's task memory holds {max} (its NextCF field addresses no more)"
            ),
            LoadError::Truncated { frame, offset, bytes } => write!(
                f,
                "frame {frame} (byte offset {offset}) is cut short: the input ends after {bytes} of its {FRAME_BYTES} bytes"
            ),
            LoadError::Read { frame, offset, message } => {
                write!(f, "frame {frame} (byte offset {offset}): cannot read: {message}")
            }
            LoadError::Keep { frame, offset, message } => {
                write!(f, "frame {frame} (byte offset {offset}): cannot keep it: {message}")
            }
            LoadError::TooLong { frames } => {
                write!(f, "image has {frames} frames; at most 2^32 - 1 are supported")
            }
        }
    }
}

impl std::error::Error for LoadError {}

impl LoadError {
    /// The frame the error names, if it names one.
    pub fn frame(&self) -> Option<usize> {
        match self {
            LoadError::GroupPastEnd { frame, .. }
            | LoadError::ReservedFence { frame }
            | LoadError::Truncated { frame, .. }
            | LoadError::Read { frame, .. }
            | LoadError::Keep { frame, .. }
            | LoadError::ReservedMode { frame, .. } => Some(*frame),
            LoadError::Length { .. }
            | LoadError::Empty
            | LoadError::TooLong { .. }
            | LoadError::TooManyFrames { .. } => None,
        }
    }
}

impl Program {
    /// Check and take a raw image of N x 32 bytes, read as the spec reads it.
    pub fn from_image(image: &[u8]) -> Result<Program, LoadError> {
        Program::from_image_in(image, Dialect::Spec)
    }

    /// Check and take a raw image of N x 32 bytes, read as `dialect` reads it.
    pub fn from_image_in(image: &[u8], dialect: Dialect) -> Result<Program, LoadError> {
        if !image.len().is_multiple_of(FRAME_BYTES) {
            return Err(LoadError::Length { bytes: image.len() });
        }
        if image.is_empty() {
            return Err(LoadError::Empty);
        }
        let frames: Vec<[u8; FRAME_BYTES]> = image
            .chunks_exact(FRAME_BYTES)
            .map(|c| c.try_into().expect("chunks are 32 bytes"))
            .collect();
        Program::from_frames_in(frames, dialect)
    }

    /// Check a raw image as [`Program::from_image_in`] does, giving the same error, without
    /// taking it: for a caller that then runs it as a stream of frames
    /// ([`crate::FrameSource`]) and so never holds a second copy of a long one.
    pub fn check_image_in(image: &[u8], dialect: Dialect) -> Result<(), LoadError> {
        let (frames, rest) = image.as_chunks::<FRAME_BYTES>();
        if !rest.is_empty() {
            return Err(LoadError::Length { bytes: image.len() });
        }
        Program::groups_of(frames, dialect, |_| ())
    }

    /// Check and take an image already split into frames (as [`Program::from_image`]).
    pub fn from_frames(frames: Vec<[u8; FRAME_BYTES]>) -> Result<Program, LoadError> {
        Program::from_frames_in(frames, Dialect::Spec)
    }

    /// Check and take an image already split into frames, read as `dialect` reads it. In
    /// the MCST dialect at most 64 frames are allowed, every word is an instruction, and a
    /// group may run past the image's end into task memory's zero frames.
    pub fn from_frames_in(
        frames: Vec<[u8; FRAME_BYTES]>,
        dialect: Dialect,
    ) -> Result<Program, LoadError> {
        let mut group = Vec::with_capacity(frames.len());
        Program::groups_of(&frames, dialect, |g| group.push(g))?;
        Ok(Program {
            frames: Arc::new(frames),
            dialect,
            group: Arc::new(group),
        })
    }

    /// Check the layout of `frames` as `dialect` reads it, giving each frame's group (the
    /// index of its control frame) to `group` in order: the one check of an image, for
    /// [`Program::from_frames_in`] and [`Program::check_image_in`].
    fn groups_of(
        frames: &[[u8; FRAME_BYTES]],
        dialect: Dialect,
        mut group: impl FnMut(u32),
    ) -> Result<(), LoadError> {
        if frames.is_empty() {
            return Err(LoadError::Empty);
        }
        if dialect == Dialect::Mcst && frames.len() > TASK_MEMORY_FRAMES {
            return Err(LoadError::TooManyFrames {
                frames: frames.len(),
                max: TASK_MEMORY_FRAMES,
            });
        }
        if frames.len() > u32::MAX as usize {
            return Err(LoadError::TooLong {
                frames: frames.len(),
            });
        }
        if dialect == Dialect::Mcst {
            if let Some(frame) = McstWalk::of(frames).reserved_fence {
                return Err(LoadError::ReservedFence { frame });
            }
        }
        let mut i = 0;
        while i < frames.len() {
            // In the MCST dialect a fence-3 frame the scheduler can never read as a CF is
            // code, not an error (checked above over every frame it can read as one).
            let if_num = match ControlFrame::decode(&frames[i]) {
                Ok(cf) => cf.if_num,
                Err(_) if dialect == Dialect::Mcst => frames[i][0] & 0x3F,
                Err(_) => return Err(LoadError::ReservedFence { frame: i }),
            };
            let mut n = usize::from(if_num);
            if dialect == Dialect::Mcst {
                n = n.min(frames.len() - i - 1);
            }
            if i + n >= frames.len() {
                return Err(LoadError::GroupPastEnd {
                    frame: i,
                    if_num,
                    frames: frames.len(),
                });
            }
            group(i as u32);
            for (j, frame) in frames.iter().enumerate().skip(i + 1).take(n) {
                InstrFrame::decode_in(frame, dialect).map_err(|(slot, detail)| {
                    LoadError::ReservedMode {
                        frame: j,
                        slot,
                        detail,
                    }
                })?;
                group(i as u32);
            }
            i += n + 1;
        }
        Ok(())
    }

    /// How its words and headers are read.
    pub fn dialect(&self) -> Dialect {
        self.dialect
    }

    /// MCST dialect: whether the task scheduler can reach a stop frame with IF_Num 0 (a
    /// halt, or a frame sync), the only frames that end a run ([`McstWalk::reaches_a_stop`]).
    /// Without one the scheduler wraps forever and only the watchdog ends the run. Always
    /// true in the spec dialect.
    pub fn can_end(&self) -> bool {
        self.dialect == Dialect::Spec || self.mcst_walk().reaches_a_stop()
    }

    /// The MCST task scheduler's walk over this image's task memory (read as the MCST
    /// dialect reads it, whatever the program's dialect).
    pub fn mcst_walk(&self) -> McstWalk {
        McstWalk::of(&self.frames)
    }

    /// The number of frames, control and instruction.
    pub fn len(&self) -> usize {
        self.frames.len()
    }

    /// Whether it has no frames (never true for a loaded program: an empty image is
    /// [`LoadError::Empty`]; only [`Program::default`] is empty).
    pub fn is_empty(&self) -> bool {
        self.frames.is_empty()
    }

    /// What frame `frame` is, by its position in the image. Panics if `frame >= len()`.
    pub fn kind(&self, frame: usize) -> FrameKind {
        let control = self.group[frame] as usize;
        if control == frame {
            FrameKind::Control
        } else {
            FrameKind::Instr { control }
        }
    }

    /// The 32 bytes of frame `frame` as loaded.
    pub fn raw(&self, frame: usize) -> &[u8; FRAME_BYTES] {
        &self.frames[frame]
    }

    /// The control frame at `frame` (which must be one; checked at load).
    pub fn control(&self, frame: usize) -> ControlFrame {
        ControlFrame::decode(&self.frames[frame]).expect("fence checked at load")
    }

    /// The instruction frame at `frame` (which must be one; checked at load).
    pub fn instr(&self, frame: usize) -> InstrFrame {
        InstrFrame::decode_in(&self.frames[frame], self.dialect).expect("modes checked at load")
    }

    /// The raw image bytes.
    pub fn image(&self) -> Vec<u8> {
        self.frames.iter().flatten().copied().collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn control_frame_byte_positions() {
        let mut b = [0u8; 32];
        b[0] = 0x43; // IF_Num 3, fence acq
        b[1] = 0x80; // reserved header bits
        b[2] = 0x0f;
        b[3] = 0xf0; // active 0xf00f
        b[4] = 0x01;
        b[5] = 0x80; // init 0x8001
        b[16] = 7;
        b[31] = 9;
        let cf = ControlFrame::decode(&b).unwrap();
        assert_eq!(cf.if_num, 3);
        assert_eq!(cf.fence, Fence::Acq);
        assert_eq!(cf.active, 0xf00f);
        assert_eq!(cf.init_vect, 0x8001);
        assert_eq!(cf.init_r0[0], 7);
        assert_eq!(cf.init_r0[15], 9);
        assert_eq!(cf.reserved_header, 0x80);
        assert_eq!(cf.encode(), b);
        b[0] = 0xc0;
        assert_eq!(ControlFrame::decode(&b), Err(3));
    }

    #[test]
    fn instruction_words_are_little_endian_in_slot_order() {
        let mut b = [0u8; 32];
        b[0] = 0x23;
        b[1] = 0x11; // slot 0: 0x1123
        b[30] = 0x00;
        b[31] = 0xf0; // slot 15: ready
        let f = InstrFrame::decode(&b).unwrap();
        assert_eq!(f.words[0], 0x1123);
        assert_eq!(f.words[15], 0xf000);
        assert_eq!(f.bytes(), b);
    }

    #[test]
    fn load_errors_name_the_frame() {
        assert_eq!(
            Program::from_image(&[0u8; 33]).unwrap_err(),
            LoadError::Length { bytes: 33 }
        );
        let mut cf = [0u8; 32];
        cf[0] = 2; // two IFs, only one present
        let img: Vec<u8> = cf.iter().chain([0u8; 32].iter()).copied().collect();
        assert!(matches!(
            Program::from_image(&img).unwrap_err(),
            LoadError::GroupPastEnd { frame: 0, .. }
        ));
        let mut bad = [0u8; 32];
        bad[0] = 1;
        let mut iff = [0u8; 32];
        iff[4] = 0x80; // slot 2 word 0xb080: ld mode 2
        iff[5] = 0xb0;
        let img: Vec<u8> = bad.iter().chain(iff.iter()).copied().collect();
        assert!(matches!(
            Program::from_image(&img).unwrap_err(),
            LoadError::ReservedMode {
                frame: 1,
                slot: 2,
                ..
            }
        ));
    }

    /// An MCST control frame's bytes, by hand: header (IF_Num bits 5:0, fence 7:6, NextCF
    /// 13:8, stop 14) and mask.
    fn mcst_cf(if_num: u16, fence: u16, stop: bool, next_cf: u16, mask: u16) -> [u8; 32] {
        let header = if_num | fence << 6 | next_cf << 8 | u16::from(stop) << 14;
        let mut b = [0u8; 32];
        b[..2].copy_from_slice(&header.to_le_bytes());
        b[2..4].copy_from_slice(&mask.to_le_bytes());
        b
    }

    #[test]
    fn the_mcst_walk_ends_at_a_halt() {
        // CF 0 (one IF), IF 1, halt at 2.
        let image = [
            mcst_cf(1, 0, false, 0, 1),
            [0; 32],
            mcst_cf(0, 0, true, 2, 0),
        ];
        let w = McstWalk::of(&image);
        assert_eq!(w.path, [0, 2]);
        assert_eq!(
            (w.halt, w.loops_to, w.reserved_fence),
            (Some(2), None, None)
        );
        assert_eq!(w.instr_frames, 0b10);
        assert_eq!(w.came_from[2], Some(0));
        assert!(w.runs_a_task && w.may_end() && w.reaches_a_stop());
    }

    #[test]
    fn an_mcst_walk_without_a_halt_wraps_through_the_zero_frames() {
        // CF 0 and its IF; frames 2..63 are zero, empty control frames; then frame 0 again.
        let image = [mcst_cf(1, 0, false, 0, 1), [0; 32]];
        let w = McstWalk::of(&image);
        let expected: Vec<usize> = [0].into_iter().chain(2..64).collect();
        assert_eq!(w.path, expected);
        assert_eq!((w.halt, w.loops_to), (None, Some(0)));
        assert!(!w.reaches_a_stop() && !w.may_end());
        assert_eq!(w.control_frames(), !0b10);
    }

    #[test]
    fn frame_syncs_end_an_mcst_walk_only_with_a_task_or_a_group_jump() {
        // Two stop frames without IFs whose NextCFs point at each other: with every core
        // idle, each jumps on; the loop is 0, 1.
        let syncs = [mcst_cf(0, 0, true, 1, 1), mcst_cf(0, 0, true, 0, 1)];
        let w = McstWalk::of(&syncs);
        assert_eq!((w.path.clone(), w.loops_to), (vec![0, 1], Some(0)));
        assert!(w.frame_sync && w.reaches_a_stop() && !w.may_end());
        // A stop group of mask 0 runs no task, but its last IF jumps to NextCF, and a frame
        // sync reached by a jump ends the run once every core is idle.
        let jump = [
            mcst_cf(1, 0, true, 2, 0),
            [0; 32],
            mcst_cf(0, 0, true, 0, 1),
        ];
        let w = McstWalk::of(&jump);
        assert_eq!(w.path, [0, 2]);
        assert!(!w.runs_a_task && w.group_jumps && w.may_end());
        // A task on the walk may be running when the scheduler reaches the frame sync.
        let task = [
            mcst_cf(1, 0, false, 0, 1),
            [0; 32],
            mcst_cf(0, 0, true, 0, 1),
        ];
        assert!(McstWalk::of(&task).may_end());
        // A reserved fence ends the walk (the image does not load).
        let reserved = [mcst_cf(0, 3, false, 0, 1)];
        assert_eq!(McstWalk::of(&reserved).reserved_fence, Some(0));
    }
}
