//! Translation of one instruction frame into Cranelift IR and native code. What each
//! instruction computes comes from the machine's one definition
//! (`gpu16_machine::engine::semantics::step`) executed in the [`Lowering`] domain, whose values are
//! Cranelift SSA values; this file adds only the frame's control structure, the watchdog
//! checks and the memory paths.
//!
//! The frame is cut into straight-line segments. A segment starts at a leader (IP 0, a bnz
//! target, the IP after a bnz or ready) and runs to the next terminator (bnz, ready) or
//! leader. Each segment starts with one watchdog check, `cycle + len > limit`; when it fails
//! the compiled code hands the core back to the interpreter at that IP, which then checks
//! the limit before every instruction. The watchdog is therefore exact while the common
//! case costs one compare per segment. A core parked at a memory instruction resumes after
//! it, inside a segment: each such resume point has an entry of its own with a check for the
//! rest of its segment. Resuming anywhere else (never done by the run loop, which parks only
//! at memory instructions or at the limit) goes to the interpreter, so every IP is a valid
//! entry.
//!
//! The 16 registers live in Cranelift variables; only registers the frame writes are stored
//! back, and only on exit. A plain ld or st is performed inline when its cycle is below its
//! bank's bound in the port's [`DirectAccess`] (nothing could make it stall, fault or be
//! seen out of order); otherwise, and for every ld_sync and st_sync, the code calls
//! `runtime::mem_access` through a plain function address, so no symbol resolution is
//! involved.
//!
//! A debugger's search for breakpoints gets forms of its own ([`shape_stopping`], used by
//! this translation and the lockstep one): each breakpoint's IP starts a segment whose
//! check always hands the core to the interpreter, for that one instruction
//! (`interpreted::handed_over_for`), which notes that the core came to it. A search for
//! watched writes runs the plain forms, whose inline accesses the port then refuses, so
//! every write takes the memory's commit path.

use crate::abi::ScalarExit;
use crate::abi::{signature, AbiFn, AccessReply, Callbacks, EntryFn, MemAccessFn};
use crate::error::JitError;
use cranelift_codegen::control::ControlPlane;
use cranelift_codegen::ir::condcodes::IntCC;
use cranelift_codegen::ir::{
    types, Block, BlockArg, InstBuilder, JumpTableData, MemFlagsData, Signature, Value,
};
use cranelift_codegen::isa::{OwnedTargetIsa, TargetFrontendConfig};
use cranelift_codegen::settings::{self, Configurable};
use cranelift_codegen::Context;
use cranelift_frontend::{FunctionBuilder, FunctionBuilderContext, Variable};
use cranelift_jit::{JITBuilder, JITModule};
use cranelift_module::{default_libcall_names, FuncId, Module, ModuleReloc, ModuleRelocTarget};
use gpu16_machine::engine::backend::{CoreState, DirectAccess};
use gpu16_machine::engine::isa::{Instr, MemOp, FRAME_INSTRS, REGS};
use gpu16_machine::engine::semantics::{step, Effect, Semantics};
use std::mem::offset_of;

/// How hard Cranelift works on a frame.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum OptLevel {
    /// No IR optimization: the fastest compile, `jit`'s default, which compiles every frame
    /// at its first issue (short runs and the fuzzer pay for each compile).
    None,
    /// Cranelift's `speed` optimizations (value numbering and loop-invariant hoisting over
    /// the e-graph) for every form: about 10% more compile time.
    Speed,
    /// `Speed` for the lockstep and cohort forms, `None` for the per-core and MCST slot
    /// forms: `auto`'s default ([`crate::JitOptions::hot`]). The vector forms repeat
    /// constants and lane tests that `None` leaves in place, and ran 3-10% fewer host
    /// instructions optimised; the slot form ran 7% slower (criterion, `mcst-compute`).
    Vectors,
}

impl OptLevel {
    /// Whether code of `form` compiles with Cranelift's `speed` optimizations.
    fn optimises(self, form: Form) -> bool {
        match self {
            OptLevel::None => false,
            OptLevel::Speed => true,
            OptLevel::Vectors => matches!(form, Form::Lanes | Form::Cohort),
        }
    }
}

/// Whether Cranelift supports this host, without building a compiler.
pub(crate) fn check_host() -> Result<(), JitError> {
    cranelift_native::builder()
        .map(drop)
        .map_err(|e| JitError::Host(format!("host not supported by cranelift: {e}")))
}

