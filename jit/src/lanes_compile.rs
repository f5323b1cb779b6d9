//! Translation of one instruction frame into lockstep code: the group's registers are
//! `i8x16` vectors (lane k is core k), and one host vector instruction executes one
//! emulated instruction for every core of the group. What each instruction computes comes
//! from the machine's one definition (`gpu16_machine::engine::semantics::step`) executed in the
//! [`VectorLowering`] domain; the frame's control structure (segments, one watchdog check
//! a segment, an entry at every leader and resume point) is the per-core translation's
//! (`compile::shape`). What differs:
//! - a register write of an instruction writes every lane, the group's and the others
//!   alike, with no blend: lanes outside the group compute values nothing reads (only the
//!   group's lanes are stored back, test a `bnz` or reach memory; see [`VectorLowering`]).
//!   The one blended write is a load that the callback performed for only some lanes of
//!   the group before the run parks: its register gets a `bitselect` with the performed
//!   lanes, so the lanes still waiting keep their values;
//! - a plain `ld`/`st` whose bank may be each core's own (`FrameBanks::may_reach_own_bank`)
//!   first tries the row path: where every lane k reaches bank k in one row, in time
//!   (`LaneFile::rows`), it is one vector load, or a `bitselect` and one store, of the row;
//! - a plain `ld` then tries the shared-row path: where every lane reads one row, lane k
//!   from bank k + d or every lane from one bank, in time (`LaneFile::shared_until`), it
//!   is one vector load of the row and a shuffle by the banks;
//! - a memory instruction stores its row, bank and value vectors to the lane file; in a
//!   frame without atomic sequences, before `LaneFile::plain_until`, the code then performs
//!   the lanes' accesses itself in ascending core id ([`perform_plain_lanes`], shared with
//!   the cohort form); otherwise it calls `lanes::lane_access`, which performs the lanes in
//!   ascending core id; lanes it could not perform end the run (`LaneExit::Parked`);
//! - a `bnz` tests whether the group's lanes agree: all taken, none taken, or a split. Where
//!   the lanes that fall through reach `ready` next, they leave the group in place
//!   (`lanes::lane_leave`) and the rest run on; any other split ends the run
//!   (`LaneExit::Split`), and the run loop regroups the lanes.

use crate::abi::LaneExit;
use crate::abi::{signature, Callbacks, LaneAccessFn, LaneEntryFn, LaneFile, LaneLeaveFn};
use crate::compile::{cycles, dispatch_on_ip, jump_to_exit, segment_check, shape_stopping};
use crate::compile::{Compiler, Form, MachineCode};
use crate::error::JitError;
use cranelift_codegen::ir::condcodes::IntCC;
use cranelift_codegen::ir::{
    types, Block, BlockArg, ConstantData, InstBuilder, MemFlagsData, Value,
};
use cranelift_codegen::isa::TargetFrontendConfig;
use cranelift_codegen::Context;
use cranelift_frontend::{FunctionBuilder, FunctionBuilderContext, Variable};
use cranelift_jit::JITModule;
use gpu16_machine::engine::backend::CellViews;
use gpu16_machine::engine::banks::FrameBanks;
use gpu16_machine::engine::isa::{Instr, MemOp, FRAME_INSTRS, REGS};
use gpu16_machine::engine::semantics::{step, Access, Effect, Semantics};
use std::mem::offset_of;

const V: types::Type = types::I8X16;

