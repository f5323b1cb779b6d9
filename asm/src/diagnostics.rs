//! Source positions and the messages reported against them: `file:line:col: error: ...`,
//! then the source line and a caret under the column, so a user can find every problem
//! without counting characters. A message quotes at most a bounded, escaped excerpt of its
//! line (see `excerpt.rs`), so no input makes a huge or terminal-hostile message.

use crate::excerpt::{escape, excerpt, MESSAGE_CHARS};
use std::collections::HashMap;
use std::fmt;
use std::sync::Arc;

/// A place in a source file: 1-based line and column (in characters), the length of the
/// marked text, and the line's text so a message can quote it. In a [`Diagnostic`], `text`
/// is only what the message shows of the line: at most
/// 100 characters around the column, control characters escaped, `…` where it was cut.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Span {
    /// The file's name as given to the assembler (or an `.include` path resolved against
    /// it).
    pub file: Arc<str>,
    /// The line, counted from 1.
    pub line: usize,
    /// The column of the marked text's first character, counted from 1.
    pub col: usize,
    /// The length of the marked text in characters.
    pub len: usize,
    /// The line's text, without its line break.
    pub text: Arc<str>,
    /// For a line of a macro body: the expansion it was processed in (`None` for a line
    /// read as written). A diagnostic shows it as notes naming each invocation.
    pub expansion: Option<Arc<Expansion>>,
}

/// One macro expansion: the macro and the line that invoked it, and the expansion that
/// line was itself in (for a macro invoked from a macro's body).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Expansion {
    /// The macro's name as the invocation wrote it, already cut for messages.
    pub name: String,
    /// The invoking line's file.
    pub file: Arc<str>,
    /// The invoking line, counted from 1.
    pub line: usize,
    /// The column of the macro's name on the invoking line, counted from 1.
    pub col: usize,
    /// The expansion the invoking line was in, if any.
    pub outer: Option<Arc<Expansion>>,
}

impl Span {
    /// The same line, another column range.
    pub fn at(&self, col: usize, len: usize) -> Span {
        Span {
            col,
            len,
            ..self.clone()
        }
    }
}

/// How bad a [`Diagnostic`] is.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Severity {
    /// The source cannot be assembled (or the image cannot be loaded).
    Error,
    /// A likely mistake that still assembles: what `gpu16 check` reports.
    Warning,
    /// Not a problem of the source: something about the report itself (that it stopped
    /// early at the limit of diagnostics).
    Note,
}

impl Severity {
    /// The word a message shows: `error`, `warning` or `note`.
    pub fn name(self) -> &'static str {
        match self {
            Severity::Error => "error",
            Severity::Warning => "warning",
            Severity::Note => "note",
        }
    }
}

/// One problem. `span` is absent only for problems of a whole input with no source (an
/// empty file has no line to point at, a binary image has no lines at all).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Diagnostic {
    /// Error, warning or note.
    pub severity: Severity,
    /// Where the problem is. In the diagnostics an assembly returns, its `text` is only
    /// the excerpt of the line that is shown.
    pub span: Option<Span>,
    /// Where the problem is when there is no source line: `file` or `file: frame 3`.
    pub location: String,
    /// What is wrong; in the diagnostics an assembly returns, with control characters
    /// escaped and at most 400 characters.
    pub message: String,
    /// Once `span.text` is cut to the excerpt: how many of its characters come before the
    /// caret, and how many carets. Cutting waits until a diagnostic is kept, so a line
    /// inside `.repeat` that fails on every pass costs little on each.
    /// (Both are at most a few hundred; `u16` keeps `Diagnostic` small, which every
    /// `Result` carrying one pays for.)
    caret: Option<(u16, u16)>,
}

impl Diagnostic {
    /// An error at `span`.
    pub fn error(span: &Span, message: impl Into<String>) -> Diagnostic {
        Diagnostic {
            severity: Severity::Error,
            span: Some(span.clone()),
            location: String::new(),
            message: message.into(),
            caret: None,
        }
    }

    /// A warning at `span`.
    pub fn warning(span: &Span, message: impl Into<String>) -> Diagnostic {
        Diagnostic {
            severity: Severity::Warning,
            ..Diagnostic::error(span, message)
        }
    }

    /// An error at `span`, whose `text` is ignored, on the line `line`: for lines the
    /// assembler does not keep, so that reporting one never copies it whole.
    pub(crate) fn error_in(span: &Span, line: &str, message: impl Into<String>) -> Diagnostic {
        Diagnostic::error(span, message).cut(line)
    }

