//! Matching the directives that open a block of lines with the ones that close it:
//! `.repeat` ... `.end`, `.macro` ... `.endm` and `.when` ... [`.otherwise` ...] `.endwhen`.
//! Done once per file, in one pass, so that expanding never searches for a block's end and
//! even thousands of unclosed blocks cost linear time. A block never crosses a macro body's
//! edge: a `.macro` closes only at its own `.endm`, and what is left open inside it stays
//! unmatched. An unmatched opener or closer keeps no block and is reported when reached.

use crate::source::Line;
use std::sync::Arc;

/// The lines a matched opener governs.
#[derive(Clone, Debug, Default)]
pub struct Block {
    /// How many lines the body has (the closer follows them). On a matched `.otherwise`:
    /// the lines from it to its `.endwhen`, which a `.when` that held skips.
    pub lines: usize,
    /// For `.repeat`: statements and characters of the body's own lines, not counting
    /// lines inside blocks nested in it (a nested `.repeat`'s body, a `.when`'s branches,
    /// a `.macro`'s body): a pass processes at least these.
    pub statements: usize,
    pub chars: usize,
    /// For `.when`: where its `.otherwise` is, counted in lines from the body's start.
    pub otherwise: Option<usize>,
    /// For `.macro`: the labels its body defines, which each expansion makes its own.
    pub labels: Arc<[String]>,
}

/// Which kind of block is open.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Kind {
    Repeat,
    Macro,
    When,
}

/// A block whose closer is not found yet.
struct Open {
    kind: Kind,
    line: usize,
    statements: usize,
    chars: usize,
    otherwise: Option<usize>,
}

/// The kind a directive opens, and the kind it closes.
fn role(name: Option<&str>) -> (Option<Kind>, Option<Kind>) {
    match name {
        Some(".repeat") => (Some(Kind::Repeat), None),
        Some(".macro") => (Some(Kind::Macro), None),
        Some(".when") => (Some(Kind::When), None),
        Some(".end") => (None, Some(Kind::Repeat)),
        Some(".endm") => (None, Some(Kind::Macro)),
        Some(".endwhen") => (None, Some(Kind::When)),
        _ => (None, None),
    }
}

/// Give each matched opener of `lines` its [`Block`], each matched `.otherwise` the jump to
/// its `.endwhen`, and mark each matched `.endwhen` (which is reached, unlike the other
/// closers, and must then do nothing).
pub fn match_blocks(lines: &mut [Line]) {
    let mut open: Vec<Open> = Vec::new();
    for i in 0..lines.len() {
        let name = lines[i].stmt.as_ref().map(|s| s.name.as_str());
        if name == Some(".otherwise") {
            match open.last_mut() {
                Some(o) if o.kind == Kind::When && o.otherwise.is_none() => {
                    o.otherwise = Some(i - o.line - 1);
                }
                _ => {}
            }
            continue;
        }
        let (opens, closes) = role(name);
        if let Some(kind) = closes {
            // The innermost open block of this kind, not looking past a macro body's edge.
            let edge = open
                .iter()
                .rposition(|o| o.kind == Kind::Macro)
                .filter(|_| kind != Kind::Macro)
                .unwrap_or(0);
            if let Some(at) = open[edge..].iter().rposition(|o| o.kind == kind) {
                open.truncate(edge + at + 1);
                let o = open.pop().expect("found above");
                close(lines, o, i);
                continue;
            }
        }
        // A line counts toward the innermost open block only when every pass of that block
        // surely processes it: not inside a `.when`.
        if let Some(o) = open.last_mut().filter(|o| o.kind != Kind::When) {
            o.statements += 1;
            o.chars += lines[i].chars;
        }
        if let Some(kind) = opens {
            open.push(Open {
                kind,
                line: i,
                statements: 0,
                chars: 0,
                otherwise: None,
            });
        }
    }
}

/// Record the block `o` that the line `end` closes.
fn close(lines: &mut [Line], o: Open, end: usize) {
    let labels: Arc<[String]> = if o.kind == Kind::Macro {
        let mut names: Vec<String> = lines[o.line + 1..end]
            .iter()
            .flat_map(|l| l.labels.iter().map(|(n, _)| n.clone()))
            .collect();
        names.sort();
        names.dedup();
        names.into()
    } else {
        Arc::from([])
    };
    if let Some(at) = o.otherwise {
        let other = o.line + 1 + at;
        lines[other].block = Some(Block {
            lines: end - other - 1,
            ..Block::default()
        });
    }
    if o.kind == Kind::When {
        lines[end].closes = true;
    }
    lines[o.line].block = Some(Block {
        lines: end - o.line - 1,
        statements: o.statements,
        chars: o.chars,
        otherwise: o.otherwise,
        labels,
    });
}
