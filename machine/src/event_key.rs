//! The event order of decisions.md as one integer: every pending event of the machine (a
//! core's next instruction or access, the task scheduler's next step) has a key, and the
//! earliest key acts first.

/// A point in the event order of decisions.md: earlier cycle first, then lower core id.
/// Packed into one integer (`cycle * 16 + core`) so that comparing keys, and taking the
/// minimum of many, is one machine instruction; [`EventKey::NEVER`] is later than any.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct EventKey(u64);

impl EventKey {
    /// Later than every event: no event at all.
    pub const NEVER: EventKey = EventKey(u64::MAX);

    /// The key of core `core`'s action in `cycle` (`cycle` below 2^60).
    #[inline]
    pub fn new(cycle: u64, core: u8) -> EventKey {
        EventKey((cycle << 4) | u64::from(core & 0xF))
    }

    /// The key as its packed integer, for tables compiled code or a minimum scan reads.
    #[inline]
    pub fn raw(self) -> u64 {
        self.0
    }

    /// The key a packed integer stands for.
    #[inline]
    pub fn from_raw(raw: u64) -> EventKey {
        EventKey(raw)
    }

    /// The cycle of the event.
    #[inline]
    pub fn cycle(self) -> u64 {
        self.0 >> 4
    }

    /// The core of the event.
    #[inline]
    pub fn core(self) -> u8 {
        (self.0 & 0xF) as u8
    }

    /// Whether this is [`EventKey::NEVER`].
    #[inline]
    pub fn is_never(self) -> bool {
        self == EventKey::NEVER
    }

    /// The first cycle in which `core` acts at or after this key: `core`'s actions in
    /// earlier cycles come before it, and those from this cycle on do not.
    #[inline]
    pub fn first_cycle_at_or_past(self, core: u8) -> u64 {
        let id = u64::from(core & 0xF);
        if self.0 <= id {
            0
        } else {
            (self.0 - id - 1) / 16 + 1
        }
    }
}
