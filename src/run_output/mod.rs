//! The binary's outputs of a run beyond the report: the pictures (trace, timeline, memory
//! image, waveform), the files a run writes and the one way a file the user named is
//! written (`file`), `--expect`'s comparisons, and the streamed `--json`. The report itself,
//! as text and JSON, is the library's (`gpu16::output`).

pub mod core_trace;
pub mod events;
pub mod expect;
pub mod file;
pub mod file_id;
pub mod json_stream;
pub mod png;
pub mod run_files;
pub mod see;
pub mod task_spool;
pub mod timeline;
pub mod trace;
pub mod vcd;

// The library's writers share these hand-worked programs; each crate uses a part of them.
#[cfg(test)]
#[allow(dead_code)]
#[path = "../output/testprog.rs"]
mod testprog;
