//! Task memory as the task scheduler reads it: a window of the program's frames, from the
//! control frame of the first group not yet processed to as far as the scheduler has looked,
//! fed group by group from a [`FrameSource`] (a whole [`Program`], or a stream read from a
//! file or a pipe) and dropped once processed. A stream of any length so costs the window,
//! never its own size. A group is checked as it arrives, as [`Program`] checks an image, so
//! a malformed stream gives the error the same image loaded whole would have given.

use crate::dialect::Dialect;
use crate::frame::{ControlFrame, FrameKind, InstrFrame, LoadError, Program, FRAME_BYTES};
use crate::frame_table::FrameHasher;
use crate::held::Held;
use crate::stop::StopCause;
use std::borrow::Cow;
use std::collections::VecDeque;
use std::hash::Hasher;

/// Where a run's frames come from, in order.
pub trait FrameSource {
    /// The next frame of the program, or `None` after its last. An error (a read that
    /// failed, a partial last frame) ends the run as a load error.
    fn next_frame(&mut self) -> Result<Option<[u8; FRAME_BYTES]>, LoadError>;
    /// Go back to the first frame, for a second run over the same program (the state a
    /// fault leaves is taken from one). An error ends that run as a load error.
    fn rewind(&mut self) -> Result<(), LoadError>;
    /// How the program's words and headers are read.
    fn dialect(&self) -> Dialect {
        Dialect::Spec
    }
    /// Whether every frame was checked before the run (a loaded [`Program`]), so that
    /// frames need no checking as they are read.
    fn checked(&self) -> bool {
        false
    }
    /// Why the last [`FrameSource::next_frame`] failed, if it failed because the run was
    /// stopped from outside (`--timeout`, Ctrl-C) while it waited for input (a pipe that
    /// stalls): the run then ends as that stop, at the cycle it had reached, not as a load
    /// error.
    fn stopped(&self) -> Option<StopCause> {
        None
    }
    /// Go to frame `frame`, so that the next [`FrameSource::next_frame`] reads it: for a
    /// run resumed from a snapshot ([`crate::Snapshot`]), which read the frames before it.
    /// `false` where the source cannot (the default: a pipe, say); such a run cannot be
    /// resumed.
    fn seek(&mut self, _frame: usize) -> bool {
        false
    }
}

/// A source with no frames: what a snapshot's task memory holds in place of its run's
/// source until a resumed run gives it one ([`TaskMemory::adopt`]).
struct NoSource;

impl FrameSource for NoSource {
    fn next_frame(&mut self) -> Result<Option<[u8; FRAME_BYTES]>, LoadError> {
        Ok(None)
    }
    fn rewind(&mut self) -> Result<(), LoadError> {
        Ok(())
    }
}

/// A whole program read as a stream.
pub(crate) struct ProgramFrames<'p> {
    program: Cow<'p, Program>,
    next: usize,
}

impl<'p> ProgramFrames<'p> {
    /// The frames of `program`, from its first.
    pub fn new(program: &'p Program) -> ProgramFrames<'p> {
        ProgramFrames {
            program: Cow::Borrowed(program),
            next: 0,
        }
    }

    /// The frames of `program`, owned (for a run that outlives its caller's borrow).
    pub fn owned(program: Program) -> ProgramFrames<'static> {
        ProgramFrames {
            program: Cow::Owned(program),
            next: 0,
        }
    }
}

impl FrameSource for ProgramFrames<'_> {
    fn next_frame(&mut self) -> Result<Option<[u8; FRAME_BYTES]>, LoadError> {
        if self.next >= self.program.len() {
            return Ok(None);
        }
        self.next += 1;
        Ok(Some(*self.program.raw(self.next - 1)))
    }
    fn rewind(&mut self) -> Result<(), LoadError> {
        self.next = 0;
        Ok(())
    }
    fn dialect(&self) -> Dialect {
        self.program.dialect()
    }
    fn checked(&self) -> bool {
        true
    }
    fn seek(&mut self, frame: usize) -> bool {
        self.next = frame.min(self.program.len());
        frame <= self.program.len()
    }
}

/// One frame in the window: its bytes, the index of its group's control frame, and that
/// control frame decoded (read by the scheduler at every look, so decoded once).
#[derive(Clone, Copy, Debug)]
struct Slot {
    bytes: [u8; FRAME_BYTES],
    control: usize,
    cf: ControlFrame,
}

