//! Reading source text into statements and expanding the directives that only rearrange
//! source: `.include`, `.equ`, `.reg` and `.repeat` ... `.end`. What comes out is a flat list
//! of frame-level items ([`Item`]) with every operand evaluated.

use crate::cursor::{Cursor, Env};
use crate::diagnostics::{Diagnostic, Span};
use crate::lexer::{lex, Tok, Token};
use crate::operands::{self, Item};
use crate::report::Report;
use gpu16_machine::ControlFrame;
use std::path::{Path, PathBuf};
use std::sync::Arc;

/// Reads an included file: its text, or why it cannot be read.
pub type Loader<'a> = &'a dyn Fn(&Path) -> Result<String, String>;

/// Expansion stops here, so `.repeat 1000000000` reports instead of eating the memory.
pub const MAX_ITEMS: usize = 1 << 22;
const MAX_INCLUDE_DEPTH: usize = 16;

/// One source line: the labels it defines and its statement, if any.
#[derive(Clone, Debug)]
pub struct Line {
    pub span: Span,
    pub labels: Vec<(String, Span)>,
    pub stmt: Option<Stmt>,
}

/// A mnemonic or directive (lower-cased) and the tokens after it.
#[derive(Clone, Debug)]
pub struct Stmt {
    pub name: String,
    pub span: Span,
    pub args: Vec<Token>,
}

/// Split `text` into lines of statements; lexical errors go to `report`. Stops when the
/// report does.
pub fn parse_lines(text: &str, file: &str, report: &mut Report) -> Vec<Line> {
    let file: Arc<str> = file.into();
    let mut out = Vec::new();
    for (n, raw) in text.lines().enumerate() {
        if report.stopped() {
            break;
        }
        // Only a line that is kept is copied, so an erroneous huge line costs nothing.
        let mut span = Span {
            file: file.clone(),
            line: n + 1,
            col: 1,
            len: 0,
            text: Arc::from(""),
        };
        let toks = match lex(raw) {
            Ok(t) => t,
            Err((col, len, msg)) => {
                report.push(Diagnostic::error_in(&span.at(col, len), raw, msg));
                continue;
            }
        };
        if toks.is_empty() {
            continue;
        }
        span.len = raw.chars().count();
        span.text = raw.into();
        let mut labels = Vec::new();
        let mut i = 0;
        while let (Some(Tok::Ident(name)), Some(colon)) =
            (toks.get(i).map(|t| &t.tok), toks.get(i + 1))
        {
            if !colon.is_punct(":") || name.starts_with('.') {
                break;
            }
            labels.push((name.clone(), span.at(toks[i].col, toks[i].len)));
            i += 2;
        }
        let stmt = match toks.get(i) {
            None => None,
            Some(t) => match &t.tok {
                Tok::Ident(name) => Some(Stmt {
                    name: name.to_ascii_lowercase(),
                    span: span.at(t.col, t.len),
                    args: toks[i + 1..].to_vec(),
                }),
                _ => {
                    report.push(Diagnostic::error(
                        &span.at(t.col, t.len),
                        format!(
                            "expected an instruction, a directive or a label, found {}",
                            t.describe()
                        ),
                    ));
                    None
                }
            },
        };
        if stmt.is_some() || !labels.is_empty() {
            out.push(Line { span, labels, stmt });
        }
    }
    out
}

/// The state of one expansion.
pub struct Expander<'a> {
    pub env: Env,
    pub items: Vec<Item>,
    pub report: Report,
    loader: Loader<'a>,
    includes: Vec<PathBuf>,
    overflowed: bool,
}

