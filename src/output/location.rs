//! Where a failed run's instructions are in the assembly source: the `file:line:col` of the
//! instruction a fault or a livelock names and of each unfinished core's next instruction,
//! through the assembler's [`SourceMap`]. The file is the one the line is in: an included
//! file for an instruction written there. Only an assembled program has a source map; an
//! image's failures are reported without locations.

use gpu16_asm::SourceMap;
use gpu16_machine::{RunError, UnfinishedCore};
use serde_json::{json, Value};
use std::fmt;

/// A place in the source: 1-based line and column (in characters).
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) struct Location {
    /// The file as the assembler names it: the program's path, or an included file's path
    /// joined to the directory of the file that includes it.
    pub(crate) file: String,
    /// Line, from 1.
    pub(crate) line: usize,
    /// Column, from 1, in characters.
    pub(crate) col: usize,
}

impl Location {
    /// The source of the instruction at `ip` of `frame`; for a slot the source left to
    /// `ready` fill, the frame's `.if` line.
    pub(crate) fn of(map: &SourceMap, frame: usize, ip: u8) -> Option<Location> {
        map.span(frame, Some(usize::from(ip))).map(|s| Location {
            file: s.file.to_string(),
            line: s.line,
            col: s.col,
        })
    }

    /// `{"file", "line", "col"}`.
    pub(crate) fn json(&self) -> Value {
        json!({"file": self.file, "line": self.line, "col": self.col})
    }
}

impl fmt::Display for Location {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "{}:{}:{}",
            super::shown::text(&self.file),
            self.line,
            self.col
        )
    }
}

/// The locations of a failure: of the instruction the error itself names (a fault's or a
/// livelock's frame and IP), and of each core it lists as unfinished, in its order.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct FailureLocations {
    /// The error's own instruction, if it names one and the map has it.
    pub(crate) error: Option<Location>,
    /// One per unfinished core of the error, in the error's order.
    pub(crate) cores: Vec<Option<Location>>,
}

impl FailureLocations {
    /// Look up the instructions `error` names in `map`.
    pub fn of(error: &RunError, map: &SourceMap) -> FailureLocations {
        let own = match error {
            RunError::Fault { frame, ip, .. } | RunError::Livelock { frame, ip, .. } => {
                Location::of(map, *frame, *ip)
            }
            _ => None,
        };
        FailureLocations {
            error: own,
            cores: unfinished(error)
                .iter()
                .map(|c| Location::of(map, c.frame, c.ip))
                .collect(),
        }
    }
}

/// The unfinished cores an error lists (the watchdog's, a livelock's or a stopped run's).
pub(crate) fn unfinished(error: &RunError) -> &[UnfinishedCore] {
    match error {
        RunError::Watchdog { cores, .. }
        | RunError::Livelock { cores, .. }
        | RunError::EndlessWalk { cores, .. }
        | RunError::Stopped { cores, .. } => cores,
        RunError::Fault { .. }
        | RunError::TaskLogFull { .. }
        | RunError::Backend { .. }
        | RunError::Internal { .. }
        | RunError::Load(_) => &[],
    }
}