pub(crate) fn build(
    ctx: &mut Context,
    fctx: &mut FunctionBuilderContext,
    instrs: &[Instr; FRAME_INSTRS],
    stop_ips: u16,
    callbacks: Callbacks,
    module_config: TargetFrontendConfig,
) {
    let ptr = module_config.pointer_type();
    let shape = shape_stopping(instrs, stop_ips);
    // The row path is emitted only where the analysis says it can apply.
    let banks = FrameBanks::analyse(instrs);
    let plain_lanes = performs_plain_lanes(instrs);
    let mut b = FunctionBuilder::new(&mut ctx.func, fctx);
    let flags = MemFlagsData::trusted();
    let at = |field: usize| field as i32;

    let entry = b.create_block();
    b.append_block_params_for_function_params(entry);
    let exit = b.create_block();
    let exit_ip = b.append_block_param(exit, types::I32);
    let exit_code = b.append_block_param(exit, types::I32);
    let exit_cycle = b.append_block_param(exit, types::I64);
    let exit_done = b.append_block_param(exit, types::I32);
    let check: Vec<Block> = (0..FRAME_INSTRS).map(|_| b.create_block()).collect();
    let body: Vec<Block> = (0..FRAME_INSTRS).map(|_| b.create_block()).collect();
    let slow: Vec<Block> = (0..FRAME_INSTRS).map(|_| b.create_block()).collect();

    b.switch_to_block(entry);
    let params = b.block_params(entry).to_vec();
    let (file, lctx, limit) = (params[0], params[1], params[2]);
    let regs = load_registers(
        &mut b,
        file,
        offset_of!(LaneFile, regs),
        shape.read | shape.written,
    );
    // The group's lanes: both change when lanes leave it (see the bnz below).
    let lanes_var = b.declare_var(V);
    let mask_var = b.declare_var(types::I32);
    let lanes0 = b
        .ins()
        .load(V, flags, file, at(offset_of!(LaneFile, lanes)));
    let mask0 = b
        .ins()
        .load(types::I32, flags, file, at(offset_of!(LaneFile, mask)));
    b.def_var(lanes_var, lanes0);
    b.def_var(mask_var, mask0);
    let cycle = b.declare_var(types::I64);
    let c0 = b
        .ins()
        .load(types::I64, flags, file, at(offset_of!(LaneFile, cycle)));
    b.def_var(cycle, c0);
    let core_id = vector(&mut b, std::array::from_fn(|k| k as u8));
    let ip = b
        .ins()
        .load(types::I32, flags, file, at(offset_of!(LaneFile, ip)));
    let ip = b.ins().band_imm_u(ip, 0xF);
    dispatch_on_ip(&mut b, ip, |i| {
        if shape.leader[i] || shape.resume[i] {
            check[i]
        } else {
            slow[i]
        }
    });

    let call_conv = module_config.default_call_conv;
    let shim_ref = b.import_signature(signature::<LaneAccessFn>(call_conv, ptr));
    let leave_ref = b.import_signature(signature::<LaneLeaveFn>(call_conv, ptr));
    let to_exit = |b: &mut FunctionBuilder, ip: usize, code: u32, cyc: Value, done: Value| {
        jump_to_exit(b, exit, ip, code, cyc, &[done]);
    };

    for i in 0..FRAME_INSTRS {
        b.switch_to_block(slow[i]);
        let c = b.use_var(cycle);
        let none = b.ins().iconst(types::I32, 0);
        to_exit(&mut b, i, LaneExit::Slow.code(), c, none);
        if !shape.leader[i] && !shape.resume[i] {
            continue;
        }
        let end = shape.end[i];
        b.switch_to_block(check[i]);
        let c = b.use_var(cycle);
        let after = b.ins().iadd_imm_u(c, cycles(end + 1 - i));
        let over = segment_check(&mut b, &shape, i, after, limit);
        b.ins().brif(over, slow[i], &[], body[i], &[]);
        if !shape.leader[i] {
            // A resume point's body is emitted with the segment it lies in.
            continue;
        }

        b.switch_to_block(body[i]);
        let mut c0 = b.use_var(cycle);
        let mut piece = i;
        let mut last = Effect::Next;
        for j in i..=end {
            if j != i && shape.resume[j] {
                let cj = b.ins().iadd_imm_u(c0, cycles(j - piece));
                b.def_var(cycle, cj);
                b.ins().jump(body[j], &[]);
                b.switch_to_block(body[j]);
                c0 = b.use_var(cycle);
                piece = j;
            }
            let effect = step(
                instrs[j],
                &mut VectorLowering {
                    b: &mut b,
                    regs: &regs,
                    active: None,
                    core_id,
                },
            );
            last = effect;
            let Effect::Memory(access) = effect else {
                continue;
            };
            let when = b.ins().iadd_imm_u(c0, cycles(j - piece));
            let value = match access.value {
                Some(v) => v,
                None => zeros(&mut b),
            };
            // After the access, by a row fast path or the callback.
            let next = b.create_block();
            let call = b.create_block();
            let paths = row_paths(access.op, &banks, j);
            let shared = paths.shared.then(|| b.create_block());
            let own_rows = paths.own;
            if !own_rows {
                b.ins().jump(shared.unwrap_or(call), &[]);
            }
            if own_rows {
                // Own-bank rows: every lane k of the group reaches bank k, all in one row,
                // in time (see `LaneFile::rows`): one vector load or store of the row.
                let lanes = b.use_var(lanes_var);
                let own = b.ins().icmp(IntCC::Equal, access.bank, core_id);
                let lead = b.ins().load(V, flags, file, at(offset_of!(LaneFile, lead)));
                let row = b.ins().swizzle(access.row, lead);
                let same = b.ins().icmp(IntCC::Equal, access.row, row);
                let fits = b.ins().band(own, same);
                let misfit = b.ins().band_not(lanes, fits);
                let any_misfit = b.ins().vany_true(misfit);
                let late = at_or_past(&mut b, file, offset_of!(LaneFile, rows_until), when);
                let no = b.ins().bor(any_misfit, late);
                let fast = b.create_block();
                b.ins().brif(no, shared.unwrap_or(call), &[], fast, &[]);
                b.switch_to_block(fast);
                let cell = row_address(&mut b, file, row, ptr);
                let old = b.ins().load(V, flags, cell, 0);
                if access.op.is_read() {
                    complete_access(&mut b, &regs, core_id, &access, None, old);
                } else {
                    let new = b.ins().bitselect(lanes, value, old);
                    b.ins().store(flags, new, cell, 0);
                }
                bump(&mut b, file, offset_of!(LaneFile, rows_done));
                b.ins().jump(next, &[]);
            }
            if let Some(shared) = shared {
                // Shared rows: every lane reads one row, lane k from bank k + d or every
                // lane from one bank, in time (see `LaneFile::shared_until`): one vector
                // load of the row, shuffled by the banks.
                b.switch_to_block(shared);
                let lanes = b.use_var(lanes_var);
                let lead = b.ins().load(V, flags, file, at(offset_of!(LaneFile, lead)));
                let row = b.ins().swizzle(access.row, lead);
                let same_row = b.ins().icmp(IntCC::Equal, access.row, row);
                let fifteen = b.ins().iconst(types::I8, 15);
                let fifteen = b.ins().splat(V, fifteen);
                let bank = b.ins().band(access.bank, fifteen);
                let d = b.ins().isub(bank, core_id);
                let d = b.ins().band(d, fifteen);
                let lead_d = b.ins().swizzle(d, lead);
                let lead_bank = b.ins().swizzle(bank, lead);
                let late = at_or_past(&mut b, file, offset_of!(LaneFile, shared_until), when);
                let misfits = |b: &mut FunctionBuilder, pattern: Value, lead: Value| {
                    let fits = b.ins().icmp(IntCC::Equal, pattern, lead);
                    let fits = b.ins().band(fits, same_row);
                    let misfit = b.ins().band_not(lanes, fits);
                    b.ins().vany_true(misfit)
                };
                let not_rotated = misfits(&mut b, d, lead_d);
                let not_broadcast = misfits(&mut b, bank, lead_bank);
                let in_time = b.create_block();
                let rotated = b.create_block();
                let broadcast_test = b.create_block();
                let broadcast = b.create_block();
                let perform = b.create_block();
                b.ins().brif(late, call, &[], in_time, &[]);
                b.switch_to_block(in_time);
                b.ins().brif(not_rotated, broadcast_test, &[], rotated, &[]);
                b.switch_to_block(broadcast_test);
                b.ins().brif(not_broadcast, call, &[], broadcast, &[]);
                for (block, by, first) in [(rotated, lead_d, 0), (broadcast, lead_bank, 16)] {
                    b.switch_to_block(block);
                    let by = b.ins().extractlane(by, 0);
                    let i = b.ins().uextend(types::I32, by);
                    let i = b.ins().iadd_imm_u(i, first);
                    // shared[i] += 1, and mark entry i for `count_rows`.
                    let counts = b
                        .ins()
                        .load(ptr, flags, file, at(offset_of!(LaneFile, shared)));
                    count_one(&mut b, counts, i, ptr);
                    let one = b.ins().iconst(types::I32, 1);
                    let bit = b.ins().ishl(one, i);
                    let at_used = at(offset_of!(LaneFile, shared_used));
                    let used = b.ins().load(types::I32, flags, file, at_used);
                    let used = b.ins().bor(used, bit);
                    b.ins().store(flags, used, file, at_used);
                    b.ins().jump(perform, &[]);
                }
                b.switch_to_block(perform);
                let old = load_row(&mut b, file, row, ptr);
                let bytes = b.ins().swizzle(old, bank);
                complete_access(&mut b, &regs, core_id, &access, None, bytes);
                b.ins().jump(next, &[]);
            }
            b.switch_to_block(call);
            for (field, v) in [
                (offset_of!(LaneFile, row), access.row),
                (offset_of!(LaneFile, bank), access.bank),
                (offset_of!(LaneFile, value), value),
            ] {
                b.ins().store(flags, v, file, at(field));
            }
            if plain_lanes {
                // Any other plain access, in time (see `LaneFile::plain_until`): lane by
                // lane in ascending core id, in the code.
                let late = at_or_past(&mut b, file, offset_of!(LaneFile, plain_until), when);
                let in_code = b.create_block();
                let ask = b.create_block();
                b.ins().brif(late, ask, &[], in_code, &[]);
                b.switch_to_block(in_code);
                let mask = b.use_var(mask_var);
                let fields = PlainLaneFields {
                    row: offset_of!(LaneFile, row),
                    bank: offset_of!(LaneFile, bank),
                    value: offset_of!(LaneFile, value),
                    loaded: offset_of!(LaneFile, loaded),
                    cells: offset_of!(LaneFile, cells),
                    ops: LaneOps::All(access.op),
                };
                perform_plain_lanes(&mut b, file, mask, ptr, &fields, LaneWalk::Loop);
                if access.op.is_read() {
                    let loaded = b
                        .ins()
                        .load(V, flags, file, at(offset_of!(LaneFile, loaded)));
                    complete_access(&mut b, &regs, core_id, &access, None, loaded);
                }
                b.ins().jump(next, &[]);
                b.switch_to_block(ask);
            }
            let op = b.ins().iconst(types::I32, i64::from(access.op as u8));
            let f = b.ins().iconst(ptr, callbacks.lane_access as usize as i64);
            let call = b.ins().call_indirect(shim_ref, f, &[lctx, file, op, when]);
            let done = b.inst_results(call)[0];
            let loaded = b
                .ins()
                .load(V, flags, file, at(offset_of!(LaneFile, loaded)));
            let mask = b.use_var(mask_var);
            let all = b.ins().icmp(IntCC::Equal, done, mask);
            let partial = b.create_block();
            let complete = b.create_block();
            b.ins().brif(all, complete, &[], partial, &[]);
            // Some lanes performed, the rest wait: finish theirs and stop.
            b.set_cold_block(partial);
            b.switch_to_block(partial);
            let performed = b
                .ins()
                .load(V, flags, file, at(offset_of!(LaneFile, performed)));
            complete_access(&mut b, &regs, core_id, &access, Some(performed), loaded);
            to_exit(&mut b, j, LaneExit::Parked.code(), when, done);
            b.switch_to_block(complete);
            complete_access(&mut b, &regs, core_id, &access, None, loaded);
            b.ins().jump(next, &[]);
            b.switch_to_block(next);
        }
        let c1 = if piece == i {
            after
        } else {
            b.ins().iadd_imm_u(c0, cycles(end + 1 - piece))
        };
        b.def_var(cycle, c1);
        let fall = |b: &mut FunctionBuilder| {
            if end == FRAME_INSTRS - 1 {
                let none = b.ins().iconst(types::I32, 0);
                to_exit(b, end, LaneExit::Ended.code(), c1, none);
            } else {
                b.ins().jump(check[end + 1], &[]);
            }
        };
        match last {
            Effect::Ready => {
                let none = b.ins().iconst(types::I32, 0);
                to_exit(&mut b, end, LaneExit::Ready.code(), c1, none);
            }
            Effect::Branch { cond, target } => {
                let (lanes, mask) = (b.use_var(lanes_var), b.use_var(mask_var));
                let zero = zeros(&mut b);
                let nonzero = b.ins().icmp(IntCC::NotEqual, cond, zero);
                let taken = b.ins().band(nonzero, lanes);
                let bits = b.ins().vhigh_bits(types::I32, taken);
                let all = b.ins().icmp(IntCC::Equal, bits, mask);
                let not_all = b.create_block();
                b.ins()
                    .brif(all, check[usize::from(target)], &[], not_all, &[]);
                b.switch_to_block(not_all);
                let split = b.create_block();
                let not_taken = b.create_block();
                b.ins().brif(bits, split, &[], not_taken, &[]);
                b.set_cold_block(split);
                b.switch_to_block(split);
                let at_bnz = b.ins().iadd_imm_u(c0, cycles(end - piece));
                let split_exit = b.create_block();
                // (Not where `ready` is a debugger's stop: each core must come to it through
                // the segment check, which hands the group to the interpreter.)
                let ready_next = end + 1 < FRAME_INSTRS
                    && instrs[end + 1] == Instr::Ready
                    && !shape.stops_at(end + 1);
                if ready_next {
                    // The lanes that fall through execute `ready` next cycle and leave; the
                    // rest go on as the group, if that cycle is below the limit.
                    let leave = b.create_block();
                    let in_time = b.ins().icmp(IntCC::UnsignedLessThan, c1, limit);
                    b.ins().brif(in_time, leave, &[], split_exit, &[]);
                    b.switch_to_block(leave);
                    // The leaving lanes' registers as they end: `lane_leave` keeps them,
                    // since the group's code goes on writing every lane.
                    store_written(
                        &mut b,
                        &regs,
                        shape.written,
                        file,
                        offset_of!(LaneFile, regs),
                    );
                    let leaving = b.ins().bxor(mask, bits);
                    let after_ready = b.ins().iadd_imm_u(c1, cycles(1));
                    let ready_ip = b.ins().iconst(types::I32, (end + 1) as i64);
                    let f = b.ins().iconst(ptr, callbacks.lane_leave as usize as i64);
                    b.ins()
                        .call_indirect(leave_ref, f, &[file, leaving, after_ready, ready_ip]);
                    b.def_var(lanes_var, taken);
                    b.def_var(mask_var, bits);
                    b.ins().jump(check[usize::from(target)], &[]);
                } else {
                    b.ins().jump(split_exit, &[]);
                }
                // The bnz itself is retired by the runtime, lane by lane.
                b.switch_to_block(split_exit);
                to_exit(&mut b, end, LaneExit::Split.code(), at_bnz, bits);
                b.switch_to_block(not_taken);
                fall(&mut b);
            }
            Effect::Next | Effect::Memory(_) => fall(&mut b),
        }
    }

    b.switch_to_block(exit);
    store_written(
        &mut b,
        &regs,
        shape.written,
        file,
        offset_of!(LaneFile, regs),
    );
    b.ins()
        .store(flags, exit_cycle, file, at(offset_of!(LaneFile, cycle)));
    b.ins()
        .store(flags, exit_ip, file, at(offset_of!(LaneFile, ip)));
    b.ins()
        .store(flags, exit_done, file, at(offset_of!(LaneFile, done)));
    b.ins().return_(&[exit_code]);

    b.seal_all_blocks();
    b.finalize(module_config);
}

