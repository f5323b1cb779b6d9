//! The compiled cohort's runtime: cores of one frame, each at its own IP, run as the lanes
//! of 16-byte vectors (SIMT style: a per-lane IP and an awake mask, no reconvergence
//! stack). Each cycle compiled code executes every live IP's instruction for the lanes at
//! that IP under a mask, then hands the cycle's memory instructions to [`cohort_access`],
//! which performs them in ascending core id through the port (those that proceed in one
//! `Port::offer_lanes` call), puts lanes that stall in their turn on a lock held by another
//! lane to sleep, and retries woken lanes in the cycle the spec gives (a frame without
//! atomic sequences performs its plain accesses in code below `Port::plain_accesses_until`,
//! which [`run`] asks at entry; a frame with them, those the lock book lets proceed below
//! `Port::sync_accesses_until`, which [`run`] asks at entry and [`cohort_access`] after
//! each call). This file owns the
//! two callbacks (the file they work on is `abi`'s), and turning the code's exit back into
//! each core's state; the translation is `cohort_compile.rs`.
//!
//! Contract: [`run`] is `interpreted::interpret_cohort` compiled: the same cores, cycles,
//! registers, memory, sleeps and exits. It never hands back for quiet (the interpreter's
//! `QUIET_CYCLES` tuning): compiled, the cores run on until they converge, stop or park.

use crate::abi::{lanes_of, CohortAccess, CohortCtx, CohortExit, CohortFile};
use crate::cache::CohortCode;
use gpu16_machine::engine::backend::{CoreExit, CoreState, LaneAccesses, Port, PortAccess};
use gpu16_machine::engine::isa::{address, Instr, MemOp, FRAME_INSTRS};
use gpu16_machine::engine::semantics::execute;
use gpu16_machine::engine::semantics::Effect;
use std::panic::{catch_unwind, resume_unwind, AssertUnwindSafe};

/// What became of a cohort run compiled.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Cohort {
    /// The cores as a group again.
    Converged(u16),
    /// Stopped: every core's exit is in `exits`.
    Stopped,
    /// Few cores awake: go on through `interpret_cohort` with the cores `awake` (in one
    /// cycle or, some, the next) and those `asleep` in the port.
    Sparse { awake: u16, asleep: u16 },
}

crate::abi::callback_abi! {
    /// Perform the memory instructions of `lanes` in `cycle` for compiled code, in ascending
    /// core id, as `interpret_cohort` does: a lane that stalls in its turn on a lock another
    /// lane holds sleeps, and a sleeper woken by a `st_sync` retries in its turn of this cycle
    /// or from the next, as the port says. Fills `loaded` and `performed`. Never unwinds: a
    /// panic is stored and reported as a park, then re-raised by [`run`].
    pub(crate) fn cohort_access(
        ctx: *mut CohortCtx<'_, '_>,
        file: *mut CohortFile,
        lanes: u32,
        cycle: u64,
    ) -> u32 {
        // SAFETY: compiled code passes back the pointers `run` gave it: a `CohortCtx` and a
        // `CohortFile` on `run`'s stack that outlive the call, which compiled code does not
        // touch while it is suspended in this call.
        let (ctx, file) = unsafe { (&mut *ctx, &mut *file) };
        if ctx.panic.is_some() {
            return CohortAccess::Parked.code();
        }
        // SAFETY: `ctx.port` and `ctx.cores` come from the exclusive borrows `run` holds for
        // the whole entry; compiled code touches neither, so these are the only references.
        let (port, cores) = unsafe { (&mut *ctx.port, &mut *ctx.cores) };
        let result = catch_unwind(AssertUnwindSafe(|| {
            // Whole arrays in and out: compiled code reads them as vectors, which a store of
            // each byte would keep waiting on.
            // Compiled code performed the lanes below `lanes` itself (`cohort_sync`), and
            // notes the sequences it opened for the port.
            let (mut awake, mut loaded, mut performed) = (file.awake, file.loaded, file.performed);
            port.note_opened(std::mem::take(&mut file.opened) as u16);
            file.retried = 0;
            let mut todo = lanes as u16;
            let mut status = CohortAccess::Done.code();
            // Each lane's op, for the lanes that access memory.
            let mut ops = [MemOp::Ld; 16];
            let op_of =
                |l: usize| MemOp::from_u8(file.op[l]).expect("compiled code stores a MemOp");
            for l in lanes_of(todo) {
                ops[l] = op_of(l);
            }
            while todo != 0 {
                let l = todo.trailing_zeros() as usize;
                let op = ops[l];
                // The lanes from l on take the port's short paths as far as they go: a run of
                // plain ones while no lock is open (a plain access wakes no one), else each
                // while it proceeds, up to one that wakes a sleeper.
                let mut done = 0;
                if !op.is_sync() {
                    let mut run = 0u16;
                    let mut rest = todo;
                    while rest != 0 {
                        let k = rest.trailing_zeros() as usize;
                        if ops[k] != op {
                            break;
                        }
                        run |= 1 << k;
                        rest &= rest - 1;
                    }
                    done = port.plain_lanes(LaneAccesses {
                        lanes: run,
                        cycle,
                        op,
                        banks: &file.bank,
                        rows: &file.row,
                        values: &file.value,
                        loaded: &mut loaded,
                        performed: &mut performed,
                    });
                }
                if done == 0 {
                    done = port.offer_lanes(LaneAccesses {
                        lanes: todo,
                        cycle,
                        op: &ops,
                        banks: &file.bank,
                        rows: &file.row,
                        values: &file.value,
                        loaded: &mut loaded,
                        performed: &mut performed,
                    });
                }
                let waker = if done != 0 {
                    todo &= !done;
                    for (k, a) in awake.iter_mut().enumerate() {
                        *a |= if done & (1 << k) != 0 { 0xFF } else { 0 };
                    }
                    15 - done.leading_zeros() as usize
                } else {
                    todo &= todo - 1;
                    let addr = address(file.bank[l], file.row[l]);
                    match port.access_or_sleep(l as u8, cycle, op, addr, file.value[l]) {
                        PortAccess::Done(byte) => {
                            loaded[l] = byte;
                            performed[l] = 0xFF;
                            awake[l] = 0xFF;
                        }
                        PortAccess::Slept => {
                            awake[l] = 0;
                            file.asleep |= 1 << l;
                            cores[l].instructions += cycle - ctx.awake_from[l];
                            cores[l].cycle = cycle;
                            continue;
                        }
                        PortAccess::Parked => {
                            file.parked = l as u32;
                            status = CohortAccess::Parked.code();
                            break;
                        }
                    }
                    l
                };
                let mut woken = port.take_running_wakes();
                while woken != 0 {
                    let w = woken.trailing_zeros() as usize;
                    woken &= woken - 1;
                    file.asleep &= !(1 << w);
                    let at = port.retry_cycle(w as u8);
                    cores[w].cycle = at;
                    ctx.awake_from[w] = at;
                    if at == cycle {
                        debug_assert!(
                            w > waker,
                            "a lane woken in its cycle retries after its waker"
                        );
                        todo |= 1 << w;
                        // It retries the access it slept on, whose operands are still in the
                        // file: compiled code did not run it this cycle.
                        ops[w] = op_of(w);
                        file.retried |= 1 << w;
                    } else {
                        awake[w] = 0xFF;
                    }
                }
            }
            file.awake = awake;
            file.loaded = loaded;
            file.performed = performed;
            if ctx.sync {
                // A wake-up moved horizons.
                file.sync_until = port.sync_accesses_until(ctx.cohort);
            }
            status
        }));
        result.unwrap_or_else(|payload| {
            ctx.panic = Some(payload);
            CohortAccess::Parked.code()
        })
    }
}

