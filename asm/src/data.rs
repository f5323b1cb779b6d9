//! `.data`: initial bytes of shared memory given in the source, by byte address
//! (`.data 0x100, 1, 2, 3`) or by bank and row (`.data bank=3 row=10, 7, 8`), each value an
//! expression of a byte. Values fill consecutive addresses; a bank and row form stays in
//! its bank. Writing a byte twice with different values is an error naming both lines,
//! so the image never depends on the order of the directives.

use crate::cursor::{Cursor, Env};
use crate::diagnostics::{Diagnostic, Span};
use gpu16_machine::engine::isa::address;
use gpu16_machine::MEMORY_BYTES;
use std::sync::Arc;

/// Rows in a bank: the low 8 bits of an address.
const ROWS: i64 = 256;

/// The bytes placed so far and where each came from.
#[derive(Debug)]
pub struct Data {
    bytes: Vec<u8>,
    /// The file and line that placed each byte, `None` for a byte never placed.
    origin: Vec<Option<(Arc<str>, usize)>>,
}

impl Default for Data {
    fn default() -> Data {
        Data {
            bytes: vec![0; MEMORY_BYTES],
            origin: vec![None; MEMORY_BYTES],
        }
    }
}

impl Data {
    /// The whole image: 4096 bytes, bank 0 rows 0..255 first; bytes never placed are 0.
    pub fn image(self) -> Vec<u8> {
        self.bytes
    }

    /// Read the operands of one `.data` directive and place its bytes.
    pub fn directive(
        &mut self,
        cur: &mut Cursor,
        env: &Env,
        directive: &Span,
    ) -> Result<(), Diagnostic> {
        let keyword = |cur: &Cursor| {
            cur.peek()
                .and_then(|t| t.ident())
                .filter(|_| cur.peek2().is_some_and(|t| t.is_punct("=")))
                .map(str::to_ascii_lowercase)
        };
        // The first address and, for the bank and row form, the bank it must stay in.
        let (start, bank) = if keyword(cur).is_some() {
            let (mut bank, mut row) = (None, None);
            while let Some(key) = keyword(cur) {
                let here = cur.here();
                cur.next();
                cur.next();
                let slot = match key.as_str() {
                    "bank" => &mut bank,
                    "row" => &mut row,
                    _ => {
                        return cur.error(
                            &here,
                            format!("unknown option `{key}` of `.data` (known: bank, row)"),
                        )
                    }
                };
                if slot.is_some() {
                    return cur.error(&here, format!("`{key}=` is given twice"));
                }
                let (lo, hi) = if key == "bank" {
                    (0, 15)
                } else {
                    (0, ROWS - 1)
                };
                *slot = Some(cur.value(env, lo, hi, &format!("the {key}"))?.0);
            }
            let (Some(bank), Some(row)) = (bank, row) else {
                return cur.error(
                    directive,
                    "`.data bank=B row=R, ...` needs both bank= and row=",
                );
            };
            (i64::from(address(bank as u8, row as u8)), Some(bank))
        } else {
            let top = MEMORY_BYTES as i64 - 1;
            (cur.value(env, 0, top, "a shared-memory address")?.0, None)
        };
        cur.expect(",", "before the first byte of `.data`")?;
        let mut at = start;
        loop {
            let (v, vspan) = cur.value(env, -128, 255, "a byte")?;
            if let Some(bank) = bank {
                if at - start + (start % ROWS) >= ROWS {
                    return cur.error(
                        &vspan,
                        format!("this byte would be past row 255 of bank {bank} (a `.data bank= row=` stays in its bank)"),
                    );
                }
            } else if at >= MEMORY_BYTES as i64 {
                return cur.error(
                    &vspan,
                    format!("this byte would be at address 0x{at:x}, past the end of shared memory (4096 bytes, 0x000..0xfff)"),
                );
            }
            self.place(at as usize, v as u8, &vspan)?;
            at += 1;
            if !cur.eat(",") {
                break;
            }
        }
        cur.expect_end("the bytes of `.data`")
    }

    /// Put `value` at `addr`, unless another line put a different value there.
    fn place(&mut self, addr: usize, value: u8, span: &Span) -> Result<(), Diagnostic> {
        if let Some((file, line)) = &self.origin[addr] {
            let old = self.bytes[addr];
            if old != value {
                let place = if **file == *span.file {
                    format!("line {line}")
                } else {
                    format!("{file}:{line}")
                };
                return Err(Diagnostic::error(
                    span,
                    format!(
                        "address 0x{addr:03x} (bank {}, row {}) already holds 0x{old:02x} from {place}; this gives 0x{value:02x}",
                        addr >> 8,
                        addr & 0xFF
                    ),
                ));
            }
            return Ok(());
        }
        self.bytes[addr] = value;
        self.origin[addr] = Some((span.file.clone(), span.line));
        Ok(())
    }
}
