//! Presenting a run as text: the human report, the JSON object scripts and Python read, the
//! statistics both show, and the executed-instruction log. The binary's pictures and files
//! of a run (trace, timeline, memory image, waveform, `--expect`) are `src/run_output/`.

pub mod exec_log;
pub mod human;
pub mod json;
pub(crate) mod location;
pub(crate) use crate::shown;
pub(crate) mod stats;
pub(crate) mod tasks;

// Both crates' writers share these hand-worked programs; each uses a part of them.
#[cfg(test)]
#[allow(dead_code)]
mod testprog;
