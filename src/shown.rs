//! How a name the user gave (a file, a debugger argument) appears in a message for people:
//! control characters and other unsafe ones escaped by the assembler's one rule
//! ([`gpu16_asm::escape`]), so a file named with an ESC or a newline cannot rewrite the
//! terminal or forge a line of the report. JSON output needs none of this: it escapes
//! by itself.

use std::borrow::Cow;
use std::path::Path;

/// `path` as a message shows it: lossy UTF-8, unsafe characters escaped, never cut.
pub fn path(path: &Path) -> Cow<'_, str> {
    match path.to_string_lossy() {
        Cow::Borrowed(text) => gpu16_asm::escape(text, usize::MAX),
        Cow::Owned(text) => Cow::Owned(gpu16_asm::escape(&text, usize::MAX).into_owned()),
    }
}

/// `text` (a name, an argument) as a message shows it, unsafe characters escaped.
pub(crate) fn text(text: &str) -> Cow<'_, str> {
    gpu16_asm::escape(text, usize::MAX)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn control_characters_are_escaped_and_plain_names_kept() {
        assert_eq!(path(Path::new("dir/prog.s")), "dir/prog.s");
        assert_eq!(path(Path::new("a\x1b[2Jb\nc.s")), "a\\x1b[2Jb\\nc.s");
        assert_eq!(text("tab\there bell\x07"), "tab\there bell\\x07");
    }
}
