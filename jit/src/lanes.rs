//! The lockstep engine's runtime: a group of cores (the same frame, IP and cycle) runs as
//! the lanes of 16-byte vectors, register r of core k being lane k of vector r. This file
//! owns the entry into a frame's lockstep code (with the bounds below which the code
//! performs accesses itself: own-bank rows, shared rows, and in a frame without atomic
//! sequences any plain access), the memory callback that performs one instruction's
//! accesses lane by lane in ascending core id past them, and turning the code's exit back
//! into each core's state. The translation itself is
//! in `lanes_compile.rs`. Where the group's cores part ways on a bank they share, or some
//! fall asleep on a lock, [`enter`] hands them to the cohort form (`cohort.rs`), or, with
//! two or fewer awake, to the interpreter's cohort, and takes them back once they
//! converge (`interpreted::run_lockstep` drives the two forms).

use crate::abi::SPARSE_LANES;
use crate::cache::{CohortCode, LaneCode};
use crate::cohort::Cohort;
use crate::interpreted::{handed_over_for, interpret_cohort, interpret_group, run_lockstep};
use crate::transpose::transpose;
use gpu16_machine::engine::backend::{CoreExit, CoreState, LaneAccesses, Port, PortAccess};
use gpu16_machine::engine::isa::{address, Flow, Instr, MemOp, FRAME_INSTRS};
use gpu16_machine::engine::memory::BankTally;
use std::panic::{catch_unwind, resume_unwind, AssertUnwindSafe};
use std::rc::Rc;

use crate::abi::{lanes_of, LaneCtx, LaneExit, LaneFile};

crate::abi::callback_abi! {
    /// Perform one memory instruction of the group for compiled code: lane by lane in
    /// ascending core id, until a lane cannot go now; a lane that stalls on a lock in its turn
    /// may sleep (`Port::access_or_sleep`), and the later ones go on. Fills `loaded` and
    /// `performed`; returns the mask of lanes that performed. Never unwinds: a panic is
    /// stored and reported as no lane performed, then re-raised by `enter`.
    pub(crate) fn lane_access(
        ctx: *mut LaneCtx<'_, '_>,
        file: *mut LaneFile,
        op: u32,
        cycle: u64,
    ) -> u32 {
        // SAFETY: compiled code passes back the pointers `enter` gave it: a `LaneCtx` and a
        // `LaneFile` on `enter`'s stack that outlive the call, which compiled code does not
        // touch while it is suspended in this call.
        let (ctx, file) = unsafe { (&mut *ctx, &mut *file) };
        if ctx.panic.is_some() {
            return 0;
        }
        // SAFETY: `ctx.port` comes from the exclusive borrow `enter` holds for the whole entry;
        // compiled code never touches the port, so this is the only reference to it.
        let port = unsafe { &mut *ctx.port };
        let result = catch_unwind(AssertUnwindSafe(|| {
            let op = MemOp::from_u8(op as u8).expect("compiled code passes a MemOp");
            file.count_rows();
            file.performed = [0; 16];
            // Plain accesses that are in turn, with no lock anywhere, take the short path.
            let plain = port.plain_lanes(LaneAccesses {
                lanes: file.mask as u16,
                cycle,
                op,
                banks: &file.bank,
                rows: &file.row,
                values: &file.value,
                loaded: &mut file.loaded,
                performed: &mut file.performed,
            });
            let mut done = u32::from(plain);
            let mut lanes = file.mask & !done;
            while lanes != 0 {
                let l = lanes.trailing_zeros() as usize;
                lanes &= lanes - 1;
                let addr = address(file.bank[l], file.row[l]);
                match port.access_or_sleep(l as u8, cycle, op, addr, file.value[l]) {
                    PortAccess::Done(byte) => {
                        file.loaded[l] = byte;
                        file.performed[l] = 0xFF;
                        done |= 1 << l;
                    }
                    // Asleep on a lock: the later lanes still act in this cycle.
                    PortAccess::Slept => {}
                    PortAccess::Parked => break,
                }
            }
            // A sync access (and the wake-ups of its close) may have moved the bound; a plain
            // access changes neither the gate nor a horizon.
            if op.is_sync() {
                file.rows_until = port.own_banks_until(file.mask as u16);
                if !file.shared.is_null() {
                    file.shared_until = port.shared_rows_until(file.mask as u16);
                }
            }
            done
        }));
        result.unwrap_or_else(|payload| {
            ctx.panic = Some(payload);
            0
        })
    }
}

