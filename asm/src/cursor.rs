//! Walking the tokens of one statement, and the small expression language of operands:
//! numbers, `.equ` names, `+ - * / % << >> & | ^ ~` and parentheses, with C precedence.

use crate::diagnostics::{Diagnostic, Span};
use crate::lexer::{Tok, Token};
use std::collections::HashMap;

/// Names a statement can refer to while it is being expanded.
#[derive(Clone, Debug, Default)]
pub struct Env {
    pub consts: HashMap<String, i64>,
    /// `.reg` aliases: name -> register number.
    pub regs: HashMap<String, u8>,
}

/// The tokens of one statement after its mnemonic or directive, and the line they are on.
pub struct Cursor<'a> {
    toks: &'a [Token],
    pos: usize,
    line: &'a Span,
}

pub type PResult<T> = Result<T, Diagnostic>;

impl<'a> Cursor<'a> {
    pub fn new(toks: &'a [Token], line: &'a Span) -> Cursor<'a> {
        Cursor { toks, pos: 0, line }
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

    pub fn expect(&mut self, p: &str, after: &str) -> PResult<()> {
        if self.eat(p) {
            Ok(())
        } else {
            self.error(
                &self.here(),
                format!("expected `{p}` {after}, found {}", self.found()),
            )
        }
    }

    pub fn expect_end(&self, what: &str) -> PResult<()> {
        match self.peek() {
            None => Ok(()),
            Some(t) => self.error(
                &self.span(t),
                format!("unexpected {} after {what}", t.describe()),
            ),
        }
    }

    /// A register `r0`..`r15` (any case) or a `.reg` alias.
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
        let v = self.expr(env, 0)?;
        let end = self.toks[self.pos - 1].col + self.toks[self.pos - 1].len;
        let span = start.at(start.col, end - start.col);
        if v < lo || v > hi {
            return self.error(&span, format!("{what} must be {lo}..{hi}, not {v}"));
        }
        Ok((v, span))
    }

    fn expr(&mut self, env: &Env, min_prec: u8) -> PResult<i64> {
        let mut lhs = self.unary(env)?;
        while let Some(
            t @ Token {
                tok: Tok::Punct(op),
                ..
            },
        ) = self.peek()
        {
            let op = *op;
            let prec = match op {
                "|" => 1,
                "^" => 2,
                "&" => 3,
                "<<" | ">>" => 4,
                "+" | "-" => 5,
                "*" | "/" | "%" => 6,
                _ => break,
            };
            if prec <= min_prec {
                break;
            }
            let span = self.span(t);
            self.pos += 1;
            let rhs = self.expr(env, prec)?;
            lhs = match op {
                "|" => lhs | rhs,
                "^" => lhs ^ rhs,
                "&" => lhs & rhs,
                "<<" | ">>" => {
                    if !(0..63).contains(&rhs) {
                        return self.error(&span, format!("shift by {rhs} is out of range"));
                    }
                    if op == "<<" {
                        lhs.checked_shl(rhs as u32).unwrap_or(0)
                    } else {
                        lhs >> rhs
                    }
                }
                "+" => lhs.wrapping_add(rhs),
                "-" => lhs.wrapping_sub(rhs),
                "*" => lhs.wrapping_mul(rhs),
                _ => {
                    if rhs == 0 {
                        return self.error(&span, "division by zero in a constant expression");
                    }
                    if op == "/" {
                        lhs.wrapping_div(rhs)
                    } else {
                        lhs.wrapping_rem(rhs)
                    }
                }
            };
        }
        Ok(lhs)
    }

    fn unary(&mut self, env: &Env) -> PResult<i64> {
        let here = self.here();
        let Some(t) = self.next() else {
            return self.error(&here, "expected a number, found the end of the line");
        };
        match &t.tok {
            Tok::Num(n) => Ok(*n),
            Tok::Punct("-") => Ok(self.unary(env)?.wrapping_neg()),
            Tok::Punct("~") => Ok(!self.unary(env)?),
            Tok::Punct("(") => {
                let v = self.expr(env, 0)?;
                self.expect(")", "to close `(`")?;
                Ok(v)
            }
            Tok::Ident(name) => match env.consts.get(name) {
                Some(v) => Ok(*v),
                None => self.error(&here, format!("`{name}` is not defined (no `.equ {name}`)")),
            },
            _ => self.error(&here, format!("expected a number, found {}", t.describe())),
        }
    }
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
