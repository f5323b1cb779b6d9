//! For backend authors: everything an execution engine (the interpreter, the JIT, or a new
//! one) needs to plug into the run loop, apart from the embedding API at the crate root.
//! An embedder that only loads programs, runs them and reads reports never needs this
//! module.
//!
//! - [`backend`]: the [`Backend`](backend::Backend) trait the run loop drives, a core's
//!   state ([`CoreState`](backend::CoreState)), the memory [`Port`](backend::Port) a
//!   backend calls for every memory instruction, and the raw views compiled code uses;
//! - [`slot_run`]: the MCST dialect's slot engine's separate interface,
//!   [`SlotCompiler`](slot_run::SlotCompiler), and the [`SlotRun`](slot_run::SlotRun)
//!   code it asks for;
//! - [`isa`]: the instruction set (decoding, encoding, names);
//! - [`semantics`]: what every instruction does, once, over any value domain;
//! - [`memory`]: shared memory, its banks and locks, and the one definition of how
//!   accesses are counted per bank;
//! - [`banks`]: which banks a frame's memory instructions may reach;
//! - [`frame_table`]: the hasher the run loop interns frames with, for backends that
//!   cache by frame content too.

pub mod backend;
pub mod banks;
pub mod frame_table;
pub mod isa;
pub mod memory;
pub mod semantics;
pub mod slot_run;
