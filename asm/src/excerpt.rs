//! Quoting source text in a message so that it is safe on a terminal and short whatever
//! the input: control and invisible formatting characters are escaped (`\0`, `\x1b`,
//! `\u{202e}`), a line is quoted at most [`EXCERPT_WIDTH`] characters around the marked
//! text, and a message at most [`MESSAGE_CHARS`] characters.

use std::borrow::Cow;
use std::collections::VecDeque;

/// The most characters of a source line a diagnostic quotes (escapes counted as shown,
/// `…` marks added where the line was cut).
pub const EXCERPT_WIDTH: usize = 100;

/// The most characters of a message, file name or location a diagnostic keeps.
pub const MESSAGE_CHARS: usize = 400;

/// How much of the line before the marked text a cut excerpt keeps, so the reader sees
/// what leads up to it.
const CONTEXT: usize = 40;

const ELLIPSIS: char = '…';

/// Characters a terminal would act on or not show: C0 and C1 controls (a tab is kept: it
/// only moves the cursor, and the caret line copies it), zero-width and bidirectional
/// formatting characters, and the byte order mark.
fn needs_escape(c: char) -> bool {
    (c.is_control() && c != '\t')
        || matches!(c, '\u{200b}'..='\u{200f}' | '\u{202a}'..='\u{202e}' | '\u{2060}'..='\u{2069}' | '\u{feff}')
}

/// `c` as it is shown.
fn push_shown(c: char, out: &mut String) {
    use std::fmt::Write;
    let _ = match c {
        c if !needs_escape(c) => {
            out.push(c);
            Ok(())
        }
        '\0' => write!(out, "\\0"),
        '\n' => write!(out, "\\n"),
        '\r' => write!(out, "\\r"),
        c if (c as u32) < 0x80 => write!(out, "\\x{:02x}", c as u32),
        c => write!(out, "\\u{{{:x}}}", c as u32),
    };
}

/// How many characters `c` takes shown.
fn width(c: char) -> usize {
    match c {
        c if !needs_escape(c) => 1,
        '\0' | '\n' | '\r' => 2,
        c if (c as u32) < 0x80 => 4,
        // `\u{` and `}` around the hex digits.
        c => 4 + (32 - (c as u32).leading_zeros()).div_ceil(4) as usize,
    }
}

/// `text` with unsafe characters escaped, cut to `max` characters (then ending in `…`);
/// borrowed when it is fine as it is, which is almost always.
pub fn escape(text: &str, max: usize) -> Cow<'_, str> {
    if text.len() <= max && !text.chars().any(needs_escape) {
        return text.into();
    }
    let mut out = String::new();
    let mut shown = 0;
    for c in text.chars() {
        let w = width(c);
        if shown + w > max {
            out.push(ELLIPSIS);
            break;
        }
        push_shown(c, &mut out);
        shown += w;
    }
    out.into()
}

/// What a diagnostic shows of its line: the text, the number of its characters before the
/// caret, and how many carets.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Excerpt {
    pub text: String,
    pub caret: usize,
    pub marks: usize,
}