crate::abi::callback_abi! {
    /// Lanes `leaving` of the group end their parts by `ready` at `ip`, `after` being the
    /// cycle after it; the group goes on without them. Called from compiled code where a `bnz`
    /// splits the group and its fall-through is `ready`.
    pub(crate) fn lane_leave(file: *mut LaneFile, leaving: u32, after: u64, ip: u32) {
        // SAFETY: compiled code passes back the `LaneFile` pointer `enter` gave it, to a local
        // that outlives the call and that compiled code does not touch during it.
        let file = unsafe { &mut *file };
        file.count_rows();
        let mut lanes = leaving & file.mask;
        file.left |= lanes;
        file.mask &= !lanes;
        while lanes != 0 {
            let l = lanes.trailing_zeros() as usize;
            lanes &= lanes - 1;
            file.left_cycle[l] = after;
            file.left_ip[l] = ip as u8;
            file.left_regs[l] = std::array::from_fn(|r| file.regs[r][l]);
            file.lanes[l] = 0;
        }
        if file.mask != 0 {
            file.lead = [file.mask.trailing_zeros() as u8; 16];
        }
    }
}

impl LaneFile {
    /// The group's registers as lanes: those of `live` (the only ones compiled code reads),
    /// gathered one by one when they are few, else all of them by a transposition. The
    /// own-bank bound is asked of the port only for a frame with memory instructions, and
    /// the shared-row bound only for one with the shared-row path: compiled code reads them
    /// nowhere else.
    // Inlined, so the file is built in the caller's frame rather than moved there.
    #[inline(always)]
    fn load(
        cores: &[CoreState; 16],
        group: u16,
        port: &Port<'_>,
        code: &LaneCode,
        shared: *mut [u64; 32],
    ) -> LaneFile {
        let (live, memory) = (code.live, code.memory);
        let lead = group.trailing_zeros() as usize;
        let (own_rows, shared_rows, plain) = if memory || code.shared_rows || code.plain_lanes {
            port.lockstep_bounds(group)
        } else {
            (0, 0, 0)
        };
        let mut file = LaneFile {
            regs: [[0; 16]; 16],
            lanes: std::array::from_fn(|k| if group & (1 << k) != 0 { 0xFF } else { 0 }),
            row: [0; 16],
            bank: [0; 16],
            value: [0; 16],
            loaded: [0; 16],
            performed: [0; 16],
            lead: [lead as u8; 16],
            cycle: cores[lead].cycle,
            left_cycle: [0; 16],
            left_ip: [0; 16],
            left_regs: [[0; 16]; 16],
            left: 0,
            mask: u32::from(group),
            done: 0,
            ip: u32::from(cores[lead].ip),
            cells: port.cell_views(),
            rows_until: if memory { own_rows } else { 0 },
            rows_done: 0,
            shared_until: if code.shared_rows { shared_rows } else { 0 },
            shared,
            shared_used: 0,
            rows_per_bank: BankTally::default(),
            plain_until: if code.plain_lanes { plain } else { 0 },
        };
        if gathers(live) {
            let mut m = live;
            while m != 0 {
                let r = m.trailing_zeros() as usize;
                m &= m - 1;
                file.regs[r] = std::array::from_fn(|k| cores[k].regs[r]);
            }
        } else {
            file.regs = transpose(&std::array::from_fn(|k| cores[k].regs));
        }
        file
    }

