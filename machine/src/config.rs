//! The machine's configuration: the issue policy, the bank-conflict switch, the watchdog and
//! every latency of the timing model, in one place.

/// How the task scheduler picks the next frame.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Default)]
pub enum IssuePolicy {
    /// Frames are processed strictly in program order (the spec's default).
    #[default]
    InOrder,
    /// The scheduler may process a later frame whose cores are disjoint from every earlier
    /// unfinished or waiting task, past waiting frames that have no fence.
    Lookahead,
}

impl IssuePolicy {
    /// The policy's name as the CLI's `--issue` takes it and reports print it: `in-order`
    /// or `lookahead`.
    pub fn name(self) -> &'static str {
        match self {
            IssuePolicy::InOrder => "in-order",
            IssuePolicy::Lookahead => "lookahead",
        }
    }
}

/// Cycles one core instruction takes (decisions.md: every instruction takes 1 cycle), public
/// as `CoreState::INSTRUCTION_CYCLES`. Fixed by the core pipeline, not configurable.
/// `CoreState::retire` advances the cycle by it (and counts one instruction), and the JIT's segment arithmetic (`compile::cycles`)
/// multiplies by it. Instruction counts do not all use it: the JIT's per-core entry divides
/// the cycles an entry ran by it, but its lockstep and cohort engines add the cycles a lane
/// ran as its instruction count, which is right only while this constant is 1.
pub(crate) const INSTRUCTION_CYCLES: u64 = 1;

/// Latencies of the timing model that the task scheduler owns.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct Timing {
    /// Cycles the task scheduler spends on a control frame.
    pub control_frame_cycles: u64,
    /// Cycles the code broadcast of an instruction frame takes (32 bytes over a 64-bit bus).
    pub broadcast_cycles: u64,
    /// How many frames past the oldest unprocessed one the `lookahead` policy considers
    /// (the hardware task memory holds 64 frames).
    pub lookahead_window: usize,
    /// The slot model's latencies (MCST dialect only; mcst-dialect.md section 5).
    pub slots: SlotTiming,
}

impl Default for Timing {
    fn default() -> Self {
        Timing {
            control_frame_cycles: 1,
            broadcast_cycles: 4,
            lookahead_window: 64,
            slots: SlotTiming::default(),
        }
    }
}

impl Timing {
    /// The `mcst-rtl` profile: the MCST RTL's pipeline, as mcst-dialect.md section 5.1
    /// measures it (a CF in 1 cycle, a broadcast of 4, the first instruction 7 cycles after
    /// the broadcast began, bubbles after taken branches and loads, two-cycle loads,
    /// round-robin banks with the bank-switch rule).
    pub fn mcst_rtl() -> Timing {
        Timing {
            slots: SlotTiming {
                pipeline_fill: 3,
                ip15_end_cycles: 1,
                taken_branch_bubbles: 1,
                load_cycles: 2,
                load_use_bubbles: 1,
                branch_after_load_bubbles: 1,
                bank_switch: true,
                round_robin: true,
            },
            ..Timing::default()
        }
    }
}

/// The latencies of the MCST dialect's slot model (mcst-dialect.md section 5). The
/// defaults are decisions.md's: no fill, no bubbles, one-cycle loads, every access served in
/// its cycle in core order. The spec dialect's run loop does not read them (its cores take
/// [`CoreState::INSTRUCTION_CYCLES`](crate::engine::backend::CoreState::INSTRUCTION_CYCLES) an instruction), so they must stay at their defaults there.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct SlotTiming {
    /// Cycles of pipeline fill between a broadcast's end and its task's first instruction
    /// (the RTL's `start_delay` is `broadcast_cycles + pipeline_fill` = 4 + 3).
    pub pipeline_fill: u64,
    /// Extra slots a task that runs off IP 15 spends (the RTL injects a `ready`): 0 or 1.
    pub ip15_end_cycles: u64,
    /// Bubbles after every taken `bnz` (B1).
    pub taken_branch_bubbles: u64,
    /// Cycles an `ld` granted in its first cycle occupies: it reads memory in its grant
    /// cycle and finishes `load_cycles - 1` cycles later. At least 1.
    pub load_cycles: u64,
    /// A bubble before an instruction that reads the register the `ld` right before it
    /// loads, unless it is a `st` (B2): 0 or 1.
    pub load_use_bubbles: u64,
    /// A bubble before a `bnz` whose third slot back is an `ld` (B3): 0 or 1.
    pub branch_after_load_bubbles: u64,
    /// The bank-switch rule: an `ld`'s grant in its first cycle does not count when the
    /// previous slot addressed another bank (section 5.3).
    pub bank_switch: bool,
    /// Round-robin bank arbitration: one access a bank a cycle, no multicast. Off, every
    /// access is served in its cycle, in core order.
    pub round_robin: bool,
}

