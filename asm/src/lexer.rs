//! Splitting one source line into tokens with their columns. Comments (`;` or `//` to the
//! end of the line) are dropped here, so nothing later has to know about them.

/// What a token is.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Tok {
    /// A name: mnemonic, register, directive (with its leading `.`), label or constant.
    Ident(String),
    Num(i64),
    Str(String),
    /// Punctuation or an operator: `, [ ] : = ( ) + - * / % | & ^ ~ << >>`.
    Punct(&'static str),
}

/// A token and where it is on its line (1-based column and length, in characters).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Token {
    pub tok: Tok,
    pub col: usize,
    pub len: usize,
}

impl Token {
    pub fn is_punct(&self, p: &str) -> bool {
        matches!(&self.tok, Tok::Punct(q) if *q == p)
    }

    pub fn ident(&self) -> Option<&str> {
        match &self.tok {
            Tok::Ident(s) => Some(s),
            _ => None,
        }
    }

    /// How the token reads in a message.
    pub fn describe(&self) -> String {
        match &self.tok {
            Tok::Ident(s) => format!("`{s}`"),
            Tok::Num(n) => format!("`{n}`"),
            Tok::Str(s) => format!("\"{s}\""),
            Tok::Punct(p) => format!("`{p}`"),
        }
    }
}

/// A lexical error: column, length and message.
pub type LexError = (usize, usize, String);

const PUNCT2: [&str; 2] = ["<<", ">>"];
const PUNCT1: [&str; 15] = [
    ",", "[", "]", ":", "=", "(", ")", "+", "-", "*", "/", "%", "|", "&", "^",
];

fn ident_start(c: char) -> bool {
    c.is_ascii_alphabetic() || c == '_' || c == '.'
}

fn ident_char(c: char) -> bool {
    c.is_ascii_alphanumeric() || c == '_' || c == '.'
}

/// Parse a number literal: decimal, `0x` hex or `0b` binary, `_` allowed between digits.
pub fn number(text: &str) -> Option<i64> {
    let lower = text.to_ascii_lowercase();
    let (digits, radix) = if let Some(h) = lower.strip_prefix("0x") {
        (h, 16)
    } else if let Some(b) = lower.strip_prefix("0b") {
        (b, 2)
    } else {
        (lower.as_str(), 10)
    };
    let digits = digits.replace('_', "");
    if digits.is_empty() {
        return None;
    }
    u64::from_str_radix(&digits, radix)
        .ok()
        .and_then(|v| i64::try_from(v).ok())
}

/// Tokens of `line`, or the first lexical error on it.
pub fn lex(line: &str) -> Result<Vec<Token>, LexError> {
    let chars: Vec<char> = line.chars().collect();
    let mut out = Vec::new();
    let mut i = 0;
    while i < chars.len() {
        let c = chars[i];
        let col = i + 1;
        if c.is_whitespace() {
            i += 1;
            continue;
        }
        if c == ';' || (c == '/' && chars.get(i + 1) == Some(&'/')) {
            break;
        }
        if ident_start(c) {
            let start = i;
            while i < chars.len() && ident_char(chars[i]) {
                i += 1;
            }
            let s: String = chars[start..i].iter().collect();
            out.push(Token {
                tok: Tok::Ident(s),
                col,
                len: i - start,
            });
            continue;
        }
        if c.is_ascii_digit() {
            let start = i;
            while i < chars.len() && (chars[i].is_ascii_alphanumeric() || chars[i] == '_') {
                i += 1;
            }
            let s: String = chars[start..i].iter().collect();
            let n = number(&s).ok_or_else(|| {
                (
                    col,
                    i - start,
                    format!("`{s}` is not a number (decimal, 0x hex or 0b binary, at most 2^63-1)"),
                )
            })?;
            out.push(Token {
                tok: Tok::Num(n),
                col,
                len: i - start,
            });
            continue;
        }
        if c == '"' {
            let start = i;
            i += 1;
            while i < chars.len() && chars[i] != '"' {
                i += 1;
            }
            if i == chars.len() {
                return Err((col, chars.len() - start, "unterminated string".into()));
            }
            let s: String = chars[start + 1..i].iter().collect();
            i += 1;
            out.push(Token {
                tok: Tok::Str(s),
                col,
                len: i - start,
            });
            continue;
        }
        let two: String = chars[i..(i + 2).min(chars.len())].iter().collect();
        if let Some(p) = PUNCT2.iter().find(|p| **p == two) {
            out.push(Token {
                tok: Tok::Punct(p),
                col,
                len: 2,
            });
            i += 2;
            continue;
        }
        if let Some(p) = PUNCT1.iter().chain(["~"].iter()).find(|p| p.starts_with(c)) {
            out.push(Token {
                tok: Tok::Punct(p),
                col,
                len: 1,
            });
            i += 1;
            continue;
        }
        return Err((col, 1, format!("unexpected character `{c}`")));
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn toks(s: &str) -> Vec<Tok> {
        lex(s).unwrap().into_iter().map(|t| t.tok).collect()
    }

    #[test]
    fn numbers_in_three_bases() {
        assert_eq!(
            toks("10 0x1F 0b101 1_000"),
            [10, 31, 5, 1000].map(Tok::Num).to_vec()
        );
        assert!(lex("0xg").is_err());
        assert!(lex("0b2").is_err());
        assert!(lex("99999999999999999999").is_err());
    }

    #[test]
    fn both_comment_styles_and_columns() {
        let t = lex("  add r1 ; c").unwrap();
        assert_eq!(t.len(), 2);
        assert_eq!((t[1].col, t[1].len), (7, 2));
        assert_eq!(toks("a // b"), vec![Tok::Ident("a".into())]);
        assert_eq!(
            toks("8 / 2"),
            vec![Tok::Num(8), Tok::Punct("/"), Tok::Num(2)]
        );
        assert_eq!(
            toks("1<<3"),
            vec![Tok::Num(1), Tok::Punct("<<"), Tok::Num(3)]
        );
    }

    #[test]
    fn bad_character_has_its_column() {
        assert_eq!(lex("add $").unwrap_err().0, 5);
        assert_eq!(lex(".include \"x").unwrap_err().0, 10);
    }
}
