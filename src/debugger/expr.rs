//! The debugger's expressions (`print`, `display`, breakpoint conditions): numbers,
//! registers and memory bytes of the machine where the session stands, with the
//! assembler's operators (`gpu16_asm::precedence` and `gpu16_asm::binary`: C's precedence,
//! signed 64-bit values, an overflow or a division by zero an error, a comparison or a
//! logical operator 1 or 0). `rN` is register N of the current core, `cK.rN` of core K;
//! `[E]` is the byte at address E; `cycle` and `core` are the session's cycle and current
//! core.

/// What an expression can read.
pub(crate) trait Machine {
    /// Register `r` of core `core`.
    fn register(&self, core: u8, r: u8) -> u8;
    /// The byte at `addr` (0..0xfff).
    fn byte(&self, addr: u16) -> u8;
    /// The cycle the session stands at.
    fn cycle(&self) -> u64;
    /// The current core.
    fn core(&self) -> u8;
}

/// The longest expression taken, in bytes, and the deepest nesting.
const MAX_LEN: usize = 1024;
const MAX_DEPTH: usize = 64;

#[derive(Clone, Debug, PartialEq)]
enum Token {
    Num(i64),
    Reg(Option<u8>, u8),
    Word(String),
    Op(&'static str),
}

const OPS: [&str; 24] = [
    "<<", ">>", "<=", ">=", "==", "!=", "&&", "||", "+", "-", "*", "/", "%", "&", "|", "^", "<",
    ">", "!", "~", "(", ")", "[", "]",
];

fn lex(text: &str) -> Result<Vec<Token>, String> {
    let mut out = Vec::new();
    let b = text.as_bytes();
    let mut i = 0;
    while i < b.len() {
        let c = b[i];
        if c.is_ascii_whitespace() {
            i += 1;
        } else if c.is_ascii_alphanumeric() || c == b'_' || c == b'.' {
            let start = i;
            while i < b.len() && (b[i].is_ascii_alphanumeric() || b[i] == b'_' || b[i] == b'.') {
                i += 1;
            }
            let w = &text[start..i];
            out.push(word(w)?);
        } else if let Some(op) = OPS.iter().find(|op| b[i..].starts_with(op.as_bytes())) {
            out.push(Token::Op(op));
            i += op.len();
        } else {
            let ch = text[i..].chars().next().unwrap_or('?');
            return Err(format!("unexpected {ch:?} in the expression"));
        }
    }
    Ok(out)
}

fn register_number(s: &str) -> Option<u8> {
    let n: u8 = s.strip_prefix('r')?.parse().ok()?;
    (n < 16 && !s[1..].starts_with('+')).then_some(n)
}

fn word(w: &str) -> Result<Token, String> {
    if w.as_bytes()[0].is_ascii_digit() {
        return super::command::number(w)
            .and_then(|n| i64::try_from(n).ok())
            .map(Token::Num)
            .ok_or_else(|| format!("{w:?} is not a number in 0..2^63"));
    }
    if let Some(n) = register_number(w) {
        return Ok(Token::Reg(None, n));
    }
    if let Some((c, r)) = w.split_once('.') {
        let core = c
            .strip_prefix('c')
            .and_then(|k| k.parse::<u8>().ok())
            .filter(|&k| k < 16);
        if let (Some(core), Some(r)) = (core, register_number(r)) {
            return Ok(Token::Reg(Some(core), r));
        }
    }
    match w {
        "cycle" | "core" => Ok(Token::Word(w.to_string())),
        _ => Err(format!(
            "unknown name {:?} (registers are r0..r15 or cK.rN, memory [ADDR])",
            w.chars().take(40).collect::<String>()
        )),
    }
}

struct Parser<'a, M: Machine> {
    tokens: Vec<Token>,
    at: usize,
    machine: &'a M,
    depth: usize,
}

impl<M: Machine> Parser<'_, M> {
    fn peek(&self) -> Option<&Token> {
        self.tokens.get(self.at)
    }

    fn expect(&mut self, op: &str) -> Result<(), String> {
        match self.peek() {
            Some(Token::Op(o)) if *o == op => {
                self.at += 1;
                Ok(())
            }
            _ => Err(format!("expected `{op}`")),
        }
    }

    fn expr(&mut self, min: u8) -> Result<i64, String> {
        self.depth += 1;
        if self.depth > MAX_DEPTH {
            return Err(format!("the expression nests deeper than {MAX_DEPTH}"));
        }
        let mut left = self.unary()?;
        while let Some(Token::Op(op)) = self.peek() {
            let op = *op;
            let Some(p) = gpu16_asm::precedence(op) else {
                break;
            };
            if p < min {
                break;
            }
            self.at += 1;
            let right = self.expr(p + 1)?;
            left = gpu16_asm::binary(op, left, right)?;
        }
        self.depth -= 1;
        Ok(left)
    }

    fn unary(&mut self) -> Result<i64, String> {
        let token = self.peek().cloned();
        self.at += 1;
        match token {
            Some(Token::Num(n)) => Ok(n),
            Some(Token::Reg(core, r)) => {
                let core = core.unwrap_or_else(|| self.machine.core());
                Ok(i64::from(self.machine.register(core, r)))
            }
            Some(Token::Word(w)) if w == "cycle" => Ok(self.machine.cycle() as i64),
            Some(Token::Word(_)) => Ok(i64::from(self.machine.core())),
            Some(Token::Op("(")) => {
                let v = self.expr(0)?;
                self.expect(")")?;
                Ok(v)
            }
            Some(Token::Op("[")) => {
                let a = self.expr(0)?;
                self.expect("]")?;
                if !(0..=0xFFF).contains(&a) {
                    return Err(format!("address {a} is not in 0..0xfff"));
                }
                Ok(i64::from(self.machine.byte(a as u16)))
            }
            Some(Token::Op("-")) => gpu16_asm::binary("-", 0, self.unary()?),
            Some(Token::Op("!")) => Ok(i64::from(self.unary()? == 0)),
            Some(Token::Op("~")) => Ok(!self.unary()?),
            Some(Token::Op(op)) => Err(format!("unexpected `{op}`")),
            None => Err("the expression ends too soon".to_string()),
        }
    }
}

