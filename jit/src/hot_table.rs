//! The bounded table in which `auto` counts frames not compiled yet: a fixed array of
//! [`HOT_TABLE_FRAMES`] entries, two-way set associative, keyed by a hash of the frame's 32
//! bytes. A stream of fresh frames therefore costs a hash, two compares and (once the table
//! is full) the reuse of an evicted entry's allocation, and never grows the table. A frame
//! pushed out before it is hot only starts counting again: when a frame compiles can change,
//! never a result. Its entries are the frames' [`Cold`] records.

use crate::cache::{CompiledFrame, FastHasher, FrameKey};
use gpu16_machine::engine::isa::{Instr, FRAME_INSTRS};
use std::cell::{Cell, RefCell};
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

/// A frame not compiled yet, shared by every core running it: its counters, and its code
/// once compiled (cores that were handed this entry find it here).
#[derive(Debug)]
pub struct Cold {
    pub(crate) key: FrameKey,
    pub(crate) instrs: [Instr; FRAME_INSTRS],
    pub(crate) issues: Cell<u32>,
    pub(crate) interpreted: Cell<u64>,
    /// Its last interpreted run was a group's (lockstep) rather than one core's.
    pub(crate) grouped: Cell<bool>,
    pub(crate) state: Cell<State>,
    pub(crate) compiled: RefCell<Option<Rc<CompiledFrame>>>,
}

/// Where a frame is on its way from interpreted to compiled.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum State {
    /// Interpreted and counted.
    Counting,
    /// Hot, being compiled in the background; interpreted meanwhile.
    Pending,
    /// Compiled: `compiled` holds its code.
    Compiled,
    /// The JIT could not compile it: interpreted for good (results are the same).
    Failed,
}

impl Cold {
    pub(crate) fn new(key: FrameKey, instrs: [Instr; FRAME_INSTRS]) -> Cold {
        Cold {
            key,
            instrs,
            issues: Cell::new(0),
            interpreted: Cell::new(0),
            grouped: Cell::new(false),
            state: Cell::new(State::Counting),
            compiled: RefCell::new(None),
        }
    }

    /// Times the frame was issued while counted here.
    pub fn issues(&self) -> u32 {
        self.issues.get()
    }

    /// Instructions interpreted in the frame while counted here.
    pub fn interpreted(&self) -> u64 {
        self.interpreted.get()
    }
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
