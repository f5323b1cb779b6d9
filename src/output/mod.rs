//! Presenting a run: the human report and the JSON object scripts read.

pub mod human;
pub mod json;
