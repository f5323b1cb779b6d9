//! The ISA dialects a program can be written in: the spec's (decisions.md) and the MCST
//! peer dialect of `../shared/spec/mcst-dialect.md` (an RTL implementation of the same
//! chip). A dialect fixes how instruction words and control-frame headers are read, and
//! which scheduler runs them; what each decoded instruction does is still the one
//! definition of [`crate::semantics::step`].

use std::fmt;

/// How a program's words and frames are read.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Default)]
pub enum Dialect {
    /// The spec as decisions.md binds it (the default).
    #[default]
    Spec,
    /// The MCST RTL's dialect: `mul` writes one byte, shifts take a register amount, `ld`/`st`
    /// take any register as the bank register and have no modes (no locks, no faults),
    /// `set_const`'s two modes are swapped, control frames carry NextCF and a stop bit, and
    /// task memory holds 64 frames.
    Mcst,
}

impl Dialect {
    /// Every dialect, in the order `--dialect` lists them.
    pub const ALL: [Dialect; 2] = [Dialect::Spec, Dialect::Mcst];

    /// The dialect's name as `--dialect` takes it and reports print it: `spec` or `mcst`.
    pub fn name(self) -> &'static str {
        match self {
            Dialect::Spec => "spec",
            Dialect::Mcst => "mcst",
        }
    }

    /// The dialect named `name` (`spec` or `mcst`).
    pub fn from_name(name: &str) -> Option<Dialect> {
        Dialect::ALL.into_iter().find(|d| d.name() == name)
    }
}

impl fmt::Display for Dialect {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}
