//! The task scheduler (TS): walks the program's frames, processes control frames (R0 init),
//! issues instruction frames as tasks on their cores, and enforces fences, core masks and
//! the issue policy with the timing model's latencies. It is the one scheduler of the
//! machine; every backend runs under it.
//!
//! The scheduler never guesses: cores run ahead of it, so a core's end may not be known yet.
//! A decision that depends on an unknown end returns `Blocked` with a lower bound on the
//! cycle of the next decision, and the run loop runs cores until the end is known. After an
//! issue, `TaskScheduler::next_start_bound` gives the loop such a bound without a step,
//! for a loop that defers its next one; `TaskScheduler::first_access_bound` gives the later
//! cycle before which no task to come can touch memory (its frame's first access).

use crate::config::{Config, IssuePolicy, TaskLog, Timing};
use crate::event_key::EventKey;
use crate::frame::{Fence, FrameKind, LoadError, FRAME_BYTES};
use crate::held::Held;
use crate::task_memory::{FrameSource, TaskMemory};
use std::collections::VecDeque;

/// Why the task scheduler waited before processing a frame.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum WaitCause {
    /// The frame's cores (its mask, or a CF's R0-init cores) were busy.
    CoresBusy,
    /// An earlier acq task was unfinished.
    Acquire,
    /// The frame is a rel task and earlier tasks were unfinished.
    Release,
}

impl WaitCause {
    /// A short name for reports and charts: `cores busy`, `acq fence` or `rel fence`.
    pub fn name(self) -> &'static str {
        match self {
            WaitCause::CoresBusy => "cores busy",
            WaitCause::Acquire => "acq fence",
            WaitCause::Release => "rel fence",
        }
    }
    pub(crate) fn index(self) -> usize {
        match self {
            WaitCause::CoresBusy => 0,
            WaitCause::Acquire => 1,
            WaitCause::Release => 2,
        }
    }
}

/// One issued task as the report shows it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct TaskRecord {
    /// Index of the instruction frame in the image.
    pub frame: usize,
    /// Its cores: bit k set for core k (the Core_Active_Vect of its control frame).
    pub mask: u16,
    /// The fence of its control frame.
    pub fence: Fence,
    /// First cycle of its code broadcast (the scheduler's decision).
    pub issue: u64,
    /// Cycle of its first instruction (for an empty mask: its last broadcast cycle).
    pub start: u64,
    /// Cycle of its last core's last instruction (for an empty mask: its last broadcast cycle).
    pub end: u64,
}

/// Aggregates over every task, kept whatever the task log.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct TaskSummary {
    /// Tasks issued: instruction frames the scheduler processed.
    pub tasks: u64,
    /// Control frames the scheduler processed.
    pub control_frames: u64,
    /// Tasks per fence kind: no, acq, rel.
    pub by_fence: [u64; 3],
    /// The task of the first instruction frame.
    pub first: Option<TaskRecord>,
    /// The task that ended last; of tasks that end in the same cycle, the one issued last.
    pub last: Option<TaskRecord>,
    /// Cycles the scheduler was free but waited, by cause: cores busy, acq, rel.
    pub wait_cycles: [u64; 3],
}

impl TaskSummary {
    /// Take `record`, a task that has just ended, as [`TaskSummary::last`] if it ended last:
    /// of tasks ending in the same cycle, the one issued last (the order in which their
    /// cores' ends reach a scheduler is the engine's, so it cannot decide).
    pub fn offer_last(&mut self, record: TaskRecord) {
        let order = |r: &TaskRecord| (r.end, r.issue, r.frame);
        if self.last.is_none_or(|l| order(&l) <= order(&record)) {
            self.last = Some(record);
        }
    }
}

/// What the scheduler did, or why it did nothing.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Step {
    /// Processed the control frame at `frame` in `cycle`; the caller applies its R0 init.
    Control {
        /// The control frame's index in the program.
        frame: usize,
        /// The cycle it was processed in.
        cycle: u64,
        /// The wait before it, if the scheduler was free and waited.
        wait: Option<Wait>,
    },
    /// Issued the instruction frame `frame` on `mask`, broadcast from `issue`; its cores
    /// start in `start`.
    Issue {
        /// The instruction frame's index in the program.
        frame: usize,
        /// The task's cores, bit k for core k.
        mask: u16,
        /// The first broadcast cycle.
        issue: u64,
        /// The cycle its cores execute their first instruction in.
        start: u64,
        /// The wait before it, if the scheduler was free and waited.
        wait: Option<Wait>,
    },
    /// Nothing can be decided until cores run further. As seen from core `c`, no core of a
    /// task not yet issued acts before the event key `before[c]` (the first of the cycle
    /// of the earliest decision plus the broadcast): a frame that waits for `c` to end
    /// counts as never, since whatever it starts comes after everything `c` does in its
    /// task.
    Blocked {
        /// Per core, the first event key at which a core of a task not yet issued can act.
        before: [EventKey; 16],
        /// The earliest cycle in which the first frame not yet processed can be: where
        /// [`TaskScheduler::first_access_bound`] starts its walk.
        from: u64,
    },
    /// Every frame is processed.
    Done,
    /// The program could not be read further (a malformed group or a failed read); the
    /// run ends as [`RunError::Load`](crate::RunError::Load) with the reason.
    Unreadable,
    /// The next frame would be processed at or past the watchdog limit.
    Limit,
}

/// The scheduler was free in `from..to` (end exclusive) but waited for `cause`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct Wait {
    /// The first cycle the scheduler was free.
    pub from: u64,
    /// The cycle it processed the frame in (`to - from` cycles waited).
    pub to: u64,
    /// What it waited for.
    pub cause: WaitCause,
}

