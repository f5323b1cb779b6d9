//! Translation of one instruction frame into cohort code (see `cohort.rs`): one loop
//! iteration per cycle. Each lane has its own IP (a vector of 16 IPs); in a cycle the code
//! tests each of the frame's 16 instructions for the awake lanes at its IP and executes it
//! for those lanes under that mask, with the machine's one instruction definition
//! (`gpu16_machine::engine::semantics::step`) in the lockstep domain (`lanes_compile`'s
//! `VectorLowering`), every register write blended with the mask. A memory instruction only
//! stores its operands, lane by lane, into the cohort file; after the 16 tests one call to
//! `cohort::cohort_access` performs the cycle's accesses in ascending core id, whatever the
//! lanes' IPs, and the loads complete under the mask of the lanes it performed. In a frame
//! without atomic sequences, below the port's bound (`CohortFile::plain_until`) the code
//! performs them itself, lane by lane, instead of calling (`perform_plain_lanes`); in a frame
//! with them, below `CohortFile::sync_until`, it performs those the lock book lets proceed
//! without waking anyone, up to the first that may not (`cohort_sync`). The IPs
//! then move: the next instruction, a `bnz`'s target lane by lane, or no move for a lane
//! that waits, sleeps or ends (`cohort::cohort_end` takes the last).

use crate::abi::CohortExit;
use crate::abi::{
    signature, Callbacks, CohortAccess, CohortAccessFn, CohortEndFn, CohortEntryFn, CohortFile,
    SPARSE_LANES,
};
use crate::cohort_sync::perform_sync_lanes;
use crate::compile::dispatch_on_ip;
use crate::compile::{Compiler, Form};
use crate::error::JitError;
use crate::lanes_compile::{
    load_registers, perform_plain_lanes, performs_plain_lanes, store_written, vector, zeros,
    LaneOps, LaneWalk, PlainLaneFields, VectorLowering,
};
use cranelift_codegen::ir::condcodes::IntCC;
use cranelift_codegen::ir::{
    types, Block, BlockArg, ConstantData, InstBuilder, MemFlagsData, Value,
};
use cranelift_codegen::isa::TargetFrontendConfig;
use cranelift_codegen::Context;
use cranelift_frontend::{FunctionBuilder, FunctionBuilderContext, Variable};
use cranelift_jit::JITModule;
use gpu16_machine::engine::isa::{Instr, FRAME_INSTRS};
use gpu16_machine::engine::semantics::{step, Access, Effect};
use std::mem::offset_of;

const V: types::Type = types::I8X16;

