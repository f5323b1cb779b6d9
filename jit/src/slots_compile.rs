//! Translation of one MCST-dialect frame into its slot form: a function that runs a core's
//! register-only slots ahead of the slot engine's clock (`gpu16_machine::engine::slot_run::SlotRun`
//! states the contract). What each instruction computes comes from the machine's one
//! definition (`gpu16_machine::engine::semantics::step`) in the [`Lowering`] domain, as for the
//! per-core form; this file adds the slots' timing and the B value.
//!
//! A run is the stretch from an IP to the next `bnz` (included), the instruction before
//! the next `ld`, `st` or `ready`, or IP 15. Each run's entry checks once that all its slots
//! fall before the limit, else the core stops there for the engine to step. After a taken
//! `bnz` the bubbles are added to the cycle and the target's run is entered; a run that
//! reaches a memory instruction or `ready` stops before it.

use crate::abi::{SlotCodeExit, SlotEntryFn};
use crate::compile::{dispatch_on_ip, jump_to_exit, Lowering};
use crate::compile::{Compiler, Form};
use crate::error::JitError;
use cranelift_codegen::ir::condcodes::IntCC;
use cranelift_codegen::ir::{types, Block, InstBuilder, MemFlagsData, Value};
use cranelift_codegen::isa::TargetFrontendConfig;
use cranelift_codegen::Context;
use cranelift_frontend::{FunctionBuilder, FunctionBuilderContext, Variable};
use cranelift_jit::JITModule;
use gpu16_machine::engine::isa::{Instr, FRAME_INSTRS, REGS};
use gpu16_machine::engine::semantics::{step, Effect};
use gpu16_machine::engine::slot_run::SlotState;
use std::mem::offset_of;

/// Whether the instruction runs ahead: it touches no memory and does not end the part.
fn register_only(instr: &Instr) -> bool {
    !matches!(instr, Instr::Mem { .. } | Instr::Ready)
}

/// The register whose value is the slot's B value: the word's b field (bits 7:4), whatever
/// the instruction makes of those bits.
fn b_field(word: u16) -> usize {
    usize::from((word >> 4) as u8 & 0xF)
}

/// For each register-only IP, the last IP of its run (see the module documentation).
fn run_ends(instrs: &[Instr; FRAME_INSTRS]) -> [usize; FRAME_INSTRS] {
    std::array::from_fn(|i| {
        let mut e = i;
        while !matches!(instrs[e], Instr::Bnz { .. })
            && e + 1 < FRAME_INSTRS
            && register_only(&instrs[e + 1])
        {
            e += 1;
        }
        e
    })
}

