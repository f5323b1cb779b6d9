//! The diagnostics of one assembly as they are found: each distinct one kept once (a line
//! inside `.repeat` fails the same way on every pass), at most
//! [`MAX_DIAGNOSTICS`](crate::limits::MAX_DIAGNOSTICS) of them. At the next one the report
//! stops, and the assembler with it, so erroneous input cannot fill the memory.

use crate::diagnostics::{Diagnostic, Severity};
use crate::excerpt::{escape, MESSAGE_CHARS};
use crate::limits::MAX_DIAGNOSTICS;
use std::borrow::Cow;
use std::collections::hash_map::DefaultHasher;
use std::collections::HashMap;
use std::hash::{Hash, Hasher};

/// Where `d` points: what, with its message, makes two diagnostics the same. A line of a
/// macro body is a different place for each line that invokes the macro.
type Place<'a> = (
    &'a str,
    usize,
    usize,
    usize,
    Option<(&'a str, usize, usize)>,
);

fn place(d: &Diagnostic) -> Option<Place<'_>> {
    d.span.as_ref().map(|s| {
        let call = s.expansion.as_deref().map(|e| (&*e.file, e.line, e.col));
        (&*s.file, s.line, s.col, s.len, call)
    })
}

/// The diagnostics found so far.
#[derive(Debug, Default)]
pub struct Report {
    kept: Vec<Diagnostic>,
    /// Hash of place, location and message -> the kept diagnostic with it. Nothing is
    /// copied to look a diagnostic up, so a repeated one costs only its hash.
    seen: HashMap<u64, usize>,
    stopped: bool,
}

impl Report {
    /// Keep `d` unless it was seen already or the report has stopped. Only a kept one is
    /// cut to its excerpt.
    pub fn push(&mut self, mut d: Diagnostic) {
        if self.stopped {
            return;
        }
        if let Cow::Owned(m) = escape(&d.message, MESSAGE_CHARS) {
            d.message = m;
        }
        let mut h = DefaultHasher::new();
        (place(&d), &d.location, &d.message).hash(&mut h);
        let h = h.finish();
        if let Some(&i) = self.seen.get(&h) {
            let k = &self.kept[i];
            if place(k) == place(&d) && k.location == d.location && k.message == d.message {
                return;
            }
        }
        if self.kept.len() == MAX_DIAGNOSTICS {
            self.stopped = true;
            return;
        }
        self.seen.entry(h).or_insert(self.kept.len());
        self.kept.push(d.shrunk());
    }

    /// Whether a diagnostic past the limit came: whoever reports here should stop.
    pub fn stopped(&self) -> bool {
        self.stopped
    }

    pub fn is_empty(&self) -> bool {
        self.kept.is_empty()
    }

    pub fn has_errors(&self) -> bool {
        self.kept.iter().any(|d| d.severity == Severity::Error)
    }

    /// The diagnostics in file order (expansion and frame building report in two passes),
    /// and a last note if the report stopped; `file` is the assembly's main file.
    pub fn finish(self, file: &str) -> Vec<Diagnostic> {
        let mut out = self.kept;
        out.sort_by(|a, b| {
            let key = |d: &Diagnostic| d.span.as_ref().map(|s| (s.file.clone(), s.line, s.col));
            key(a).cmp(&key(b))
        });
        if self.stopped {
            out.push(Diagnostic::bare(
                Severity::Note,
                file,
                format!(
                    "stopped after the first {MAX_DIAGNOSTICS} diagnostics (the limit of one assembly): the source has more problems"
                ),
            ));
        }
        out
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    use crate::diagnostics::Span;

    fn at(line: usize) -> Diagnostic {
        let span = Span {
            file: "p.s".into(),
            line,
            col: 1,
            len: 1,
            text: "x".into(),
            expansion: None,
        };
        Diagnostic::error(&span, "bad")
    }

    #[test]
    fn duplicates_kept_once_and_the_report_stops_at_its_limit() {
        let mut r = Report::default();
        r.push(at(2));
        r.push(at(1));
        r.push(at(2));
        assert!(!r.stopped());
        for line in 3..=MAX_DIAGNOSTICS + 5 {
            r.push(at(line));
        }
        assert!(r.stopped());
        let out = r.finish("p.s");
        assert_eq!(out.len(), MAX_DIAGNOSTICS + 1);
        assert_eq!(out[0].position(), Some((1, 1)));
        assert_eq!(out[MAX_DIAGNOSTICS].severity, Severity::Note);
    }
}
