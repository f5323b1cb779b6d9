//! The run's table of instruction frames, interned by content: each distinct frame is
//! decoded, analysed (its bank sets, whether it can loop, whether it has atomic sequences)
//! and prepared by the backend once, and every later issue of the same 32 bytes costs one
//! lookup. A stream of a million tasks over a few distinct frames so decodes a few frames.
//! The table is bounded: when it is full it starts over, which costs only the work again.

use crate::banks::FrameBanks;
use crate::frame::{InstrFrame, FRAME_BYTES};
use crate::isa::Instr;
use crate::livelock;
use std::collections::HashMap;
use std::hash::{BuildHasherDefault, Hasher};
use std::rc::Rc;

/// Distinct frames kept; the table starts over when it is full.
const MAX_FRAMES: usize = 4096;

/// FxHash-style mixing of frame bytes: fast, and a hostile program that makes frames
/// collide can slow a lookup only as far as the bounded table's size.
#[derive(Default)]
pub struct FrameHasher(u64);

impl FrameHasher {
    fn mix(&mut self, w: u64) {
        self.0 = (self.0.rotate_left(5) ^ w).wrapping_mul(0x51_7c_c1_b7_27_22_0a_95);
    }
}

impl Hasher for FrameHasher {
    fn finish(&self) -> u64 {
        self.0
    }
    fn write(&mut self, bytes: &[u8]) {
        let mut words = bytes.chunks_exact(8);
        for w in &mut words {
            let w = u64::from_le_bytes(w.try_into().expect("8-byte chunks"));
            self.mix(w);
        }
        let rest = words.remainder();
        if !rest.is_empty() {
            let mut w = [0u8; 8];
            w[..rest.len()].copy_from_slice(rest);
            self.mix(u64::from_le_bytes(w));
        }
    }
}

/// A map keyed by frame bytes (or words) with [`FrameHasher`].
pub(crate) type FrameMap<K, V> = HashMap<K, V, BuildHasherDefault<FrameHasher>>;

/// One distinct instruction frame and what the run knows of it.
pub(crate) struct FrameEntry<C> {
    pub(crate) frame: InstrFrame,
    /// Its bank analysis, for a frame with memory instructions.
    pub(crate) banks: Option<Rc<FrameBanks>>,
    /// Whether it can loop (its cores then stop at checkpoints).
    pub(crate) cyclic: bool,
    /// Whether it has atomic sequences (`ld_sync`, `st_sync`).
    pub(crate) sync: bool,
    /// The backend's code for it, once prepared.
    pub(crate) code: Option<C>,
}

/// The table (see the module docs).
pub(crate) struct FrameTable<C> {
    index: FrameMap<[u8; FRAME_BYTES], u32>,
    entries: Vec<FrameEntry<C>>,
    /// The frame looked up last and its entry.
    last: Option<([u8; FRAME_BYTES], u32)>,
}

impl<C> FrameTable<C> {
    pub(crate) fn new() -> FrameTable<C> {
        FrameTable {
            index: FrameMap::default(),
            entries: Vec::new(),
            last: None,
        }
    }

    /// The entry of the instruction frame `bytes` (which the loader has checked), made on
    /// its first sight.
    pub(crate) fn entry(
        &mut self,
        bytes: &[u8; FRAME_BYTES],
        decode: impl FnOnce(&[u8; FRAME_BYTES]) -> InstrFrame,
    ) -> &mut FrameEntry<C> {
        // A stream issues the same frame many times in a row: compare before hashing.
        if let Some((last, i)) = &self.last {
            if last == bytes {
                return &mut self.entries[*i as usize];
            }
        }
        if let Some(&i) = self.index.get(bytes) {
            self.last = Some((*bytes, i));
            return &mut self.entries[i as usize];
        }
        if self.entries.len() >= MAX_FRAMES {
            self.index.clear();
            self.entries.clear();
            self.last = None;
        }
        let frame = decode(bytes);
        let banks = frame
            .instrs
            .iter()
            .any(Instr::is_memory)
            .then(|| Rc::new(FrameBanks::analyse(&frame.instrs)));
        let sync = frame.instrs.iter().any(Instr::is_sync);
        let entry = FrameEntry {
            cyclic: livelock::cyclic(&frame.instrs),
            sync,
            banks,
            frame,
            code: None,
        };
        self.index.insert(*bytes, self.entries.len() as u32);
        self.last = Some((*bytes, self.entries.len() as u32));
        self.entries.push(entry);
        self.entries.last_mut().expect("just pushed")
    }
}
