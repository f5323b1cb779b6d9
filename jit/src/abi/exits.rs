//! Every way compiled code hands back to Rust, one type per form of code: the code returns
//! an exit's [`code`](ScalarExit::code), and the runtime turns it back with `from_code`,
//! which refuses a code no exit has rather than guessing. The boundary's exits are all
//! here, typed, instead of integer constants beside each runtime.

/// A `#[repr(u32)]` exit type with its conversions to and from the returned code.
macro_rules! exits {
    ($(#[$meta:meta])* $name:ident { $($(#[$vmeta:meta])* $variant:ident = $code:literal,)+ }) => {
        $(#[$meta])*
        #[repr(u32)]
        #[derive(Clone, Copy, Debug, PartialEq, Eq)]
        pub(crate) enum $name {
            $($(#[$vmeta])* $variant = $code,)+
        }

        impl $name {
            /// The code compiled code returns for this exit.
            pub(crate) const fn code(self) -> u32 {
                self as u32
            }

            /// The exit compiled code returned `code` for. (An answer Rust gives compiled
            /// code, such as [`CohortAccess`], is never turned back.)
            #[allow(dead_code)]
            pub(crate) fn from_code(code: u32) -> $name {
                match code {
                    $($code => $name::$variant,)+
                    _ => unreachable!(
                        concat!("compiled code returns only ", stringify!($name), " codes, not {}"),
                        code
                    ),
                }
            }
        }
    };
}

exits! {
    /// Why per-core (scalar) code returned (`compile.rs`, run by `runtime::enter`).
    ScalarExit {
        /// Stopped before the instruction at `ip` (memory parked, or the callback panicked).
        Parked = 0,
        /// The part ended after the instruction at IP 15.
        Ended = 1,
        /// The part ended by `ready` at `ip`.
        Ready = 2,
        /// Near the cycle limit, or an IP that is not a segment start: interpret from `ip`.
        Slow = 3,
    }
}

exits! {
    /// Why lockstep code returned (`lanes_compile.rs`, run by `lanes::enter`).
    LaneExit {
        /// Every lane ended after the instruction at IP 15.
        Ended = 1,
        /// Every lane ended by `ready` at `ip`.
        Ready = 2,
        /// The memory instruction at `ip` in `cycle` was performed by the lanes in `done`
        /// only (it completed their loads); the others park before it.
        Parked = 3,
        /// The `bnz` at `ip` in `cycle` (not yet retired) is taken by the lanes in `done`
        /// only.
        Split = 4,
        /// Near the cycle limit, or an IP that is not a segment start: interpret from `ip`.
        Slow = 5,
    }
}

exits! {
    /// Why cohort code returned (`cohort_compile.rs`, run by `cohort::run`).
    CohortExit {
        /// No lane is awake (every one asleep, ended, or joining next cycle).
        Empty = 0,
        /// No lane asleep or joining, and every awake lane at one IP: a group again.
        Converged = 1,
        /// The cycle reached the limit: the awake lanes park before their instructions.
        Limit = 2,
        /// A memory access in `cycle` could not go now: lane `parked` parks before it; the
        /// lanes in `executed` completed their instructions of `cycle`, the rest wait
        /// before theirs.
        Parked = 3,
        /// A lane ended its part holding a lock: the run loop takes over after the cycle.
        Stop = 4,
        /// At most `cohort::SPARSE_LANES` lanes are awake at the top of `cycle`: the
        /// interpreter goes on with the cohort (see `cohort::Cohort::Sparse`).
        Sparse = 5,
    }
}

exits! {
    /// What `cohort::cohort_access` answers the cohort code that called it.
    CohortAccess {
        /// Every lane offered performed its access or slept.
        Done = 0,
        /// A lane parked (`CohortFile::parked`); the later lanes did not act.
        Parked = 1,
    }
}

exits! {
    /// Why MCST slot code returned (`slots_compile.rs`; see `gpu16_machine::engine::slot_run::SlotExit`).
    SlotCodeExit {
        /// Stopped before the instruction at `ip`.
        Stopped = 0,
        /// IP 15 ran and did not jump.
        RanOffEnd = 1,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_exit_comes_back_from_its_code() {
        for e in [
            ScalarExit::Parked,
            ScalarExit::Ended,
            ScalarExit::Ready,
            ScalarExit::Slow,
        ] {
            assert_eq!(ScalarExit::from_code(e.code()), e);
        }
        for e in [
            LaneExit::Ended,
            LaneExit::Ready,
            LaneExit::Parked,
            LaneExit::Split,
            LaneExit::Slow,
        ] {
            assert_eq!(LaneExit::from_code(e.code()), e);
        }
        assert_eq!(CohortExit::from_code(5), CohortExit::Sparse);
        assert_eq!(CohortAccess::from_code(1), CohortAccess::Parked);
        assert_eq!(SlotCodeExit::from_code(1), SlotCodeExit::RanOffEnd);
    }

    #[test]
    #[should_panic(expected = "only LaneExit codes")]
    fn an_unknown_code_is_refused() {
        LaneExit::from_code(0);
    }
}