/// This host's target for compiled code, with Cranelift's `speed` optimizations or none.
fn target(speed: bool) -> Result<OwnedTargetIsa, JitError> {
    let mut flags = settings::builder();
    let set = |f: &mut settings::Builder, k: &str, v: &str| {
        f.set(k, v)
            .map_err(|e| JitError::Host(format!("cranelift flag {k}={v}: {e}")))
    };
    // cranelift-jit needs absolute relocations for out-of-module calls.
    set(&mut flags, "use_colocated_libcalls", "false")?;
    set(&mut flags, "is_pic", "false")?;
    set(
        &mut flags,
        "opt_level",
        if speed { "speed" } else { "none" },
    )?;
    // The verifier roughly doubles compile time; keep it where bugs are hunted.
    let verify = if cfg!(debug_assertions) {
        "true"
    } else {
        "false"
    };
    set(&mut flags, "enable_verifier", verify)?;
    cranelift_native::builder()
        .map_err(|e| JitError::Host(format!("host not supported by cranelift: {e}")))?
        .finish(settings::Flags::new(flags))
        .map_err(|e| JitError::Host(format!("cranelift isa: {e}")))
}

/// Owns the target description and the reusable IR buffers.
pub(crate) struct Compiler {
    pub(crate) isa: OwnedTargetIsa,
    /// The same target with Cranelift's `speed` optimizations, for the forms `opt` optimises.
    speed: Option<OwnedTargetIsa>,
    opt: OptLevel,
    /// The runtimes' callbacks the code calls, by address.
    pub(crate) callbacks: Callbacks,
    ctx: Context,
    fctx: FunctionBuilderContext,
}

impl Compiler {
    /// A compiler for this host whose code calls `callbacks`.
    pub(crate) fn new(opt: OptLevel, callbacks: Callbacks) -> Result<Compiler, JitError> {
        let isa = target(false)?;
        let speed = match opt {
            OptLevel::None => None,
            OptLevel::Speed | OptLevel::Vectors => Some(target(true)?),
        };
        Ok(Compiler {
            isa,
            speed,
            opt,
            callbacks,
            ctx: Context::new(),
            fctx: FunctionBuilderContext::new(),
        })
    }

    /// Fresh IR buffers, after a compile that did not finish.
    pub(crate) fn reset(&mut self) {
        self.ctx = Context::new();
        self.fctx = FunctionBuilderContext::new();
    }

    /// A fresh module sharing this compiler's target.
    pub(crate) fn new_module(&self) -> JITModule {
        JITModule::new(JITBuilder::with_isa(
            self.isa.clone(),
            default_libcall_names(),
        ))
    }

    /// Compile `instrs` into `module` and return the finalized entry address; the code
    /// hands a core to the interpreter before each IP of `stop_ips` (see [`shape_stopping`]).
    pub(crate) fn compile(
        &mut self,
        module: &mut JITModule,
        instrs: &[Instr; FRAME_INSTRS],
        stop_ips: u16,
    ) -> Result<*const u8, JitError> {
        let code = self.scalar_code(instrs, stop_ips)?;
        place(module, &code)
    }

    /// The machine code of the per-core form of `instrs`, not yet in any module.
    pub(crate) fn scalar_code(
        &mut self,
        instrs: &[Instr; FRAME_INSTRS],
        stop_ips: u16,
    ) -> Result<MachineCode, JitError> {
        let sig = self.signature_of::<EntryFn>();
        let (mem_access, config) = (self.callbacks.mem_access, self.isa.frontend_config());
        self.codegen(Form::Scalar, sig, |ctx, fctx| {
            build(ctx, fctx, instrs, stop_ips, mem_access, config)
        })
    }

    /// A function of signature `sig` whose body `build` writes (the code of `form`),
    /// compiled to machine code that any module of this target can take ([`place`]).
    /// Needs no module, so it can run on a thread of its own.
    pub(crate) fn codegen(
        &mut self,
        form: Form,
        sig: Signature,
        build: impl FnOnce(&mut Context, &mut FunctionBuilderContext),
    ) -> Result<MachineCode, JitError> {
        self.ctx.func.signature = sig.clone();
        build(&mut self.ctx, &mut self.fctx);
        let isa = match &self.speed {
            Some(speed) if self.opt.optimises(form) => speed,
            _ => &self.isa,
        };
        let code = match self.ctx.compile(&**isa, &mut ControlPlane::default()) {
            Ok(_) => {
                let compiled = self.ctx.compiled_code().expect("just compiled");
                let relocs = compiled
                    .buffer
                    .relocs()
                    .iter()
                    .map(|r| ModuleReloc::from_mach_reloc(r, &self.ctx.func, placeholder()))
                    .collect();
                Ok(MachineCode {
                    form,
                    sig,
                    bytes: compiled.code_buffer().to_vec(),
                    alignment: u64::from(compiled.buffer.alignment),
                    relocs,
                })
            }
            Err(e) => Err(JitError::Codegen(format!("compile: {:?}", e.inner))),
        };
        self.ctx.clear();
        self.ctx.func.signature.call_conv = self.isa.default_call_conv();
        code
    }