    /// Credit the row accesses compiled code counted to the banks they reached, by
    /// [`BankTally`]'s rule (one access per lane and row, in the bank the lane reached):
    /// own-bank rows and rotations from the group's lanes, which change only in
    /// `lane_leave`, so this runs before that, at every callback and at the end of the entry.
    fn count_rows(&mut self) {
        if self.rows_done == 0 && self.shared_used == 0 {
            return;
        }
        let mask = self.mask as u16;
        self.rows_per_bank.rotated_rows(mask, 0, self.rows_done);
        self.rows_done = 0;
        let mut used = std::mem::take(&mut self.shared_used);
        if used == 0 {
            return;
        }
        // SAFETY: compiled code marks an entry only in a frame with the shared-row path,
        // whose `shared` points at the counters `enter_once` keeps on its stack for the
        // whole entry; neither compiled code (suspended in a callback, or returned) nor
        // anything else touches them meanwhile.
        let counts = unsafe { &mut *self.shared };
        while used != 0 {
            let i = used.trailing_zeros() as usize;
            used &= used - 1;
            let n = std::mem::take(&mut counts[i]);
            if i < 16 {
                self.rows_per_bank.rotated_rows(mask, i, n);
            } else {
                self.rows_per_bank.broadcast_rows(mask, i - 16, n);
            }
        }
    }

    /// Write the group's lanes back, with the IP and cycle the code stopped at and the
    /// instructions it executed. Only the registers of `written` can have changed; with
    /// few `live` registers (see [`LaneFile::load`]) only those are scattered back.
    #[inline(always)]
    fn store(
        &self,
        cores: &mut [CoreState; 16],
        group: u16,
        ran: u64,
        (live, written): (u16, u16),
    ) {
        let by_core = (!gathers(live)).then(|| transpose(&self.regs));
        let left = self.left as u16;
        if by_core.is_none() {
            // Register by register over a fixed 16 lanes: a loop whose trip count never
            // changes, where a loop over each lane's written registers mispredicts its exit
            // at every lane (this runs at every exit of a short task's code).
            let staying = group & !left;
            let mut m = written;
            while m != 0 {
                let r = m.trailing_zeros() as usize;
                m &= m - 1;
                if staying == u16::MAX {
                    // The whole machine's group (a full-mask task): no lane to test.
                    for (core, &byte) in cores.iter_mut().zip(&self.regs[r]) {
                        core.regs[r] = byte;
                    }
                    continue;
                }
                for (k, core) in cores.iter_mut().enumerate() {
                    if staying & (1 << k) != 0 {
                        core.regs[r] = self.regs[r][k];
                    }
                }
            }
        }
        let (cycle, ip) = (self.cycle, self.ip as u8);
        let stop = |core: &mut CoreState| {
            core.cycle = cycle;
            core.ip = ip;
            core.instructions += ran;
        };
        if group == u16::MAX && left == 0 {
            // The whole machine's group (a full-mask task) with no lane gone: every core is
            // written, with no lane to test or loop exit to mispredict.
            for (k, core) in cores.iter_mut().enumerate() {
                if let Some(by_core) = &by_core {
                    core.regs = by_core[k];
                }
                stop(core);
            }
            return;
        }
        for k in lanes_of(group) {
            let core = &mut cores[k];
            match &by_core {
                _ if left & (1 << k) != 0 => {
                    let mut m = written;
                    while m != 0 {
                        let r = m.trailing_zeros() as usize;
                        m &= m - 1;
                        core.regs[r] = self.left_regs[k][r];
                    }
                }
                Some(by_core) => core.regs = by_core[k],
                None => {}
            }
            stop(core);
        }
    }
}

/// Whether a frame with `live` registers moves them one by one: cheaper than the two
/// transpositions of the whole register file for up to three of them (a register in and
/// out costs about 100 host instructions, the two SSE2 transpositions about 280).
fn gathers(live: u16) -> bool {
    live.count_ones() <= 3
}

