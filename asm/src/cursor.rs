//! Walking the tokens of one statement, and the small expression language of operands:
//! numbers, `.equ` names, `+ - * / % << >> & | ^ ~`, comparisons `== != < <= > >=`, logic
//! `&& || !` (1 for true, 0 for false) and parentheses, with C precedence. Arithmetic is
//! checked: a result that does not fit 64 bits is an error, never a wrapped value, and
//! nesting is bounded by [`MAX_EXPR_DEPTH`] so the recursion cannot overflow the stack.
//! `&&` and `||` short-circuit as in C: the operand they do not need is still parsed and its
//! names must be defined, but its arithmetic cannot fail (`k != 0 && 8 / k > 1`).

use crate::diagnostics::{Diagnostic, Span};
use crate::lexer::{quote, shorten, Tok, Token};
use crate::limits::MAX_EXPR_DEPTH;
use gpu16_machine::Dialect;
use std::collections::HashMap;

/// Names a statement can refer to while it is being expanded, and the dialect it is
/// written in.
#[derive(Clone, Debug, Default)]
pub struct Env {
    pub consts: HashMap<String, i64>,
    /// `.reg` aliases: name -> register number.
    pub regs: HashMap<String, u8>,
    /// Which instruction forms and `.cf` fields the source may use.
    pub dialect: Dialect,
}

/// The tokens of one statement after its mnemonic or directive, and the line they are on.
pub struct Cursor<'a> {
    toks: &'a [Token],
    pos: usize,
    line: &'a Span,
    /// Parentheses and unary operators open in the expression being read.
    depth: usize,
    /// Operands of `&&`/`||` open whose value is not needed: inside one, arithmetic that
    /// has no value (division by zero, overflow) gives 0 instead of an error.
    skipped: usize,
}

pub type PResult<T> = Result<T, Diagnostic>;

/// What the expression evaluator returns: its error boxed, so the frames of its
/// recursion stay small.
type Eval<T> = Result<T, Box<Diagnostic>>;