    /// A problem with no source line to point at.
    pub fn bare(
        severity: Severity,
        location: impl Into<String>,
        message: impl Into<String>,
    ) -> Diagnostic {
        Diagnostic {
            severity,
            span: None,
            location: escape(&location.into(), MESSAGE_CHARS).into_owned(),
            message: message.into(),
            caret: None,
        }
        .shrunk()
    }

    /// Further messages about the problem: for a line of a macro body, one for each
    /// expansion it was in, innermost first, naming where the macro was invoked
    /// (`in the expansion of macro `inc`, invoked at p.s:12:5`).
    pub fn notes(&self) -> Vec<String> {
        let mut out = Vec::new();
        let mut at = self.span.as_ref().and_then(|s| s.expansion.as_deref());
        while let Some(e) = at {
            out.push(format!(
                "in the expansion of macro `{}`, invoked at {}:{}:{}",
                e.name,
                escape(&e.file, MESSAGE_CHARS),
                e.line,
                e.col
            ));
            at = e.outer.as_deref();
        }
        out
    }

    /// `(line, col)` of the problem, for tests and sorting.
    pub fn position(&self) -> Option<(usize, usize)> {
        self.span.as_ref().map(|s| (s.line, s.col))
    }

    /// The same diagnostic holding no more than it shows: the message escaped and cut,
    /// the line cut to its excerpt.
    pub(crate) fn shrunk(self) -> Diagnostic {
        match &self.span {
            Some(s) if self.caret.is_none() => {
                let line = s.text.clone();
                self.cut(&line)
            }
            _ => Diagnostic {
                message: escape(&self.message, MESSAGE_CHARS).into_owned(),
                ..self
            },
        }
    }

    /// [`shrunk`](Self::shrunk), quoting `line` (the line `span` is on).
    fn cut(self, line: &str) -> Diagnostic {
        let Some(span) = &self.span else {
            return self.shrunk();
        };
        let shown = excerpt(line, span.col, span.len);
        Diagnostic {
            span: Some(Span {
                text: shown.text.into(),
                ..span.clone()
            }),
            message: escape(&self.message, MESSAGE_CHARS).into_owned(),
            caret: Some((narrow(shown.caret), narrow(shown.marks))),
            ..self
        }
    }
}

/// A caret position or width, which the excerpt keeps to a few hundred, as a `u16`.
fn narrow(n: usize) -> u16 {
    u16::try_from(n).unwrap_or(u16::MAX)
}

impl fmt::Display for Diagnostic {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if self.caret.is_none() && self.span.is_some() {
            return self.clone().shrunk().fmt(f);
        }
        let sev = self.severity.name();
        let Some(s) = &self.span else {
            return write!(f, "{}: {sev}: {}", self.location, self.message);
        };
        let file = escape(&s.file, MESSAGE_CHARS);
        writeln!(f, "{file}:{}:{}: {sev}: {}", s.line, s.col, self.message)?;
        writeln!(f, "    {}", s.text)?;
        // Tabs are copied into the padding so the caret lines up however the terminal
        // expands them.
        let (caret, marks) = self.caret.unwrap_or((0, 1));
        let (caret, marks) = (caret as usize, marks as usize);
        let pad: String = s
            .text
            .chars()
            .take(caret)
            .map(|c| if c == '\t' { '\t' } else { ' ' })
            .collect();
        write!(f, "    {pad}{}", "^".repeat(marks))?;
        for note in self.notes() {
            write!(f, "\n    note: {note}")?;
        }
        Ok(())
    }
}

/// Every problem found in a source file, in file order.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Diagnostics(pub Vec<Diagnostic>);

impl Diagnostics {
    /// The option that picks the mcst dialect as the messages name it: the CLI's flag.
    pub const MCST_OPTION: &'static str = "`--dialect mcst`";

    /// These diagnostics with [`Diagnostics::MCST_OPTION`] named `option` in each message,
    /// for a front end that spells it otherwise (Python's `` `dialect="mcst"` ``).
    pub fn naming_the_mcst_option(mut self, option: &str) -> Diagnostics {
        for d in &mut self.0 {
            d.message = d.message.replace(Self::MCST_OPTION, option);
        }
        self
    }

    /// How many are errors.
    pub fn errors(&self) -> usize {
        self.0
            .iter()
            .filter(|d| d.severity == Severity::Error)
            .count()
    }
    /// How many are warnings.
    pub fn warnings(&self) -> usize {
        self.0
            .iter()
            .filter(|d| d.severity == Severity::Warning)
            .count()
    }
    /// Whether there are none at all (of any severity).
    pub fn is_empty(&self) -> bool {
        self.0.is_empty()
    }
}