/// Run `group` in `code`'s lockstep form (see `Backend::run_group`). Where some of its
/// cores fall asleep on a lock, or where they start at several IPs, they go on as a cohort
/// in the frame's compiled cohort form (`cohort.rs`, which `cohort` compiles on first
/// need; interpreted by `interpret_cohort` where it does not compile), and come back to
/// lockstep code once they converge again.
#[allow(clippy::too_many_arguments)]
pub(crate) fn enter(
    code: &LaneCode,
    instrs: &[Instr; FRAME_INSTRS],
    group: u16,
    cores: &mut [CoreState; 16],
    port: &mut Port<'_>,
    row_accesses: &mut u64,
    handed_over: &mut u64,
    mut cohort: impl FnMut() -> Option<Rc<CohortCode>>,
) -> [Option<CoreExit>; 16] {
    let mut exits: [Option<CoreExit>; 16] = [None; 16];
    let mut cohort_code: Option<Option<Rc<CohortCode>>> = None;
    run_lockstep(
        group,
        cores,
        port,
        &mut exits,
        |g, cores, port, exits| {
            enter_once(
                code,
                instrs,
                g,
                cores,
                port,
                (row_accesses, &mut *handed_over),
                exits,
            )
        },
        |awake, asleep, cores, port, exits| {
            // Few awake lanes go straight to the interpreter (see `SPARSE_LANES`).
            let dense = awake.count_ones() > SPARSE_LANES;
            let code = if dense {
                cohort_code.get_or_insert_with(&mut cohort).as_ref()
            } else {
                None
            };
            let (awake, asleep) = match code {
                Some(c) => match crate::cohort::run(c, instrs, awake, asleep, cores, port, exits) {
                    Cohort::Converged(group) => return Some(group),
                    Cohort::Stopped => return None,
                    Cohort::Sparse { awake, asleep } => (awake, asleep),
                },
                None => (awake, asleep),
            };
            interpret_cohort(instrs, awake, asleep, cores, port, exits)
        },
    );
    exits
}