impl<'a> Cursor<'a> {
    pub fn new(toks: &'a [Token], line: &'a Span) -> Cursor<'a> {
        Cursor {
            toks,
            pos: 0,
            line,
            depth: 0,
            skipped: 0,
        }
    }

    pub fn peek(&self) -> Option<&'a Token> {
        self.toks.get(self.pos)
    }

    pub fn peek2(&self) -> Option<&'a Token> {
        self.toks.get(self.pos + 1)
    }

    pub fn next(&mut self) -> Option<&'a Token> {
        let t = self.toks.get(self.pos);
        self.pos += usize::from(t.is_some());
        t
    }

    pub fn at_end(&self) -> bool {
        self.pos >= self.toks.len()
    }

    pub fn span(&self, t: &Token) -> Span {
        self.line.at(t.col, t.len)
    }

    /// Where the next token is, or just past the last one.
    pub fn here(&self) -> Span {
        match self.peek() {
            Some(t) => self.span(t),
            None => {
                let end = self
                    .toks
                    .last()
                    .map_or(self.line.col + self.line.len, |t| t.col + t.len);
                self.line.at(end, 1)
            }
        }
    }

    pub fn error<T>(&self, span: &Span, msg: impl Into<String>) -> PResult<T> {
        Err(Diagnostic::error(span, msg))
    }

    /// What the next token is, for "expected X, found Y".
    pub fn found(&self) -> String {
        self.peek()
            .map_or("the end of the line".into(), Token::describe)
    }

    pub fn eat(&mut self, p: &str) -> bool {
        if self.peek().is_some_and(|t| t.is_punct(p)) {
            self.pos += 1;
            true
        } else {
            false
        }
    }

    /// Eat punctuation `p`, or fail naming what it should follow. `after` is formatted only
    /// for the error: passed as `format_args!`, a statement's every operand list costs no
    /// allocation (the assembler spent a sixth of a 16,000-frame program's time formatting
    /// messages it never showed).
    pub fn expect(&mut self, p: &str, after: impl std::fmt::Display) -> PResult<()> {
        if self.eat(p) {
            Ok(())
        } else {
            self.error(
                &self.here(),
                format!("expected `{p}` {after}, found {}", self.found()),
            )
        }
    }

    /// Fail unless the statement's tokens are all used; `what` is formatted only for the
    /// error (see [`Cursor::expect`]).
    pub fn expect_end(&self, what: impl std::fmt::Display) -> PResult<()> {
        match self.peek() {
            None => Ok(()),
            Some(t) => self.error(
                &self.span(t),
                format!("unexpected {} after {what}", t.describe()),
            ),
        }
    }

    /// A register `r0`..`r15` (any case) or a `.reg` alias.
    /// Whether the next token names a register (`rN` or a `.reg` alias that is not also a
    /// constant), so an operand that may be either can be told apart.
    pub fn at_register(&self, env: &Env) -> bool {
        self.peek().and_then(|t| t.ident()).is_some_and(|n| {
            register_number(n).is_some()
                || (env.regs.contains_key(n) && !env.consts.contains_key(n))
        })
    }

    pub fn reg(&mut self, env: &Env, what: &str) -> PResult<(u8, Span)> {
        let here = self.here();
        let Some(t) = self.peek() else {
            return self.error(&here, format!("expected {what}, found the end of the line"));
        };
        if let Some(name) = t.ident() {
            if let Some(n) = register_number(name) {
                self.pos += 1;
                return match n {
                    Some(n) => Ok((n, here)),
                    None => self.error(
                        &here,
                        format!("no register `{name}` (registers are r0..r15)"),
                    ),
                };
            }
            if let Some(&n) = env.regs.get(name) {
                self.pos += 1;
                return Ok((n, here));
            }
        }
        self.error(
            &here,
            format!("expected {what} (r0..r15), found {}", t.describe()),
        )
    }

    /// An expression, checked to lie in `lo..=hi`.
    pub fn value(&mut self, env: &Env, lo: i64, hi: i64, what: &str) -> PResult<(i64, Span)> {
        let start = self.here();
        let v = self.expr(env, 0).map_err(|d| *d)?;
        let end = self.toks[self.pos - 1].col + self.toks[self.pos - 1].len;
        let span = start.at(start.col, end - start.col);
        if v < lo || v > hi {
            return self.error(&span, format!("{what} must be {lo}..{hi}, not {v}"));
        }
        Ok((v, span))
    }

    fn expr(&mut self, env: &Env, min_prec: u8) -> Eval<i64> {
        let mut lhs = self.unary(env)?;
        while let Some(Token {
            tok: Tok::Punct(op),
            ..
        }) = self.peek()
        {
            let op = *op;
            let Some(prec) = precedence(op) else { break };
            if prec <= min_prec {
                break;
            }
            let at = self.pos;
            self.pos += 1;
            // C's short circuit: the right operand of `0 && x` or `1 || x` is not needed.
            let skip = (op == "&&" && lhs == 0) || (op == "||" && lhs != 0);
            self.skipped += usize::from(skip);
            let rhs = self.expr(env, prec)?;
            self.skipped -= usize::from(skip);
            lhs = match binary(op, lhs, rhs) {
                Ok(v) => v,
                Err(_) if self.skipped > 0 => 0,
                Err(msg) => return Err(self.fail(at, msg)),
            };
        }
        Ok(lhs)
    }

    /// Prefix operators and their operand. A run of `-`, `~` and `!` is read in a loop and
    /// applied innermost first, so only parentheses recurse.
    fn unary(&mut self, env: &Env) -> Eval<i64> {
        let (first, depth) = (self.pos, self.depth);
        while self
            .peek()
            .is_some_and(|t| t.is_punct("-") || t.is_punct("~") || t.is_punct("!"))
        {
            self.enter(self.pos)?;
            self.pos += 1;
        }
        let prefix = first..self.pos;
        let mut v = self.operand(env)?;
        for at in prefix.rev() {
            v = if self.toks[at].is_punct("~") {
                !v
            } else if self.toks[at].is_punct("!") {
                i64::from(v == 0)
            } else {
                match v.checked_neg() {
                    Some(n) => n,
                    None if self.skipped > 0 => 0,
                    None => return Err(self.fail(at, overflow(format!("-({v})")))),
                }
            };
        }
        self.depth = depth;
        Ok(v)
    }

    /// Open one more level of the expression at token `at`, unless that passes
    /// [`MAX_EXPR_DEPTH`]: checked before recursing, so 20,000 `(` are an error, not a stack
    /// overflow.
    fn enter(&mut self, at: usize) -> Eval<()> {
        if self.depth == MAX_EXPR_DEPTH {
            return Err(self.fail(
                at,
                format!("the expression nests deeper than {MAX_EXPR_DEPTH} levels (the limit of parentheses and unary operators)"),
            ));
        }
        self.depth += 1;
        Ok(())
    }

    /// A number, a constant or a parenthesized expression.
    fn operand(&mut self, env: &Env) -> Eval<i64> {
        let at = self.pos;
        let Some(t) = self.next() else {
            return Err(self.fail(at, "expected a number, found the end of the line".into()));
        };
        match &t.tok {
            Tok::Num(n) => Ok(*n),
            Tok::Punct("(") => {
                self.enter(at)?;
                let v = self.expr(env, 0)?;
                self.expect(")", "to close `(`").map_err(Box::new)?;
                self.depth -= 1;
                Ok(v)
            }
            Tok::Ident(name) => match env.consts.get(name) {
                Some(v) => Ok(*v),
                None => Err(self.fail(at, undefined(name))),
            },
            _ => Err(self.fail(at, format!("expected a number, found {}", t.describe()))),
        }
    }

    /// An error at token `at` (or past the last). Kept out of the recursive functions so
    /// their stack frames stay small.
    #[cold]
    #[inline(never)]
    fn fail(&self, at: usize, msg: String) -> Box<Diagnostic> {
        let span = match self.toks.get(at) {
            Some(t) => self.span(t),
            None => self.here(),
        };
        Box::new(Diagnostic::error(&span, msg))
    }
}