#[derive(Clone, Copy, Debug)]
struct LiveTask {
    frame: usize,
    fence: Fence,
    /// Cores still running it.
    remaining: u16,
    max_end: u64,
    record: Option<usize>,
    issue: u64,
    start: u64,
    mask: u16,
}

impl LiveTask {
    /// Whether frame `idx` may be processed only once this task has finished: the `acq`
    /// fence orders every later frame after it.
    fn holds_back(&self, idx: usize) -> bool {
        self.fence == Fence::Acq && self.frame < idx
    }
}

/// When a condition holds: from cycle `at` on, exactly known or only a lower bound, and the
/// running cores whose end it waits for.
#[derive(Clone, Copy, Debug)]
struct Avail {
    at: u64,
    exact: bool,
    deps: u16,
}

impl Avail {
    const NOW: Avail = Avail {
        at: 0,
        exact: true,
        deps: 0,
    };
    fn and(self, o: Avail) -> Avail {
        Avail {
            at: self.at.max(o.at),
            exact: self.exact && o.exact,
            deps: self.deps | o.deps,
        }
    }
}

/// Frames [`TaskScheduler::first_access_bound`] looks at: a control frame and its
/// instruction frame, then the next pair, whose task starts a whole broadcast later.
const ACCESS_BOUND_FRAMES: usize = 4;

/// The first event key of cycle `cycle`; past any cycle a run can reach (a bound that
/// counts as never), [`EventKey::NEVER`].
fn start_key(cycle: u64) -> EventKey {
    if cycle >= Config::MAX_CYCLE_LIMIT * 2 {
        EventKey::NEVER
    } else {
        EventKey::new(cycle, 0)
    }
}

/// Per core, the least start key of the candidate frames a step did not take, leaving out
/// each frame's cores it waits for. Most steps take a frame, so the per-core minimum is
/// made only for a step that ends blocked ([`Bounds::keys`]); the first candidate, the
/// only one under the in-order policy, is kept as it came.
struct Bounds {
    first: Option<(EventKey, u16)>,
    rest: [u64; 16],
}

impl Bounds {
    fn new() -> Bounds {
        Bounds {
            first: None,
            rest: [EventKey::NEVER.raw(); 16],
        }
    }

    /// A candidate whose cores start from `key` on, except for the cores of `deps`.
    fn add(&mut self, key: EventKey, deps: u16) {
        match self.first {
            None => self.first = Some((key, deps)),
            Some(_) => Self::fold(&mut self.rest, key, deps),
        }
    }

    fn fold(bounds: &mut [u64; 16], key: EventKey, deps: u16) {
        for (c, b) in bounds.iter_mut().enumerate() {
            // Branch-free, so the loop runs as vector instructions.
            let bound = if deps & (1 << c) == 0 {
                key.raw()
            } else {
                EventKey::NEVER.raw()
            };
            *b = (*b).min(bound);
        }
    }

    fn keys(mut self) -> [EventKey; 16] {
        if let Some((key, deps)) = self.first {
            Self::fold(&mut self.rest, key, deps);
        }
        self.rest.map(EventKey::from_raw)
    }
}

/// A task scheduler as a snapshot keeps it ([`TaskScheduler::save`]): the scheduler, with
/// no source and no records; where its log started and ended (the index of its first and
/// past its last record); and the records of the tasks not yet ended then, by their index.
pub(crate) struct SavedScheduler {
    ts: TaskScheduler<'static>,
    first: usize,
    end: usize,
    open: Vec<(usize, TaskRecord)>,
}

impl SavedScheduler {
    /// About how many bytes it holds besides its own size.
    pub(crate) fn bytes(&self) -> usize {
        self.ts.frames.window_bytes()
            + self.ts.ahead.len()
            + self.ts.tasks.len() * std::mem::size_of::<LiveTask>()
            + (self.ts.free_slots.len() + self.ts.unfinished.len()) * 8
            + self.open.len() * std::mem::size_of::<(usize, TaskRecord)>()
    }
}

/// The task scheduler of one run over `program`: the run loop asks it to [`step`] and tells
/// it when cores end ([`cores_ended`]); it keeps the task timeline of the report.
///
/// [`step`]: TaskScheduler::step
/// [`cores_ended`]: TaskScheduler::cores_ended
pub(crate) struct TaskScheduler<'p> {
    /// The program's frames from the first group not yet processed.
    frames: TaskMemory<'p>,
    policy: IssuePolicy,
    timing: Timing,
    limit: u64,
    log: TaskLog,
    /// First unprocessed frame.
    head: usize,
    /// Processed flags of the frames from `head` on (lookahead processes out of order).
    ahead: VecDeque<bool>,
    /// The first cycle in which the scheduler is free.
    t: u64,
    /// When the scheduler last became free (its clock right after processing a frame).
    free_since: u64,
    tasks: Vec<LiveTask>,
    free_slots: Vec<usize>,
    /// Tasks that may be unfinished at `t`.
    unfinished: Vec<usize>,
    /// The task each core of `running` runs (stale for the others).
    core_task: [usize; 16],
    /// The cores running a task.
    running: u16,
    /// The cores running an `acq` task (so a subset of `running`).
    running_acq: u16,
    free_from: [u64; 16],
    last_activity: Option<u64>,
    first_frame: Option<usize>,
    /// The issued tasks from the `records_base`-th on, in issue order, when the task log is
    /// [`TaskLog::All`] (else empty), each with whether it ended; a task still running
    /// shows its last broadcast cycle as `end` until its last core ends. Records leave
    /// from the front only through [`TaskScheduler::pop_final`].
    records: VecDeque<(TaskRecord, bool)>,
    records_base: usize,
    /// Counts and aggregates over all tasks so far.
    pub summary: TaskSummary,
}

