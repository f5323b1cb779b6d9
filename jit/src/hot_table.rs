//! The bounded table in which `auto` counts frames not compiled yet: a fixed array of
//! [`HOT_TABLE_FRAMES`] entries, two-way set associative, keyed by a hash of the frame's 32
//! bytes. A stream of fresh frames therefore costs a hash, two compares and (once the table
//! is full) the reuse of an evicted entry's allocation, and never grows the table. A frame
//! pushed out before it is hot only starts counting again: when a frame compiles can change,
//! never a result.

use crate::auto::Cold;
use crate::cache::{FastHasher, FrameKey};
use gpu16_machine::isa::{Instr, FRAME_INSTRS};
use std::hash::Hasher;
use std::rc::Rc;

/// Frames the table counts at most (sets times ways). At ~190 bytes an entry, about 0.8 MB
/// when full; a program whose warm frames outnumber it only compiles some later.
pub const HOT_TABLE_FRAMES: usize = 4096;
const WAYS: usize = 2;
const SET_BITS: u32 = (HOT_TABLE_FRAMES / WAYS).trailing_zeros();

/// The hash that places a frame in the table.
pub(crate) fn hash(key: &FrameKey) -> u64 {
    let mut h = FastHasher::default();
    h.write(key);
    h.finish()
}

pub(crate) struct HotTable {
    /// Set `s` is `slots[s * WAYS..][..WAYS]`. Allocated once, never resized.
    slots: Box<[Option<Rc<Cold>>]>,
}

impl HotTable {
    pub(crate) fn new() -> HotTable {
        HotTable {
            slots: (0..HOT_TABLE_FRAMES).map(|_| None).collect(),
        }
    }

    /// The ways of the set `hash` falls in.
    fn set(&mut self, hash: u64) -> &mut [Option<Rc<Cold>>] {
        // The hasher's last step is a multiply, which mixes best into the high bits.
        let set = (hash >> (64 - SET_BITS)) as usize;
        &mut self.slots[set * WAYS..][..WAYS]
    }

    /// The entry counting the frame `key` (`hash` its [`hash`]), if any.
    pub(crate) fn get(&mut self, key: &FrameKey, hash: u64) -> Option<Rc<Cold>> {
        self.set(hash)
            .iter()
            .flatten()
            .find(|c| c.key == *key)
            .cloned()
    }

    /// A new entry for the frame `key` (not in the table), with no issue counted yet. Ways
    /// are kept newest first; the new entry goes first and pushes out an empty way, else
    /// the frame with the fewest issues, the oldest of those on a tie (so a frame on its
    /// way to hot outlasts a stream of frames issued once, and a fresh frame outlasts at
    /// least the next insertion into its set). The evicted entry's allocation is reused
    /// when nothing else holds it.
    pub(crate) fn insert(
        &mut self,
        key: &FrameKey,
        hash: u64,
        instrs: &[Instr; FRAME_INSTRS],
    ) -> Rc<Cold> {
        let set = self.set(hash);
        let victim = set.iter().position(Option::is_none).unwrap_or_else(|| {
            let issues = |w: &usize| set[*w].as_ref().map_or(0, |c| c.issues.get());
            (0..WAYS).rev().min_by_key(issues).expect("ways")
        });
        set[..=victim].rotate_right(1);
        let fresh = Cold::new(*key, *instrs);
        match set[0].as_mut().and_then(Rc::get_mut) {
            Some(old) => *old = fresh,
            None => set[0] = Some(Rc::new(fresh)),
        }
        set[0].clone().expect("just filled")
    }

    /// Forget `cold` (compiled now), if the table still holds it.
    pub(crate) fn remove(&mut self, cold: &Rc<Cold>) {
        let set = self.set(hash(&cold.key));
        for slot in set {
            if slot.as_ref().is_some_and(|c| Rc::ptr_eq(c, cold)) {
                *slot = None;
            }
        }
    }

    /// Frames counted now.
    pub(crate) fn len(&self) -> usize {
        self.slots.iter().flatten().count()
    }

    /// Entries the table has room for: [`HOT_TABLE_FRAMES`], from creation on.
    pub(crate) fn capacity(&self) -> usize {
        self.slots.len()
    }
}
