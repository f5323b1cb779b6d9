//! The interpreted forms of a group and of a cohort that the compiled engines fall back
//! on, and the driver between the two forms ([`run_lockstep`]): a group of cores at one IP
//! stepped together ([`interpret_group`]), and a cohort of cores of one frame, each at its
//! own IP ([`interpret_cohort`]). They run where compiled code has no form of its own (a
//! cohort with two or fewer cores awake, a frame whose form did not compile, `auto`'s cold
//! frames), and carry the engines' speed tuning (`QUIET_CYCLES`, `IDLE_CYCLES`), which the
//! reference interpreter, one core at a time, does without. How long a core handed over by
//! compiled code stays here is [`handed_over_for`]'s to say. Each instruction means what
//! `semantics::execute` says; [`GroupInterpreter`] runs them as a backend of their own,
//! which the behaviour and differential suites hold to the interpreter.

use crate::abi::lanes_of;
use gpu16_interp::Interpreter;
use gpu16_machine::engine::backend::{
    Backend, BackendError, CoreExit, CoreState, GroupShape, Port, PortAccess,
};
use gpu16_machine::engine::isa::Flow;
use gpu16_machine::engine::isa::{Instr, FRAME_INSTRS};
use gpu16_machine::engine::semantics::execute;
use gpu16_machine::engine::semantics::Effect;
use gpu16_machine::engine::slot_run::SlotCompiler;
use gpu16_machine::InstrFrame;

/// How many cycles the interpreter takes a core (or group) handed over at `ip` for (see
/// `ScalarExit::Slow`): one instruction at a debugger's stop (`Port::stops`), else to the
/// next entry point (`to_entry`, from `compile::instructions_to_entry`), or, at an entry
/// point, up to the limit (`None`).
pub(crate) fn handed_over_for(
    to_entry: &[u8; FRAME_INSTRS],
    ip: u8,
    port: &Port<'_>,
) -> Option<u64> {
    if port.stops() >> (ip & 0xF) & 1 != 0 {
        return Some(CoreState::INSTRUCTION_CYCLES);
    }
    let n = to_entry[usize::from(ip & 0xF)];
    (n != 0).then(|| u64::from(n) * CoreState::INSTRUCTION_CYCLES)
}

/// A backend that runs the cores of a group together through the crate's private
/// `interpret_group`, and is the reference interpreter otherwise (it wraps one, so a frame
/// is prepared and a lone core run by the interpreter's own code): the interpreted form of
/// the lockstep engine, with exactly the interpreter's results, name included (the tests
/// compare whole reports).
#[derive(Clone, Debug, Default)]
pub struct GroupInterpreter(Interpreter);

/// No compiled slots: the MCST slot engine steps every slot.
impl SlotCompiler for GroupInterpreter {}

impl Backend for GroupInterpreter {
    type Code = <Interpreter as Backend>::Code;

    fn name(&self) -> &'static str {
        self.0.name()
    }

    fn prepare(&mut self, frame: &InstrFrame) -> Result<Self::Code, BackendError> {
        self.0.prepare(frame)
    }

    fn run_core(
        &mut self,
        code: &Self::Code,
        core: &mut CoreState,
        port: &mut Port<'_>,
    ) -> CoreExit {
        self.0.run_core(code, core, port)
    }

    fn takes_groups(&self) -> bool {
        true
    }

    fn takes_group(&self, _: GroupShape) -> bool {
        true
    }

    fn run_group(
        &mut self,
        code: &Self::Code,
        group: u16,
        cores: &mut [CoreState; 16],
        port: &mut Port<'_>,
    ) -> [Option<CoreExit>; 16] {
        interpret_group(code, group, cores, port)
    }
}

