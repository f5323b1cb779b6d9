//! Differential-testing machinery: a seeded generator of valid, terminating programs (and of
//! programs that break exactly one rule), and a shrinker that minimizes a program while a
//! property (such as "the backends diverge") still holds. Also the one program-image builder
//! the tests and benchmarks share ([`image::Image`]), for programs written by hand.

#![forbid(unsafe_code)]
#![deny(missing_docs)]

pub mod image;
pub mod program;
pub mod rng;
pub mod shrink;
pub mod violation;

pub use program::{generate, generate_in, Generated, Profile, MAX_GROUPS, MCST_MAX_GROUPS};
pub use shrink::shrink;
pub use violation::{generate_violating, Violation};