/// One entry into compiled code for `group`. Returns `None` when the group stopped (its
/// cores' exits are in `exits`), or the cores awake and those asleep that go on as a
/// cohort: where some fell asleep on a lock in a memory instruction that every other core
/// performed, or where a `bnz` parted cores that may touch one bank.
fn enter_once(
    code: &LaneCode,
    instrs: &[Instr; FRAME_INSTRS],
    group: u16,
    cores: &mut [CoreState; 16],
    port: &mut Port<'_>,
    (row_accesses, handed_over): (&mut u64, &mut u64),
    exits: &mut [Option<CoreExit>; 16],
) -> Option<(u16, u16)> {
    // The shared-row counters, only for a frame whose code has that path.
    let mut shared = code.shared_rows.then_some([0u64; 32]);
    let shared_ptr = shared
        .as_mut()
        .map_or(std::ptr::null_mut(), |c| c as *mut [u64; 32]);
    let mut file = LaneFile::load(cores, group, port, code, shared_ptr);
    let start = file.cycle;
    let limit = port.limit();
    let port: *mut Port<'_> = port;
    let mut ctx = LaneCtx {
        port,
        _port: std::marker::PhantomData,
        panic: None,
    };
    // SAFETY: `code.entry` was emitted by `lanes_compile::build` with exactly the
    // `LaneEntryFn` signature and is kept executable by the module `code` holds alive.
    // `file` and `ctx` are locals that outlive the call; compiled code reads and writes
    // `file`'s fields at the `repr(C)` offsets it was compiled with (vector accesses at
    // 16-byte aligned offsets of a 16-byte aligned struct), the 16 bytes at
    // `file.cells.bytes + 16 * row` for a row byte and, below `file.plain_until`, the byte
    // at `16 * row + bank` and bank `bank`'s counter at `file.cells.accesses` (so within
    // the 4096 cells and 16 counters `Port::cell_views` points at, which the port keeps
    // alive and changes only through `Cell`s, and to which no reference is held across the
    // call), and hands
    // `ctx` and `file` to `lane_access`, which catches every panic, so nothing unwinds
    // through it. In a frame with the shared-row path it also writes the 32 counters at
    // `file.shared`, which `shared` holds for the whole call.
    let rc = unsafe { (code.entry)(&mut file, &mut ctx, limit) };
    if let Some(payload) = ctx.panic {
        resume_unwind(payload);
    }
    file.count_rows();
    // SAFETY: compiled code has returned; `ctx.port` is again the only path to the port.
    let port = unsafe { &mut *ctx.port };
    // Only a frame with memory instructions makes row accesses.
    if code.memory {
        port.count_accesses(&file.rows_per_bank);
        *row_accesses += file.rows_per_bank.total();
    }
    file.store(cores, group, file.cycle - start, (code.live, code.written));
    let left = file.left as u16 & group;
    for k in lanes_of(left) {
        let core = &mut cores[k];
        core.cycle = file.left_cycle[k];
        core.ip = file.left_ip[k];
        core.instructions -= file.cycle - start;
        core.instructions += file.left_cycle[k] - start;
        exits[k] = Some(CoreExit::Ended { by_ready: true });
    }
    let group = group & !left;
    let lanes = lanes_of(group);
    match LaneExit::from_code(rc) {
        exit @ (LaneExit::Ended | LaneExit::Ready) => {
            for k in lanes {
                exits[k] = Some(CoreExit::Ended {
                    by_ready: exit == LaneExit::Ready,
                });
            }
        }
        LaneExit::Parked => {
            let asleep = port.asleep() & group;
            let mut ended = 0u16;
            for k in lanes {
                exits[k] = if file.done & (1 << k) != 0 {
                    let exit = cores[k].retire(Flow::Next);
                    ended |= u16::from(exit.is_some()) << k;
                    exit
                } else if asleep & (1 << k) != 0 {
                    Some(CoreExit::Asleep)
                } else {
                    Some(CoreExit::Parked)
                };
            }
            let done = file.done as u16 & group;
            if asleep != 0 && group & !done & !asleep == 0 {
                return Some((done & !ended, asleep));
            }
        }
        LaneExit::Split => {
            let Instr::Bnz { target, .. } = instrs[file.ip as usize & 0xF] else {
                unreachable!("lockstep code splits only at a bnz")
            };
            let mut going = 0u16;
            for k in lanes {
                let flow = if file.done & (1 << k) != 0 {
                    Flow::Jump(target & 0xF)
                } else {
                    Flow::Next
                };
                exits[k] = cores[k].retire(flow);
                going |= u16::from(exits[k].is_none()) << k;
            }
            // Lanes that part ways but may touch one bank go on as a cohort, taking turns
            // on memory within each cycle, rather than one access per trip through the run
            // loop; lanes that keep apart run faster alone, each in its own straight code.
            if going != 0 && port.cores_share_banks(going) {
                return Some((going, 0));
            }
        }
        LaneExit::Slow if group != 0 => {
            // As in the per-core form (`runtime::enter`): from mid-segment, interpreted only
            // up to the next entry point.
            let count =
                |cores: &[CoreState; 16]| -> u64 { cores.iter().map(|c| c.instructions).sum() };
            let before = count(cores);
            let rest = match handed_over_for(&code.to_entry, file.ip as u8, port) {
                Some(n) => port.within(file.cycle.saturating_add(n), |port| {
                    interpret_group(instrs, group, cores, port)
                }),
                None => interpret_group(instrs, group, cores, port),
            };
            *handed_over += count(cores) - before;
            for k in lanes {
                exits[k] = rest[k];
            }
        }
        LaneExit::Slow => {}
    }
    None
}