    /// The signature of boundary function type `F` (an entry or a callback) on this
    /// target: derived from the type, so the code and its caller agree.
    pub(crate) fn signature_of<F: AbiFn>(&self) -> Signature {
        signature::<F>(self.isa.default_call_conv(), self.isa.pointer_type())
    }
}

/// The function id machine code names itself by before it is placed in a module, which
/// knows the real one (`u32::MAX` is reserved by Cranelift, so one below it).
fn placeholder() -> FuncId {
    FuncId::from_u32(u32::MAX - 1)
}

/// The forms of a frame's code, each with its own entry type in [`crate::abi`].
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Form {
    /// One core at a time (this file).
    Scalar,
    /// A group of cores at one IP in lockstep (`lanes_compile.rs`).
    Lanes,
    /// Cores of one frame, each at its own IP (`cohort_compile.rs`).
    Cohort,
    /// An MCST frame's register-only slots (`slots_compile.rs`).
    Slots,
}

/// One function's machine code, compiled but in no module yet: what a compiler on another
/// thread hands to the thread that owns the modules (`Send`, unlike a module).
pub(crate) struct MachineCode {
    /// Which form of a frame's code it is.
    pub(crate) form: Form,
    sig: Signature,
    bytes: Vec<u8>,
    alignment: u64,
    /// Offsets inside the function name `placeholder()`.
    relocs: Vec<ModuleReloc>,
}

/// Put `code` into `module` as a new function and return its finalized entry address.
pub(crate) fn place(module: &mut JITModule, code: &MachineCode) -> Result<*const u8, JitError> {
    let id = module
        .declare_anonymous_function(&code.sig)
        .map_err(|e| JitError::Codegen(format!("declare: {e}")))?;
    let relocs: Vec<ModuleReloc> = code
        .relocs
        .iter()
        .map(|r| match r.name {
            ModuleRelocTarget::FunctionOffset(f, offset) if f == placeholder() => ModuleReloc {
                name: ModuleRelocTarget::FunctionOffset(id, offset),
                ..r.clone()
            },
            _ => r.clone(),
        })
        .collect();
    module
        .define_function_bytes(id, code.alignment, &code.bytes, &relocs)
        .map_err(|e| JitError::Codegen(format!("define: {e:?}")))?;
    module
        .finalize_definitions()
        .map_err(|e| JitError::Codegen(format!("finalize: {e}")))?;
    Ok(module.get_finalized_function(id))
}

/// Static facts about a frame that shape its code (per-core and lockstep alike).
pub(crate) struct Shape {
    pub(crate) leader: [bool; FRAME_INSTRS],
    /// The IP after a memory instruction, where a parked core resumes.
    pub(crate) resume: [bool; FRAME_INSTRS],
    /// For a leader or resume point: the IP of its segment's last instruction.
    pub(crate) end: [usize; FRAME_INSTRS],
    /// Registers some instruction reads, or writes.
    pub(crate) read: u16,
    pub(crate) written: u16,
    /// IPs before which the code hands a core to the interpreter ([`shape_stopping`]).
    pub(crate) stop_ips: u16,
}

impl Shape {
    /// Whether the segment check at `ip` always hands the core over: a debugger's stop.
    pub(crate) fn stops_at(&self, ip: usize) -> bool {
        self.stop_ips >> ip & 1 != 0
    }
}

pub(crate) fn shape(instrs: &[Instr; FRAME_INSTRS]) -> Shape {
    shape_stopping(instrs, 0)
}