/// The excerpt of `line` marking `len` characters from the 1-based column `col`: the whole
/// line if it fits in [`EXCERPT_WIDTH`], else a window with [`CONTEXT`] before the mark
/// (or more, when the line ends sooner) and `…` on each side that was cut. It reads the
/// line only up to the window's end.
pub fn excerpt(line: &str, col: usize, len: usize) -> Excerpt {
    let mut chars = line.chars();
    // Up to the caret, the last EXCERPT_WIDTH characters' worth.
    let mut before: VecDeque<char> = VecDeque::new();
    let (mut before_w, mut cut_left) = (0, false);
    for c in chars.by_ref().take(col.saturating_sub(1)) {
        before.push_back(c);
        before_w += width(c);
        while before_w > EXCERPT_WIDTH {
            before_w -= before.pop_front().map_or(0, width);
            cut_left = true;
        }
    }
    // From the caret, EXCERPT_WIDTH characters' worth.
    let mut after = Vec::new();
    let (mut after_w, mut cut_right) = (0, false);
    for c in chars.by_ref() {
        if after_w + width(c) > EXCERPT_WIDTH {
            cut_right = true;
            break;
        }
        after.push(c);
        after_w += width(c);
    }
    if cut_right || before_w + after_w > EXCERPT_WIDTH {
        let keep = before_w.min(CONTEXT.max(EXCERPT_WIDTH.saturating_sub(after_w)));
        while before_w > keep {
            before_w -= before.pop_front().map_or(0, width);
            cut_left = true;
        }
        while before_w + after_w > EXCERPT_WIDTH {
            after_w -= after.pop().map_or(0, width);
            cut_right = true;
        }
    }
    let mut text = String::new();
    if cut_left {
        text.push(ELLIPSIS);
    }
    before.iter().for_each(|&c| push_shown(c, &mut text));
    let caret = text.chars().count();
    let marks = after.iter().take(len).map(|&c| width(c)).sum::<usize>();
    after.iter().for_each(|&c| push_shown(c, &mut text));
    if cut_right {
        text.push(ELLIPSIS);
    }
    Excerpt {
        text,
        caret,
        marks: marks.max(1),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_short_line_is_quoted_whole() {
        let e = excerpt("\tadd r1", 6, 2);
        assert_eq!(
            e,
            Excerpt {
                text: "\tadd r1".into(),
                caret: 5,
                marks: 2
            }
        );
        // Past the end of the line: the caret stands after it.
        assert_eq!(excerpt("nop", 4, 1).caret, 3);
    }

    #[test]
    fn control_characters_are_escaped_and_the_caret_follows() {
        let e = excerpt("a\0\x1b[2J\rb\u{202e}c", 8, 1);
        assert_eq!(e.text, "a\\0\\x1b[2J\\rb\\u{202e}c");
        // Before column 8 (`b`): a, \0, \x1b, [2J, \r shown as 1+2+4+3+2 characters.
        assert_eq!(e.caret, 12);
        assert_eq!(escape("x\0y", 10), "x\\0y");
        for c in [
            'a', '\t', 'é', '\0', '\x01', '\x7f', '\u{85}', '\u{202e}', '\u{feff}',
        ] {
            let mut shown = String::new();
            push_shown(c, &mut shown);
            assert_eq!(width(c), shown.chars().count(), "{shown}");
        }
        assert_eq!(escape("abcdef", 3), "abc…");
    }

    #[test]
    fn a_long_line_is_cut_around_the_mark() {
        let line = format!("{}X{}", "a".repeat(1000), "b".repeat(1000));
        let e = excerpt(&line, 1001, 1);
        assert!(
            e.text.starts_with('…') && e.text.ends_with('…'),
            "{}",
            e.text
        );
        assert_eq!(e.text.chars().count(), EXCERPT_WIDTH + 2);
        assert_eq!(e.text.chars().nth(e.caret), Some('X'));
        assert_eq!(e.caret, CONTEXT + 1);
        // Near the end, the window takes more of what comes before.
        let e = excerpt(&line, 2000, 1);
        assert!(e.text.starts_with('…') && !e.text.ends_with('…'));
        assert_eq!(e.text.chars().count(), EXCERPT_WIDTH + 1);
        // Near the start, no cut on the left.
        let e = excerpt(&line, 3, 5000);
        assert_eq!((e.caret, e.marks), (2, EXCERPT_WIDTH - 2));
        assert!(!e.text.starts_with('…') && e.text.ends_with('…'));
        // Escapes count at their shown width.
        let e = excerpt(&"\0".repeat(10_000), 5000, 1);
        assert!(e.text.chars().count() <= EXCERPT_WIDTH + 2);
        let at_caret: String = e.text.chars().skip(e.caret).take(2).collect();
        assert_eq!(at_caret, "\\0");
    }
}