#[cold]
#[inline(never)]
fn undefined(name: &str) -> String {
    format!(
        "{} is not defined (no `.equ {}`)",
        quote(name),
        shorten(name)
    )
}

fn overflow(what: String) -> String {
    format!("constant expression overflows 64 bits: {what} is not in -2^63..2^63-1")
}

/// How tightly a binary operator binds, as in C (higher binds tighter); `None` for a token
/// that is not a binary operator, which ends the expression. The one table of the
/// expression language, which the debugger's expressions use too.
pub fn precedence(op: &str) -> Option<u8> {
    Some(match op {
        "||" => 1,
        "&&" => 2,
        "|" => 3,
        "^" => 4,
        "&" => 5,
        "==" | "!=" => 6,
        "<" | "<=" | ">" | ">=" => 7,
        "<<" | ">>" => 8,
        "+" | "-" => 9,
        "*" | "/" | "%" => 10,
        _ => return None,
    })
}

/// `lhs op rhs` for a binary operator, or why it has no 64-bit value.
pub fn binary(op: &str, lhs: i64, rhs: i64) -> Result<i64, String> {
    let truth = |b: bool| Ok(i64::from(b));
    let checked = match op {
        "||" => return truth(lhs != 0 || rhs != 0),
        "&&" => return truth(lhs != 0 && rhs != 0),
        "==" => return truth(lhs == rhs),
        "!=" => return truth(lhs != rhs),
        "<" => return truth(lhs < rhs),
        "<=" => return truth(lhs <= rhs),
        ">" => return truth(lhs > rhs),
        ">=" => return truth(lhs >= rhs),
        "|" => Some(lhs | rhs),
        "^" => Some(lhs ^ rhs),
        "&" => Some(lhs & rhs),
        "<<" | ">>" => {
            if !(0..64).contains(&rhs) {
                return Err(format!("shift by {rhs} is out of range (0..63)"));
            }
            if op == ">>" {
                Some(lhs >> rhs)
            } else {
                // Bits shifted out, the sign bit included, are an overflow.
                Some(lhs << rhs).filter(|v| v >> rhs == lhs)
            }
        }
        "+" => lhs.checked_add(rhs),
        "-" => lhs.checked_sub(rhs),
        "*" => lhs.checked_mul(rhs),
        _ => {
            if rhs == 0 {
                return Err("division by zero in a constant expression".into());
            }
            // Only i64::MIN / -1 overflows; i64::MIN % -1 is 0, which wrapping_rem gives.
            if op == "/" {
                lhs.checked_div(rhs)
            } else {
                Some(lhs.wrapping_rem(rhs))
            }
        }
    };
    checked.ok_or_else(|| overflow(format!("{lhs} {op} {rhs}")))
}

/// `Some(Some(n))` for `r0`..`r15`, `Some(None)` for something that looks like a register
/// but is not one (`r16`), `None` for any other name.
pub fn register_number(name: &str) -> Option<Option<u8>> {
    let digits = name.strip_prefix(['r', 'R'])?;
    if digits.is_empty() || !digits.bytes().all(|b| b.is_ascii_digit()) {
        return None;
    }
    Some(digits.parse::<u8>().ok().filter(|&n| n < 16))
}