/// The shape of a frame's code for a debugger's search that stops at the IPs of
/// `stop_ips` (`Port::stops`): each is a leader, so a core comes to it only through its
/// segment's check, and there the code hands the core to the interpreter, which executes
/// that one instruction and notes that the core came to it (`Port::came_to_stop`). Every
/// other instruction runs compiled, so a search runs at compiled speed up to its stop.
pub(crate) fn shape_stopping(instrs: &[Instr; FRAME_INSTRS], stop_ips: u16) -> Shape {
    let mut leader: [bool; FRAME_INSTRS] = std::array::from_fn(|i| stop_ips >> i & 1 != 0);
    leader[0] = true;
    let mut resume = [false; FRAME_INSTRS];
    let mut read = 0u16;
    let mut written = 0u16;
    let mark = |l: &mut [bool; FRAME_INSTRS], i: usize| {
        if i < FRAME_INSTRS {
            l[i] = true;
        }
    };
    for (i, instr) in instrs.iter().enumerate() {
        read |= instr.reads();
        written |= instr.writes();
        match *instr {
            Instr::Mem { .. } => mark(&mut resume, i + 1),
            Instr::Bnz { target, .. } => {
                mark(&mut leader, usize::from(target & 0xF));
                mark(&mut leader, i + 1);
            }
            Instr::Ready => mark(&mut leader, i + 1),
            _ => {}
        }
    }
    let end = std::array::from_fn(|l| {
        let mut e = l;
        while !terminates(&instrs[e]) && e + 1 < FRAME_INSTRS && !leader[e + 1] {
            e += 1;
        }
        e
    });
    Shape {
        leader,
        resume,
        end,
        read,
        written,
        stop_ips,
    }
}

/// From `ip`, a point where compiled code cannot be entered (a core stopped mid-segment at
/// a checkpoint), the cycles of its segment's rest: after them the core stands at a leader,
/// or has parked at a memory instruction, or its part has ended. `None` at an entry point.
/// The condition of the segment check at `ip`, which hands the core to the interpreter:
/// the segment, ending in cycle `after`, would cross the watchdog's `limit`; or, at a
/// debugger's stop, always.
pub(crate) fn segment_check(
    b: &mut FunctionBuilder,
    shape: &Shape,
    ip: usize,
    after: Value,
    limit: Value,
) -> Value {
    if shape.stops_at(ip) {
        b.ins().iconst(types::I8, 1)
    } else {
        b.ins().icmp(IntCC::UnsignedGreaterThan, after, limit)
    }
}

/// For each IP of a frame of shape `s`: the instructions from it to its segment's end,
/// which the interpreter runs for a core handed over there before compiled code can take
/// it again (`interpreted::handed_over_for`); 0 at an entry point (a leader or resume
/// point), where there is no such end. Worked out once a frame's code, with it
/// (`cache::Code::to_entry`): an entry that hands lanes over asks at every exit.
pub(crate) fn instructions_to_entry(s: &Shape) -> [u8; FRAME_INSTRS] {
    std::array::from_fn(|ip| {
        if s.leader[ip] || s.resume[ip] {
            0
        } else {
            (s.end[ip] + 1 - ip) as u8
        }
    })
}

fn terminates(instr: &Instr) -> bool {
    matches!(instr, Instr::Bnz { .. } | Instr::Ready)
}