impl Default for SlotTiming {
    fn default() -> Self {
        SlotTiming {
            pipeline_fill: 0,
            ip15_end_cycles: 0,
            taken_branch_bubbles: 0,
            load_cycles: 1,
            load_use_bubbles: 0,
            branch_after_load_bubbles: 0,
            bank_switch: false,
            round_robin: false,
        }
    }
}

/// Default spacing of checkpoints: 2^18 cycles. A checkpoint stops every looping core for a
/// few microseconds: at 2^16 the compute benchmarks (a few hundred thousand cycles)
/// measured 5% slower, at 2^20 16 cores polling a flag took 24 s to be proven endless on
/// the interpreter. At 2^18 a register spin is proven at cycle 2^19 (a tenth of a second on
/// the interpreter).
pub(crate) const DEFAULT_CHECKPOINT_CYCLES: u64 = 1 << 18;

/// The most tasks a run of the MCST dialect keeps records of with [`TaskLog::All`]: about
/// 200 MiB. Its program is at most 64 frames, but its scheduler wraps, so its tasks are not
/// bounded by its size.
pub(crate) const TASK_LOG_LIMIT: usize = 1 << 22;

/// How much of the per-task timeline a run keeps.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Default)]
pub enum TaskLog {
    /// No per-task records (counts only): memory does not grow with the stream.
    None,
    /// Aggregates over tasks (counts, per-fence counts, first and last task).
    Summary,
    /// Every task's record, in issue order.
    #[default]
    All,
}

impl TaskLog {
    /// The three, in the order `--tasks` lists them.
    pub const ALL: [TaskLog; 3] = [TaskLog::None, TaskLog::Summary, TaskLog::All];

    /// The name `--tasks` and the Python package's `tasks=` take: `none`, `summary`, `all`.
    pub fn name(self) -> &'static str {
        match self {
            TaskLog::None => "none",
            TaskLog::Summary => "summary",
            TaskLog::All => "all",
        }
    }
}

/// Everything that selects a machine's behaviour besides the program and memory image.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct Config {
    /// How the task scheduler picks the next frame (default: in order, as the spec says).
    pub issue: IssuePolicy,
    /// Whether the bank-conflict model is on (default off): a bank then serves one access
    /// a cycle, reads of one byte together, and every other access to it stalls a cycle
    /// and retries (`docs/semantics.md`, section 6).
    pub bank_conflicts: bool,
    /// The watchdog: any activity in a cycle at or past this limit stops the run.
    pub max_cycles: u64,
    /// The task scheduler's latencies (CF 1 cycle, broadcast 4 cycles by default).
    pub timing: Timing,
    /// How much of the task timeline the report keeps ([`RunReport::tasks`]).
    ///
    /// [`RunReport::tasks`]: crate::RunReport::tasks
    pub tasks: TaskLog,
    /// Checkpoints: every core of a frame that can loop stops at each multiple of this many
    /// cycles (at least 1), where the run loop shows it the progress bar and proves loops
    /// that can never end (`livelock`). Changes the run's speed and the cycle a livelock is
    /// reported at, never anything else.
    pub checkpoint_cycles: u64,
}

impl Config {
    /// Default watchdog ([`Config::max_cycles`]): a run may take at most 2^32 cycles.
    pub const DEFAULT_MAX_CYCLES: u64 = 1 << 32;
    /// The largest cycle limit accepted (cycle numbers are packed with a core id into 64
    /// bits): a larger [`Config::max_cycles`] counts as this.
    pub const MAX_CYCLE_LIMIT: u64 = 1 << 58;
}

impl Default for Config {
    fn default() -> Self {
        Config {
            issue: IssuePolicy::InOrder,
            bank_conflicts: false,
            max_cycles: Config::DEFAULT_MAX_CYCLES,
            timing: Timing::default(),
            tasks: TaskLog::All,
            checkpoint_cycles: DEFAULT_CHECKPOINT_CYCLES,
        }
    }
}
