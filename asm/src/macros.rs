//! Macros: `.macro NAME p1, p2` ... `.endm` defines one, a statement `NAME a, b` expands
//! it. A parameter is written `\p` in the body and stands for the tokens of its argument;
//! a label the body defines is renamed `label@N` in the N-th expansion, so a macro can be
//! used twice in one frame. Expansions nest up to [`MAX_MACRO_DEPTH`]; their lines carry an
//! [`Expansion`] so a diagnostic names the invocation as well as the macro's line. Here are
//! the pieces of one expansion; `source.rs` drives it.

use crate::cursor::{register_number, Cursor};
use crate::diagnostics::{Diagnostic, Expansion, Span};
use crate::lexer::{quote, shorten, Tok, Token};
use crate::limits::{MAX_LINE_TOKENS, MAX_MACRO_DEPTH};
use crate::operands::mnemonics;
use crate::source::{Line, Stmt};
use std::ops::Range;
use std::sync::Arc;

/// One defined macro.
#[derive(Debug)]
pub struct Macro {
    /// Its name, lower-cased: invocations are matched as mnemonics are, in any case.
    pub name: String,
    pub params: Vec<String>,
    /// The lines of the file that defined it, and which of them are its body: the body is
    /// shared, not copied, so a definition costs nothing however long.
    pub lines: Arc<[Line]>,
    pub body: Range<usize>,
    /// The labels the body defines (see `Block::labels`).
    pub labels: Arc<[String]>,
}

/// A macro being expanded: what its body's lines are rewritten with.
pub struct Frame {
    pub mac: Arc<Macro>,
    /// The tokens of each argument, in the order of the parameters.
    pub args: Vec<Vec<Token>>,
    /// Which expansion of the assembly this is (from 1): the suffix of its labels.
    pub id: u64,
    pub ctx: Arc<Expansion>,
}

impl Frame {
    /// Tokens held by the arguments, which the expander bounds across nested expansions.
    pub fn tokens(&self) -> usize {
        self.args.iter().map(Vec::len).sum()
    }
}

/// Read the header of `.macro NAME p1, p2, ...` (the tokens after `.macro`): the name,
/// lower-cased, and the parameters. A name may not be a directive, a register or an
/// instruction, so an invocation never hides one.
pub fn header(cur: &mut Cursor) -> Result<(String, Vec<String>), Diagnostic> {
    let here = cur.here();
    let name = match cur.next().and_then(Token::ident) {
        Some(n) if !n.starts_with('.') && register_number(n).is_none() => n.to_ascii_lowercase(),
        _ => return cur.error(&here, "expected the name of the macro"),
    };
    if mnemonics().contains(&name.as_str()) {
        return cur.error(
            &here,
            format!("`{name}` is an instruction: a macro needs another name"),
        );
    }
    let mut params: Vec<String> = Vec::new();
    if !cur.at_end() {
        loop {
            let here = cur.here();
            match cur.peek().and_then(Token::ident) {
                Some(p) if !p.starts_with('.') => {
                    cur.next();
                    if params.iter().any(|q| q == p) {
                        return cur.error(&here, format!("parameter {} is given twice", quote(p)));
                    }
                    params.push(p.to_string());
                }
                _ => {
                    return cur.error(
                        &here,
                        format!("expected the name of a parameter, found {}", cur.found()),
                    )
                }
            }
            if !cur.eat(",") {
                break;
            }
        }
    }
    cur.expect_end("the parameters")?;
    Ok((name, params))
}

/// The arguments of an invocation: its tokens split at the commas that are not inside
/// parentheses or brackets (`m [r1, r2], (1, 2)` has two). An empty argument is an error.
pub fn arguments(stmt: &Stmt, line: &Span, mac: &Macro) -> Result<Vec<Vec<Token>>, Diagnostic> {
    let mut args: Vec<Vec<Token>> = Vec::new();
    if !stmt.args.is_empty() {
        let mut current = Vec::new();
        let mut depth = 0usize;
        for t in &stmt.args {
            match &t.tok {
                Tok::Punct("(" | "[") => depth += 1,
                Tok::Punct(")" | "]") => depth = depth.saturating_sub(1),
                Tok::Punct(",") if depth == 0 => {
                    if current.is_empty() {
                        return Err(Diagnostic::error(
                            &line.at(t.col, t.len),
                            format!(
                                "argument {} of macro `{}` is empty",
                                args.len() + 1,
                                mac.name
                            ),
                        ));
                    }
                    args.push(std::mem::take(&mut current));
                    continue;
                }
                _ => {}
            }
            current.push(t.clone());
        }
        if current.is_empty() {
            let end = stmt.args.last().expect("not empty");
            return Err(Diagnostic::error(
                &line.at(end.col, end.len),
                format!(
                    "argument {} of macro `{}` is empty",
                    args.len() + 1,
                    mac.name
                ),
            ));
        }
        args.push(current);
    }
    if args.len() != mac.params.len() {
        let takes = match mac.params.len() {
            0 => "no arguments".to_string(),
            1 => format!("1 argument ({})", mac.params[0]),
            n => format!("{n} arguments ({})", mac.params.join(", ")),
        };
        return Err(Diagnostic::error(
            &stmt.span,
            format!(
                "macro `{}` takes {takes}, but {} given",
                mac.name,
                given(args.len())
            ),
        ));
    }
    Ok(args)
}

