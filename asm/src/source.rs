//! Reading source text into statements and expanding the directives that only rearrange
//! source: `.include`, `.equ`, `.reg`, `.repeat` ... `.end`, macros (`macros.rs`),
//! conditional assembly `.when` ... `.otherwise` ... `.endwhen`, and collecting `.data`
//! (`data.rs`). What comes out is a flat list of frame-level items ([`Item`]) with every
//! operand evaluated. Every statement processed is paid for from one [`Budget`] before it
//! is processed, so no input expands for long.

use crate::blocks::{match_blocks, Block};
use crate::cursor::{Cursor, Env};
use crate::data::Data;
use crate::diagnostics::{Diagnostic, Span};
use crate::lexer::{lex, Tok, Token};
use crate::limits::{
    Budget, MAX_FILE_BYTES, MAX_INCLUDE_BYTES, MAX_INCLUDE_DEPTH, MAX_ITEMS, MAX_MACRO_ARG_TOKENS,
    MAX_MACRO_DEPTH, MAX_REPEAT_DEPTH, MAX_STATEMENTS,
};
use crate::macros::{self, Frame, Macro};
use crate::operands::{self, Item};
use crate::report::Report;
use gpu16_machine::ControlFrame;
use std::collections::HashMap;
use std::ops::Range;
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
    /// For a matched `.repeat`, `.macro`, `.when` or `.otherwise`: the lines it governs.
    pub block: Option<Block>,
    /// A matched `.endwhen`, which does nothing when reached.
    pub closes: bool,
}

/// A statement's name (lower-cased) and the tokens after it.
#[derive(Clone, Debug)]
pub struct Stmt {
    pub name: String,
    pub span: Span,
    pub args: Vec<Token>,
}