/// The window over a program the scheduler reads (see the module docs).
pub(crate) struct TaskMemory<'s> {
    source: Held<'s, dyn FrameSource + 's>,
    dialect: Dialect,
    /// The index of the window's first frame.
    base: usize,
    window: VecDeque<Slot>,
    /// The source has no more frames (or failed: see `error`).
    drained: bool,
    error: Option<LoadError>,
    /// Instruction frames recently found well formed: a stream repeats its frames, and
    /// each is checked once.
    checked_frames: CheckedFrames,
}

/// The most frames an image may have: the machine model indexes frames as `u32`.
const MAX_FRAMES: usize = u32::MAX as usize;

impl<'s> TaskMemory<'s> {
    /// An empty window before the first frame of `source`.
    pub(crate) fn new(source: Held<'s, dyn FrameSource + 's>) -> TaskMemory<'s> {
        let dialect = source.dialect();
        TaskMemory {
            source,
            dialect,
            base: 0,
            window: VecDeque::new(),
            drained: false,
            error: None,
            checked_frames: CheckedFrames::default(),
        }
    }

    /// How the program's words are read.
    pub(crate) fn dialect(&self) -> Dialect {
        self.dialect
    }

    /// Whether the program has a frame `idx` (at or past the window's first frame), reading
    /// whole groups from the source until it has or the source ends. A malformed group or
    /// a failed read ends the reading; [`TaskMemory::take_error`] then gives the error.
    #[inline]
    pub(crate) fn has(&mut self, idx: usize) -> bool {
        while idx >= self.base + self.window.len() && !self.drained {
            if let Err(e) = self.read_group() {
                self.error = Some(e);
                self.drained = true;
            }
        }
        idx < self.base + self.window.len()
    }

    /// Whether frame `idx` (at or past the window's first frame) is in the window already,
    /// so that looking at it reads nothing from the source.
    pub(crate) fn holds(&self, idx: usize) -> bool {
        idx < self.base + self.window.len()
    }

    /// Whether a load error ended the reading (and has not been taken).
    pub(crate) fn failed(&self) -> bool {
        self.error.is_some()
    }

    /// Why the reading ended, if a stop from outside ended it ([`FrameSource::stopped`]).
    pub(crate) fn stopped(&self) -> Option<StopCause> {
        self.error.as_ref().and_then(|_| self.source.stopped())
    }

    /// The load error that ended the reading, if one did (taken once).
    pub(crate) fn take_error(&mut self) -> Option<LoadError> {
        self.error.take()
    }

    /// Read the rest of the source, checking it as it is read, without keeping it: the
    /// load error the whole image would have given, if any. A run that ends before
    /// reading its whole program still refuses a malformed one, as a run of the image
    /// loaded whole does.
    pub(crate) fn check_rest(&mut self) -> Option<LoadError> {
        if self.source.checked() {
            return self.take_error();
        }
        while !self.drained {
            // Only the index of the frames read counts: none is kept.
            self.base += self.window.len();
            self.window.clear();
            if let Err(e) = self.read_group() {
                self.error = Some(e);
                self.drained = true;
            }
        }
        self.take_error()
    }

    /// A copy of the window without the source (a snapshot's), which
    /// [`TaskMemory::adopt`] gives a source again. Only the checked-frames cache is not
    /// copied: it saves work, never changes a result.
    pub(crate) fn save(&self) -> TaskMemory<'static> {
        TaskMemory {
            source: Held::Owned(Box::new(NoSource)),
            dialect: self.dialect,
            base: self.base,
            window: self.window.clone(),
            drained: self.drained,
            error: self.error.clone(),
            checked_frames: CheckedFrames::default(),
        }
    }

    /// About how many bytes the window holds.
    pub(crate) fn window_bytes(&self) -> usize {
        self.window.len() * std::mem::size_of::<Slot>()
    }

    /// The source, leaving none in its place (for [`TaskMemory::adopt`] of a saved window
    /// into the same run).
    pub(crate) fn take_source(&mut self) -> Held<'s, dyn FrameSource + 's> {
        std::mem::replace(&mut self.source, Held::Owned(Box::new(NoSource)))
    }

    /// This saved window over `source`, moved to the first frame the window has not read;
    /// the source back where it cannot go there ([`FrameSource::seek`]).
    #[allow(clippy::result_large_err)]
    pub(crate) fn adopt<'q>(
        self,
        mut source: Held<'q, dyn FrameSource + 'q>,
    ) -> Result<TaskMemory<'q>, Held<'q, dyn FrameSource + 'q>> {
        if source.dialect() != self.dialect
            || (!self.drained && !source.seek(self.base + self.window.len()))
        {
            return Err(source);
        }
        Ok(TaskMemory {
            source,
            dialect: self.dialect,
            base: self.base,
            window: self.window,
            drained: self.drained,
            error: self.error,
            checked_frames: self.checked_frames,
        })
    }

    /// Read one group: its control frame and every instruction frame it announces.
    fn read_group(&mut self) -> Result<(), LoadError> {
        let at = self.base + self.window.len();
        let Some(bytes) = self.source.next_frame()? else {
            self.drained = true;
            return if at == 0 {
                Err(LoadError::Empty)
            } else {
                Ok(())
            };
        };
        if at >= MAX_FRAMES {
            return Err(LoadError::TooLong { frames: at + 1 });
        }
        let cf =
            ControlFrame::decode(&bytes).map_err(|_| LoadError::ReservedFence { frame: at })?;
        self.window.push_back(Slot {
            bytes,
            control: at,
            cf,
        });
        for k in 1..=usize::from(cf.if_num) {
            let Some(bytes) = self.source.next_frame()? else {
                return Err(LoadError::GroupPastEnd {
                    frame: at,
                    if_num: cf.if_num,
                    frames: at + k,
                });
            };
            if !self.source.checked() && !self.checked_frames.contains(&bytes) {
                InstrFrame::decode_in(&bytes, self.dialect).map_err(|(slot, detail)| {
                    LoadError::ReservedMode {
                        frame: at + k,
                        slot,
                        detail,
                    }
                })?;
                self.checked_frames.insert(&bytes);
            }
            self.window.push_back(Slot {
                bytes,
                control: at,
                cf,
            });
        }
        Ok(())
    }

    fn slot(&self, idx: usize) -> &Slot {
        &self.window[idx - self.base]
    }

    /// What frame `idx` is. It must be in the window ([`TaskMemory::has`]).
    pub(crate) fn kind(&self, idx: usize) -> FrameKind {
        let control = self.slot(idx).control;
        if control == idx {
            FrameKind::Control
        } else {
            FrameKind::Instr { control }
        }
    }

    /// The control frame of frame `idx`'s group (the frame itself for a control frame).
    pub(crate) fn group_control(&self, idx: usize) -> &ControlFrame {
        &self.slot(idx).cf
    }

    /// The bytes of frame `idx`.
    pub(crate) fn raw(&self, idx: usize) -> &[u8; FRAME_BYTES] {
        &self.slot(idx).bytes
    }

    /// Forget the frames before `idx` except its group's control frame and the frames
    /// after that: the scheduler never looks back past the first unprocessed frame's group.
    pub(crate) fn release_before(&mut self, idx: usize) {
        let keep_from = if idx < self.base + self.window.len() {
            self.slot(idx).control
        } else {
            idx
        };
        while self.base < keep_from && !self.window.is_empty() {
            self.window.pop_front();
            self.base += 1;
        }
    }
}

/// A small direct-mapped set of frame contents: a frame is either in its one slot or
/// not (a collision only costs checking a frame again).
struct CheckedFrames {
    slots: Box<[[u8; FRAME_BYTES]; CHECKED_SLOTS]>,
    used: Box<[bool; CHECKED_SLOTS]>,
}

const CHECKED_SLOTS: usize = 256;

impl Default for CheckedFrames {
    fn default() -> Self {
        CheckedFrames {
            slots: Box::new([[0; FRAME_BYTES]; CHECKED_SLOTS]),
            used: Box::new([false; CHECKED_SLOTS]),
        }
    }
}

impl CheckedFrames {
    fn slot(bytes: &[u8; FRAME_BYTES]) -> usize {
        let mut h = FrameHasher::default();
        h.write(bytes);
        (h.finish() >> 56) as usize % CHECKED_SLOTS
    }
    fn contains(&self, bytes: &[u8; FRAME_BYTES]) -> bool {
        let i = Self::slot(bytes);
        self.used[i] && self.slots[i] == *bytes
    }
    fn insert(&mut self, bytes: &[u8; FRAME_BYTES]) {
        let i = Self::slot(bytes);
        self.slots[i] = *bytes;
        self.used[i] = true;
    }
}
