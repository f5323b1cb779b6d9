//! One cycle's memory instructions of a cohort whose frame has atomic sequences, performed
//! by compiled code itself below the port's bound (`CohortFile::sync_until`,
//! `Port::sync_accesses_until`): lane by lane in ascending core id, each access that the
//! lock book (`CellViews`'s gate word, holders, held bytes and sleepers) shows
//! `SharedMemory::perform` would commit without a stall, a fault or a wake-up is committed
//! here exactly as `perform` commits it (the byte, the bank's access counter, and for an
//! `ld_sync` or `st_sync` the sequence opened or closed with its counters). The first lane
//! that could be anything else goes, with every later lane of the cycle, to
//! `cohort::cohort_access`, which decides it through the port. `jit/tests/commit_path.rs`
//! holds these commits to a replay through `perform`.

use crate::abi::CohortFile;
use crate::lanes_compile::count_one;
use cranelift_codegen::ir::condcodes::IntCC;
use cranelift_codegen::ir::{types, Block, BlockArg, InstBuilder, MemFlagsData, Value};
use cranelift_frontend::FunctionBuilder;
use gpu16_machine::engine::backend::CellViews;
use gpu16_machine::engine::isa::MemOp;
use std::mem::offset_of;

/// A bank's holder entry where no sequence is open, and a core's held entry where it
/// holds no byte (`CellViews::gate`).
const NO_HOLDER: i64 = 0xFF;
const NOT_HELD: i64 = 0xFFFF;