fn build(
    ctx: &mut Context,
    fctx: &mut FunctionBuilderContext,
    instrs: &[Instr; FRAME_INSTRS],
    stop_ips: u16,
    mem_access: MemAccessFn,
    module_config: TargetFrontendConfig,
) {
    let ptr = module_config.pointer_type();
    let shape = shape_stopping(instrs, stop_ips);
    let mut b = FunctionBuilder::new(&mut ctx.func, fctx);
    let flags = MemFlagsData::trusted();

    let entry = b.create_block();
    b.append_block_params_for_function_params(entry);
    let exit = b.create_block();
    let exit_ip = b.append_block_param(exit, types::I32);
    let exit_code = b.append_block_param(exit, types::I32);
    let exit_cycle = b.append_block_param(exit, types::I64);
    let check: Vec<Block> = (0..FRAME_INSTRS).map(|_| b.create_block()).collect();
    let body: Vec<Block> = (0..FRAME_INSTRS).map(|_| b.create_block()).collect();
    let slow: Vec<Block> = (0..FRAME_INSTRS).map(|_| b.create_block()).collect();

    b.switch_to_block(entry);
    let params = b.block_params(entry).to_vec();
    let (core, cctx, limit, direct) = (params[0], params[1], params[2], params[3]);
    let regs: Vec<Variable> = (0..REGS).map(|_| b.declare_var(types::I8)).collect();
    for (r, &var) in regs.iter().enumerate() {
        // Unused registers never enter the code; written-only ones still need a value on
        // every exit path, so they are loaded too.
        if (shape.read | shape.written) & (1 << r) != 0 {
            let v = b.ins().load(
                types::I8,
                flags,
                core,
                (offset_of!(CoreState, regs) + r) as i32,
            );
            b.def_var(var, v);
        }
    }
    let cycle = b.declare_var(types::I64);
    let c0 = b
        .ins()
        .load(types::I64, flags, core, offset_of!(CoreState, cycle) as i32);
    b.def_var(cycle, c0);
    let id = b
        .ins()
        .uload8(types::I32, flags, core, offset_of!(CoreState, id) as i32);
    let id = b.ins().ireduce(types::I8, id);
    let core_id = b.ins().band_imm_u(id, 0xF);
    let inline = has_plain_access(instrs).then(|| Inline::load(&mut b, direct, ptr));
    let ip = b
        .ins()
        .uload8(types::I32, flags, core, offset_of!(CoreState, ip) as i32);
    let ip = b.ins().band_imm_u(ip, 0xF);
    dispatch_on_ip(&mut b, ip, |i| {
        if shape.leader[i] || shape.resume[i] {
            check[i]
        } else {
            slow[i]
        }
    });

    let shim_ref = b.import_signature(signature::<MemAccessFn>(
        module_config.default_call_conv,
        ptr,
    ));
    let to_exit = |b: &mut FunctionBuilder, ip: usize, code: u32, cyc: Value| {
        jump_to_exit(b, exit, ip, code, cyc, &[]);
    };

    for i in 0..FRAME_INSTRS {
        // Hand the core to the interpreter at IP i with the state as it is.
        b.switch_to_block(slow[i]);
        let c = b.use_var(cycle);
        to_exit(&mut b, i, ScalarExit::Slow.code(), c);
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
        // The IP whose cycle is `c0`: the segment's start, then its last resume point.
        let mut piece = i;
        // What the segment's last instruction asks for: where control goes next.
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
            let k = j - piece;
            let effect = step(
                instrs[j],
                &mut Lowering {
                    b: &mut b,
                    regs: &regs,
                    core_id,
                },
            );
            last = effect;
            let Effect::Memory(access) = effect else {
                continue;
            };
            let op = access.op;
            let at = b.ins().iadd_imm_u(c0, cycles(k));
            let lo = b.ins().uextend(types::I32, access.row);
            let bank = b.ins().uextend(types::I32, access.bank);
            let val = match access.value {
                Some(v) => b.ins().uextend(types::I32, v),
                None => b.ins().iconst(types::I32, 0),
            };
            // The byte loaded (or stored) arrives here from either path.
            let done = b.create_block();
            let got = b.append_block_param(done, types::I32);
            let call_block = b.create_block();
            let park = b.create_block();
            if let (Some(fast), MemOp::Ld | MemOp::St) = (&inline, op) {
                let direct_block = b.create_block();
                let ask = b.create_block();
                let ok = fast.may_proceed(&mut b, at, bank);
                b.ins().brif(ok, direct_block, &[], ask, &[]);
                b.set_cold_block(ask);
                b.switch_to_block(ask);
                // Out of turn: the port could only say park.
                let late = fast.out_of_turn(&mut b, at, bank);
                b.ins().brif(late, park, &[], call_block, &[]);
                b.set_cold_block(call_block);
                b.switch_to_block(direct_block);
                let v = fast.perform(&mut b, op, bank, lo, val);
                b.ins().jump(done, &[BlockArg::Value(v)]);
            } else {
                b.ins().jump(call_block, &[]);
            }
            b.switch_to_block(call_block);
            let opv = b.ins().iconst(types::I32, i64::from(op as u8));
            let f = b.ins().iconst(ptr, mem_access as usize as i64);
            // The emulated registers go through the core's state around the call, so none
            // is live across it: the fast paths keep them in caller-saved machine registers
            // instead of the stack.
            let live = shape.read | shape.written;
            for (n, &var) in regs.iter().enumerate() {
                if live & (1 << n) != 0 {
                    let v = b.use_var(var);
                    b.ins().store(flags, v, core, reg_offset(n));
                }
            }
            let call = b
                .ins()
                .call_indirect(shim_ref, f, &[cctx, at, opv, lo, bank, val]);
            let res = b.inst_results(call)[0];
            for (n, &var) in regs.iter().enumerate() {
                if live & (1 << n) != 0 {
                    let v = b.ins().load(types::I8, flags, core, reg_offset(n));
                    b.def_var(var, v);
                }
            }
            let parked = b.ins().icmp_imm_u(
                IntCC::UnsignedGreaterThanOrEqual,
                res,
                AccessReply::first_park(),
            );
            b.ins()
                .brif(parked, park, &[], done, &[BlockArg::Value(res)]);
            b.switch_to_block(park);
            to_exit(&mut b, j, ScalarExit::Parked.code(), at);
            b.switch_to_block(done);
            let byte = b.ins().ireduce(types::I8, got);
            access.complete(
                &mut Lowering {
                    b: &mut b,
                    regs: &regs,
                    core_id,
                },
                byte,
            );
        }
        // Without resume points the check's sum is already the cycle after the segment.
        let c1 = if piece == i {
            after
        } else {
            b.ins().iadd_imm_u(c0, cycles(end + 1 - piece))
        };
        b.def_var(cycle, c1);
        // Where control goes after the segment's last instruction.
        let fall = |b: &mut FunctionBuilder| {
            if end == FRAME_INSTRS - 1 {
                to_exit(b, end, ScalarExit::Ended.code(), c1);
            } else {
                b.ins().jump(check[end + 1], &[]);
            }
        };
        match last {
            Effect::Ready => to_exit(&mut b, end, ScalarExit::Ready.code(), c1),
            Effect::Branch { cond, target } => {
                let not_taken = b.create_block();
                b.ins()
                    .brif(cond, check[usize::from(target)], &[], not_taken, &[]);
                b.switch_to_block(not_taken);
                fall(&mut b);
            }
            Effect::Next | Effect::Memory(_) => fall(&mut b),
        }
    }

    b.switch_to_block(exit);
    if let Some(fast) = &inline {
        fast.flush(&mut b);
    }
    for (r, &var) in regs.iter().enumerate() {
        if shape.written & (1 << r) != 0 {
            let v = b.use_var(var);
            b.ins()
                .store(flags, v, core, (offset_of!(CoreState, regs) + r) as i32);
        }
    }
    b.ins()
        .store(flags, exit_cycle, core, offset_of!(CoreState, cycle) as i32);
    b.ins()
        .istore8(flags, exit_ip, core, offset_of!(CoreState, ip) as i32);
    b.ins().return_(&[exit_code]);

    // Sealing only now: loop heads get their back edges before their phis are fixed.
    b.seal_all_blocks();
    b.finalize(module_config);
}