/// The register variables, those of `live` loaded from a file whose register vectors
/// start at `regs_at` (the others zero: compiled code neither reads nor stores them).
pub(crate) fn load_registers(
    b: &mut FunctionBuilder,
    file: Value,
    regs_at: usize,
    live: u16,
) -> Vec<Variable> {
    let regs: Vec<Variable> = (0..REGS).map(|_| b.declare_var(V)).collect();
    for (r, &var) in regs.iter().enumerate() {
        let v = if live & (1 << r) != 0 {
            let at = (regs_at + 16 * r) as i32;
            b.ins().load(V, MemFlagsData::trusted(), file, at)
        } else {
            zeros(b)
        };
        b.def_var(var, v);
    }
    regs
}

/// The constant vector `bytes`.
pub(crate) fn vector(b: &mut FunctionBuilder, bytes: [u8; 16]) -> Value {
    let c = b.func.dfg.constants.insert(ConstantData::from(&bytes[..]));
    b.ins().vconst(V, c)
}

/// Store the registers of `written` to a file whose register vectors start at `regs_at`.
pub(crate) fn store_written(
    b: &mut FunctionBuilder,
    regs: &[Variable],
    written: u16,
    file: Value,
    regs_at: usize,
) {
    for (r, &var) in regs.iter().enumerate() {
        if written & (1 << r) != 0 {
            let v = b.use_var(var);
            let at = (regs_at + 16 * r) as i32;
            b.ins().store(MemFlagsData::trusted(), v, file, at);
        }
    }
}

