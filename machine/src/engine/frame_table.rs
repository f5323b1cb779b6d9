//! The run's table of instruction frames, interned by content: each distinct frame is
//! decoded, analysed (its bank sets, whether it can loop, whether it has atomic sequences)
//! and prepared by the backend once, and every later issue of the same 32 bytes costs one
//! lookup (one compare, for a frame among the few issued lately). A stream of a million
//! tasks over a few distinct frames so decodes a few frames.
//! The table is bounded: when it is full it starts over, which costs only the work again.

use crate::banks::FrameBanks;
use crate::dialect::Dialect;
use crate::frame::{InstrFrame, FRAME_BYTES};
use crate::isa::Instr;
use crate::livelock;
use std::collections::HashMap;
use std::hash::{BuildHasherDefault, Hasher};
use std::rc::Rc;

/// Distinct frames kept; the table starts over when it is full.
const MAX_FRAMES: usize = 4096;

/// Slots of the table's cache of frames found lately ([`FrameTable::entry`]), a power of
/// two.
const RECENT: usize = 8;

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
    /// Frames found lately and their entries, each in the slot [`recent_slot`] gives it: a
    /// stream that issues a few frames in turn (a reduction's rounds) finds each with one
    /// compare instead of a hash and a probe of `index`.
    recent: [Option<([u8; FRAME_BYTES], u32)>; RECENT],
    /// The slot of `recent` found last: a stream that issues one frame over and over finds
    /// it there without working out a slot.
    last: usize,
}

/// The slot of [`FrameTable::recent`] that frame `bytes` may sit in: its four words mixed
/// (cheaper than [`FrameHasher`], and a collision costs only a probe of the index).
fn recent_slot(bytes: &[u8; FRAME_BYTES]) -> usize {
    let mix = bytes
        .chunks_exact(8)
        .map(|w| u64::from_le_bytes(w.try_into().expect("8-byte chunks")))
        .fold(0u64, |a, w| a.rotate_left(23).wrapping_add(w));
    (mix.wrapping_mul(0x9E37_79B9_7F4A_7C15) >> (64 - RECENT.trailing_zeros())) as usize
}

impl<C> FrameTable<C> {
    pub(crate) fn new() -> FrameTable<C> {
        FrameTable {
            index: FrameMap::default(),
            entries: Vec::new(),
            recent: [None; RECENT],
            last: 0,
        }
    }

    /// The entry of the instruction frame `bytes`, read in `dialect` from task memory,
    /// whose loader checked every instruction frame it read (so it decodes).
    pub(crate) fn entry_read(
        &mut self,
        bytes: &[u8; FRAME_BYTES],
        dialect: Dialect,
    ) -> &mut FrameEntry<C> {
        self.entry(bytes, |b| {
            InstrFrame::decode_in(b, dialect)
                .expect("instruction frames are checked as they are read")
        })
    }

    /// The entry of the instruction frame `bytes` (which the loader has checked), made on
    /// its first sight.
    pub(crate) fn entry(
        &mut self,
        bytes: &[u8; FRAME_BYTES],
        decode: impl FnOnce(&[u8; FRAME_BYTES]) -> InstrFrame,
    ) -> &mut FrameEntry<C> {
        // A stream issues a few frames many times: compare before hashing.
        if let Some((recent, i)) = &self.recent[self.last] {
            if recent == bytes {
                return &mut self.entries[*i as usize];
            }
        }
        let slot = recent_slot(bytes);
        self.last = slot;
        if let Some((recent, i)) = &self.recent[slot] {
            if recent == bytes {
                return &mut self.entries[*i as usize];
            }
        }
        if let Some(&i) = self.index.get(bytes) {
            self.recent[slot] = Some((*bytes, i));
            return &mut self.entries[i as usize];
        }
        if self.entries.len() >= MAX_FRAMES {
            self.index.clear();
            self.entries.clear();
            self.recent = [None; RECENT];
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
        self.recent[slot] = Some((*bytes, self.entries.len() as u32));
        self.entries.push(entry);
        self.entries.last_mut().expect("just pushed")
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::isa::FRAME_INSTRS;

    /// A frame of `nop`s but for a `set_const imm, r9` at IP 0 (word 0xC009 | imm << 4).
    fn frame(imm: u8) -> [u8; FRAME_BYTES] {
        let mut bytes = [0u8; FRAME_BYTES];
        let word = 0xC009u16 | u16::from(imm) << 4;
        bytes[..2].copy_from_slice(&word.to_le_bytes());
        bytes
    }

    /// Frames issued in turn are decoded once each and found again with their own entry,
    /// whichever cache slot they share; a table that starts over at its bound decodes again
    /// and finds no entry of before.
    #[test]
    fn each_frame_is_decoded_once_and_found_again_after_others() {
        let mut table = FrameTable::<u32>::new();
        let decoded = std::cell::Cell::new(0);
        let look = |table: &mut FrameTable<u32>, imm: u8| {
            let entry = table.entry(&frame(imm), |b| {
                decoded.set(decoded.get() + 1);
                InstrFrame::decode(b).expect("a valid frame")
            });
            let code = *entry.code.get_or_insert(u32::from(imm));
            (entry.frame.words[0], code)
        };
        // More frames than cache slots, in turn, three times over.
        for _ in 0..3 {
            for imm in 0..20u8 {
                let word = 0xC009 | u16::from(imm) << 4;
                assert_eq!(look(&mut table, imm), (word, u32::from(imm)));
            }
        }
        assert_eq!(decoded.get(), 20);
        assert_eq!(table.entries.len(), 20);
        // Fill the table to its bound: the next new frame starts it over.
        let filler = |n: usize| {
            let mut bytes = [0u8; FRAME_BYTES];
            bytes[2..4].copy_from_slice(&(n as u16).to_le_bytes());
            bytes
        };
        let nops = |_: &[u8; FRAME_BYTES]| InstrFrame {
            words: [0; FRAME_INSTRS],
            instrs: [Instr::Nop; FRAME_INSTRS],
        };
        for n in 20..MAX_FRAMES {
            table.entry(&filler(n), nops).code = Some(n as u32);
        }
        assert_eq!(table.entries.len(), MAX_FRAMES);
        let mut again = 0;
        let entry = table.entry(&frame(0xAA), |b| {
            again += 1;
            InstrFrame::decode(b).expect("a valid frame")
        });
        assert_eq!(entry.code, None);
        assert_eq!(table.entries.len(), 1);
        // A frame found before the start-over is a new frame again, not a stale slot.
        let entry = table.entry(&frame(3), |b| {
            again += 1;
            InstrFrame::decode(b).expect("a valid frame")
        });
        assert_eq!((entry.code, entry.frame.words[0]), (None, 0xC039));
        assert_eq!(again, 2);
        // So is the frame found last before it (in the slot tried first).
        let entry = table.entry(&filler(MAX_FRAMES - 1), |b| {
            again += 1;
            nops(b)
        });
        assert_eq!((entry.code, again), (None, 3));
        assert_eq!(table.entries.len(), 3);
    }
}
