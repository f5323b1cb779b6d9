//! Source positions and the messages reported against them: `file:line:col: error: ...`,
//! then the source line and a caret under the column, so a user can find every problem
//! without counting characters.

use std::fmt;
use std::sync::Arc;

/// A place in a source file: 1-based line and column (in characters), the length of the
/// marked text, and the whole line so a message can quote it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Span {
    pub file: Arc<str>,
    pub line: usize,
    pub col: usize,
    pub len: usize,
    pub text: Arc<str>,
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

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Severity {
    Error,
    Warning,
}

impl Severity {
    pub fn name(self) -> &'static str {
        match self {
            Severity::Error => "error",
            Severity::Warning => "warning",
        }
    }
}

/// One problem. `span` is absent only for problems of a whole input with no source (an
/// empty file has no line to point at, a binary image has no lines at all).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Diagnostic {
    pub severity: Severity,
    pub span: Option<Span>,
    /// Where the problem is when there is no source line: `file` or `file: frame 3`.
    pub location: String,
    pub message: String,
}

impl Diagnostic {
    pub fn error(span: &Span, message: impl Into<String>) -> Diagnostic {
        Diagnostic {
            severity: Severity::Error,
            span: Some(span.clone()),
            location: String::new(),
            message: message.into(),
        }
    }

    pub fn warning(span: &Span, message: impl Into<String>) -> Diagnostic {
        Diagnostic {
            severity: Severity::Warning,
            ..Diagnostic::error(span, message)
        }
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
            location: location.into(),
            message: message.into(),
        }
    }

    /// `(line, col)` of the problem, for tests and sorting.
    pub fn position(&self) -> Option<(usize, usize)> {
        self.span.as_ref().map(|s| (s.line, s.col))
    }
}

impl fmt::Display for Diagnostic {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let sev = self.severity.name();
        let Some(s) = &self.span else {
            return write!(f, "{}: {sev}: {}", self.location, self.message);
        };
        writeln!(
            f,
            "{}:{}:{}: {sev}: {}",
            s.file, s.line, s.col, self.message
        )?;
        writeln!(f, "    {}", s.text)?;
        // Tabs are copied into the padding so the caret lines up however the terminal
        // expands them.
        let pad: String = s
            .text
            .chars()
            .take(s.col.saturating_sub(1))
            .map(|c| if c == '\t' { '\t' } else { ' ' })
            .collect();
        let marks = "^".repeat(s.len.max(1));
        write!(f, "    {pad}{marks}")
    }
}

/// Every problem found in a source file, in file order.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Diagnostics(pub Vec<Diagnostic>);

impl Diagnostics {
    pub fn errors(&self) -> usize {
        self.0
            .iter()
            .filter(|d| d.severity == Severity::Error)
            .count()
    }
    pub fn warnings(&self) -> usize {
        self.0
            .iter()
            .filter(|d| d.severity == Severity::Warning)
            .count()
    }
    pub fn is_empty(&self) -> bool {
        self.0.is_empty()
    }
}

impl fmt::Display for Diagnostics {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        for d in &self.0 {
            writeln!(f, "{d}")?;
        }
        Ok(())
    }
}

impl std::error::Error for Diagnostics {}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn caret_under_the_column_with_tabs_kept() {
        let span = Span {
            file: "p.s".into(),
            line: 3,
            col: 6,
            len: 2,
            text: "\tadd r1".into(),
        };
        let d = Diagnostic::error(&span, "bad");
        assert_eq!(
            d.to_string(),
            "p.s:3:6: error: bad\n    \tadd r1\n    \t    ^^"
        );
    }
}