/// The address of the row that lane 0 of `row` names, in the cells `LaneFile::rows`
/// points at.
fn row_address(b: &mut FunctionBuilder, file: Value, row: Value, ptr: types::Type) -> Value {
    let r = b.ins().extractlane(row, 0);
    let r = b.ins().uextend(ptr, r);
    let offset = b.ins().ishl_imm_u(r, 4);
    let rows = b.ins().load(
        ptr,
        MemFlagsData::trusted(),
        file,
        (offset_of!(LaneFile, cells) + offset_of!(CellViews, bytes)) as i32,
    );
    b.ins().iadd(rows, offset)
}

/// The 16 bytes of the row that lane 0 of `row` names.
fn load_row(b: &mut FunctionBuilder, file: Value, row: Value, ptr: types::Type) -> Value {
    let cell = row_address(b, file, row, ptr);
    b.ins().load(V, MemFlagsData::trusted(), cell, 0)
}

/// Whether `when` is at or past the cycle bound at `field` of the lane file.
fn at_or_past(b: &mut FunctionBuilder, file: Value, field: usize, when: Value) -> Value {
    let until = b
        .ins()
        .load(types::I64, MemFlagsData::trusted(), file, field as i32);
    b.ins().icmp(IntCC::UnsignedGreaterThanOrEqual, when, until)
}