/// Build the slot form of the frame `words` into `ctx`: `fn(*mut SlotState) -> exit code`.
pub(crate) fn build(
    ctx: &mut Context,
    fctx: &mut FunctionBuilderContext,
    words: &[u16; FRAME_INSTRS],
    module_config: TargetFrontendConfig,
) {
    let instrs = words.map(Instr::decode_mcst);
    let ends = run_ends(&instrs);
    let mut b = FunctionBuilder::new(&mut ctx.func, fctx);
    let flags = MemFlagsData::trusted();
    let field = |f: usize| f as i32;

    let entry = b.create_block();
    b.append_block_params_for_function_params(entry);
    let exit = b.create_block();
    let exit_ip = b.append_block_param(exit, types::I32);
    let exit_code = b.append_block_param(exit, types::I32);
    let exit_cycle = b.append_block_param(exit, types::I64);
    // `run[i]`: enter the run at IP i (checks the limit); `stop[i]`: stop before IP i.
    let run: Vec<Block> = (0..FRAME_INSTRS).map(|_| b.create_block()).collect();
    let stop: Vec<Block> = (0..FRAME_INSTRS).map(|_| b.create_block()).collect();
    let enter = |i: usize| {
        if register_only(&instrs[i]) {
            run[i]
        } else {
            stop[i]
        }
    };

    b.switch_to_block(entry);
    let state = b.block_params(entry)[0];
    let regs: Vec<Variable> = (0..REGS).map(|_| b.declare_var(types::I8)).collect();
    for (r, &var) in regs.iter().enumerate() {
        let v = b.ins().load(
            types::I8,
            flags,
            state,
            field(offset_of!(SlotState, regs) + r),
        );
        b.def_var(var, v);
    }
    let cycle = b.declare_var(types::I64);
    let c0 = b.ins().load(
        types::I64,
        flags,
        state,
        field(offset_of!(SlotState, cycle)),
    );
    b.def_var(cycle, c0);
    let count = b.declare_var(types::I64);
    let zero = b.ins().iconst(types::I64, 0);
    b.def_var(count, zero);
    let last_b = b.declare_var(types::I8);
    let zero8 = b.ins().iconst(types::I8, 0);
    b.def_var(last_b, zero8);
    let limit = b.ins().load(
        types::I64,
        flags,
        state,
        field(offset_of!(SlotState, limit)),
    );
    let bubbles = b.ins().load(
        types::I64,
        flags,
        state,
        field(offset_of!(SlotState, branch_bubbles)),
    );
    let bubbled = b.ins().icmp_imm_u(IntCC::NotEqual, bubbles, 0);
    let id = b
        .ins()
        .load(types::I8, flags, state, field(offset_of!(SlotState, id)));
    let core_id = b.ins().band_imm_u(id, 0xF);
    let ip = b
        .ins()
        .uload8(types::I32, flags, state, field(offset_of!(SlotState, ip)));
    let ip = b.ins().band_imm_u(ip, 0xF);
    dispatch_on_ip(&mut b, ip, enter);

    let to_exit = |b: &mut FunctionBuilder, ip: usize, code: u32, cyc: Value| {
        jump_to_exit(b, exit, ip, code, cyc, &[]);
    };

    for i in 0..FRAME_INSTRS {
        b.switch_to_block(stop[i]);
        let c = b.use_var(cycle);
        to_exit(&mut b, i, SlotCodeExit::Stopped.code(), c);
        if !register_only(&instrs[i]) {
            continue;
        }
        let end = ends[i];
        let len = (end + 1 - i) as i64;
        b.switch_to_block(run[i]);
        let c = b.use_var(cycle);
        let after = b.ins().iadd_imm_u(c, len);
        let over = b.ins().icmp(IntCC::UnsignedGreaterThan, after, limit);
        let body = b.create_block();
        b.ins().brif(over, stop[i], &[], body, &[]);
        b.switch_to_block(body);
        b.def_var(cycle, after);
        let n = b.use_var(count);
        let n = b.ins().iadd_imm_u(n, len);
        b.def_var(count, n);
        let mut last = Effect::Next;
        for j in i..=end {
            let bv = b.use_var(regs[b_field(words[j])]);
            b.def_var(last_b, bv);
            last = step(
                instrs[j],
                &mut Lowering {
                    b: &mut b,
                    regs: &regs,
                    core_id,
                },
            );
        }
        let fall = |b: &mut FunctionBuilder| {
            if end == FRAME_INSTRS - 1 {
                // IP 15's slot is the last one counted.
                let c = b.ins().iadd_imm_u(after, -1);
                to_exit(b, end, SlotCodeExit::RanOffEnd.code(), c);
            } else {
                b.ins().jump(enter(end + 1), &[]);
            }
        };
        match last {
            Effect::Branch { cond, target } => {
                let taken = b.create_block();
                let not_taken = b.create_block();
                b.ins().brif(cond, taken, &[], not_taken, &[]);
                b.switch_to_block(taken);
                let c = b.ins().iadd(after, bubbles);
                b.def_var(cycle, c);
                // The last slot is a bubble when there are any: its B value is R0.
                let r0 = b.use_var(regs[0]);
                let bv = b.use_var(last_b);
                let bv = b.ins().select(bubbled, r0, bv);
                b.def_var(last_b, bv);
                b.ins().jump(enter(usize::from(target & 0xF)), &[]);
                b.switch_to_block(not_taken);
                fall(&mut b);
            }
            Effect::Next => fall(&mut b),
            // Runs hold register-only instructions, so nothing else can end one.
            Effect::Ready | Effect::Memory(_) => unreachable!("not register-only"),
        }
    }

    b.switch_to_block(exit);
    for (r, &var) in regs.iter().enumerate() {
        if instrs.iter().any(|x| x.writes() & (1 << r) != 0) {
            let v = b.use_var(var);
            b.ins()
                .store(flags, v, state, field(offset_of!(SlotState, regs) + r));
        }
    }
    b.ins().store(
        flags,
        exit_cycle,
        state,
        field(offset_of!(SlotState, cycle)),
    );
    let n = b.use_var(count);
    b.ins()
        .store(flags, n, state, field(offset_of!(SlotState, instructions)));
    let bv = b.use_var(last_b);
    b.ins()
        .store(flags, bv, state, field(offset_of!(SlotState, last_b)));
    b.ins()
        .istore8(flags, exit_ip, state, field(offset_of!(SlotState, ip)));
    b.ins().return_(&[exit_code]);

    // Sealing only now: loop heads get their back edges before their phis are fixed.
    b.seal_all_blocks();
    b.finalize(module_config);
}

impl Compiler {
    /// Compile the MCST slot form of the frame `words` (see `slots_compile.rs`) into
    /// `module` and return the finalized entry address. Compiled where it runs, never on
    /// `auto`'s worker thread, so its `MachineCode` is never offered as another form.
    pub(crate) fn compile_slots(
        &mut self,
        module: &mut JITModule,
        words: &[u16; FRAME_INSTRS],
    ) -> Result<*const u8, JitError> {
        let sig = self.signature_of::<SlotEntryFn>();
        let config = self.isa.frontend_config();
        let code = self.codegen(Form::Slots, sig, |ctx, fctx| {
            build(ctx, fctx, words, config)
        })?;
        crate::compile::place(module, &code)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn runs_end_at_branches_before_memory_and_ready_and_at_ip_15() {
        let mut f = [Instr::Nop; FRAME_INSTRS];
        f[3] = Instr::Bnz { a: 1, target: 0 };
        f[6] = Instr::Mem {
            op: gpu16_machine::engine::isa::MemOp::Ld,
            a: 1,
            hi: 2,
            r: 3,
        };
        f[9] = Instr::Ready;
        let e = run_ends(&f);
        assert_eq!(&e[..4], &[3, 3, 3, 3]);
        assert_eq!(&e[4..6], &[5, 5]);
        assert_eq!(&e[7..9], &[8, 8]);
        assert_eq!(&e[10..], &[15; 6]);
    }
}
