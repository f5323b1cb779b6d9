//! Every resource bound of one assembly, in one place: whatever the input, the assembler
//! checks these before it spends the time or memory, and reports an error naming the limit
//! instead of overflowing the stack, hanging or running out of memory. `docs/assembly.md`
//! ("Limits") lists them for users.

/// Parentheses and unary operators nested in one constant expression. The evaluator
/// recurses once per level, so this bounds its stack.
pub const MAX_EXPR_DEPTH: usize = 256;

/// `.include`s nested inside each other.
pub const MAX_INCLUDE_DEPTH: usize = 16;

/// `.repeat`s nested inside each other, counted across included files. Expansion recurses
/// once per level, so this bounds its stack.
pub const MAX_REPEAT_DEPTH: usize = 64;

/// Macro expansions nested inside each other (a macro invoking a macro, or itself).
/// Expansion recurses once per level, so this bounds its stack; reaching it ends the
/// assembly, since a macro that invokes itself without end would only reach it again.
pub const MAX_MACRO_DEPTH: usize = 64;

/// Tokens held by the arguments of all the macro expansions open at once, so arguments
/// that grow at each level of a recursion cannot fill the memory.
pub const MAX_MACRO_ARG_TOKENS: usize = 1 << 16;

/// Bytes of one source file read from disk (`assemble_file`, or one `.include`). The file
/// is read through a reader that stops one byte past this, so `/dev/zero` fails at once.
pub const MAX_FILE_BYTES: usize = 16 << 20;

/// Bytes of all `.include`d text of one assembly together (an include inside a `.repeat`
/// counts on every pass).
pub const MAX_INCLUDE_BYTES: usize = 64 << 20;

/// Statements processed in one assembly: every line with a statement or a label, each
/// time it is processed (so each pass of a `.repeat` counts its lines again, `.equ` and
/// erroneous lines included), plus one for each `.repeat` pass. This is what bounds the
/// time of an expansion.
pub const MAX_STATEMENTS: usize = 1 << 20;

/// Characters of the statements processed in one assembly (each line counted up to the
/// end of its last token, so comments are free). Work on a statement grows with its
/// length, so with [`MAX_STATEMENTS`] this bounds the time of one assembly however long
/// its lines.
pub const MAX_STATEMENT_CHARS: usize = 1 << 26;

/// Frame items the expansion produces: instructions, `.word` values, labels, `.cf`s and
/// `.if`s. One statement can produce many (`.word 1, 2, 3`), so this bounds the memory
/// the expansion keeps.
pub const MAX_ITEMS: usize = 1 << 20;

/// Tokens on one source line, so a single huge line cannot make a huge token list.
pub const MAX_LINE_TOKENS: usize = 1 << 16;

/// Diagnostics reported by one assembly. At the next one the assembler stops and says so.
pub const MAX_DIAGNOSTICS: usize = 100;

/// What one assembly may still spend of [`MAX_STATEMENTS`] and [`MAX_STATEMENT_CHARS`].
#[derive(Clone, Debug)]
pub struct Budget {
    statements: usize,
    chars: usize,
}

impl Default for Budget {
    fn default() -> Budget {
        Budget {
            statements: MAX_STATEMENTS,
            chars: MAX_STATEMENT_CHARS,
        }
    }
}

impl Budget {
    /// Whether `statements` statements of `chars` characters in all fit in what is left.
    pub fn allows(&self, statements: usize, chars: usize) -> bool {
        statements <= self.statements && chars <= self.chars
    }

    /// Take `statements` and `chars` from the budget, or say which limit they break (and
    /// take nothing).
    pub fn spend(&mut self, statements: usize, chars: usize) -> Result<(), String> {
        if !self.allows(statements, chars) {
            return Err(self.exceeded(statements));
        }
        self.statements -= statements;
        self.chars -= chars;
        Ok(())
    }

    /// The message for spending `statements` more than this budget allows.
    pub fn exceeded(&self, statements: usize) -> String {
        if statements > self.statements {
            format!(
                "the assembly processes more than {MAX_STATEMENTS} statements (the limit of statements processed, each `.repeat` pass counting its lines again)"
            )
        } else {
            format!(
                "the assembly processes more than {MAX_STATEMENT_CHARS} characters of statements (the limit of statement text processed, each `.repeat` pass counting its lines again)"
            )
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn spending_stops_at_either_limit_and_takes_nothing_then() {
        let mut b = Budget::default();
        assert!(b.spend(MAX_STATEMENTS - 1, 10).is_ok());
        let e = b.spend(2, 0).unwrap_err();
        assert!(e.contains(&MAX_STATEMENTS.to_string()), "{e}");
        assert!(b.spend(1, MAX_STATEMENT_CHARS - 10).is_ok());
        let e = b.spend(0, 1).unwrap_err();
        assert!(e.contains(&MAX_STATEMENT_CHARS.to_string()), "{e}");
    }
}