/// Jump to `entry(ip)` for the IP in `ip` (an `i32` already masked to 0..15): the one
/// dispatch every translation of a frame starts with.
pub(crate) fn dispatch_on_ip(b: &mut FunctionBuilder, ip: Value, entry: impl Fn(usize) -> Block) {
    let targets: Vec<_> = (0..FRAME_INSTRS)
        .map(|i| b.func.dfg.block_call(entry(i), &[]))
        .collect();
    // A BlockCall owns its argument list, which SSA construction extends: the default
    // entry must be its own BlockCall, not a copy of entry 0's.
    let default = b.func.dfg.block_call(entry(0), &[]);
    let jt = b.create_jump_table(JumpTableData::new(default, &targets));
    b.ins().br_table(ip, jt);
}

/// Jump to `exit`, whose parameters are the IP, the exit code, the cycle and then `rest`.
pub(crate) fn jump_to_exit(
    b: &mut FunctionBuilder,
    exit: Block,
    ip: usize,
    code: u32,
    cycle: Value,
    rest: &[Value],
) {
    let ip = b.ins().iconst(types::I32, ip as i64);
    let code = b.ins().iconst(types::I32, i64::from(code));
    let args: Vec<BlockArg> = [ip, code, cycle]
        .into_iter()
        .chain(rest.iter().copied())
        .map(BlockArg::Value)
        .collect();
    b.ins().jump(exit, &args);
}

/// The cycles `n` instructions take.
pub(crate) fn cycles(n: usize) -> i64 {
    (n as u64 * CoreState::INSTRUCTION_CYCLES) as i64
}

/// Whether the frame has a plain ld or st, so its code reads the `DirectAccess` views.
pub(crate) fn has_plain_access(instrs: &[Instr; FRAME_INSTRS]) -> bool {
    instrs.iter().any(|i| {
        matches!(
            i,
            Instr::Mem {
                op: MemOp::Ld | MemOp::St,
                ..
            }
        )
    })
}

/// Where register `n` lives in `CoreState`.
fn reg_offset(n: usize) -> i32 {
    (offset_of!(CoreState, regs) + n) as i32
}

