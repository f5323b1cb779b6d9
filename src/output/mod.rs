//! Presenting a run: the human report and the JSON object scripts read, statistics, and the
//! pictures of a run (trace, timeline, memory image, waveform).

pub mod human;
pub mod json;
pub mod stats;

#[cfg(test)]
mod testprog;