/// Emit the walk over the lanes of `lanes` (i32, bit k for lane k) in cycle `cycle` (i64).
/// Each lane it performs gets 0xFF in `performed` (which the caller zeroed) and, for a
/// load, its byte in `loaded`; it jumps to `done` when every lane was performed, or to
/// `ask` with the lanes left (the first that could not be, and all after it) as the one
/// block argument (i32).
pub(crate) fn perform_sync_lanes(
    b: &mut FunctionBuilder,
    file: Value,
    lanes: Value,
    cycle: Value,
    ptr: types::Type,
    done: Block,
    ask: Block,
) {
    let flags = MemFlagsData::trusted();
    let view = |b: &mut FunctionBuilder, field: usize| {
        let at = (offset_of!(CohortFile, cells) + field) as i32;
        b.ins().load(ptr, flags, file, at)
    };
    let bytes = view(b, offset_of!(CellViews, bytes));
    let accesses = view(b, offset_of!(CellViews, accesses));
    let gate_at = view(b, offset_of!(CellViews, gate));
    let holder = view(b, offset_of!(CellViews, holder));
    let locked = view(b, offset_of!(CellViews, locked));
    let since = view(b, offset_of!(CellViews, since));
    let held = view(b, offset_of!(CellViews, held));
    let waiters = view(b, offset_of!(CellViews, waiters));
    let acquisitions = view(b, offset_of!(CellViews, acquisitions));
    let hold_cycles = view(b, offset_of!(CellViews, hold_cycles));
    // `table + index * size`, index an i32, size a power of two.
    let entry = |b: &mut FunctionBuilder, table: Value, index: Value, size: u32| {
        let offset = b.ins().uextend(ptr, index);
        let offset = b.ins().ishl_imm_u(offset, i64::from(size.trailing_zeros()));
        b.ins().iadd(table, offset)
    };
    let lane_byte = |b: &mut FunctionBuilder, field: usize, k: usize| {
        b.ins().uload8(types::I32, flags, file, (field + k) as i32)
    };
    // The gate word and the banks opened stay in registers through the walk, and go back
    // to memory where it ends or hands over to the port.
    let opened_at = offset_of!(CohortFile, opened) as i32;
    let gate = b.declare_var(types::I32);
    let opened = b.declare_var(types::I32);
    let g = b.ins().load(types::I32, flags, gate_at, 0);
    b.def_var(gate, g);
    let o = b.ins().load(types::I32, flags, file, opened_at);
    b.def_var(opened, o);
    let put_back = |b: &mut FunctionBuilder| {
        let g = b.use_var(gate);
        b.ins().store(flags, g, gate_at, 0);
        let o = b.use_var(opened);
        b.ins().store(flags, o, file, opened_at);
    };
    for k in 0..16usize {
        let here = b.create_block();
        let next = b.create_block();
        let member = b.ins().band_imm_u(lanes, 1 << k);
        b.ins().brif(member, here, &[], next, &[]);
        // This lane goes to the port, with every later lane.
        let slow = b.create_block();
        b.switch_to_block(slow);
        put_back(b);
        let left = b.ins().band_imm_u(lanes, !((1i64 << k) - 1) & 0xFFFF);
        b.ins().jump(ask, &[BlockArg::Value(left)]);

        b.switch_to_block(here);
        let op = lane_byte(b, offset_of!(CohortFile, op), k);
        let bank = lane_byte(b, offset_of!(CohortFile, bank), k);
        let bank = b.ins().band_imm_u(bank, 0xF);
        let row = lane_byte(b, offset_of!(CohortFile, row), k);
        let one = b.ins().iconst(types::I32, 1);
        let bank_bit = b.ins().ishl(one, bank);
        let bits = b.ins().bor_imm_u(bank_bit, 1i64 << (16 + k));
        let g = b.use_var(gate);
        // The cell of (bank, row): `gpu16_machine::engine::memory::cell_index`, row-major.
        let index = b.ins().ishl_imm_u(row, 4);
        let index = b.ins().bor(index, bank);
        let cell = entry(b, bytes, index, 1);
        let performed = b.create_block();
        let st_sync = b.create_block();
        let other = b.create_block();
        let is_st_sync = b
            .ins()
            .icmp_imm_u(IntCC::Equal, op, i64::from(MemOp::StSync as u8));
        b.ins().brif(is_st_sync, st_sync, &[], other, &[]);

        // `ld`, `st`, `ld_sync`: they proceed where neither the bank nor the core has a
        // gate bit (no sequence open on the bank, none held by the core); an `ld` or `st`
        // of another byte of a bank with a sequence would too, but the port decides it.
        b.switch_to_block(other);
        let blocked = b.ins().band(g, bits);
        let proceed = b.create_block();
        b.ins().brif(blocked, slow, &[], proceed, &[]);
        b.switch_to_block(proceed);
        let old = b.ins().uload8(types::I32, flags, cell, 0);
        b.ins().istore8(
            flags,
            old,
            file,
            (offset_of!(CohortFile, loaded) + k) as i32,
        );
        count_one(b, accesses, bank, ptr);
        let store = b.create_block();
        let read = b.create_block();
        let is_store = b
            .ins()
            .icmp_imm_u(IntCC::Equal, op, i64::from(MemOp::St as u8));
        b.ins().brif(is_store, store, &[], read, &[]);
        b.switch_to_block(store);
        let value = lane_byte(b, offset_of!(CohortFile, value), k);
        b.ins().istore8(flags, value, cell, 0);
        b.ins().jump(performed, &[]);
        b.switch_to_block(read);
        let is_ld_sync = b
            .ins()
            .icmp_imm_u(IntCC::Equal, op, i64::from(MemOp::LdSync as u8));
        let open = b.create_block();
        b.ins().brif(is_ld_sync, open, &[], performed, &[]);
        // An `ld_sync` opens the bank's sequence: core k holds `addr` from this cycle.
        b.switch_to_block(open);
        let addr = b.ins().ishl_imm_u(bank, 8);
        let addr = b.ins().bor(addr, row);
        let id = b.ins().iconst(types::I32, k as i64);
        let at = entry(b, holder, bank, 1);
        b.ins().istore8(flags, id, at, 0);
        let at = entry(b, locked, bank, 2);
        b.ins().istore16(flags, addr, at, 0);
        let at = entry(b, since, bank, 8);
        b.ins().store(flags, cycle, at, 0);
        b.ins().istore16(flags, addr, held, (2 * k) as i32);
        let opened_gate = b.ins().bor(g, bits);
        b.def_var(gate, opened_gate);
        count_one(b, acquisitions, bank, ptr);
        let o = b.use_var(opened);
        let o = b.ins().bor(o, bank_bit);
        b.def_var(opened, o);
        b.ins().jump(performed, &[]);

        // `st_sync` of the byte core k holds, on a bank where no core sleeps: it writes the
        // byte and closes the sequence, waking no one. Any other goes to the port (a fault,
        // or sleepers to wake).
        b.switch_to_block(st_sync);
        let addr = b.ins().ishl_imm_u(bank, 8);
        let addr = b.ins().bor(addr, row);
        let mine = b.ins().uload16(types::I32, flags, held, (2 * k) as i32);
        let wrong = b.ins().icmp(IntCC::NotEqual, mine, addr);
        let at = entry(b, waiters, bank, 2);
        let sleepers = b.ins().uload16(types::I32, flags, at, 0);
        let sleepers = b.ins().icmp_imm_u(IntCC::NotEqual, sleepers, 0);
        let not_here = b.ins().bor(wrong, sleepers);
        let close = b.create_block();
        b.ins().brif(not_here, slow, &[], close, &[]);
        b.switch_to_block(close);
        let value = lane_byte(b, offset_of!(CohortFile, value), k);
        b.ins().istore8(flags, value, cell, 0);
        count_one(b, accesses, bank, ptr);
        let at = entry(b, since, bank, 8);
        let from = b.ins().load(types::I64, flags, at, 0);
        let held_for = b.ins().isub(cycle, from);
        let at = entry(b, hold_cycles, bank, 8);
        let sum = b.ins().load(types::I64, flags, at, 0);
        let sum = b.ins().iadd(sum, held_for);
        b.ins().store(flags, sum, at, 0);
        let none = b.ins().iconst(types::I32, NO_HOLDER);
        let at = entry(b, holder, bank, 1);
        b.ins().istore8(flags, none, at, 0);
        let none = b.ins().iconst(types::I32, NOT_HELD);
        b.ins().istore16(flags, none, held, (2 * k) as i32);
        let closed_gate = b.ins().band_not(g, bits);
        b.def_var(gate, closed_gate);
        b.ins().jump(performed, &[]);

        b.switch_to_block(performed);
        let all = b.ins().iconst(types::I8, -1);
        b.ins().store(
            flags,
            all,
            file,
            (offset_of!(CohortFile, performed) + k) as i32,
        );
        b.ins().jump(next, &[]);
        b.switch_to_block(next);
    }
    put_back(b);
    b.ins().jump(done, &[]);
}
