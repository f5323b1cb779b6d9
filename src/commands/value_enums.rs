//! The library's enums as clap values: `--backend`/`--backends` ([`BackendArg`]),
//! `--jit-engine` ([`EngineArg`]), `--dialect` ([`DialectArg`]) and `--palette` ([`PaletteArg`]). The library stays free of clap; these newtypes give its
//! enums the names and help lines the command line shows. A backend's name is
//! [`BackendKind::name`], the same name the reports print.

use crate::run_output::png::Palette;
use clap::builder::PossibleValue;
use clap::ValueEnum;
use gpu16::input::{MemoryFormat, ProgramFormat};
use gpu16::machine::Dialect;
use gpu16::{BackendKind, Engine};

/// A [`BackendKind`] as a command-line value: `interp`, `jit` or `auto`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct BackendArg(pub BackendKind);

impl BackendArg {
    /// The pair `diff` and `fuzz` compare by default.
    pub const DIFF_PAIR: [BackendArg; 2] = [
        BackendArg(BackendKind::DIFF_PAIR[0]),
        BackendArg(BackendKind::DIFF_PAIR[1]),
    ];
}

impl ValueEnum for BackendArg {
    fn value_variants<'a>() -> &'a [Self] {
        &[
            BackendArg(BackendKind::Interp),
            BackendArg(BackendKind::Jit),
            BackendArg(BackendKind::Auto),
        ]
    }

    fn to_possible_value(&self) -> Option<PossibleValue> {
        let help = match self.0 {
            BackendKind::Interp => "The reference interpreter",
            BackendKind::Jit => "Every frame compiled to native code with Cranelift",
            BackendKind::Auto => "Interpret a frame until it is hot, then run it compiled",
        };
        Some(PossibleValue::new(self.0.name()).help(help))
    }
}

/// An [`Engine`] as a command-line value: `lockstep`, `percore` or `adaptive`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct EngineArg(pub Engine);

impl ValueEnum for EngineArg {
    fn value_variants<'a>() -> &'a [Self] {
        &[
            EngineArg(Engine::Lockstep),
            EngineArg(Engine::PerCore),
            EngineArg(Engine::Adaptive),
        ]
    }

    fn to_possible_value(&self) -> Option<PossibleValue> {
        let help = match self.0 {
            Engine::Lockstep => "Every group of cores at one IP together in vector lanes",
            Engine::PerCore => "One core at a time",
            Engine::Adaptive => {
                "Lockstep where cores share banks or do not touch memory, per-core otherwise"
            }
        };
        Some(PossibleValue::new(self.0.name()).help(help))
    }
}

/// A [`Palette`] as a command-line value: `gray`, `heat` or `rainbow`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct PaletteArg(pub Palette);

impl ValueEnum for PaletteArg {
    fn value_variants<'a>() -> &'a [Self] {
        &[
            PaletteArg(Palette::Gray),
            PaletteArg(Palette::Heat),
            PaletteArg(Palette::Rainbow),
        ]
    }

    fn to_possible_value(&self) -> Option<PossibleValue> {
        let (name, help) = match self.0 {
            Palette::Gray => ("gray", "The byte as a gray level: 0 black, 255 white"),
            Palette::Heat => ("heat", "Black, red, yellow, white as the byte grows"),
            Palette::Rainbow => (
                "rainbow",
                "Hue from blue (0) through green to red (255), full brightness",
            ),
        };
        Some(PossibleValue::new(name).help(help))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_value_parses_back_to_itself() {
        for v in BackendArg::value_variants() {
            let name = v.to_possible_value().unwrap().get_name().to_string();
            assert_eq!(name, v.0.name());
            assert_eq!(BackendArg::from_str(&name, false), Ok(*v));
        }
        for v in PaletteArg::value_variants() {
            let name = v.to_possible_value().unwrap().get_name().to_string();
            assert_eq!(PaletteArg::from_str(&name, false), Ok(*v));
        }
        let names = |vs: &[PaletteArg]| -> Vec<String> {
            vs.iter()
                .map(|v| v.to_possible_value().unwrap().get_name().to_string())
                .collect()
        };
        assert_eq!(
            names(PaletteArg::value_variants()),
            ["gray", "heat", "rainbow"]
        );
        assert_eq!(BackendArg::DIFF_PAIR.map(|b| b.0.name()), ["interp", "jit"]);
        for v in MemoryFormatArg::value_variants() {
            let name = v.to_possible_value().unwrap().get_name().to_string();
            assert_eq!(name, v.0.name());
            assert_eq!(MemoryFormatArg::from_str(&name, false), Ok(*v));
        }
        for v in DialectArg::value_variants() {
            let name = v.to_possible_value().unwrap().get_name().to_string();
            assert_eq!(name, v.0.name());
            assert_eq!(DialectArg::from_str(&name, false), Ok(*v));
        }
    }
}

/// A [`MemoryFormat`] as a command-line value: `hex` or `raw`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct MemoryFormatArg(pub MemoryFormat);

impl ValueEnum for MemoryFormatArg {
    fn value_variants<'a>() -> &'a [Self] {
        &[
            MemoryFormatArg(MemoryFormat::Hex),
            MemoryFormatArg(MemoryFormat::Raw),
        ]
    }

    fn to_possible_value(&self) -> Option<PossibleValue> {
        let help = match self.0 {
            MemoryFormat::Hex => "$readmemh text: hex bytes, @addr to move, comments",
            MemoryFormat::Raw => "Raw bytes: byte i is address i",
        };
        Some(PossibleValue::new(self.0.name()).help(help))
    }
}

/// A [`Dialect`] as a command-line value: `spec` or `mcst`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct DialectArg(pub Dialect);

impl ValueEnum for DialectArg {
    fn value_variants<'a>() -> &'a [Self] {
        &[DialectArg(Dialect::Spec), DialectArg(Dialect::Mcst)]
    }

    fn to_possible_value(&self) -> Option<PossibleValue> {
        let help = match self.0 {
            Dialect::Spec => "The spec, as docs/semantics.md states it",
            Dialect::Mcst => {
                "The MCST RTL's dialect (docs/semantics.md section 10): its decoding, scheduler and \
                 end of run"
            }
        };
        Some(PossibleValue::new(self.0.name()).help(help))
    }
}

/// A [`ProgramFormat`] as a command-line value: `bin`, `hex` or `asm`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct FormatArg(pub ProgramFormat);

impl ValueEnum for FormatArg {
    fn value_variants<'a>() -> &'a [Self] {
        &[
            FormatArg(ProgramFormat::Binary),
            FormatArg(ProgramFormat::Hex),
            FormatArg(ProgramFormat::Assembly),
        ]
    }

    fn to_possible_value(&self) -> Option<PossibleValue> {
        Some(match self.0 {
            ProgramFormat::Binary => {
                PossibleValue::new("bin").help("A raw image of 32-byte frames (.bin, .tm)")
            }
            ProgramFormat::Hex => {
                PossibleValue::new("hex").help("16-bit words in $readmemh style (.hex)")
            }
            ProgramFormat::Assembly => PossibleValue::new("asm").help("Assembly source (.s, .asm)"),
        })
    }
}