/// Whether `text` reads another core's registers (`cK.rN`): a breakpoint's condition
/// reads only the stopping core's.
pub(crate) fn reads_other_cores(text: &str) -> bool {
    lex(text).is_ok_and(|t| t.iter().any(|t| matches!(t, Token::Reg(Some(_), _))))
}

/// Check that `text` is an expression (for `display`, before it is first shown).
pub(crate) fn check(text: &str) -> Result<(), String> {
    struct Zero;
    impl Machine for Zero {
        fn register(&self, _: u8, _: u8) -> u8 {
            0
        }
        fn byte(&self, _: u16) -> u8 {
            0
        }
        fn cycle(&self) -> u64 {
            0
        }
        fn core(&self) -> u8 {
            0
        }
    }
    match evaluate(text, &Zero) {
        Err(e) if !e.contains("division by zero") => Err(e),
        _ => Ok(()),
    }
}

/// The value of `text` on `machine`.
pub(crate) fn evaluate(text: &str, machine: &impl Machine) -> Result<i64, String> {
    if text.len() > MAX_LEN {
        return Err(format!("an expression is at most {MAX_LEN} bytes"));
    }
    let tokens = lex(text)?;
    if tokens.is_empty() {
        return Err("print wants an expression".to_string());
    }
    let mut p = Parser {
        tokens,
        at: 0,
        machine,
        depth: 0,
    };
    let v = p.expr(0)?;
    if p.at < p.tokens.len() {
        return Err("unexpected text after the expression".to_string());
    }
    Ok(v)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Core k's register r holds 16 * k + r; byte a holds a & 0xff; cycle 42; core 3.
    struct Fixed;
    impl Machine for Fixed {
        fn register(&self, core: u8, r: u8) -> u8 {
            16 * core + r
        }
        fn byte(&self, addr: u16) -> u8 {
            addr as u8
        }
        fn cycle(&self) -> u64 {
            42
        }
        fn core(&self) -> u8 {
            3
        }
    }

    fn ev(s: &str) -> Result<i64, String> {
        evaluate(s, &Fixed)
    }

    #[test]
    fn values_operators_and_precedence() {
        assert_eq!(ev("r5"), Ok(53));
        assert_eq!(ev("c1.r2"), Ok(18));
        assert_eq!(ev("[0x1ab]"), Ok(0xab));
        assert_eq!(ev("[r1 + 1]"), Ok(50));
        assert_eq!(ev("cycle"), Ok(42));
        assert_eq!(ev("core"), Ok(3));
        assert_eq!(ev("1 + 2 * 3"), Ok(7));
        assert_eq!(ev("(1 + 2) * 3"), Ok(9));
        assert_eq!(ev("1 << 4 | 1"), Ok(17));
        assert_eq!(ev("r0 == 48 && r1 != 48"), Ok(1));
        assert_eq!(ev("!r0"), Ok(0));
        assert_eq!(ev("10 - 3 - 2"), Ok(5));
        assert_eq!(ev("7 % 4 < 4"), Ok(1));
        assert_eq!(ev("-1"), Ok(-1));
        assert_eq!(ev("-1 < 0"), Ok(1));
    }

    #[test]
    fn bad_expressions_are_errors() {
        for bad in [
            "",
            "r16",
            "c16.r0",
            "foo",
            "1 +",
            "(1",
            "[0x1000]",
            "[-1]",
            "1 / 0",
            "1 2",
            "r1 @",
            "]",
            "1 << 70",
            "0x7fffffffffffffff + 1",
        ] {
            assert!(ev(bad).is_err(), "{bad}");
        }
        assert!(ev(&"(".repeat(100)).unwrap_err().contains("deeper"));
        assert!(ev(&"1+".repeat(1000)).unwrap_err().contains("at most"));
        assert!(check("r1 / 0").is_ok());
        assert!(check("r17").is_err());
    }
}