/// Add 1 to the `u64` at `field` of the lane file.
fn bump(b: &mut FunctionBuilder, file: Value, field: usize) {
    let flags = MemFlagsData::trusted();
    let n = b.ins().load(types::I64, flags, file, field as i32);
    let n = b.ins().iadd_imm_u(n, 1);
    b.ins().store(flags, n, file, field as i32);
}

/// The row fast paths lockstep code tries at a memory instruction, before it asks the
/// port: own-bank rows (`LaneFile::rows_until`) and shared rows (`LaneFile::shared_until`).
#[derive(Clone, Copy)]
pub(crate) struct RowPaths {
    /// Every lane of the group in its own bank, all in one row (not for a sync access).
    pub(crate) own: bool,
    /// A plain `ld` of one row by every lane.
    pub(crate) shared: bool,
}

/// The row paths of the memory instruction `op` at `ip` of a frame whose bank analysis is
/// `banks`: the one rule for the code emitted and for what its entry asks of the port.
pub(crate) fn row_paths(op: MemOp, banks: &FrameBanks, ip: usize) -> RowPaths {
    RowPaths {
        own: !op.is_sync() && banks.may_reach_own_bank(ip),
        shared: op == MemOp::Ld && banks.may_reach_one_row(ip),
    }
}

/// Whether some memory instruction of the frame `instrs` tries the shared-row path (see
/// [`row_paths`]): its entry asks the port for that bound only then.
pub(crate) fn tries_shared_rows(instrs: &[Instr; FRAME_INSTRS]) -> bool {
    let banks = FrameBanks::analyse(instrs);
    (0..FRAME_INSTRS).any(|ip| match instrs[ip] {
        Instr::Mem { op, .. } => row_paths(op, &banks, ip).shared,
        _ => false,
    })
}