impl<'a> Expander<'a> {
    pub fn new(loader: Loader<'a>) -> Expander<'a> {
        Expander {
            env: Env::default(),
            items: Vec::new(),
            report: Report::default(),
            loader,
            includes: Vec::new(),
            overflowed: false,
        }
    }

    /// Expand a whole file's text; a leading byte order mark is not part of it.
    pub fn file(&mut self, text: &str, file: &str) {
        let text = text.strip_prefix('\u{feff}').unwrap_or(text);
        let lines = parse_lines(text, file, &mut self.report);
        self.includes.push(PathBuf::from(file));
        self.lines(&lines);
        self.includes.pop();
    }

    fn lines(&mut self, lines: &[Line]) {
        let mut i = 0;
        while i < lines.len() {
            if self.overflowed || self.report.stopped() {
                return;
            }
            let line = &lines[i];
            i += 1;
            for (name, span) in &line.labels {
                self.push(Item::Label {
                    name: name.clone(),
                    span: span.clone(),
                });
            }
            let Some(stmt) = &line.stmt else { continue };
            let mut cur = Cursor::new(&stmt.args, &line.span);
            let result = match stmt.name.as_str() {
                ".repeat" => match matching_end(lines, i) {
                    Some(end) => {
                        let body = &lines[i..end];
                        i = end + 1;
                        self.repeat(&mut cur, body)
                    }
                    None => Err(Diagnostic::error(
                        &stmt.span,
                        "`.repeat` without a matching `.end`",
                    )),
                },
                ".end" => Err(Diagnostic::error(&stmt.span, "`.end` without a `.repeat`")),
                ".equ" => self.equ(&mut cur),
                ".reg" => self.reg(&mut cur),
                ".include" => self.include(&mut cur),
                _ => match operands::statement(stmt, &mut cur, &self.env) {
                    Ok(items) => {
                        for item in items {
                            self.push(item);
                        }
                        Ok(())
                    }
                    Err(d) => {
                        if stmt.name == ".cf" {
                            // Stand in for the broken frame so its `.if`s do not each
                            // report a missing `.cf` as well.
                            self.push(Item::Cf {
                                span: stmt.span.clone(),
                                frame: ControlFrame::decode(&[0; 32]).expect("zero frame decodes"),
                            });
                        }
                        Err(d)
                    }
                },
            };
            if let Err(d) = result {
                self.report.push(d);
            }
        }
    }

    fn push(&mut self, item: Item) {
        if self.items.len() >= MAX_ITEMS {
            if !self.overflowed {
                let span = item.span().clone();
                self.report.push(Diagnostic::error(
                    &span,
                    format!("the program expands to more than {MAX_ITEMS} statements"),
                ));
            }
            self.overflowed = true;
            return;
        }
        self.items.push(item);
    }

    fn repeat(&mut self, cur: &mut Cursor, body: &[Line]) -> Result<(), Diagnostic> {
        let (count, _) = cur.value(&self.env, 0, MAX_ITEMS as i64, "the repeat count")?;
        let counter = if cur.eat(",") {
            let here = cur.here();
            match cur.next().and_then(Token::ident) {
                Some(name) if !name.starts_with('.') => Some(name.to_string()),
                _ => return cur.error(&here, "expected the name of the repeat counter"),
            }
        } else {
            None
        };
        cur.expect_end("the repeat count")?;
        let saved = counter
            .as_ref()
            .and_then(|c| self.env.consts.get(c).copied());
        for k in 0..count {
            if let Some(c) = &counter {
                self.env.consts.insert(c.clone(), k);
            }
            self.lines(body);
            if self.overflowed {
                break;
            }
        }
        if let Some(c) = &counter {
            match saved {
                Some(v) => self.env.consts.insert(c.clone(), v),
                None => self.env.consts.remove(c),
            };
        }
        Ok(())
    }

    fn name(cur: &mut Cursor, what: &str) -> Result<String, Diagnostic> {
        let here = cur.here();
        match cur.next().and_then(Token::ident) {
            Some(n) if !n.starts_with('.') && crate::cursor::register_number(n).is_none() => {
                Ok(n.to_string())
            }
            _ => cur.error(&here, format!("expected the name of the {what}")),
        }
    }

    fn equ(&mut self, cur: &mut Cursor) -> Result<(), Diagnostic> {
        let name = Self::name(cur, "constant")?;
        if !cur.eat(",") && !cur.eat("=") {
            return cur.error(
                &cur.here(),
                format!("expected `,` after `.equ {name}`, found {}", cur.found()),
            );
        }
        let (v, _) = cur.value(&self.env, i64::MIN, i64::MAX, "a constant")?;
        cur.expect_end("the value")?;
        self.env.consts.insert(name, v);
        Ok(())
    }

    fn reg(&mut self, cur: &mut Cursor) -> Result<(), Diagnostic> {
        let name = Self::name(cur, "register alias")?;
        if !cur.eat(",") && !cur.eat("=") {
            return cur.error(
                &cur.here(),
                format!("expected `,` after `.reg {name}`, found {}", cur.found()),
            );
        }
        let (r, _) = cur.reg(&self.env, "a register")?;
        cur.expect_end("the register")?;
        self.env.regs.insert(name, r);
        Ok(())
    }

    fn include(&mut self, cur: &mut Cursor) -> Result<(), Diagnostic> {
        let here = cur.here();
        let Some(Token {
            tok: Tok::Str(name),
            ..
        }) = cur.next()
        else {
            return cur.error(&here, "expected a file name in double quotes");
        };
        cur.expect_end("the file name")?;
        let base = self
            .includes
            .last()
            .and_then(|p| p.parent())
            .unwrap_or(Path::new(""));
        let path = base.join(name);
        if self.includes.contains(&path) {
            return cur.error(&here, format!("`{}` includes itself", path.display()));
        }
        if self.includes.len() > MAX_INCLUDE_DEPTH {
            return cur.error(
                &here,
                format!("includes nest deeper than {MAX_INCLUDE_DEPTH}"),
            );
        }
        let text = (self.loader)(&path).map_err(|e| {
            Diagnostic::error(&here, format!("cannot include `{}`: {e}", path.display()))
        })?;
        self.file(&text, &path.display().to_string());
        Ok(())
    }
}

/// The index of the `.end` closing a `.repeat` whose body starts at `from`.
fn matching_end(lines: &[Line], from: usize) -> Option<usize> {
    let mut depth = 0usize;
    for (i, line) in lines.iter().enumerate().skip(from) {
        match line.stmt.as_ref().map(|s| s.name.as_str()) {
            Some(".repeat") => depth += 1,
            Some(".end") if depth == 0 => return Some(i),
            Some(".end") => depth -= 1,
            _ => {}
        }
    }
    None
}