crate::abi::callback_abi! {
    /// Lanes `ended` end their parts with the instruction of the cycle before `after` (those
    /// of `ready` by `ready`). Returns 1 if one of them holds a lock, so that the run loop takes
    /// over after this cycle, as `interpret_cohort` stops.
    pub(crate) fn cohort_end(
        ctx: *mut CohortCtx<'_, '_>,
        file: *mut CohortFile,
        ended: u32,
        ready: u32,
        after: u64,
    ) -> u32 {
        // SAFETY: as in `cohort_access`.
        let (ctx, file) = unsafe { (&mut *ctx, &mut *file) };
        if ctx.panic.is_some() {
            return 1;
        }
        // SAFETY: as in `cohort_access`.
        let (port, cores) = unsafe { (&mut *ctx.port, &mut *ctx.cores) };
        let mut holds = false;
        let mut awake = file.awake;
        let mut m = ended as u16;
        while m != 0 {
            let l = m.trailing_zeros() as usize;
            m &= m - 1;
            awake[l] = 0;
            cores[l].instructions += after - ctx.awake_from[l];
            cores[l].cycle = after;
            holds |= port.holds(l as u8);
        }
        file.awake = awake;
        file.ended |= ended;
        file.by_ready |= ready & ended;
        u32::from(holds)
    }
}