/// Whether the lockstep and cohort forms of the frame `instrs` perform plain accesses
/// themselves below `Port::plain_accesses_until`: it has memory instructions and no atomic
/// sequence, so nothing its cores do moves that bound (only a `st_sync` wakes cores
/// outside them, and only a sync access changes the memory's gate).
pub(crate) fn performs_plain_lanes(instrs: &[Instr; FRAME_INSTRS]) -> bool {
    instrs.iter().any(Instr::is_memory) && !instrs.iter().any(Instr::is_sync)
}

/// Where, in the state file of the code that performs plain accesses lane by lane
/// ([`perform_plain_lanes`]), each lane's operands are (a byte a lane: lane k at offset
/// + k), where it puts what it loads, and the memory's `CellViews`.
pub(crate) struct PlainLaneFields {
    pub(crate) row: usize,
    pub(crate) bank: usize,
    pub(crate) value: usize,
    pub(crate) loaded: usize,
    pub(crate) cells: usize,
    pub(crate) ops: LaneOps,
}

/// The op of each lane's access.
pub(crate) enum LaneOps {
    /// A `MemOp` byte a lane, from this offset (a cohort's lanes may be at different
    /// instructions).
    Each(usize),
    /// One op for every lane (the lanes of a lockstep group run one instruction).
    All(MemOp),
}

/// How the code walks the lanes of a plain access.
#[derive(Clone, Copy)]
pub(crate) enum LaneWalk {
    /// A test and a body for each of the 16 lanes: the fastest, for code that has one such
    /// access (a cohort's memory phase).
    Unrolled,
    /// One body in a loop over the lanes' bits: for code with one such access per memory
    /// instruction (lockstep code), whose size and compile time would grow by 16 bodies
    /// at each.
    Loop,
}

/// Perform the plain `ld`/`st` of the lanes of `lanes` (i32, bit k for lane k) whose
/// operands are in the file at `fields`, in ascending core id, as the memory commits a
/// plain access (`gpu16_machine::engine::memory`): a store writes its byte, a load reads it
/// into `loaded`, and each counts one access in its bank's counter. Only below
/// `Port::plain_accesses_until`, where each would proceed exactly so.
pub(crate) fn perform_plain_lanes(
    b: &mut FunctionBuilder,
    file: Value,
    lanes: Value,
    ptr: types::Type,
    fields: &PlainLaneFields,
    walk: LaneWalk,
) {
    let flags = MemFlagsData::trusted();
    let cells = |f: usize| (fields.cells + f) as i32;
    let bytes = b
        .ins()
        .load(ptr, flags, file, cells(offset_of!(CellViews, bytes)));
    let accesses = b
        .ins()
        .load(ptr, flags, file, cells(offset_of!(CellViews, accesses)));
    // One lane's access: its bytes are at `own + field + k`.
    let lane = |b: &mut FunctionBuilder, own: Value, k: usize| {
        let field = |f: usize| (f + k) as i32;
        let row = b.ins().uload8(types::I32, flags, own, field(fields.row));
        let bank = b.ins().uload8(types::I32, flags, own, field(fields.bank));
        let bank = b.ins().band_imm_u(bank, 0xF);
        // The cell of (bank, row): `gpu16_machine::engine::memory::cell_index`, row-major.
        let index = b.ins().ishl_imm_u(row, 4);
        let index = b.ins().bor(index, bank);
        let index = b.ins().uextend(ptr, index);
        let cell = b.ins().iadd(bytes, index);
        let old = b.ins().uload8(types::I32, flags, cell, 0);
        match fields.ops {
            LaneOps::Each(ops) => {
                let op = b.ins().uload8(types::I32, flags, own, field(ops));
                let store = b
                    .ins()
                    .icmp_imm_u(IntCC::Equal, op, i64::from(MemOp::St as u8));
                let value = b.ins().uload8(types::I32, flags, own, field(fields.value));
                // A load writes back the byte it read: the same memory, without a branch
                // on the op.
                let new = b.ins().select(store, value, old);
                b.ins().istore8(flags, new, cell, 0);
                b.ins().istore8(flags, old, own, field(fields.loaded));
            }
            LaneOps::All(MemOp::St) => {
                let value = b.ins().uload8(types::I32, flags, own, field(fields.value));
                b.ins().istore8(flags, value, cell, 0);
            }
            LaneOps::All(_) => {
                b.ins().istore8(flags, old, own, field(fields.loaded));
            }
        }
        count_one(b, accesses, bank, ptr);
    };
    match walk {
        LaneWalk::Unrolled => {
            for k in 0..16 {
                let here = b.create_block();
                let next = b.create_block();
                let member = b.ins().band_imm_u(lanes, 1 << k);
                b.ins().brif(member, here, &[], next, &[]);
                b.switch_to_block(here);
                lane(b, file, k);
                b.ins().jump(next, &[]);
                b.switch_to_block(next);
            }
        }
        LaneWalk::Loop => {
            let head = b.create_block();
            let rest = b.append_block_param(head, types::I32);
            let here = b.create_block();
            let done = b.create_block();
            b.ins().jump(head, &[BlockArg::Value(lanes)]);
            b.switch_to_block(head);
            b.ins().brif(rest, here, &[], done, &[]);
            b.switch_to_block(here);
            // The lowest lane left, and the lanes after it.
            let k = b.ins().ctz(rest);
            let lower = b.ins().iadd_imm_s(rest, -1i64);
            let later = b.ins().band(rest, lower);
            let k = b.ins().uextend(ptr, k);
            let own = b.ins().iadd(file, k);
            lane(b, own, 0);
            b.ins().jump(head, &[BlockArg::Value(later)]);
            b.switch_to_block(done);
        }
    }
}

