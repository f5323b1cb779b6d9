//! Helpers shared by the integration tests: building program images from instructions, and
//! running one program under two backends.

#![allow(dead_code)]

use gpu16_machine::engine::backend::Backend;
use gpu16_machine::engine::isa::Instr;
use gpu16_machine::{run, Config, Program, RunFailure, RunReport};

/// A program image under construction.
#[derive(Clone, Debug, Default)]
pub struct Image {
    pub frames: Vec<[u8; 32]>,
}

/// One control frame's fields.
#[derive(Clone, Copy, Debug, Default)]
pub struct Task {
    pub fence: u8,
    pub active: u16,
    pub init: u16,
    pub r0: [u8; 16],
}

impl Image {
    /// A control frame followed by its instruction frames (raw words, padded with nop).
    pub fn task(&mut self, t: Task, frames: &[Vec<u16>]) -> &mut Image {
        let mut cf = [0u8; 32];
        let header = (frames.len() as u16 & 0x3F) | (u16::from(t.fence) << 6);
        cf[0..2].copy_from_slice(&header.to_le_bytes());
        cf[2..4].copy_from_slice(&t.active.to_le_bytes());
        cf[4..6].copy_from_slice(&t.init.to_le_bytes());
        cf[16..32].copy_from_slice(&t.r0);
        self.frames.push(cf);
        for words in frames {
            assert!(words.len() <= 16, "a frame holds 16 instructions");
            let mut f = [0u8; 32];
            for (i, w) in words.iter().enumerate() {
                f[2 * i..2 * i + 2].copy_from_slice(&w.to_le_bytes());
            }
            self.frames.push(f);
        }
        self
    }

    pub fn program(&self) -> Program {
        Program::from_frames(self.frames.clone()).expect("test images are well formed")
    }
}

/// Encode instructions into words.
pub fn words(instrs: &[Instr]) -> Vec<u16> {
    instrs.iter().map(Instr::encode).collect()
}

/// A single task: one frame on the cores of `active`.
pub fn single(active: u16, instrs: &[Instr]) -> Program {
    let mut img = Image::default();
    img.task(
        Task {
            active,
            ..Task::default()
        },
        &[words(instrs)],
    );
    img.program()
}

pub type Outcome = Result<RunReport, Box<RunFailure>>;

/// The outcome with the backend's name blanked, so backends can be compared.
pub fn anonymous(mut o: Outcome) -> Outcome {
    match &mut o {
        Ok(r) => r.backend.clear(),
        Err(f) => f.state.backend.clear(),
    }
    o
}

pub fn run_on<B: Backend>(b: &mut B, p: &Program, mem: &[u8], config: &Config) -> Outcome {
    anonymous(run(b, p, mem, config))
}