fn given(n: usize) -> String {
    match n {
        0 => "none is".into(),
        1 => "1 is".into(),
        n => format!("{n} are"),
    }
}

/// The error for an invocation that would nest deeper than [`MAX_MACRO_DEPTH`].
pub fn too_deep(at: &Span, name: &str) -> Diagnostic {
    Diagnostic::error(
        at,
        format!(
            "macro expansions nest deeper than {MAX_MACRO_DEPTH} levels (the limit of nested expansions): does `{}` invoke itself without end?",
            shorten(name)
        ),
    )
}

/// `line` of `frame`'s macro body as this expansion processes it: each `\p` replaced by its
/// argument's tokens (placed at the `\p`, so a caret points there), each label of the body
/// renamed `label@N`, and the span marked with the expansion. `None` for a line of the body
/// that only its definition can make sense of — an error, given.
pub fn substitute(line: &Line, frame: &Frame) -> Result<Line, Diagnostic> {
    let mac = &frame.mac;
    let span = Span {
        expansion: Some(frame.ctx.clone()),
        ..line.span.clone()
    };
    let local = |name: &str| -> Option<String> {
        mac.labels
            .binary_search_by(|l| l.as_str().cmp(name))
            .ok()
            .map(|_| format!("{name}@{}", frame.id))
    };
    let labels = line
        .labels
        .iter()
        .map(|(n, s)| {
            let name = local(n).unwrap_or_else(|| n.clone());
            let s = Span {
                expansion: Some(frame.ctx.clone()),
                ..s.clone()
            };
            (name, s)
        })
        .collect();
    let mut chars = line.chars;
    let stmt = match &line.stmt {
        None => None,
        Some(stmt) => {
            let mut args = Vec::with_capacity(stmt.args.len());
            for t in &stmt.args {
                match &t.tok {
                    Tok::Param(p) => {
                        let Some(i) = mac.params.iter().position(|q| q == p) else {
                            return Err(Diagnostic::error(
                                &span.at(t.col, t.len),
                                format!(
                                    "`\\{}` is not a parameter of macro `{}` ({})",
                                    shorten(p),
                                    mac.name,
                                    if mac.params.is_empty() {
                                        "it has none".to_string()
                                    } else {
                                        format!("its parameters: {}", mac.params.join(", "))
                                    }
                                ),
                            ));
                        };
                        let arg = &frame.args[i];
                        if args.len() + arg.len() > MAX_LINE_TOKENS {
                            return Err(Diagnostic::error(
                                &span.at(t.col, t.len),
                                format!("the line expands to more than {MAX_LINE_TOKENS} tokens (the limit of a line)"),
                            ));
                        }
                        chars += arg.iter().map(|a| a.len).sum::<usize>();
                        args.extend(arg.iter().map(|a| Token {
                            tok: a.tok.clone(),
                            col: t.col,
                            len: t.len,
                        }));
                    }
                    Tok::Ident(n) => args.push(Token {
                        tok: local(n).map_or_else(|| t.tok.clone(), Tok::Ident),
                        ..t.clone()
                    }),
                    _ => args.push(t.clone()),
                }
            }
            Some(Stmt {
                name: stmt.name.clone(),
                span: Span {
                    expansion: Some(frame.ctx.clone()),
                    ..stmt.span.clone()
                },
                args,
            })
        }
    };
    Ok(Line {
        span,
        labels,
        stmt,
        chars,
        block: line.block.clone(),
        closes: line.closes,
    })
}

/// The expansion record of an invocation at `at` (the macro's name on its line) of `mac`.
pub fn expansion(at: &Span, mac: &Macro) -> Arc<Expansion> {
    Arc::new(Expansion {
        name: shorten(&mac.name).into_owned(),
        file: at.file.clone(),
        line: at.line,
        col: at.col,
        outer: at.expansion.clone(),
    })
}

/// The `\p` of a line outside any macro body, as an error.
pub fn stray_param(line: &Span, t: &Token) -> Diagnostic {
    Diagnostic::error(
        &line.at(t.col, t.len),
        format!(
            "{} is a macro parameter, but this line is not in a macro body",
            t.describe()
        ),
    )
}
