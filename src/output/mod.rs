//! Presenting a run: the human report and the JSON object scripts read, statistics, and the
//! pictures of a run (trace, timeline, memory image, waveform), and the one way a file the
//! user named is written (`file`).

pub(crate) mod core_trace;
pub mod events;
pub mod exec_log;
pub mod expect;
pub mod file;
pub mod file_id;
pub mod human;
pub mod json;
pub mod json_stream;
pub mod location;
pub mod png;
pub mod run_files;
pub mod see;
pub(crate) use crate::shown;
pub(crate) mod stats;
pub mod task_spool;
pub(crate) mod tasks;
pub mod timeline;
pub mod trace;
pub mod vcd;

#[cfg(test)]
mod testprog;