/// Plain ld/st performed by compiled code: the `DirectAccess` views, loaded at entry.
struct Inline {
    until: Value,
    bytes: Value,
    direct: Value,
    ptr: types::Type,
    /// Direct accesses not yet added to the counters: `pending` of them, all to bank
    /// `pending_bank`, each one access in its bank's counter by the memory's one rule
    /// (`gpu16_machine::engine::memory`, "Counting accesses"; `flush` adds them at
    /// `DirectAccess::accesses`). Counting in a register keeps a store-to-load chain through the
    /// counter off every access; the counters are read only after compiled code returns, so
    /// the sum is added on exit and when the bank changes.
    pending_bank: Variable,
    pending: Variable,
}

impl Inline {
    fn load(b: &mut FunctionBuilder, direct: Value, ptr: types::Type) -> Inline {
        let flags = MemFlagsData::trusted();
        let until = b
            .ins()
            .load(ptr, flags, direct, offset_of!(DirectAccess, until) as i32);
        let bytes = b
            .ins()
            .load(ptr, flags, direct, offset_of!(DirectAccess, bytes) as i32);
        let pending_bank = b.declare_var(types::I32);
        let pending = b.declare_var(types::I64);
        let zero32 = b.ins().iconst(types::I32, 0);
        let zero64 = b.ins().iconst(types::I64, 0);
        b.def_var(pending_bank, zero32);
        b.def_var(pending, zero64);
        Inline {
            until,
            bytes,
            direct,
            ptr,
            pending_bank,
            pending,
        }
    }

    /// The address of `table[bank]`, a 16-entry array of u64 (`bank` is i32, 0..15).
    fn bank_slot(&self, b: &mut FunctionBuilder, table: Value, bank: Value) -> Value {
        let off = b.ins().uextend(self.ptr, bank);
        let off = b.ins().ishl_imm_u(off, 3);
        b.ins().iadd(table, off)
    }

    /// The `DirectAccess` pointer at `offset`, loaded where it is needed: only cold paths
    /// use these, so they need not occupy a register.
    fn view(&self, b: &mut FunctionBuilder, offset: usize) -> Value {
        b.ins().load(
            self.ptr,
            MemFlagsData::trusted(),
            self.direct,
            offset as i32,
        )
    }

    /// True (nonzero) when the plain access in cycle `at` (i64) to `bank` (i32, 0..15)
    /// proceeds exactly as `Port::access` would perform it.
    fn may_proceed(&self, b: &mut FunctionBuilder, at: Value, bank: Value) -> Value {
        let slot = self.bank_slot(b, self.until, bank);
        let until = b.ins().load(types::I64, MemFlagsData::trusted(), slot, 0);
        b.ins().icmp(IntCC::UnsignedLessThan, at, until)
    }

    /// True (nonzero) when the access in cycle `at` to `bank` is out of turn: the port
    /// would park it.
    fn out_of_turn(&self, b: &mut FunctionBuilder, at: Value, bank: Value) -> Value {
        let turn = self.view(b, offset_of!(DirectAccess, turn));
        let slot = self.bank_slot(b, turn, bank);
        let bound = b.ins().load(types::I64, MemFlagsData::trusted(), slot, 0);
        b.ins().icmp(IntCC::UnsignedGreaterThanOrEqual, at, bound)
    }

    /// Perform the access of byte `lo` of `bank` (both i32) and count it; returns the
    /// byte (i32).
    fn perform(
        &self,
        b: &mut FunctionBuilder,
        op: MemOp,
        bank: Value,
        lo: Value,
        val: Value,
    ) -> Value {
        let flags = MemFlagsData::trusted();
        // The cell of (bank, lo): `gpu16_machine::engine::memory::cell_index`, row-major.
        let index = b.ins().ishl_imm_u(lo, 4);
        let index = b.ins().bor(index, bank);
        let index = b.ins().uextend(self.ptr, index);
        let at = b.ins().iadd(self.bytes, index);
        let v = if op == MemOp::Ld {
            b.ins().uload8(types::I32, flags, at, 0)
        } else {
            b.ins().istore8(flags, val, at, 0);
            val
        };
        let last = b.use_var(self.pending_bank);
        let same = b.ins().icmp(IntCC::Equal, bank, last);
        let flush = b.create_block();
        let count = b.create_block();
        b.ins().brif(same, count, &[], flush, &[]);
        b.set_cold_block(flush);
        b.switch_to_block(flush);
        self.flush(b);
        b.def_var(self.pending_bank, bank);
        let zero = b.ins().iconst(types::I64, 0);
        b.def_var(self.pending, zero);
        b.ins().jump(count, &[]);
        b.switch_to_block(count);
        let n = b.use_var(self.pending);
        let n = b.ins().iadd_imm_u(n, 1);
        b.def_var(self.pending, n);
        v
    }