/// Run the cores of `group` (all in one cycle) together, one cycle at a time, until they
/// split, park, end or reach the cycle limit (see `Backend::run_group`). In each cycle the
/// cores execute their instructions in ascending id, so their accesses reach memory in the
/// (cycle, core id) order. At one IP they run as a group; where some fall asleep on a lock,
/// or where they start at several IPs, they run as a cohort ([`interpret_cohort`]) until
/// they converge again.
pub fn interpret_group(
    code: &[Instr; FRAME_INSTRS],
    group: u16,
    cores: &mut [CoreState; 16],
    port: &mut Port<'_>,
) -> [Option<CoreExit>; 16] {
    let mut exits: [Option<CoreExit>; 16] = [None; 16];
    run_lockstep(
        group,
        cores,
        port,
        &mut exits,
        |g, cores, port, exits| step_group(code, g, cores, port, exits),
        |awake, asleep, cores, port, exits| {
            interpret_cohort(code, awake, asleep, cores, port, exits)
        },
    );
    exits
}

/// A group form for [`run_lockstep`]: runs cores at one IP as a group; `None` when they
/// stopped, or the cores awake and those asleep where some fell asleep on a lock.
pub trait GroupForm:
    FnMut(u16, &mut [CoreState; 16], &mut Port<'_>, &mut [Option<CoreExit>; 16]) -> Option<(u16, u16)>
{
}
impl<F> GroupForm for F where
    F: FnMut(
        u16,
        &mut [CoreState; 16],
        &mut Port<'_>,
        &mut [Option<CoreExit>; 16],
    ) -> Option<(u16, u16)>
{
}

/// A cohort form for [`run_lockstep`], with [`interpret_cohort`]'s contract: runs the cores
/// `awake` (and those `asleep` in the port) each at its own IP; the cores as a group again
/// (`Some`), or `None` once they stopped.
pub trait CohortForm:
    FnMut(u16, u16, &mut [CoreState; 16], &mut Port<'_>, &mut [Option<CoreExit>; 16]) -> Option<u16>
{
}
impl<F> CohortForm for F where
    F: FnMut(
        u16,
        u16,
        &mut [CoreState; 16],
        &mut Port<'_>,
        &mut [Option<CoreExit>; 16],
    ) -> Option<u16>
{
}

/// Drive `cores` (all in one cycle) between group form and cohort form until they stop.
/// `group_form` runs cores at one IP as a group (the interpreter's [`interpret_group`]
/// steps, or an engine's compiled form of them); it returns `None` when they stopped, or
/// the cores awake and those asleep where some fell asleep on a lock, which then go on
/// as a cohort through `cohort_form` ([`interpret_cohort`], or an engine's compiled
/// form of it). Exits go into `exits`.
pub fn run_lockstep(
    cores_mask: u16,
    cores: &mut [CoreState; 16],
    port: &mut Port<'_>,
    exits: &mut [Option<CoreExit>; 16],
    mut group_form: impl GroupForm,
    mut cohort_form: impl CohortForm,
) {
    let (ip, cycle) = (
        cores[first_of(cores_mask)].ip,
        cores[first_of(cores_mask)].cycle,
    );
    let (mut awake, mut asleep) = (cores_mask, 0u16);
    // Over all 16 cores without a branch: asked at every entry, where a loop over the
    // group's cores mispredicts its exit (a short task's group is entered once a task).
    let mut apart = 0u16;
    for (l, core) in cores.iter().enumerate() {
        apart |= u16::from(core.ip != ip || core.cycle != cycle) << l;
    }
    if apart & cores_mask == 0 {
        match group_form(cores_mask, cores, port, exits) {
            Some(split) => (awake, asleep) = split,
            None => return,
        }
    }
    loop {
        let Some(group) = cohort_form(awake, asleep, cores, port, exits) else {
            return;
        };
        match group_form(group, cores, port, exits) {
            Some(split) => (awake, asleep) = split,
            None => return,
        }
    }
}

/// [`interpret_group`]'s steps in group form. Returns `None` when the group stopped (its
/// cores' exits are in `exits`), or the cores still awake and those asleep where some
/// slept in a cycle that every other core completed.
fn step_group(
    code: &[Instr; FRAME_INSTRS],
    group: u16,
    cores: &mut [CoreState; 16],
    port: &mut Port<'_>,
    exits: &mut [Option<CoreExit>; 16],
) -> Option<(u16, u16)> {
    let limit = port.limit();
    // Fixed for the port's life; asked once, the loop pays no call where no debugger stops.
    let stops = port.stops();
    loop {
        let lead = group.trailing_zeros() as usize;
        if cores[lead].cycle >= limit {
            for l in lanes_of(group) {
                exits[l] = Some(CoreExit::Parked);
            }
            return None;
        }
        let instr = code[usize::from(cores[lead].ip & 0xF)];
        if stops != 0 {
            port.came_to_stop(cores[lead].id, cores[lead].ip, cores[lead].cycle);
        }
        let mut flows = [Flow::Next; 16];
        let (mut parked, mut asleep) = (0u16, 0u16);
        for l in lanes_of(group) {
            let core = &mut cores[l];
            let effect = execute(instr, &mut core.regs, core.id);
            if let Effect::Memory(access) = effect {
                let value = access.value.unwrap_or(0);
                match port.access_or_sleep(core.id, core.cycle, access.op, access.address(), value)
                {
                    PortAccess::Done(byte) => access.complete_bytes(&mut core.regs, core.id, byte),
                    PortAccess::Slept => {
                        asleep |= 1 << l;
                        continue;
                    }
                    PortAccess::Parked => {
                        // This core and every later one wait for their turn.
                        parked = group & !((1 << l) - 1);
                        break;
                    }
                }
            }
            flows[l] = effect.flow();
        }
        let mut split = parked != 0 || asleep != 0;
        let mut ended = 0u16;
        let flow = flows[(group & !asleep).trailing_zeros() as usize & 0xF];
        for l in lanes_of(parked) {
            exits[l] = Some(CoreExit::Parked);
        }
        for l in lanes_of(asleep) {
            exits[l] = Some(CoreExit::Asleep);
        }
        for l in lanes_of(group & !parked & !asleep) {
            if flows[l] != flow {
                split = true;
            }
            if let Some(exit) = cores[l].retire(flows[l]) {
                exits[l] = Some(exit);
                ended |= 1 << l;
            }
        }
        if asleep != 0 && parked == 0 {
            return Some((group & !asleep & !ended, asleep));
        }
        if split || ended != 0 {
            return None;
        }
    }
}

/// Cycles a cohort runs on with no core falling asleep or taking part in an atomic
/// sequence before it hands its cores back to the run loop: contention is over, and the
/// cores, each at its own IP, run faster alone. While they still open and close sequences
/// the cohort goes on: handed back, cores at several memory instructions of one cycle take
/// turns one access per trip through the run loop until one parks and the cohort forms
/// again (a histogram whose cores keep a fixed distance never sleeps, and ran 1.3x slower
/// handed back every 64 cycles).
const QUIET_CYCLES: u64 = 64;

/// Cycles a cohort of a frame without atomic sequences, whose cores may share a bank, runs
/// on with none of them touching memory before it hands them back. Cores at several IPs that keep touching one bank take turns at
/// every access: interpreted together they ran 4x faster than compiled groups taking
/// turns through the run loop. Where accesses are further apart than this, the compiled
/// groups' runs between turns are long enough to win.
const IDLE_CYCLES: u64 = 16;

/// Run a cohort: the cores of a group that parted ways because some of them fell asleep on
/// a lock, or cores of one frame at several IPs that take turns on memory, each at its own
/// IP. The cores `awake` are all in one cycle, or the next (those join from it); those
/// `asleep` sleep in the port. Each cycle, every awake core executes its own instruction, in
/// ascending id, so accesses still reach memory in the (cycle, core id) order; a sleeper
/// woken by a `st_sync` of the cohort retries in the cycle [`Port::retry_cycle`] gives it,
/// in its turn within that cycle, and may fall asleep again. Sleepers cost nothing.
///
/// Returns the cores as a group again (`Some`) once none sleeps and all are at one IP, or
/// `None` once the cohort stopped: an access parked, every core slept, a core ended
/// holding a lock, the cycle limit, or `QUIET_CYCLES` (64) without a sleep or an atomic access
/// (in a frame without atomic sequences: at once, or `IDLE_CYCLES` (16) without an access
/// where the cores may share a bank). Exits go into
/// `exits`: `None` for a core that goes on from its IP and cycle.
pub fn interpret_cohort(
    code: &[Instr; FRAME_INSTRS],
    awake: u16,
    asleep: u16,
    cores: &mut [CoreState; 16],
    port: &mut Port<'_>,
    exits: &mut [Option<CoreExit>; 16],
) -> Option<u16> {
    let (mut awake, mut asleep) = (awake, asleep);
    let limit = port.limit();
    // Fixed for the port's life (see `step_group`).
    let stops = port.stops();
    if awake == 0 {
        return None;
    }
    // With atomic sequences, sleeps and sequences keep a cohort going; without them,
    // accesses where the cores may share a bank do.
    let sync = code.iter().any(Instr::is_sync);
    let contended = !sync && port.cores_share_banks(awake | asleep);
    let mut quiet = if sync { 0 } else { QUIET_CYCLES };
    let (mut idle, idle_cycles) = (0u64, if contended { IDLE_CYCLES } else { 0 });
    let mut cycle = lanes_of(awake).map(|l| cores[l].cycle).min().unwrap_or(0);
    // Cores a cycle behind the first join it in their cycle.
    let mut joining = 0u16;
    for l in lanes_of(awake) {
        if cores[l].cycle != cycle {
            debug_assert_eq!(cores[l].cycle, cycle + 1, "core {l} of a cohort");
            joining |= 1 << l;
        }
    }
    awake &= !joining;
    loop {
        if asleep == 0 && joining == 0 {
            let ip = cores[first_of(awake)].ip;
            if awake != 0 && lanes_of(awake).all(|l| cores[l].ip == ip) {
                return Some(awake);
            }
        }
        if awake == 0 || (quiet >= QUIET_CYCLES && idle >= idle_cycles) {
            // Cores yet to join stay where they are, which `exits` says (`None`).
            return None;
        }
        if cycle >= limit {
            for l in lanes_of(awake) {
                exits[l] = Some(CoreExit::Parked);
            }
            return None;
        }
        let (mut todo, mut next) = (awake, joining);
        joining = 0;
        let mut stop = false;
        quiet += 1;
        idle += 1;
        while todo != 0 {
            let l = todo.trailing_zeros() as usize;
            todo &= todo - 1;
            let core = &mut cores[l];
            debug_assert_eq!(core.cycle, cycle, "core {l} of a cohort");
            if stops != 0 {
                port.came_to_stop(core.id, core.ip, cycle);
            }
            let effect = execute(code[usize::from(core.ip & 0xF)], &mut core.regs, core.id);
            if let Effect::Memory(access) = effect {
                let value = access.value.unwrap_or(0);
                // An atomic sequence opened or closed (or a sleep, below) keeps it going,
                // and so does any access of a contended cohort without sequences.
                quiet *= u64::from(!access.op.is_sync());
                idle *= u64::from(!contended);
                match port.access_or_sleep(core.id, cycle, access.op, access.address(), value) {
                    PortAccess::Done(byte) => access.complete_bytes(&mut core.regs, core.id, byte),
                    PortAccess::Slept => {
                        asleep |= 1 << l;
                        exits[l] = Some(CoreExit::Asleep);
                        quiet = 0;
                        continue;
                    }
                    PortAccess::Parked => {
                        // This core waits for its turn; the later ones of this cycle have
                        // not acted yet and go on from where they are.
                        exits[l] = Some(CoreExit::Parked);
                        return None;
                    }
                }
                let woken = port.take_running_wakes();
                if woken != 0 {
                    asleep &= !woken;
                    for w in lanes_of(woken) {
                        exits[w] = None;
                        let at = port.retry_cycle(w as u8);
                        cores[w].cycle = at;
                        if at == cycle {
                            todo |= 1 << w;
                        } else {
                            next |= 1 << w;
                        }
                    }
                }
            }
            let core = &mut cores[l];
            match core.retire(effect.flow()) {
                Some(exit) => {
                    exits[l] = Some(exit);
                    stop |= port.holds(l as u8);
                }
                None => next |= 1 << l,
            }
        }
        awake = next;
        cycle += 1;
        if stop {
            return None;
        }
    }
}

fn first_of(lanes: u16) -> usize {
    lanes.trailing_zeros() as usize & 0xF
}
