//! One module per subcommand, and the one way they write to stdout.

pub mod asm;
pub mod diff;
pub mod fuzz;
pub mod gen;
pub mod machine_args;
pub mod run;

use std::io::Write;

/// Write to stdout; a closed pipe (`gpu16 run ... | head`) is not an error worth a panic.
pub fn emit(text: &str) {
    let mut out = std::io::stdout().lock();
    let _ = out.write_all(text.as_bytes()).and_then(|()| out.flush());
}