/// Emit the cohort form of `instrs`: `fn(file, ctx, limit) -> CohortExit`, calling
/// `cohort_access` and `cohort_end` through `callbacks`.
pub(crate) fn build(
    ctx: &mut Context,
    fctx: &mut FunctionBuilderContext,
    instrs: &[Instr; FRAME_INSTRS],
    callbacks: Callbacks,
    module_config: TargetFrontendConfig,
) {
    let ptr = module_config.pointer_type();
    let shape = crate::compile::shape(instrs);
    let mut b = FunctionBuilder::new(&mut ctx.func, fctx);
    let flags = MemFlagsData::trusted();
    let at = |field: usize| field as i32;

    let entry = b.create_block();
    b.append_block_params_for_function_params(entry);
    let exit = b.create_block();
    let exit_code = b.append_block_param(exit, types::I32);
    let top = b.create_block();

    b.switch_to_block(entry);
    let params = b.block_params(entry).to_vec();
    let (file, cctx, limit) = (params[0], params[1], params[2]);
    let regs = load_registers(
        &mut b,
        file,
        offset_of!(CohortFile, regs),
        shape.read | shape.written,
    );
    let ipv = b.declare_var(V);
    let ips = b
        .ins()
        .load(V, flags, file, at(offset_of!(CohortFile, ips)));
    b.def_var(ipv, ips);
    let cycle = b.declare_var(types::I64);
    let c0 = b
        .ins()
        .load(types::I64, flags, file, at(offset_of!(CohortFile, cycle)));
    b.def_var(cycle, c0);
    let executed = b.declare_var(types::I32);
    let none = b.ins().iconst(types::I32, 0);
    b.def_var(executed, none);
    // This cycle's new IPs, its lanes at memory instructions and at `ready`.
    let nip = b.declare_var(V);
    let mem = b.declare_var(V);
    let ready = b.declare_var(V);
    let core_id = vector(&mut b, std::array::from_fn(|k| k as u8));
    let call_conv = module_config.default_call_conv;
    let access_ref = b.import_signature(signature::<CohortAccessFn>(call_conv, ptr));
    let end_ref = b.import_signature(signature::<CohortEndFn>(call_conv, ptr));
    b.ins().jump(top, &[]);

    let to_exit = |b: &mut FunctionBuilder, code: CohortExit| {
        let code = b.ins().iconst(types::I32, i64::from(code.code()));
        b.ins().jump(exit, &[BlockArg::Value(code)]);
    };

    // The top of a cycle: leave if no lane is awake, if the lanes converged, or at the
    // limit (in `interpret_cohort`'s order).
    b.switch_to_block(top);
    let awake = b
        .ins()
        .load(V, flags, file, at(offset_of!(CohortFile, awake)));
    let awake_bits = b.ins().vhigh_bits(types::I32, awake);
    let some_awake = b.create_block();
    let empty = b.create_block();
    b.ins().brif(awake_bits, some_awake, &[], empty, &[]);
    b.switch_to_block(empty);
    to_exit(&mut b, CohortExit::Empty);

    b.switch_to_block(some_awake);
    let few = b.ins().popcnt(awake_bits);
    let few = b
        .ins()
        .icmp_imm_u(IntCC::UnsignedLessThanOrEqual, few, i64::from(SPARSE_LANES));
    let dense = b.create_block();
    let sparse_exit = b.create_block();
    b.ins().brif(few, sparse_exit, &[], dense, &[]);
    b.switch_to_block(sparse_exit);
    to_exit(&mut b, CohortExit::Sparse);
    b.switch_to_block(dense);
    let asleep = b
        .ins()
        .load(types::I32, flags, file, at(offset_of!(CohortFile, asleep)));
    let join = b
        .ins()
        .load(V, flags, file, at(offset_of!(CohortFile, join)));
    let joining = b.ins().vany_true(join);
    let joining = b.ins().uextend(types::I32, joining);
    let apart = b.ins().bor(asleep, joining);
    let one_ip_test = b.create_block();
    let in_limit = b.create_block();
    b.ins().brif(apart, in_limit, &[], one_ip_test, &[]);
    b.switch_to_block(one_ip_test);
    let ip_now = b.use_var(ipv);
    let lead = b.ins().ctz(awake_bits);
    let lead = b.ins().ireduce(types::I8, lead);
    let lead = b.ins().splat(V, lead);
    let lead_ip = b.ins().swizzle(ip_now, lead);
    let same = b.ins().icmp(IntCC::Equal, ip_now, lead_ip);
    let same = b.ins().band(same, awake);
    let same_bits = b.ins().vhigh_bits(types::I32, same);
    let converged = b.ins().icmp(IntCC::Equal, same_bits, awake_bits);
    let converged_exit = b.create_block();
    b.ins().brif(converged, converged_exit, &[], in_limit, &[]);
    b.switch_to_block(converged_exit);
    to_exit(&mut b, CohortExit::Converged);

    b.switch_to_block(in_limit);
    let c = b.use_var(cycle);
    let over = b.ins().icmp(IntCC::UnsignedGreaterThanOrEqual, c, limit);
    let limit_exit = b.create_block();
    let run = b.create_block();
    b.ins().brif(over, limit_exit, &[], run, &[]);
    b.switch_to_block(limit_exit);
    to_exit(&mut b, CohortExit::Limit);

    b.switch_to_block(run);
    let ip_now = b.use_var(ipv);
    b.def_var(nip, ip_now);
    let z = zeros(&mut b);
    b.def_var(mem, z);
    b.def_var(ready, z);
    let occupied = occupied_ips(&mut b, ip_now, awake);
    let todo = b.declare_var(types::I32);
    b.def_var(todo, occupied);
    let dispatch = b.create_block();
    let pick = b.create_block();
    let bodies: Vec<Block> = (0..FRAME_INSTRS).map(|_| b.create_block()).collect();
    let memory_phase = b.create_block();
    b.ins().jump(dispatch, &[]);

    // The IPs with awake lanes, lowest first, each once.
    b.switch_to_block(dispatch);
    let left = b.use_var(todo);
    b.ins().brif(left, pick, &[], memory_phase, &[]);
    b.switch_to_block(pick);
    let i = b.ins().ctz(left);
    let rest = b.ins().iadd_imm_s(left, -1);
    let rest = b.ins().band(left, rest);
    b.def_var(todo, rest);
    dispatch_on_ip(&mut b, i, |ip| bodies[ip]);

    // Each instruction for the awake lanes at its IP.
    let mut loads: Vec<(usize, Access<Value>)> = Vec::new();
    for (i, &instr) in instrs.iter().enumerate() {
        b.switch_to_block(bodies[i]);
        let here = splat(&mut b, i as u8);
        let at_ip = b.ins().icmp(IntCC::Equal, ip_now, here);
        let lanes = b.ins().band(at_ip, awake);
        let effect = step(
            instr,
            &mut VectorLowering {
                b: &mut b,
                regs: &regs,
                active: Some(lanes),
                core_id,
            },
        );
        let next_ip = splat(&mut b, i as u8 + 1);
        match effect {
            Effect::Next => blend_var(&mut b, nip, lanes, next_ip),
            Effect::Branch { cond, target } => {
                let zero = zeros(&mut b);
                let taken = b.ins().icmp(IntCC::NotEqual, cond, zero);
                let target = splat(&mut b, target & 0xF);
                let to = b.ins().bitselect(taken, target, next_ip);
                blend_var(&mut b, nip, lanes, to);
            }
            Effect::Ready => {
                let r = b.use_var(ready);
                let r = b.ins().bor(r, lanes);
                b.def_var(ready, r);
            }
            Effect::Memory(access) => {
                let op = splat(&mut b, access.op as u8);
                let operands = [
                    (offset_of!(CohortFile, row), Some(access.row)),
                    (offset_of!(CohortFile, bank), Some(access.bank)),
                    (offset_of!(CohortFile, value), access.value),
                    (offset_of!(CohortFile, op), Some(op)),
                ];
                for (field, v) in operands {
                    let Some(v) = v else { continue };
                    let old = b.ins().load(V, flags, file, at(field));
                    let new = b.ins().bitselect(lanes, v, old);
                    b.ins().store(flags, new, file, at(field));
                }
                let m = b.use_var(mem);
                let m = b.ins().bor(m, lanes);
                b.def_var(mem, m);
                if access.op.is_read() {
                    loads.push((i, access));
                }
            }
        }
        b.ins().jump(dispatch, &[]);
    }

    // The cycle's memory instructions, in ascending core id whatever their IPs.
    b.switch_to_block(memory_phase);
    let mid = b.create_block();
    let mid_executed = b.append_block_param(mid, V);
    let mid_status = b.append_block_param(mid, types::I32);
    let m = b.use_var(mem);
    let mem_bits = b.ins().vhigh_bits(types::I32, m);
    let call = b.create_block();
    let no_memory = b.create_block();
    b.ins().brif(mem_bits, call, &[], no_memory, &[]);
    b.switch_to_block(no_memory);
    let done = b
        .ins()
        .iconst(types::I32, i64::from(CohortAccess::Done.code()));
    b.ins()
        .jump(mid, &[BlockArg::Value(awake), BlockArg::Value(done)]);

    // Where the frame has no atomic sequence, below the port's bound every access of the
    // cycle proceeds as the memory would commit it, and the code performs them itself.
    let accessed = b.create_block();
    let status = b.append_block_param(accessed, types::I32);
    b.switch_to_block(call);
    // `cohort_access` adds the lanes it performs to those the code performed.
    let z = zeros(&mut b);
    b.ins()
        .store(flags, z, file, at(offset_of!(CohortFile, performed)));
    let ask = b.create_block();
    let ask_lanes = b.append_block_param(ask, types::I32);
    let all_lanes = [BlockArg::Value(mem_bits)];
    // Go on in code where the cycle is below the bound in the file's `field`, else ask.
    let below_bound = |b: &mut FunctionBuilder, field: usize| {
        let in_code = b.create_block();
        let until = b.ins().load(types::I64, flags, file, at(field));
        let below = b.ins().icmp(IntCC::UnsignedLessThan, c, until);
        b.ins().brif(below, in_code, &[], ask, &all_lanes);
        b.switch_to_block(in_code);
    };
    // Every lane's access was performed in code: no retry is pending, and the cycle goes
    // on as after the port's `Done`.
    let performed_in_code = |b: &mut FunctionBuilder| {
        b.ins()
            .store(flags, none, file, at(offset_of!(CohortFile, retried)));
        let done = b
            .ins()
            .iconst(types::I32, i64::from(CohortAccess::Done.code()));
        b.ins().jump(accessed, &[BlockArg::Value(done)]);
    };
    if instrs.iter().any(Instr::is_sync) {
        // Below the port's bound, the accesses the lock book lets proceed without waking
        // anyone are performed here, up to the first that may not.
        let walked = b.create_block();
        below_bound(&mut b, offset_of!(CohortFile, sync_until));
        perform_sync_lanes(&mut b, file, mem_bits, c, ptr, walked, ask);
        b.switch_to_block(walked);
        performed_in_code(&mut b);
    } else if performs_plain_lanes(instrs) {
        below_bound(&mut b, offset_of!(CohortFile, plain_until));
        let fields = PlainLaneFields {
            row: offset_of!(CohortFile, row),
            bank: offset_of!(CohortFile, bank),
            value: offset_of!(CohortFile, value),
            loaded: offset_of!(CohortFile, loaded),
            cells: offset_of!(CohortFile, cells),
            ops: LaneOps::Each(offset_of!(CohortFile, op)),
        };
        perform_plain_lanes(&mut b, file, mem_bits, ptr, &fields, LaneWalk::Unrolled);
        let m = b.use_var(mem);
        b.ins()
            .store(flags, m, file, at(offset_of!(CohortFile, performed)));
        performed_in_code(&mut b);
    } else {
        b.ins().jump(ask, &all_lanes);
    }
    b.switch_to_block(ask);
    let f = b.ins().iconst(ptr, callbacks.cohort_access as usize as i64);
    let inst = b
        .ins()
        .call_indirect(access_ref, f, &[cctx, file, ask_lanes, c]);
    let asked = b.inst_results(inst)[0];
    b.ins().jump(accessed, &[BlockArg::Value(asked)]);

    b.switch_to_block(accessed);
    let performed = b
        .ins()
        .load(V, flags, file, at(offset_of!(CohortFile, performed)));
    let loaded = b
        .ins()
        .load(V, flags, file, at(offset_of!(CohortFile, loaded)));
    // Loads complete in the lanes performed at their IP (a woken lane's IP is the access
    // it slept on).
    let waking = b
        .ins()
        .load(types::I32, flags, file, at(offset_of!(CohortFile, retried)));
    // A lane retried in the cycle it was woken in may be at an IP no awake lane was at.
    let retry = b.ins().icmp_imm_u(IntCC::NotEqual, waking, 0);
    let every = b.ins().iconst(types::I32, 0xFFFF);
    let retry = b.ins().select(retry, every, none);
    let loading = b.ins().bor(occupied, retry);
    for (i, access) in loads {
        let complete = b.create_block();
        let after = b.create_block();
        let here = b.ins().band_imm_u(loading, 1 << i);
        b.ins().brif(here, complete, &[], after, &[]);
        b.switch_to_block(complete);
        let here = splat(&mut b, i as u8);
        let at_ip = b.ins().icmp(IntCC::Equal, ip_now, here);
        let lanes = b.ins().band(at_ip, performed);
        access.complete(
            &mut VectorLowering {
                b: &mut b,
                regs: &regs,
                active: Some(lanes),
                core_id,
            },
            loaded,
        );
        b.ins().jump(after, &[]);
        b.switch_to_block(after);
    }
    let one = splat(&mut b, 1);
    let following = b.ins().iadd(ip_now, one);
    blend_var(&mut b, nip, performed, following);
    let stayed = b.ins().band_not(awake, m);
    let ran = b.ins().bor(stayed, performed);
    b.ins()
        .jump(mid, &[BlockArg::Value(ran), BlockArg::Value(status)]);

    // The IPs move for the lanes that executed; lanes past IP 15 or at `ready` end.
    b.switch_to_block(mid);
    let next = b.use_var(nip);
    let r = b.use_var(ready);
    let past = splat(&mut b, FRAME_INSTRS as u8);
    let past = b.ins().icmp(IntCC::Equal, next, past);
    let ends = b.ins().bor(past, r);
    let ends = b.ins().band(ends, mid_executed);
    let moves = b.ins().band_not(mid_executed, ends);
    let moved = b.ins().bitselect(moves, next, ip_now);
    b.def_var(ipv, moved);
    let ran_bits = b.ins().vhigh_bits(types::I32, mid_executed);
    b.def_var(executed, ran_bits);
    let end_bits = b.ins().vhigh_bits(types::I32, ends);
    let after_end = b.create_block();
    let holds = b.append_block_param(after_end, types::I32);
    let end_call = b.create_block();
    b.ins()
        .brif(end_bits, end_call, &[], after_end, &[BlockArg::Value(none)]);
    b.switch_to_block(end_call);
    let by_ready = b.ins().band(r, ends);
    let ready_bits = b.ins().vhigh_bits(types::I32, by_ready);
    let after = b.ins().iadd_imm_u(c, 1);
    let f = b.ins().iconst(ptr, callbacks.cohort_end as usize as i64);
    let inst = b
        .ins()
        .call_indirect(end_ref, f, &[cctx, file, end_bits, ready_bits, after]);
    let held = b.inst_results(inst)[0];
    b.ins().jump(after_end, &[BlockArg::Value(held)]);

    b.switch_to_block(after_end);
    let parked_exit = b.create_block();
    let go_on = b.create_block();
    b.ins().brif(mid_status, parked_exit, &[], go_on, &[]);
    b.switch_to_block(parked_exit);
    to_exit(&mut b, CohortExit::Parked);

    // The next cycle: lanes a cycle behind join; stop where a lane ended holding a lock.
    b.switch_to_block(go_on);
    let c1 = b.ins().iadd_imm_u(c, 1);
    b.def_var(cycle, c1);
    b.def_var(executed, none);
    let merge = b.create_block();
    let next_cycle = b.create_block();
    b.ins().brif(joining, merge, &[], next_cycle, &[]);
    b.switch_to_block(merge);
    let now = b
        .ins()
        .load(V, flags, file, at(offset_of!(CohortFile, awake)));
    let join = b
        .ins()
        .load(V, flags, file, at(offset_of!(CohortFile, join)));
    let now = b.ins().bor(now, join);
    b.ins()
        .store(flags, now, file, at(offset_of!(CohortFile, awake)));
    let z = zeros(&mut b);
    b.ins()
        .store(flags, z, file, at(offset_of!(CohortFile, join)));
    b.ins().jump(next_cycle, &[]);
    b.switch_to_block(next_cycle);
    let stop_exit = b.create_block();
    b.ins().brif(holds, stop_exit, &[], top, &[]);
    b.switch_to_block(stop_exit);
    to_exit(&mut b, CohortExit::Stop);

    b.switch_to_block(exit);
    store_written(
        &mut b,
        &regs,
        shape.written,
        file,
        offset_of!(CohortFile, regs),
    );
    let ip_out = b.use_var(ipv);
    b.ins()
        .store(flags, ip_out, file, at(offset_of!(CohortFile, ips)));
    let c_out = b.use_var(cycle);
    b.ins()
        .store(flags, c_out, file, at(offset_of!(CohortFile, cycle)));
    let e_out = b.use_var(executed);
    b.ins()
        .store(flags, e_out, file, at(offset_of!(CohortFile, executed)));
    b.ins().return_(&[exit_code]);

    b.seal_all_blocks();
    b.finalize(module_config);
}

