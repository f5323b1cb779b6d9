//! Reading source text into statements and expanding the directives that only rearrange
//! source: `.include`, `.equ`, `.reg` and `.repeat` ... `.end`. What comes out is a flat list
//! of frame-level items ([`Item`]) with every operand evaluated. Every statement processed
//! is paid for from one [`Budget`] before it is processed, so no input expands for long.

use crate::cursor::{Cursor, Env};
use crate::diagnostics::{Diagnostic, Span};
use crate::lexer::{lex, Tok, Token};
use crate::limits::{
    Budget, MAX_FILE_BYTES, MAX_INCLUDE_BYTES, MAX_INCLUDE_DEPTH, MAX_ITEMS, MAX_REPEAT_DEPTH,
    MAX_STATEMENTS,
};
use crate::operands::{self, Item};
use crate::report::Report;
use gpu16_machine::ControlFrame;
use std::path::{Path, PathBuf};
use std::sync::Arc;

/// Reads an included file: its text, or why it cannot be read.
pub type Loader<'a> = &'a dyn Fn(&Path) -> Result<String, String>;

/// One source line: the labels it defines and its statement, if any.
#[derive(Clone, Debug)]
pub struct Line {
    pub span: Span,
    pub labels: Vec<(String, Span)>,
    pub stmt: Option<Stmt>,
    /// Characters up to the end of the last token: what processing the line costs.
    pub chars: usize,
    /// For a `.repeat` with its `.end`: the body, and what one pass over it costs at least.
    pub block: Option<Block>,
}

/// The body of a `.repeat`: the lines after it up to its `.end`.
#[derive(Clone, Copy, Debug)]
pub struct Block {
    /// How many lines the body has (the `.end` follows them).
    pub lines: usize,
    /// Statements and characters of the body's own lines, not counting the bodies of
    /// `.repeat`s nested in it: a pass processes at least these.
    pub statements: usize,
    pub chars: usize,
}

/// A `.repeat` whose `.end` is not found yet, while blocks are matched.
struct Open {
    line: usize,
    statements: usize,
    chars: usize,
}

/// A statement's name (lower-cased) and the tokens after it.
#[derive(Clone, Debug)]
pub struct Stmt {
    pub name: String,
    pub span: Span,
    pub args: Vec<Token>,
}

/// Split `text` into lines of statements, each `.repeat` matched with its `.end`;
/// lexical errors go to `report`. Stops when the report does; `None` (reported) for a file
/// with more statements than one assembly may process, which would only be expanded to
/// the same end.
pub fn parse_lines(text: &str, file: &str, report: &mut Report) -> Option<Vec<Line>> {
    let file: Arc<str> = file.into();
    let mut out: Vec<Line> = Vec::new();
    let mut kept = Budget::default();
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
        let Some(last) = toks.last() else { continue };
        let chars = last.col + last.len - 1;
        if let Err(msg) = kept.spend(1, chars) {
            report.push(Diagnostic::error_in(&span.at(1, chars), raw, msg));
            return None;
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
            out.push(Line {
                span,
                labels,
                stmt,
                chars,
                block: None,
            });
        }
    }
    match_blocks(&mut out);
    Some(out)
}

/// Match each `.repeat` with its `.end` (innermost first, as they nest) in one pass, so
/// even thousands of unclosed `.repeat`s cost linear time. An unmatched one keeps no
/// block and is reported when it is reached.
fn match_blocks(lines: &mut [Line]) {
    let mut open: Vec<Open> = Vec::new();
    for i in 0..lines.len() {
        let name = lines[i].stmt.as_ref().map(|s| s.name.as_str());
        if name == Some(".end") {
            if let Some(o) = open.pop() {
                lines[o.line].block = Some(Block {
                    lines: i - o.line - 1,
                    statements: o.statements,
                    chars: o.chars,
                });
            }
            continue;
        }
        if let Some(o) = open.last_mut() {
            o.statements += 1;
            o.chars += lines[i].chars;
        }
        if name == Some(".repeat") {
            open.push(Open {
                line: i,
                statements: 0,
                chars: 0,
            });
        }
    }
}

/// The state of one expansion.
pub struct Expander<'a> {
    pub env: Env,
    pub items: Vec<Item>,
    pub report: Report,
    loader: Loader<'a>,
    includes: Vec<PathBuf>,
    /// Bytes of included text read so far.
    included: usize,
    /// `.repeat`s open around the line being expanded.
    repeats: usize,
    budget: Budget,
    /// A limit of the whole assembly was reached: nothing more is expanded.
    exhausted: bool,
}

