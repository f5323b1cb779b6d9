//! Helpers shared by the integration tests: a one-task program (built with the workspace's
//! one image builder, `gpu16_gen::image::Image`), and running one program under two
//! backends.

#![allow(dead_code)]

use gpu16_gen::image::Image;
use gpu16_machine::engine::backend::Backend;
use gpu16_machine::engine::isa::Instr;
use gpu16_machine::{run, Config, ControlFrame, Fence, Program, RunFailure, RunReport};

/// A control frame on the `active` cores (no fence, no R0 initialised); the image builder
/// sets its IF_Num.
pub fn on(active: u16) -> ControlFrame {
    ControlFrame::new(0, Fence::No, active, &[])
}

/// A single task: one frame on the cores of `active`.
pub fn single(active: u16, instrs: &[Instr]) -> Program {
    Image::new().group(on(active), &[instrs]).program()
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