/// Split `text` into lines of statements, each block (`.repeat`, `.macro`, `.when`)
/// matched with its end;
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
            expansion: None,
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
                closes: false,
            });
        }
    }
    match_blocks(&mut out);
    Some(out)
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
    /// Macros defined so far, by lower-cased name.
    macros: HashMap<String, Arc<Macro>>,
    /// Macro expansions open around the line being expanded, and the tokens their
    /// arguments hold.
    expanding: usize,
    arg_tokens: usize,
    /// Expansions begun so far: the next one's label suffix.
    expansions: u64,
    /// The bytes `.data` placed in shared memory, if any.
    pub data: Option<Data>,
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
            macros: HashMap::new(),
            expanding: 0,
            arg_tokens: 0,
            expansions: 0,
            data: None,
        }
    }

    /// Expand a whole file's text; a leading byte order mark is not part of it.
    pub fn file(&mut self, text: &str, file: &str) {
        let text = text.strip_prefix('\u{feff}').unwrap_or(text);
        let Some(lines) = parse_lines(text, file, &mut self.report) else {
            self.exhausted = true;
            return;
        };
        let lines: Arc<[Line]> = lines.into();
        self.includes.push(PathBuf::from(file));
        self.lines(&lines, 0..lines.len(), None);
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

    /// Expand `all[range]`: lines of a file, or of a macro body when `frame` says which
    /// expansion (its lines are rewritten with the arguments as they are reached).
    fn lines(&mut self, all: &Arc<[Line]>, range: Range<usize>, frame: Option<&Frame>) {
        let mut i = range.start;
        while i < range.end {
            if self.done() {
                return;
            }
            let written = &all[i];
            i += 1;
            if let Err(msg) = self.budget.spend(1, written.chars) {
                self.exhaust(Diagnostic::error(&written.span.at(1, written.chars), msg));
                return;
            }
            let rewritten;
            let line = match frame {
                Some(f) => match macros::substitute(written, f) {
                    Ok(l) => {
                        rewritten = l;
                        &rewritten
                    }
                    Err(d) => {
                        self.report.push(d);
                        continue;
                    }
                },
                None => written,
            };
            for (name, span) in &line.labels {
                self.push(Item::Label {
                    name: name.clone(),
                    span: span.clone(),
                });
            }
            let Some(stmt) = &line.stmt else { continue };
            if frame.is_none() {
                if let Some(t) = stmt.args.iter().find(|t| matches!(t.tok, Tok::Param(_))) {
                    self.report.push(macros::stray_param(&line.span, t));
                    continue;
                }
            }
            // Where a block's body is, for the directives that have one.
            let body = line.block.as_ref().map(|b| i..i + b.lines);
            let mut cur = Cursor::new(&stmt.args, &line.span);
            let result = match stmt.name.as_str() {
                ".repeat" => match &line.block {
                    Some(block) => {
                        i += block.lines + 1;
                        self.repeat(&mut cur, all, body.expect("has a block"), block, frame)
                    }
                    None => Err(Diagnostic::error(
                        &stmt.span,
                        "`.repeat` without a matching `.end`",
                    )),
                },
                ".end" => Err(Diagnostic::error(&stmt.span, "`.end` without a `.repeat`")),
                ".macro" => match &line.block {
                    Some(block) => {
                        i += block.lines + 1;
                        self.define(&mut cur, all, body.expect("has a block"), block, frame)
                    }
                    None => {
                        // Whatever follows would be its body: nothing of it is assembled.
                        i = range.end;
                        Err(Diagnostic::error(
                            &stmt.span,
                            "`.macro` without a matching `.endm`",
                        ))
                    }
                },
                ".endm" => Err(Diagnostic::error(&stmt.span, "`.endm` without a `.macro`")),
                ".when" => match &line.block {
                    Some(block) => match self.when(&mut cur) {
                        Ok(true) => Ok(()),
                        Ok(false) => {
                            // To the lines after `.otherwise`, or past `.endwhen`.
                            i += block.otherwise.map_or(block.lines + 1, |o| o + 1);
                            Ok(())
                        }
                        Err(d) => {
                            i += block.lines + 1;
                            Err(d)
                        }
                    },
                    None => Err(Diagnostic::error(
                        &stmt.span,
                        "`.when` without a matching `.endwhen`",
                    )),
                },
                ".otherwise" => match &line.block {
                    // Reached from the lines of a `.when` that held: skip to its end.
                    Some(block) => {
                        i += block.lines + 1;
                        cur.expect_end("`.otherwise`")
                    }
                    None => Err(Diagnostic::error(
                        &stmt.span,
                        "`.otherwise` without a `.when` (or a second `.otherwise` of one `.when`)",
                    )),
                },
                ".endwhen" if line.closes => cur.expect_end("`.endwhen`"),
                ".endwhen" => Err(Diagnostic::error(
                    &stmt.span,
                    "`.endwhen` without a `.when`",
                )),
                ".data" => self.data(&mut cur, &stmt.span),
                ".equ" => self.equ(&mut cur),
                ".reg" => self.reg(&mut cur),
                ".include" => self.include(&mut cur),
                name if self.macros.contains_key(name) => {
                    let mac = self.macros[name].clone();
                    self.invoke(mac, stmt, &line.span)
                }
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

    /// The condition of `.when EXPR`: whether its lines (else those after `.otherwise`)
    /// are assembled.
    fn when(&mut self, cur: &mut Cursor) -> Result<bool, Diagnostic> {
        let (v, _) = cur.value(&self.env, i64::MIN, i64::MAX, "the condition")?;
        cur.expect_end("the condition")?;
        Ok(v != 0)
    }

    /// `.macro NAME p1, p2` with its body `all[body]`: defined (or redefined, as `.equ`
    /// redefines) for the lines after it. A body may not define a macro.
    fn define(
        &mut self,
        cur: &mut Cursor,
        all: &Arc<[Line]>,
        body: Range<usize>,
        block: &Block,
        frame: Option<&Frame>,
    ) -> Result<(), Diagnostic> {
        let (name, params) = macros::header(cur)?;
        if frame.is_some() {
            return cur.error(
                &all[body.start - 1].span,
                "a macro cannot be defined inside a macro's body",
            );
        }
        if let Some(nested) = all[body.clone()]
            .iter()
            .find_map(|l| l.stmt.as_ref().filter(|s| s.name == ".macro"))
        {
            return Err(Diagnostic::error(
                &nested.span,
                "a macro cannot be defined inside a macro's body",
            ));
        }
        let mac = Macro {
            name: name.clone(),
            params,
            lines: all.clone(),
            body,
            labels: block.labels.clone(),
        };
        self.macros.insert(name, Arc::new(mac));
        Ok(())
    }

    /// Expand the invocation `stmt` of `mac` on the line `line`.
    fn invoke(&mut self, mac: Arc<Macro>, stmt: &Stmt, line: &Span) -> Result<(), Diagnostic> {
        if self.expanding == MAX_MACRO_DEPTH {
            self.exhaust(macros::too_deep(&stmt.span, &mac.name));
            return Ok(());
        }
        let args = macros::arguments(stmt, line, &mac)?;
        let frame = Frame {
            ctx: macros::expansion(&stmt.span, &mac),
            id: self.expansions + 1,
            args,
            mac,
        };
        let tokens = frame.tokens();
        if self.arg_tokens + tokens > MAX_MACRO_ARG_TOKENS {
            self.exhaust(Diagnostic::error(
                &stmt.span,
                format!("the arguments of the macro expansions open at once hold more than {MAX_MACRO_ARG_TOKENS} tokens (the limit of macro arguments)"),
            ));
            return Ok(());
        }
        self.expansions += 1;
        self.expanding += 1;
        self.arg_tokens += tokens;
        let (lines, body) = (frame.mac.lines.clone(), frame.mac.body.clone());
        self.lines(&lines, body, Some(&frame));
        self.arg_tokens -= tokens;
        self.expanding -= 1;
        Ok(())
    }

    /// `.data`: bytes placed in the initial shared memory.
    fn data(&mut self, cur: &mut Cursor, directive: &Span) -> Result<(), Diagnostic> {
        let data = self.data.get_or_insert_with(Data::default);
        data.directive(cur, &self.env, directive)
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

    fn repeat(
        &mut self,
        cur: &mut Cursor,
        all: &Arc<[Line]>,
        body: Range<usize>,
        block: &Block,
        frame: Option<&Frame>,
    ) -> Result<(), Diagnostic> {
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
            self.lines(all, body.clone(), frame);
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