/// What makes two diagnostics the same when shown: their place (a line inside `.repeat`
/// is one place for every frame it makes; a macro's line is another place for each
/// invocation) and their message.
type Shown<'a> = (
    &'a str,
    usize,
    usize,
    Option<(&'a str, usize, usize)>,
    &'a str,
);

fn shown(d: &Diagnostic) -> Option<Shown<'_>> {
    d.span.as_ref().map(|s| {
        let call = s.expansion.as_deref().map(|e| (&*e.file, e.line, e.col));
        (&*s.file, s.line, s.col, call, &*d.message)
    })
}

/// Each distinct diagnostic once, where it first comes, with a note counting its repeats:
/// a lint of a line inside `.repeat 1000` is found in each of its 1,000 frames, which a
/// reader wants to see once. (The list itself, and so `--json`, keeps every one.)
impl fmt::Display for Diagnostics {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let mut times: HashMap<Shown<'_>, usize> = HashMap::new();
        for key in self.0.iter().filter_map(shown) {
            *times.entry(key).or_default() += 1;
        }
        for d in &self.0 {
            let Some(key) = shown(d) else {
                writeln!(f, "{d}")?;
                continue;
            };
            match times.insert(key, 0) {
                Some(0) => {}
                Some(n) if n > 1 => {
                    let more = n - 1;
                    writeln!(
                        f,
                        "{d}\n    note: the same in {more} more frame{} made from this line",
                        if more == 1 { "" } else { "s" }
                    )?;
                }
                _ => writeln!(f, "{d}")?,
            }
        }
        Ok(())
    }
}

impl std::error::Error for Diagnostics {}

#[cfg(test)]
mod tests {
    use super::*;

    fn warning_at(line: usize, message: &str) -> Diagnostic {
        let span = Span {
            file: "p.s".into(),
            line,
            col: 5,
            len: 3,
            text: "    nop".into(),
            expansion: None,
        };
        Diagnostic::warning(&span, message)
    }

    #[test]
    fn a_diagnostic_repeated_by_a_repeat_is_shown_once_with_its_count() {
        // Three frames made from line 4 warn alike, interleaved with line 6's one warning;
        // line 4 with another message is another diagnostic.
        let d = Diagnostics(vec![
            warning_at(4, "w"),
            warning_at(6, "w"),
            warning_at(4, "w"),
            warning_at(4, "other"),
            warning_at(4, "w"),
        ]);
        let line4 = "p.s:4:5: warning: w\n        nop\n        ^^^";
        let expected = format!(
            "{line4}\n    note: the same in 2 more frames made from this line\n\
             p.s:6:5: warning: w\n        nop\n        ^^^\n\
             p.s:4:5: warning: other\n        nop\n        ^^^\n"
        );
        assert_eq!(d.to_string(), expected);
        // Every one is still in the list (`--json` and the counts read it).
        assert_eq!(d.warnings(), 5);
        // Two alike: "1 more frame".
        let two = Diagnostics(vec![warning_at(4, "w"), warning_at(4, "w")]);
        assert!(two
            .to_string()
            .contains("note: the same in 1 more frame made from this line\n"));
    }

    #[test]
    fn caret_under_the_column_with_tabs_kept() {
        let span = Span {
            file: "p.s".into(),
            line: 3,
            col: 6,
            len: 2,
            text: "\tadd r1".into(),
            expansion: None,
        };
        let d = Diagnostic::error(&span, "bad");
        assert_eq!(
            d.to_string(),
            "p.s:3:6: error: bad\n    \tadd r1\n    \t    ^^"
        );
    }

    #[test]
    fn a_line_of_a_macro_body_names_each_invocation() {
        let outer = Expansion {
            name: "outer".into(),
            file: "p.s".into(),
            line: 20,
            col: 5,
            outer: None,
        };
        let inner = Expansion {
            name: "inner".into(),
            file: "p.s".into(),
            line: 9,
            col: 1,
            outer: Some(Arc::new(outer)),
        };
        let span = Span {
            file: "p.s".into(),
            line: 2,
            col: 1,
            len: 3,
            text: "bad".into(),
            expansion: Some(Arc::new(inner)),
        };
        let d = Diagnostic::error(&span, "no");
        assert_eq!(
            d.to_string(),
            "p.s:2:1: error: no\n    bad\n    ^^^\n    \
             note: in the expansion of macro `inner`, invoked at p.s:9:1\n    \
             note: in the expansion of macro `outer`, invoked at p.s:20:5"
        );
    }
}