impl<'a> Expander<'a> {
    pub fn new(loader: Loader<'a>) -> Expander<'a> {
        Expander {
            env: Env::default(),
            items: Vec::new(),
            report: Report::default(),
            loader,
            includes: Vec::new(),
            included: 0,
            repeats: 0,
            budget: Budget::default(),
            exhausted: false,
        }
    }

    /// Expand a whole file's text; a leading byte order mark is not part of it.
    pub fn file(&mut self, text: &str, file: &str) {
        let text = text.strip_prefix('\u{feff}').unwrap_or(text);
        let Some(lines) = parse_lines(text, file, &mut self.report) else {
            self.exhausted = true;
            return;
        };
        self.includes.push(PathBuf::from(file));
        self.lines(&lines);
        self.includes.pop();
    }

    /// Whether a limit of the whole assembly was reached, so the items are cut short.
    pub fn exhausted(&self) -> bool {
        self.exhausted
    }

    /// Whether expansion must stop: a limit of the assembly was reached.
    fn done(&self) -> bool {
        self.exhausted || self.report.stopped()
    }

    /// Report that a limit of the whole assembly was reached, and stop.
    fn exhaust(&mut self, d: Diagnostic) {
        self.report.push(d);
        self.exhausted = true;
    }

    fn lines(&mut self, lines: &[Line]) {
        let mut i = 0;
        while i < lines.len() {
            if self.done() {
                return;
            }
            let line = &lines[i];
            i += 1;
            if let Err(msg) = self.budget.spend(1, line.chars) {
                self.exhaust(Diagnostic::error(&line.span.at(1, line.chars), msg));
                return;
            }
            for (name, span) in &line.labels {
                self.push(Item::Label {
                    name: name.clone(),
                    span: span.clone(),
                });
            }
            let Some(stmt) = &line.stmt else { continue };
            let mut cur = Cursor::new(&stmt.args, &line.span);
            let result = match stmt.name.as_str() {
                ".repeat" => match line.block {
                    Some(block) => {
                        let body = &lines[i..i + block.lines];
                        i += block.lines + 1;
                        self.repeat(&mut cur, body, block)
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
                        if stmt.name == ".cf" || stmt.name == ".halt" {
                            // Stand in for the broken frame so its `.if`s do not each
                            // report a missing `.cf` as well.
                            self.push(Item::Cf {
                                span: stmt.span.clone(),
                                frame: ControlFrame::decode(&[0; 32]).expect("zero frame decodes"),
                                halt: false,
                                if_num: None,
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
        if self.exhausted {
            return;
        }
        if self.items.len() >= MAX_ITEMS {
            let span = item.span().clone();
            self.exhaust(Diagnostic::error(
                &span,
                format!("the program expands to more than {MAX_ITEMS} items (the limit of instructions, `.word` values, labels and frames)"),
            ));
            return;
        }
        self.items.push(item);
    }

    fn repeat(&mut self, cur: &mut Cursor, body: &[Line], block: Block) -> Result<(), Diagnostic> {
        let (count, count_span) =
            cur.value(&self.env, 0, MAX_STATEMENTS as i64, "the repeat count")?;
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
        if self.repeats == MAX_REPEAT_DEPTH {
            return cur.error(
                &count_span,
                format!("`.repeat` nests deeper than {MAX_REPEAT_DEPTH} levels (the limit of nested `.repeat`s)"),
            );
        }
        // Each pass costs its `.end` and at least the body's own lines: refuse at once what
        // cannot fit rather than expanding until the budget runs out.
        let count = count as usize;
        let statements = count.saturating_mul(block.statements + 1);
        let chars = count.saturating_mul(block.chars);
        if !self.budget.allows(statements, chars) {
            let msg = self.budget.exceeded(statements);
            self.exhaust(Diagnostic::error(
                &count_span,
                format!("this `.repeat` would go past the limit: {msg}"),
            ));
            return Ok(());
        }
        let saved = counter
            .as_ref()
            .and_then(|c| self.env.consts.get(c).copied());
        self.repeats += 1;
        for k in 0..count {
            if self.done() {
                break;
            }
            if let Err(msg) = self.budget.spend(1, 0) {
                self.exhaust(Diagnostic::error(&count_span, msg));
                break;
            }
            if let Some(c) = &counter {
                self.env.consts.insert(c.clone(), k as i64);
            }
            self.lines(body);
        }
        self.repeats -= 1;
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
                format!("includes nest deeper than {MAX_INCLUDE_DEPTH} levels (the limit of nested `.include`s)"),
            );
        }
        let shown = path.display().to_string();
        let cannot =
            |why: String| Diagnostic::error(&here, format!("cannot include `{shown}`: {why}"));
        let text = (self.loader)(&path).map_err(cannot)?;
        // A loader may hand back anything; the default one stops reading past the limit.
        if text.len() > MAX_FILE_BYTES {
            return Err(cannot(too_big()));
        }
        if self.included + text.len() > MAX_INCLUDE_BYTES {
            let msg =
                format!("the included files exceed the limit of {MAX_INCLUDE_BYTES} bytes in all");
            self.exhaust(cannot(msg));
            return Ok(());
        }
        self.included += text.len();
        self.file(&text, &shown);
        Ok(())
    }
}

/// Why a file over [`MAX_FILE_BYTES`] is refused.
pub fn too_big() -> String {
    format!("the file exceeds the limit of {MAX_FILE_BYTES} bytes")
}