impl<'p> TaskScheduler<'p> {
    /// A scheduler at cycle 0 before the first frame of `program`, with the issue policy,
    /// latencies, watchdog limit and task log of `config`.
    pub(crate) fn new(frames: TaskMemory<'p>, config: &Config) -> TaskScheduler<'p> {
        TaskScheduler {
            frames,
            policy: config.issue,
            timing: config.timing,
            limit: config.max_cycles,
            log: config.tasks,
            head: 0,
            ahead: VecDeque::new(),
            t: 0,
            free_since: 0,
            tasks: Vec::new(),
            free_slots: Vec::new(),
            unfinished: Vec::new(),
            core_task: [0; 16],
            running: 0,
            running_acq: 0,
            free_from: [0; 16],
            last_activity: None,
            first_frame: None,
            records: VecDeque::new(),
            records_base: 0,
            summary: TaskSummary::default(),
        }
    }

    /// A copy for a snapshot of the run ([`crate::Snapshot`]): the scheduler as it stands,
    /// its window without the source, and of the task log only where it starts and ends
    /// and the records of the tasks not yet ended (the others are final: see
    /// [`TaskScheduler::resume`]).
    pub(crate) fn save(&self) -> SavedScheduler {
        let records_end = self.records_base + self.records.len();
        let open = self
            .records
            .iter()
            .enumerate()
            .filter(|(_, (_, ended))| !ended)
            .map(|(i, (r, _))| (self.records_base + i, *r))
            .collect();
        SavedScheduler {
            ts: TaskScheduler {
                ahead: self.ahead.clone(),
                tasks: self.tasks.clone(),
                free_slots: self.free_slots.clone(),
                unfinished: self.unfinished.clone(),
                summary: self.summary.clone(),
                ..self.shallow(self.frames.save())
            },
            first: self.records_base,
            end: records_end,
            open,
        }
    }

    /// The scheduler of a run going on from `saved` over `source` (the program the saved
    /// run read from), keeping a task log as `log` says. The snapshot holds no records of
    /// the tasks before it, so a log of every task ([`TaskLog::All`]) takes them from
    /// `records`: the log of a later state of the same run, from its first task, whose
    /// records up to the snapshot's are final but for those of the tasks then running,
    /// which are put back as they were. `None` where `records` does not hold them, where
    /// a summary is asked of a run that kept none, or where the source cannot go to where
    /// the saved run had read.
    pub(crate) fn resume<'q>(
        saved: &SavedScheduler,
        source: Held<'q, dyn FrameSource + 'q>,
        log: TaskLog,
        mut records: Vec<TaskRecord>,
    ) -> Option<TaskScheduler<'q>> {
        let end = saved.end;
        let ok = match log {
            TaskLog::All => {
                saved.ts.log == TaskLog::All && saved.first == 0 && records.len() >= end
            }
            TaskLog::Summary => saved.ts.log != TaskLog::None,
            TaskLog::None => true,
        };
        if !ok {
            return None;
        }
        let frames = saved.ts.frames.save().adopt(source).ok()?;
        let mut tasks = saved.ts.tasks.clone();
        let mut kept = VecDeque::new();
        if log == TaskLog::All {
            records.truncate(end);
            let mut open = saved.open.iter().peekable();
            kept = records
                .into_iter()
                .enumerate()
                .map(|(i, r)| match open.next_if(|&&(j, _)| j == i) {
                    Some(&(_, r)) => (r, false),
                    None => (r, true),
                })
                .collect();
        } else {
            for t in &mut tasks {
                t.record = None;
            }
        }
        Some(TaskScheduler {
            log,
            records: kept,
            ahead: saved.ts.ahead.clone(),
            tasks,
            free_slots: saved.ts.free_slots.clone(),
            unfinished: saved.ts.unfinished.clone(),
            summary: saved.ts.summary.clone(),
            ..saved.ts.shallow(frames)
        })
    }

    /// The plain fields of this scheduler over `frames`, with empty collections and records
    /// (for [`TaskScheduler::save`] and [`TaskScheduler::resume`], which fill those in).
    fn shallow<'q>(&self, frames: TaskMemory<'q>) -> TaskScheduler<'q> {
        TaskScheduler {
            frames,
            policy: self.policy,
            timing: self.timing,
            limit: self.limit,
            log: self.log,
            head: self.head,
            ahead: VecDeque::new(),
            t: self.t,
            free_since: self.free_since,
            tasks: Vec::new(),
            free_slots: Vec::new(),
            unfinished: Vec::new(),
            core_task: self.core_task,
            running: self.running,
            running_acq: self.running_acq,
            free_from: self.free_from,
            last_activity: self.last_activity,
            first_frame: self.first_frame,
            records: VecDeque::new(),
            records_base: 0,
            summary: TaskSummary::default(),
        }
    }

    /// The source, leaving none in its place (for a run that resumes a snapshot over it).
    pub(crate) fn take_source(&mut self) -> Held<'p, dyn FrameSource + 'p> {
        self.frames.take_source()
    }

    /// The first task of the log, if it ended before `before`: no later event can change
    /// its record, so it leaves the log (for an observer that takes the log as it goes).
    pub fn pop_final(&mut self, before: u64) -> Option<TaskRecord> {
        match self.records.front() {
            Some(&(record, true)) if record.end < before => {
                self.records.pop_front();
                self.records_base += 1;
                Some(record)
            }
            _ => None,
        }
    }

    /// The task log as it stands, in issue order (what [`TaskScheduler::pop_final`] has not
    /// taken); the scheduler keeps no records after.
    pub fn take_records(&mut self) -> Vec<TaskRecord> {
        self.records_base += self.records.len();
        self.records.drain(..).map(|(r, _)| r).collect()
    }

    /// The last cycle in which the scheduler processed a frame.
    pub fn last_activity(&self) -> Option<u64> {
        self.last_activity
    }

    /// Lower the watchdog limit (a run stopped from outside ends at the cycle it reached).
    pub(crate) fn lower_limit(&mut self, limit: u64) {
        self.limit = self.limit.min(limit);
    }

    /// Move the limit to `limit`, either way: a live machine pauses at a limit and goes on
    /// past it. Reaching the limit leaves no trace but the clock's move to the earliest
    /// decision it could take (which the next look takes again), so raising it is exact.
    pub(crate) fn set_limit(&mut self, limit: u64) {
        self.limit = limit;
    }

    /// A copy of the records kept so far, leaving them in place (a live machine's report
    /// while it pauses).
    pub(crate) fn records(&self) -> Vec<TaskRecord> {
        self.records.iter().map(|(r, _)| *r).collect()
    }

    /// The first frame not yet processed, if any (reading it from the source if it has
    /// not been read yet).
    pub fn next_frame(&mut self) -> Option<usize> {
        self.frames.has(self.head).then_some(self.head)
    }

    /// The program's frames as far as the scheduler has read them: every frame a step
    /// returned stays readable until the next step.
    pub(crate) fn frames(&self) -> &TaskMemory<'p> {
        &self.frames
    }

    /// The load error that stopped the reading of the program ([`Step::Unreadable`]), or,
    /// when the run ended before reading its whole program, the one the rest of it gives.
    pub(crate) fn load_error(&mut self) -> Option<LoadError> {
        self.frames
            .take_error()
            .or_else(|| self.frames.check_rest())
    }

    /// A bound that holds whatever [`TaskScheduler::step`] would say next, without asking
    /// it: no core of a task not yet issued acts before the key, as seen from any core but
    /// those of the mask, which nothing bounds. Every decision still to come is at or after
    /// the scheduler's clock, and its cores start a broadcast later; and while an `acq` task
    /// issued before every frame still to be processed runs, every decision waits for its
    /// cores (the mask) to end, as a blocked step bounds the cores its candidates wait for.
    /// `None` unless the next frame is read (so that the next step cannot find the program
    /// unreadable or done). Where a running `acq` task leaves cores unbounded, this reads
    /// it, as the next step would; elsewhere a step's bound, which knows what the next
    /// frame waits for, is worth more than the read (a `rel` task past the broadcast).
    // Asked at every issue of a stream: inlined, with the rarer work (an `acq` task
    // running) out of line.
    #[inline(always)]
    pub(crate) fn next_start_bound(&mut self) -> Option<(EventKey, u16)> {
        let awaited = if self.running_acq == 0 {
            0
        } else {
            self.awaited_cores()
        };
        let read = self.frames.holds(self.head) || (awaited != 0 && self.read_head());
        let key = start_key(self.t.saturating_add(self.timing.broadcast_cycles));
        read.then_some((key, awaited))
    }

    /// A bound on the first memory access of any task not yet issued, under the in-order
    /// policy, from the frames already read: the scheduler processes them one at a time in
    /// order, the first in cycle `from` (or the clock, if later) at the earliest, each for
    /// its `frame_cycles` (a task starts as its broadcast ends), and a task's cores touch memory
    /// no sooner than `first_access(frame)` cycles after its start (`None`: never). Past
    /// the frames looked at, a task may touch memory as it starts. The key (the first of
    /// its cycle) is never before the start of a task the first frame issues from `from`:
    /// [`TaskScheduler::next_start_bound`]'s from the clock, or a blocked step's. `None`
    /// under the lookahead policy, which may take the frames out of order.
    pub(crate) fn first_access_bound(
        &self,
        from: u64,
        mut first_access: impl FnMut(&[u8; FRAME_BYTES]) -> Option<u64>,
    ) -> Option<EventKey> {
        if self.policy != IssuePolicy::InOrder {
            return None;
        }
        let (mut t, mut bound) = (from.max(self.t), u64::MAX);
        let broadcast = self.frame_cycles(false);
        for idx in self.head..self.head.saturating_add(ACCESS_BOUND_FRAMES) {
            // Every task still to come starts at `t + broadcast` or later, and so does the
            // bound past the frames looked at: none of them can come sooner (a task that
            // touches memory as it starts, the common case, ends the walk at the next frame).
            if !self.frames.holds(idx) || bound <= t.saturating_add(broadcast) {
                break;
            }
            match self.frames.kind(idx) {
                FrameKind::Control => {
                    t = t.saturating_add(self.frame_cycles(true));
                }
                FrameKind::Instr { .. } => {
                    let start = t.saturating_add(broadcast);
                    if self.frames.group_control(idx).active != 0 {
                        if let Some(after) = first_access(self.frames.raw(idx)) {
                            bound = bound.min(start.saturating_add(after));
                        }
                    }
                    t = start;
                }
            }
        }
        Some(start_key(bound.min(t.saturating_add(broadcast))))
    }

    /// The cycles the scheduler spends processing a frame: a control frame's, or an
    /// instruction frame's broadcast (its task starts as it ends).
    fn frame_cycles(&self, control: bool) -> u64 {
        if control {
            self.timing.control_frame_cycles
        } else {
            self.timing.broadcast_cycles
        }
    }

    /// The cores of the running `acq` tasks that hold back the frame at the head
    /// ([`TaskScheduler::next_start_bound`]).
    #[inline(never)]
    fn awaited_cores(&self) -> u16 {
        match self.policy {
            // Every task issued in order came before the next frame, so each running `acq`
            // task holds it back ([`LiveTask::holds_back`]).
            IssuePolicy::InOrder => self.running_acq,
            // Lookahead may have issued an `acq` task past a frame still waiting.
            IssuePolicy::Lookahead => self
                .unfinished
                .iter()
                .map(|&id| &self.tasks[id])
                .filter(|task| task.holds_back(self.head))
                .fold(0, |cores, task| cores | task.remaining),
        }
    }

    /// Read the frame at the head, as the next step would: whether the program has it.
    #[inline(never)]
    fn read_head(&mut self) -> bool {
        self.frames.has(self.head)
    }

    /// Tell the scheduler that the parts of `cores` ended, each with an instruction in
    /// `cycle`. The cores may run different tasks; a group that ends together is told in
    /// one call, which costs a step per task rather than per core.
    pub fn cores_ended(&mut self, cores: u16, cycle: u64) {
        let mut rest = cores;
        while rest != 0 {
            let lead = rest.trailing_zeros() as usize;
            assert!(
                self.running & (1 << lead) != 0,
                "only a core running a task can end"
            );
            let id = self.core_task[lead];
            let task = &mut self.tasks[id];
            // The cores of a task still running it are exactly those whose task it is.
            let these = task.remaining & rest;
            task.remaining &= !these;
            task.max_end = task.max_end.max(cycle);
            let finished = task.remaining == 0;
            rest &= !these;
            self.running &= !these;
            self.running_acq &= !these;
            // Over all 16 cores without a branch: a task's cores vary from task to task,
            // and a loop over its bits costs a mispredicted exit each time.
            for (c, free) in self.free_from.iter_mut().enumerate() {
                if these & (1 << c) != 0 {
                    *free = cycle + 1;
                }
            }
            if finished {
                self.finish(id);
            }
        }
    }

    fn finish(&mut self, id: usize) {
        let task = self.tasks[id];
        let record = TaskRecord {
            frame: task.frame,
            mask: task.mask,
            fence: task.fence,
            issue: task.issue,
            start: task.start,
            end: task.max_end,
        };
        if let Some(r) = task.record {
            self.records[r - self.records_base] = (record, true);
        }
        if self.log != TaskLog::None {
            if self.first_frame == Some(task.frame) {
                self.summary.first = Some(record);
            }
            self.summary.offer_last(record);
        }
    }

    fn core_avail(&self, mask: u16, lb: &[u64; 16]) -> Avail {
        let running = mask & self.running;
        let mut at = 0;
        let mut m = mask;
        while m != 0 {
            let c = m.trailing_zeros() as usize;
            m &= m - 1;
            at = at.max(if running & (1 << c) != 0 {
                lb[c] + 1
            } else {
                self.free_from[c]
            });
        }
        Avail {
            at,
            exact: running == 0,
            deps: running,
        }
    }

    fn task_avail(&self, id: usize, lb: &[u64; 16]) -> Avail {
        let task = &self.tasks[id];
        let done = Avail {
            at: task.max_end + 1,
            exact: task.remaining == 0,
            deps: task.remaining,
        };
        let running = self.core_avail(task.remaining, lb);
        Avail {
            at: done.at.max(running.at),
            exact: done.exact,
            deps: task.remaining,
        }
    }

    /// When each condition for processing frame `idx` holds: its cores free (and, for an IF
    /// that passes a waiting frame under lookahead, every earlier unfinished task whose
    /// mask shares a core with it finished), earlier acq tasks finished, and (for a rel
    /// task) every earlier task finished.
    fn constraints(
        &self,
        idx: usize,
        cores: u16,
        rel: bool,
        passing: bool,
        lb: &[u64; 16],
    ) -> [Avail; 3] {
        let mut free = self.core_avail(cores, lb);
        let mut acq = Avail::NOW;
        let mut all = Avail::NOW;
        for &id in &self.unfinished {
            let task = &self.tasks[id];
            if passing && task.frame < idx && task.mask & cores != 0 {
                free = free.and(self.task_avail(id, lb));
            }
            if task.holds_back(idx) {
                acq = acq.and(self.task_avail(id, lb));
            }
            if rel {
                all = all.and(self.task_avail(id, lb));
            }
        }
        [free, acq, all]
    }

    /// Forget tasks that finished before the scheduler last became free: no later decision
    /// needs them. Tasks that finished while it waited stay until it processes a frame, so
    /// the wait's cause (the constraint satisfied last) can still be told.
    fn prune(&mut self) {
        let t = self.free_since;
        let mut i = 0;
        while i < self.unfinished.len() {
            let id = self.unfinished[i];
            let task = &self.tasks[id];
            if task.remaining == 0 && task.max_end < t {
                self.unfinished.swap_remove(i);
                self.free_slots.push(id);
            } else {
                i += 1;
            }
        }
    }

    fn processed(&self, frame: usize) -> bool {
        self.ahead.get(frame - self.head).copied().unwrap_or(false)
    }

    fn mark_processed(&mut self, frame: usize) {
        if frame == self.head && self.ahead.is_empty() {
            // In order: nothing processed ahead to pass over.
            self.head += 1;
            return;
        }
        let k = frame - self.head;
        if self.ahead.len() <= k {
            self.ahead.resize(k + 1, false);
        }
        self.ahead[k] = true;
        while self.ahead.front() == Some(&true) {
            self.ahead.pop_front();
            self.head += 1;
        }
    }

    /// Decide the scheduler's next action. `lb[c]` is, for a core running a task, a lower
    /// bound on the cycle of its last instruction (the cycle of its next event).
    pub fn step(&mut self, lb: &[u64; 16]) -> Step {
        self.frames.release_before(self.head);
        self.prune();
        if !self.frames.has(self.head) {
            return if self.frames.failed() {
                Step::Unreadable
            } else {
                Step::Done
            };
        }
        let t = self.t;
        let window = match self.policy {
            IssuePolicy::InOrder => 1,
            IssuePolicy::Lookahead => self.timing.lookahead_window.max(1),
        };
        let end = self.head.saturating_add(window);
        let mut waiting_mask = 0u16;
        let mut earlier_unprocessed = false;
        let mut min_exact = u64::MAX;
        let mut min_inexact = u64::MAX;
        let mut chosen = None;
        // The first candidate (in window order) whose exact time is `min_exact`.
        let mut soonest = None;
        // Some earlier candidate may or may not be processable at `t`.
        let mut unknown_at_t = false;
        let broadcast = self.timing.broadcast_cycles;
        let mut bounds = Bounds::new();
        // The first candidate's earliest decision (the head's, under the in-order policy).
        let mut first_from = None;
        for idx in self.head..end {
            if !self.frames.has(idx) {
                // A malformed group past the first is reported when it is reached.
                break;
            }
            if self.processed(idx) {
                continue;
            }
            let cf = *self.frames.group_control(idx);
            let (cores, static_ok, rel, fence, is_cf) = match self.frames.kind(idx) {
                FrameKind::Control => {
                    let m = cf.r0_init_mask();
                    (m, m & waiting_mask == 0, false, cf.fence, true)
                }
                FrameKind::Instr { .. } => {
                    let ok = cf.active & waiting_mask == 0
                        && (cf.fence != Fence::Rel || !earlier_unprocessed);
                    (cf.active, ok, cf.fence == Fence::Rel, cf.fence, false)
                }
            };
            if static_ok {
                let passing = earlier_unprocessed && !is_cf;
                let parts = self.constraints(idx, cores, rel, passing, lb);
                let a = parts.iter().fold(Avail::NOW, |a, p| a.and(*p));
                if a.at <= t && a.exact && !unknown_at_t {
                    chosen = Some((idx, is_cf, cores, parts));
                    break;
                }
                // A core this frame waits for ends before anything the frame starts;
                // every other core must not run past the frame's earliest decision.
                bounds.add(start_key(a.at.max(t).saturating_add(broadcast)), a.deps);
                first_from.get_or_insert(a.at.max(t));
                if a.at <= t {
                    unknown_at_t = true;
                } else if a.exact {
                    if a.at < min_exact {
                        min_exact = a.at;
                        soonest = Some((idx, is_cf, cores, parts));
                    }
                } else {
                    min_inexact = min_inexact.min(a.at);
                }
            }
            if fence != Fence::No || is_cf {
                break;
            }
            waiting_mask |= cores;
            earlier_unprocessed = true;
        }
        let (t, (idx, is_cf, cores, parts)) = match (chosen, soonest) {
            (Some(c), _) => (t, c),
            // Nothing can happen before `min_exact`: the clock moves there, where the
            // first candidate processable then is the one the scan above would pick
            // (the constraints do not depend on the clock, and every inexact one is
            // later), so it is taken without a second scan.
            (None, Some(c)) if !unknown_at_t && min_exact < min_inexact => {
                self.t = min_exact;
                (min_exact, c)
            }
            _ => {
                return Step::Blocked {
                    before: bounds.keys(),
                    from: first_from.unwrap_or(t),
                }
            }
        };
        let duration = self.frame_cycles(is_cf);
        if t.saturating_add(duration) > self.limit {
            return Step::Limit;
        }
        let wait = (t > self.free_since).then(|| {
            // The constraint satisfied last is the one the scheduler waited for.
            let causes = [WaitCause::CoresBusy, WaitCause::Acquire, WaitCause::Release];
            let (cause, _) =
                causes
                    .into_iter()
                    .zip(parts)
                    .fold((WaitCause::CoresBusy, 0), |best, (c, p)| {
                        if p.at > best.1 {
                            (c, p.at)
                        } else {
                            best
                        }
                    });
            self.summary.wait_cycles[cause.index()] += t - self.free_since;
            Wait {
                from: self.free_since,
                to: t,
                cause,
            }
        });
        self.mark_processed(idx);
        self.t = t + duration;
        self.free_since = self.t;
        if duration > 0 {
            self.last_activity = Some(t + duration - 1);
        }
        if is_cf {
            self.summary.control_frames += 1;
            return Step::Control {
                frame: idx,
                cycle: t,
                wait,
            };
        }
        Step::Issue {
            frame: idx,
            mask: cores,
            issue: t,
            start: self.issue(idx, cores, t, t + duration),
            wait,
        }
    }

    /// Create the task for frame `idx` broadcast from `issue`; returns its start cycle.
    fn issue(&mut self, idx: usize, mask: u16, issue: u64, start: u64) -> u64 {
        debug_assert!(matches!(self.frames.kind(idx), FrameKind::Instr { .. }));
        let fence = self.frames.group_control(idx).fence;
        let last_broadcast = start.saturating_sub(1).max(issue);
        let shown_start = if mask == 0 { last_broadcast } else { start };
        let record = (self.log == TaskLog::All).then(|| {
            let record = TaskRecord {
                frame: idx,
                mask,
                fence,
                issue,
                start: shown_start,
                end: last_broadcast,
            };
            self.records.push_back((record, false));
            self.records_base + self.records.len() - 1
        });
        self.summary.tasks += 1;
        if self.first_frame.is_none() {
            self.first_frame = Some(idx);
        }
        self.summary.by_fence[usize::from(fence.bits())] += 1;
        let task = LiveTask {
            frame: idx,
            fence,
            remaining: mask,
            max_end: last_broadcast,
            record,
            issue,
            start: shown_start,
            mask,
        };
        let id = match self.free_slots.pop() {
            Some(id) => {
                self.tasks[id] = task;
                id
            }
            None => {
                self.tasks.push(task);
                self.tasks.len() - 1
            }
        };
        self.unfinished.push(id);
        for (c, task) in self.core_task.iter_mut().enumerate() {
            if mask & (1 << c) != 0 {
                *task = id;
            }
        }
        self.running |= mask;
        if fence == Fence::Acq {
            self.running_acq |= mask;
        }
        if mask == 0 {
            self.finish(id);
        }
        start
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::frame::{ControlFrame, InstrFrame, Program};
    use crate::isa::Instr;
    use crate::task_memory::ProgramFrames;

    fn cf(fence: Fence, active: u16) -> [u8; 32] {
        ControlFrame::new(1, fence, active, &[]).encode()
    }

    fn work() -> [u8; 32] {
        let mut instrs = [Instr::Nop; 16];
        instrs[3] = Instr::Ready;
        InstrFrame::from_instrs(instrs).bytes()
    }

    /// `then` asked of the scheduler of `frames` once it issued the first task: CF in cycle
    /// 0, broadcast 1-4, start 5; the scheduler is free again from 5.
    fn scheduler_after_first_issue<R>(
        frames: Vec<[u8; FRAME_BYTES]>,
        policy: IssuePolicy,
        then: impl FnOnce(&mut TaskScheduler<'_>) -> R,
    ) -> R {
        let program = Program::from_frames(frames).unwrap();
        let mut source = ProgramFrames::new(&program);
        let config = Config {
            issue: policy,
            ..Config::default()
        };
        let mut ts = TaskScheduler::new(TaskMemory::new(Held::Lent(&mut source)), &config);
        let lb = [0; 16];
        assert!(matches!(ts.step(&lb), Step::Control { cycle: 0, .. }));
        assert!(matches!(ts.step(&lb), Step::Issue { start: 5, .. }));
        then(&mut ts)
    }

    /// The deferred bound after the first task of `groups` (fence, mask) is issued: the
    /// scheduler steps until it issues, then is asked for the bound without a step.
    fn bound_after_first_issue(groups: &[(Fence, u16)], policy: IssuePolicy) -> [EventKey; 16] {
        let frames = groups
            .iter()
            .flat_map(|&(f, m)| [cf(f, m), work()])
            .collect();
        let (key, awaited) = scheduler_after_first_issue(frames, policy, |ts| {
            ts.next_start_bound().expect("the next group is read")
        });
        std::array::from_fn(|c| {
            if awaited & (1 << c) != 0 {
                EventKey::NEVER
            } else {
                key
            }
        })
    }

    /// [`TaskScheduler::first_access_bound`] after the first of four tasks is issued, each
    /// instruction frame's first access given by `first` (the frames differ in their
    /// `ready`'s IP, 3 + the task's index, which tells them apart).
    fn access_bound_after_first_issue(
        policy: IssuePolicy,
        from: u64,
        first: [Option<u64>; 4],
    ) -> Option<EventKey> {
        let frames = (0..4)
            .flat_map(|k| {
                let mut instrs = [Instr::Nop; 16];
                instrs[3 + k] = Instr::Ready;
                [
                    cf(Fence::No, 1 << k),
                    InstrFrame::from_instrs(instrs).bytes(),
                ]
            })
            .collect();
        scheduler_after_first_issue(frames, policy, |ts| {
            // Only frames already read count: the walk never waits for a stream's input.
            assert!(ts.frames.has(6) && !ts.frames.holds(8));
            ts.first_access_bound(from, |bytes| {
                let code = InstrFrame::decode(bytes).unwrap().instrs;
                let k = code.iter().position(|i| *i == Instr::Ready).unwrap() - 3;
                first[k]
            })
        })
    }

    #[test]
    fn tasks_to_come_touch_memory_no_sooner_than_their_frames_first_access() {
        let at = |cycle| Some(EventKey::new(cycle, 0));
        // Clock 5: frame 2 (CF) in 5, frame 3's broadcast 6-9 (task 1 starts 10), frame 4
        // (CF) in 10, frame 5's broadcast 11-14 (task 2 starts 15); past the four frames
        // looked at, a task starts no sooner than 15 + 4 = 19.
        let bound = |from, first| access_bound_after_first_issue(IssuePolicy::InOrder, from, first);
        assert_eq!(bound(0, [None, Some(2), Some(0), None]), at(12));
        assert_eq!(bound(0, [None, Some(9), Some(1), None]), at(16));
        assert_eq!(bound(0, [None, None, Some(0), None]), at(15));
        // Task 1 in 16, task 2 in 15: a walk that stopped at frame 4 (bound 16, clock 10)
        // would miss the later task's earlier access.
        assert_eq!(bound(0, [None, Some(6), Some(0), None]), at(15));
        assert_eq!(bound(0, [None, None, None, None]), at(19));
        // A blocked step's first frame decided in 8 at the earliest: all 3 later.
        assert_eq!(bound(8, [None, Some(2), Some(0), None]), at(15));
        // Never before the clock.
        assert_eq!(bound(2, [None, Some(2), Some(0), None]), at(12));
        // Lookahead may take the frames out of order: nothing more is known.
        assert_eq!(
            access_bound_after_first_issue(IssuePolicy::Lookahead, 0, [Some(9); 4]),
            None
        );
    }

    #[test]
    fn an_acq_task_leaves_its_cores_unbounded_and_the_others_a_broadcast_past_the_clock() {
        for policy in [IssuePolicy::InOrder, IssuePolicy::Lookahead] {
            let before =
                bound_after_first_issue(&[(Fence::Acq, 0x00FF), (Fence::No, 0xFF00)], policy);
            // The next control frame waits for the acq task's cores to end: nothing the
            // scheduler issues next acts before they end, and others no earlier than a
            // broadcast (4 cycles) past its clock (5).
            for (c, &key) in before.iter().enumerate() {
                let want = if c < 8 {
                    EventKey::NEVER
                } else {
                    EventKey::new(9, 0)
                };
                assert_eq!(key, want, "core {c}, {policy:?}");
            }
        }
    }

    #[test]
    fn an_acq_task_issued_past_a_waiting_frame_leaves_that_frame_free_to_issue() {
        // Lookahead: frame 2 waits for core 0 (busy with frame 1); the acq group's control
        // frame (3) and task (4, core 1) pass it. Frame 2 does not wait for task 4, so core
        // 1 stays bounded.
        let two = ControlFrame::new(2, Fence::No, 0x0001, &[]).encode();
        let frames = vec![two, work(), work(), cf(Fence::Acq, 0x0002), work()];
        let program = Program::from_frames(frames).unwrap();
        let mut source = ProgramFrames::new(&program);
        let config = Config {
            issue: IssuePolicy::Lookahead,
            ..Config::default()
        };
        let mut ts = TaskScheduler::new(TaskMemory::new(Held::Lent(&mut source)), &config);
        let lb = [0; 16];
        assert!(matches!(ts.step(&lb), Step::Control { frame: 0, .. }));
        assert!(matches!(ts.step(&lb), Step::Issue { frame: 1, .. }));
        // Core 0 runs on to cycle 100 at least.
        let mut lb = [0; 16];
        lb[0] = 100;
        assert!(matches!(ts.step(&lb), Step::Control { frame: 3, .. }));
        assert!(matches!(ts.step(&lb), Step::Issue { frame: 4, .. }));
        let (_, awaited) = ts.next_start_bound().expect("frame 2 is read");
        assert_eq!(awaited, 0);
    }

    /// The scheduler of `frames` (in order) after its first control frame and first issue.
    fn after_first_issue<'a>(source: &'a mut ProgramFrames<'a>) -> TaskScheduler<'a> {
        let mut ts = TaskScheduler::new(TaskMemory::new(Held::Lent(source)), &Config::default());
        let lb = [0; 16];
        assert!(matches!(ts.step(&lb), Step::Control { cycle: 0, .. }));
        assert!(matches!(ts.step(&lb), Step::Issue { start: 5, .. }));
        ts
    }

    #[test]
    fn a_task_without_a_fence_bounds_every_core_by_a_broadcast_past_the_clock() {
        for fence in [Fence::No, Fence::Rel] {
            // Two tasks in one group: the next frame is read with the first.
            let two = ControlFrame::new(2, fence, 0x00FF, &[]).encode();
            let frames = vec![two, work(), work(), cf(Fence::No, 0xFF00), work()];
            let program = Program::from_frames(frames).unwrap();
            let mut source = ProgramFrames::new(&program);
            let mut ts = after_first_issue(&mut source);
            assert_eq!(
                ts.next_start_bound(),
                Some((EventKey::new(9, 0), 0)),
                "{fence:?}"
            );
        }
    }

    #[test]
    fn without_an_acq_task_the_next_group_is_left_to_the_step_to_read() {
        // Whether the next task waits for these cores (here a `rel` one, for all of them)
        // only a step can say; reading its group for the weaker bound would lose that.
        for fence in [Fence::No, Fence::Rel] {
            let frames = vec![cf(fence, 0x00FF), work(), cf(Fence::Rel, 0xFF00), work()];
            let program = Program::from_frames(frames).unwrap();
            let mut source = ProgramFrames::new(&program);
            let mut ts = after_first_issue(&mut source);
            assert_eq!(ts.next_start_bound(), None, "{fence:?}");
        }
    }

    #[test]
    fn the_bound_is_not_deferred_before_the_next_group_is_read_or_at_the_end() {
        let frames = vec![cf(Fence::Acq, 0xFFFF), work()];
        let program = Program::from_frames(frames).unwrap();
        let mut source = ProgramFrames::new(&program);
        let mut ts =
            TaskScheduler::new(TaskMemory::new(Held::Lent(&mut source)), &Config::default());
        let lb = [0; 16];
        assert!(matches!(ts.step(&lb), Step::Control { .. }));
        assert!(matches!(ts.step(&lb), Step::Issue { .. }));
        // No frame follows: the next step says done (or unreadable), which only a step
        // may say.
        assert_eq!(ts.next_start_bound(), None);
    }
}
