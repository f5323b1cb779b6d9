//! Splitting one source line into tokens with their columns. Comments (`;` or `//` to the
//! end of the line) are dropped here, so nothing later has to know about them.

use crate::limits::MAX_LINE_TOKENS;

/// What a token is.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Tok {
    /// A name: mnemonic, register, directive (with its leading `.`), label or constant.
    Ident(String),
    Num(i64),
    Str(String),
    /// Punctuation or an operator: `, [ ] : = ( ) + - * / % | & ^ ~ ! < > << >> == != <=
    /// >= && ||`.
    Punct(&'static str),
    /// A macro parameter reference, `\name` (the name without the backslash): replaced by
    /// the argument when the macro expands, an error anywhere else.
    Param(String),
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
            Tok::Ident(s) => quote(s),
            Tok::Num(n) => format!("`{n}`"),
            Tok::Str(s) => format!("\"{}\"", shorten(s)),
            Tok::Punct(p) => format!("`{p}`"),
            Tok::Param(s) => format!("`\\{}`", shorten(s)),
        }
    }
}

/// The most characters of a name or string a message quotes.
const QUOTED_CHARS: usize = 40;

/// `s` cut to [`QUOTED_CHARS`] characters, with `…` where it was cut: a message about a
/// name need not carry a megabyte of it.
pub fn shorten(s: &str) -> std::borrow::Cow<'_, str> {
    match s.char_indices().nth(QUOTED_CHARS) {
        None => s.into(),
        Some((end, _)) => format!("{}…", &s[..end]).into(),
    }
}

/// `s` in backticks, for a message, [`shorten`]ed.
pub fn quote(s: &str) -> String {
    format!("`{}`", shorten(s))
}

/// A lexical error: column, length and message.
pub type LexError = (usize, usize, String);

const PUNCT2: [&str; 8] = ["<<", ">>", "==", "!=", "<=", ">=", "&&", "||"];
const PUNCT1: [&str; 18] = [
    ",", "[", "]", ":", "=", "(", ")", "+", "-", "*", "/", "%", "|", "&", "^", "!", "<", ">",
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

/// Tokens of `line`, or the first lexical error on it. The line is walked character by
/// character and never copied whole, so a huge line costs only what its tokens hold, and
/// at most [`MAX_LINE_TOKENS`] of those.
pub fn lex(line: &str) -> Result<Vec<Token>, LexError> {
    // Byte offset and 1-based column of each character still to read.
    let mut chars = line.char_indices().zip(1..).peekable();
    let mut out = Vec::new();
    while let Some(((at, c), col)) = chars.next() {
        if c.is_whitespace() {
            continue;
        }
        let next = chars.peek().map(|&((_, n), _)| n);
        if c == ';' || (c == '/' && next == Some('/')) {
            break;
        }
        if out.len() == MAX_LINE_TOKENS {
            return Err((
                col,
                1,
                format!("more than {MAX_LINE_TOKENS} tokens on one line (the limit of a line)"),
            ));
        }
        // Consume the characters after `c` that `more` accepts: the token's byte end and
        // its length in characters.
        let mut run = |more: &dyn Fn(char) -> bool| {
            let mut end = at + c.len_utf8();
            let mut len = 1;
            while let Some(&((i, n), _)) = chars.peek() {
                if !more(n) {
                    break;
                }
                chars.next();
                end = i + n.len_utf8();
                len += 1;
            }
            (end, len)
        };
        let token = if ident_start(c) {
            let (end, len) = run(&ident_char);
            Token {
                tok: Tok::Ident(line[at..end].to_string()),
                col,
                len,
            }
        } else if c.is_ascii_digit() {
            let (end, len) = run(&|n| n.is_ascii_alphanumeric() || n == '_');
            let s = &line[at..end];
            let n = number(s).ok_or_else(|| {
                (
                    col,
                    len,
                    format!(
                        "{} is not a number (decimal, 0x hex or 0b binary, at most 2^63-1)",
                        quote(s)
                    ),
                )
            })?;
            Token {
                tok: Tok::Num(n),
                col,
                len,
            }
        } else if c == '\\' && next.is_some_and(ident_start) {
            let (end, len) = run(&ident_char);
            Token {
                tok: Tok::Param(line[at + 1..end].to_string()),
                col,
                len,
            }
        } else if c == '"' {
            let (end, len) = run(&|n| n != '"');
            if chars.next().is_none() {
                return Err((col, len, "unterminated string".into()));
            }
            Token {
                tok: Tok::Str(line[at + 1..end].to_string()),
                col,
                len: len + 1,
            }
        } else if let Some(p) = PUNCT2
            .iter()
            .find(|p| Some(p.as_bytes()[1] as char) == next && p.starts_with(c))
        {
            chars.next();
            Token {
                tok: Tok::Punct(p),
                col,
                len: 2,
            }
        } else if let Some(p) = PUNCT1.iter().chain(["~"].iter()).find(|p| p.starts_with(c)) {
            Token {
                tok: Tok::Punct(p),
                col,
                len: 1,
            }
        } else {
            return Err((col, 1, format!("unexpected character `{c}`")));
        };
        out.push(token);
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
    fn comparison_and_logic_operators_are_single_tokens() {
        let p = |s: &'static str| Tok::Punct(s);
        assert_eq!(
            toks("1==2!=3<=4>=5&&6||!7<8>9<<1"),
            vec![
                Tok::Num(1),
                p("=="),
                Tok::Num(2),
                p("!="),
                Tok::Num(3),
                p("<="),
                Tok::Num(4),
                p(">="),
                Tok::Num(5),
                p("&&"),
                Tok::Num(6),
                p("||"),
                p("!"),
                Tok::Num(7),
                p("<"),
                Tok::Num(8),
                p(">"),
                Tok::Num(9),
                p("<<"),
                Tok::Num(1),
            ]
        );
    }

    #[test]
    fn macro_parameters_are_one_token() {
        let t = lex("add \\a, \\b_2").unwrap();
        assert_eq!(t[1].tok, Tok::Param("a".into()));
        assert_eq!((t[1].col, t[1].len), (5, 2));
        assert_eq!(t[3].tok, Tok::Param("b_2".into()));
        assert_eq!(lex("\\ a").unwrap_err().0, 1);
    }

    #[test]
    fn bad_character_has_its_column() {
        assert_eq!(lex("add $").unwrap_err().0, 5);
        assert_eq!(lex(".include \"x").unwrap_err().0, 10);
    }
}