/// Run a cohort in `code`'s compiled form: `interpret_cohort`'s contract (see the module
/// doc). The cores `awake` are in one cycle or, some of them, the next; those `asleep`
/// sleep in the port.
pub(crate) fn run(
    code: &CohortCode,
    instrs: &[Instr; FRAME_INSTRS],
    awake: u16,
    asleep: u16,
    cores: &mut [CoreState; 16],
    port: &mut Port<'_>,
    exits: &mut [Option<CoreExit>; 16],
) -> Cohort {
    if awake == 0 {
        return Cohort::Stopped;
    }
    let first = lanes_of(awake).map(|l| cores[l].cycle).min().unwrap_or(0);
    let joining = lanes_of(awake).fold(0u16, |m, l| {
        debug_assert!(cores[l].cycle <= first + 1, "core {l} of a cohort");
        m | (u16::from(cores[l].cycle != first) << l)
    });
    let all = awake | asleep;
    let sync = instrs.iter().any(Instr::is_sync);
    let by_lane = |mask: u16| -> [u8; 16] {
        std::array::from_fn(|k| if mask & (1 << k) != 0 { 0xFF } else { 0 })
    };
    let mut file = CohortFile {
        regs: [[0; 16]; 16],
        ips: std::array::from_fn(|k| cores[k].ip),
        awake: by_lane(awake & !joining),
        join: by_lane(joining),
        row: [0; 16],
        bank: [0; 16],
        value: [0; 16],
        op: [0; 16],
        loaded: [0; 16],
        performed: [0; 16],
        cycle: first,
        asleep: u32::from(asleep),
        executed: 0,
        parked: 0,
        retried: 0,
        ended: 0,
        by_ready: 0,
        plain_until: port.plain_accesses_until(all),
        sync_until: if sync {
            port.sync_accesses_until(all)
        } else {
            0
        },
        opened: 0,
        cells: port.cell_views(),
    };
    let mut m = code.live;
    while m != 0 {
        let r = m.trailing_zeros() as usize;
        m &= m - 1;
        file.regs[r] = std::array::from_fn(|k| cores[k].regs[r]);
    }
    // A sleeper's access, for its retry: its registers and IP have not moved since it
    // stalled, so executing its instruction again gives the same operands.
    for k in lanes_of(asleep) {
        let mut regs = cores[k].regs;
        let effect = execute(instrs[usize::from(cores[k].ip & 0xF)], &mut regs, k as u8);
        let Effect::Memory(access) = effect else {
            unreachable!("core {k} sleeps at a memory instruction")
        };
        file.row[k] = access.row;
        file.bank[k] = access.bank;
        file.value[k] = access.value.unwrap_or(0);
        file.op[k] = access.op as u8;
    }
    let limit = port.limit();
    let awake_from = std::array::from_fn(|k| cores[k].cycle);
    let mut ctx = CohortCtx {
        port,
        cores,
        _borrows: std::marker::PhantomData,
        awake_from,
        cohort: all,
        sync,
        panic: None,
    };
    // SAFETY: `code.entry` was emitted by `cohort_compile::build` with exactly the
    // `CohortEntryFn` signature and is kept executable by the module `code` holds alive.
    // `file` and `ctx` are locals that outlive the call; compiled code reads and writes
    // `file`'s fields at the `repr(C)` offsets it was compiled with (vector accesses at
    // 16-byte aligned offsets of a 16-byte aligned struct), and hands `ctx` and `file` to
    // `cohort_access` and `cohort_end`, which catch every panic, so nothing unwinds
    // through it. In cycles below `file.plain_until` it reads and writes bytes and
    // counters through `file.cells`, which stay valid while `port` lives (`CellViews`),
    // at cell indices below 4096 and bank counters below 16, and in cycles below
    // `file.sync_until` the lock book's cells there too, at bank and core indices below 16;
    // no reference to those cells is held across the call (the callbacks reach them only
    // through `port`, while the code is suspended in them).
    let rc = unsafe { (code.entry)(&mut file, &mut ctx, limit) };
    if let Some(payload) = ctx.panic.take() {
        resume_unwind(payload);
    }
    let awake_from = ctx.awake_from;
    // SAFETY: compiled code has returned; `ctx.port` is again the only path to the port.
    unsafe { &mut *ctx.port }.note_opened(file.opened as u16);
    let exit = CohortExit::from_code(rc);
    let c = file.cycle;
    let (ended, asleep) = (file.ended as u16, file.asleep as u16);
    let now_awake = lanes_mask(&file.awake) | lanes_mask(&file.join);
    for k in lanes_of(all) {
        let core = &mut cores[k];
        let mut m = code.written;
        while m != 0 {
            let r = m.trailing_zeros() as usize;
            m &= m - 1;
            core.regs[r] = file.regs[r][k];
        }
        core.ip = file.ips[k];
        exits[k] = if ended & (1 << k) != 0 {
            Some(CoreExit::Ended {
                by_ready: file.by_ready & (1 << k) != 0,
            })
        } else if asleep & (1 << k) != 0 {
            Some(CoreExit::Asleep)
        } else {
            let parked = exit == CohortExit::Parked && file.parked as usize == k;
            let ran = u64::from(exit == CohortExit::Parked && file.executed & (1 << k) != 0);
            let last = awake_from[k].max(c + ran);
            core.instructions += last - awake_from[k];
            core.cycle = last;
            let limited = exit == CohortExit::Limit && lanes_mask(&file.awake) & (1 << k) != 0;
            (parked || limited).then_some(CoreExit::Parked)
        };
    }
    match exit {
        CohortExit::Converged => {
            debug_assert_eq!(now_awake, lanes_mask(&file.awake), "no lane joins");
            Cohort::Converged(now_awake)
        }
        CohortExit::Sparse => Cohort::Sparse {
            awake: now_awake,
            asleep,
        },
        _ => Cohort::Stopped,
    }
}

/// The lanes of a byte mask (0xFF where set) as a bit mask.
fn lanes_mask(bytes: &[u8; 16]) -> u16 {
    bytes
        .iter()
        .enumerate()
        .fold(0, |m, (k, &b)| m | (u16::from(b != 0) << k))
}