    /// Add the pending count to its bank's counter.
    fn flush(&self, b: &mut FunctionBuilder) {
        let flags = MemFlagsData::trusted();
        let accesses = self.view(b, offset_of!(DirectAccess, accesses));
        let bank = b.use_var(self.pending_bank);
        let n = b.use_var(self.pending);
        let slot = self.bank_slot(b, accesses, bank);
        let total = b.ins().load(types::I64, flags, slot, 0);
        let total = b.ins().iadd(total, n);
        b.ins().store(flags, total, slot, 0);
    }
}

/// The Cranelift domain of the one instruction definition: register values are `i8` SSA
/// values of the frame's function, held in one variable a register.
pub(crate) struct Lowering<'a, 'f> {
    pub(crate) b: &'a mut FunctionBuilder<'f>,
    pub(crate) regs: &'a [Variable],
    pub(crate) core_id: Value,
}

impl Semantics for Lowering<'_, '_> {
    type V = Value;
    fn reg(&mut self, r: u8) -> Value {
        self.b.use_var(self.regs[usize::from(r & 0xF)])
    }
    fn set_reg(&mut self, r: u8, v: Value) {
        self.b.def_var(self.regs[usize::from(r & 0xF)], v);
    }
    fn konst(&mut self, k: u8) -> Value {
        self.b.ins().iconst(types::I8, i64::from(k))
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
        // `step` never passes a zero divisor, so this cannot trap.
        self.b.ins().udiv(x, y)
    }
    fn uge(&mut self, x: Value, y: Value) -> Value {
        self.b.ins().icmp(IntCC::UnsignedGreaterThanOrEqual, x, y)
    }
    fn is_zero(&mut self, x: Value) -> Value {
        self.b.ins().icmp_imm_u(IntCC::Equal, x, 0)
    }
    fn select(&mut self, cond: Value, yes: Value, no: Value) -> Value {
        self.b.ins().select(cond, yes, no)
    }
    fn mul_wide(&mut self, x: Value, y: Value) -> (Value, Value) {
        let x = self.b.ins().uextend(types::I16, x);
        let y = self.b.ins().uextend(types::I16, y);
        let p = self.b.ins().imul(x, y);
        let lo = self.b.ins().ireduce(types::I8, p);
        let hi = self.b.ins().ushr_imm_u(p, 8);
        let hi = self.b.ins().ireduce(types::I8, hi);
        (lo, hi)
    }
    fn shl(&mut self, x: Value, k: u8) -> Value {
        self.b.ins().ishl_imm_u(x, i64::from(k & 7))
    }
    fn shr(&mut self, x: Value, k: u8) -> Value {
        self.b.ins().ushr_imm_u(x, i64::from(k & 7))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Hand-worked from `OptLevel`'s docs: `Vectors` optimises the lockstep and cohort forms
    /// only, `Speed` every form, `None` none.
    #[test]
    fn each_level_optimises_the_forms_its_docs_name() {
        let forms = [Form::Scalar, Form::Lanes, Form::Cohort, Form::Slots];
        let by = |level: OptLevel| forms.map(|f| level.optimises(f));
        assert_eq!(by(OptLevel::None), [false, false, false, false]);
        assert_eq!(by(OptLevel::Speed), [true, true, true, true]);
        assert_eq!(by(OptLevel::Vectors), [false, true, true, false]);
    }

    #[test]
    fn segments_end_at_terminators_and_leaders_not_at_memory() {
        let mut f = [Instr::Nop; FRAME_INSTRS];
        f[3] = Instr::Bnz { a: 1, target: 1 };
        f[6] = Instr::Mem {
            op: MemOp::Ld,
            a: 0,
            hi: 0,
            r: 2,
        };
        f[9] = Instr::Ready;
        let s = shape(&f);
        let leaders: Vec<usize> = (0..16).filter(|&i| s.leader[i]).collect();
        assert_eq!(leaders, vec![0, 1, 4, 10]);
        let resumes: Vec<usize> = (0..16).filter(|&i| s.resume[i]).collect();
        assert_eq!(resumes, vec![7]);
        assert_eq!(s.end[0], 0);
        assert_eq!(s.end[1], 3);
        // A memory instruction does not end its segment; a parked core re-enters at 7.
        assert_eq!(s.end[4], 9);
        assert_eq!(s.end[7], 9);
        assert_eq!(s.end[10], 15);
        assert_eq!(s.read, 0b11);
        assert_eq!(s.written, 1 << 2);
    }
}