/// `table[index] += 1` in a table of `u64` counters (`index` an i32): the banks' access
/// counters, and a lockstep entry's shared-row counts.
pub(crate) fn count_one(b: &mut FunctionBuilder, table: Value, index: Value, ptr: types::Type) {
    let flags = MemFlagsData::trusted();
    let offset = b.ins().uextend(ptr, index);
    let offset = b.ins().ishl_imm_u(offset, 3);
    let counter = b.ins().iadd(table, offset);
    let n = b.ins().load(types::I64, flags, counter, 0);
    let n = b.ins().iadd_imm_u(n, 1);
    b.ins().store(flags, n, counter, 0);
}

/// The all-zero vector.
pub(crate) fn zeros(b: &mut FunctionBuilder) -> Value {
    let z = b.ins().iconst(types::I8, 0);
    b.ins().splat(V, z)
}

/// Finish a memory instruction's `access` in the lanes of `active` (every lane where
/// `None`): a load writes `byte` (lane k the byte of core k) to its register there.
fn complete_access(
    b: &mut FunctionBuilder,
    regs: &[Variable],
    core_id: Value,
    access: &Access<Value>,
    active: Option<Value>,
    byte: Value,
) {
    access.complete(
        &mut VectorLowering {
            b,
            regs,
            active,
            core_id,
        },
        byte,
    );
}

/// The lockstep domain of the one instruction definition: a register value is an `i8x16`
/// of every core's value.
///
/// An instruction of the group writes every lane (`active` is `None`): lanes outside the
/// group compute values nothing reads, since only the group's lanes are stored back
/// (`LaneFile::store`), test a `bnz` or reach memory, and a lane that leaves the group has
/// its registers kept as it leaves (`lane_leave`). That saves a blend on every write, and
/// a step in every dependency chain. Where only some lanes of the group complete an
/// access, `active` holds them (0xFF where active), and a write keeps the other lanes.
pub(crate) struct VectorLowering<'a, 'f> {
    pub(crate) b: &'a mut FunctionBuilder<'f>,
    pub(crate) regs: &'a [Variable],
    pub(crate) active: Option<Value>,
    pub(crate) core_id: Value,
}

impl VectorLowering<'_, '_> {
    fn splat(&mut self, k: u8) -> Value {
        let k = self.b.ins().iconst(types::I8, i64::from(k));
        self.b.ins().splat(V, k)
    }

    /// A lane mask (0xFF / 0x00) as a 0 / 1 value.
    fn as_zero_or_one(&mut self, m: Value) -> Value {
        let one = self.splat(1);
        self.b.ins().band(m, one)
    }
}