/// The IPs of the lanes of `awake` as a 16-bit mask (bit i: some awake lane is at IP i):
/// each lane's bit `1 << (ip & 7)`, split by `ip < 8`, OR-reduced across the lanes in four
/// rounds of shuffles.
fn occupied_ips(b: &mut FunctionBuilder, ips: Value, awake: Value) -> Value {
    let bits = vector(b, std::array::from_fn(|k| 1u8 << (k & 7)));
    let seven = splat(b, 7);
    let low3 = b.ins().band(ips, seven);
    let bit = b.ins().swizzle(bits, low3);
    let bit = b.ins().band(bit, awake);
    let eight = splat(b, 8);
    let high = b.ins().icmp(IntCC::UnsignedGreaterThanOrEqual, ips, eight);
    let lo = b.ins().band_not(bit, high);
    let hi = b.ins().band(bit, high);
    // Lanes 0..7: lo of lanes k and k + 8; lanes 8..15: the same of hi.
    let upper = vector(b, std::array::from_fn(|k| (k as u8 + 8) & 15));
    let lo_up = b.ins().swizzle(lo, upper);
    let lo = b.ins().bor(lo, lo_up);
    let hi_up = b.ins().swizzle(hi, upper);
    let hi = b.ins().bor(hi, hi_up);
    let halves: Vec<u8> = (0..8).chain(16..24).collect();
    let halves = b.func.dfg.immediates.push(ConstantData::from(&halves[..]));
    let mut v = b.ins().shuffle(lo, hi, halves);
    for step in [4u8, 2, 1] {
        let idx = vector(
            b,
            std::array::from_fn(|k| {
                let k = k as u8;
                (k & 8) | ((k + step) & 7)
            }),
        );
        let moved = b.ins().swizzle(v, idx);
        v = b.ins().bor(v, moved);
    }
    let lo = b.ins().extractlane(v, 0);
    let hi = b.ins().extractlane(v, 8);
    let lo = b.ins().uextend(types::I32, lo);
    let hi = b.ins().uextend(types::I32, hi);
    let hi = b.ins().ishl_imm_u(hi, 8);
    b.ins().bor(lo, hi)
}

/// Every lane `k`.
fn splat(b: &mut FunctionBuilder, k: u8) -> Value {
    let k = b.ins().iconst(types::I8, i64::from(k));
    b.ins().splat(V, k)
}

/// `var` takes `value` in the lanes of `lanes`.
fn blend_var(b: &mut FunctionBuilder, var: Variable, lanes: Value, value: Value) {
    let old = b.use_var(var);
    let new = b.ins().bitselect(lanes, value, old);
    b.def_var(var, new);
}

impl Compiler {
    /// Compile the cohort form of `instrs` (see `cohort.rs`) into `module` and return the
    /// finalized entry address.
    pub(crate) fn compile_cohort(
        &mut self,
        module: &mut JITModule,
        instrs: &[Instr; FRAME_INSTRS],
    ) -> Result<*const u8, JitError> {
        let sig = self.signature_of::<CohortEntryFn>();
        let (callbacks, config) = (self.callbacks, self.isa.frontend_config());
        let code = self.codegen(Form::Cohort, sig, |ctx, fctx| {
            build(ctx, fctx, instrs, callbacks, config)
        })?;
        crate::compile::place(module, &code)
    }
}