impl Semantics for VectorLowering<'_, '_> {
    type V = Value;
    fn reg(&mut self, r: u8) -> Value {
        self.b.use_var(self.regs[usize::from(r & 0xF)])
    }
    fn set_reg(&mut self, r: u8, v: Value) {
        let var = self.regs[usize::from(r & 0xF)];
        let new = match self.active {
            None => v,
            Some(active) => {
                let old = self.b.use_var(var);
                self.b.ins().bitselect(active, v, old)
            }
        };
        self.b.def_var(var, new);
    }
    fn konst(&mut self, k: u8) -> Value {
        self.splat(k)
    }
    fn core_id(&mut self) -> Value {
        self.core_id
    }
    fn add(&mut self, x: Value, y: Value) -> Value {
        self.b.ins().iadd(x, y)
    }
    fn sub(&mut self, x: Value, y: Value) -> Value {
        self.b.ins().isub(x, y)
    }
    fn and(&mut self, x: Value, y: Value) -> Value {
        self.b.ins().band(x, y)
    }
    fn or(&mut self, x: Value, y: Value) -> Value {
        self.b.ins().bor(x, y)
    }
    fn xor(&mut self, x: Value, y: Value) -> Value {
        self.b.ins().bxor(x, y)
    }
    fn udiv(&mut self, x: Value, y: Value) -> Value {
        // No vector division on the host: one lane at a time. `step` never passes a zero
        // divisor in any lane.
        let mut q = x;
        for l in 0..16u8 {
            let xl = self.b.ins().extractlane(x, l);
            let yl = self.b.ins().extractlane(y, l);
            let ql = self.b.ins().udiv(xl, yl);
            q = self.b.ins().insertlane(q, ql, l);
        }
        q
    }
    fn uge(&mut self, x: Value, y: Value) -> Value {
        let m = self.b.ins().icmp(IntCC::UnsignedGreaterThanOrEqual, x, y);
        self.as_zero_or_one(m)
    }
    fn is_zero(&mut self, x: Value) -> Value {
        let z = zeros(self.b);
        let m = self.b.ins().icmp(IntCC::Equal, x, z);
        self.as_zero_or_one(m)
    }
    fn select(&mut self, cond: Value, yes: Value, no: Value) -> Value {
        let z = zeros(self.b);
        let m = self.b.ins().icmp(IntCC::NotEqual, cond, z);
        self.b.ins().bitselect(m, yes, no)
    }
    fn mul_wide(&mut self, x: Value, y: Value) -> (Value, Value) {
        // No i8x16 multiply: widen to i16x8, multiply, narrow each byte back.
        let (xl, xh) = (self.b.ins().uwiden_low(x), self.b.ins().uwiden_high(x));
        let (yl, yh) = (self.b.ins().uwiden_low(y), self.b.ins().uwiden_high(y));
        let pl = self.b.ins().imul(xl, yl);
        let ph = self.b.ins().imul(xh, yh);
        let ff = self.b.ins().iconst(types::I16, 0xFF);
        let ff = self.b.ins().splat(types::I16X8, ff);
        let (ll, lh) = (self.b.ins().band(pl, ff), self.b.ins().band(ph, ff));
        let lo = self.b.ins().unarrow(ll, lh);
        let eight = self.b.ins().iconst(types::I32, 8);
        let (hl, hh) = (self.b.ins().ushr(pl, eight), self.b.ins().ushr(ph, eight));
        let hi = self.b.ins().unarrow(hl, hh);
        (lo, hi)
    }
    fn shl(&mut self, x: Value, k: u8) -> Value {
        let k = self.b.ins().iconst(types::I32, i64::from(k & 7));
        self.b.ins().ishl(x, k)
    }
    fn shr(&mut self, x: Value, k: u8) -> Value {
        let k = self.b.ins().iconst(types::I32, i64::from(k & 7));
        self.b.ins().ushr(x, k)
    }
}

impl Compiler {
    /// Compile the lockstep form of `instrs` (see `lanes.rs`) into `module` and return the
    /// finalized entry address; the code hands the group to the interpreter before each IP
    /// of `stop_ips` (see `compile::shape_stopping`).
    pub(crate) fn compile_lanes(
        &mut self,
        module: &mut JITModule,
        instrs: &[Instr; FRAME_INSTRS],
        stop_ips: u16,
    ) -> Result<*const u8, JitError> {
        let code = self.lanes_code(instrs, stop_ips)?;
        crate::compile::place(module, &code)
    }

    /// The machine code of the lockstep form of `instrs`, not yet in any module.
    pub(crate) fn lanes_code(
        &mut self,
        instrs: &[Instr; FRAME_INSTRS],
        stop_ips: u16,
    ) -> Result<MachineCode, JitError> {
        let sig = self.signature_of::<LaneEntryFn>();
        let (callbacks, config) = (self.callbacks, self.isa.frontend_config());
        self.codegen(Form::Lanes, sig, |ctx, fctx| {
            build(ctx, fctx, instrs, stop_ips, callbacks, config)
        })
    }
}
