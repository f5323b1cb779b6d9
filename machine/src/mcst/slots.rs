//! A core of the MCST slot model (mcst-dialect.md section 5.2): the slots it executes in
//! program order (instructions, bubbles B1-B3, the implicit ready after IP 15), the B value
//! each slot carries for the bank-switch rule, and its memory slot while it waits for a
//! grant. What an instruction does is [`crate::semantics::execute`]'s.

use crate::config::SlotTiming;
use crate::isa::{Instr, FRAME_INSTRS};

/// One of the last slots a core executed, as the bubble rules see it. Four bytes
/// aligned, so that each slot's shift of the last three moves three words, not nine bytes.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[repr(align(4))]
pub(super) enum Past {
    /// An `ld` into `dest`, whose row register held `row`.
    Load { dest: u8, row: u8 },
    /// Any other instruction.
    Other,
    /// A bubble.
    Bubble,
}

/// An `ld` or `st` slot waiting for, or holding, its bank.
#[derive(Clone, Copy, Debug)]
pub(super) struct MemorySlot {
    /// `ld` (true) or `st`.
    pub load: bool,
    /// The address, bank = bits 11:8.
    pub addr: u16,
    /// The register a load writes.
    pub reg: u8,
    /// The byte a store writes.
    pub value: u8,
    /// The slot's first cycle.
    pub start: u64,
    /// The B value of the slot before it (for the bank-switch rule).
    pub prev_b: u8,
    /// A load's grant that counts: it read memory then.
    pub read_at: Option<u64>,
    /// The slot's own B value (`R[b]`, the bank register).
    pub b: u8,
    /// The row register's value, `R[a]`.
    pub row: u8,
    /// The byte a load's register held before it (for the execution log).
    pub old: u8,
}

impl MemorySlot {
    /// The bank it requests.
    pub fn bank(&self) -> usize {
        usize::from(self.addr >> 8)
    }
}

/// Where a core stands.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) enum Phase {
    /// Idle (the RTL's `Ready`).
    Idle,
    /// Running a task: its next slot starts in `next` (or its memory slot is under way).
    Running,
}

/// One core.
#[derive(Clone, Debug)]
pub(super) struct Core {
    pub id: u8,
    pub regs: [u8; 16],
    pub phase: Phase,
    /// The task's code and words (the words give the B2 and B-value fields).
    pub code: [Instr; FRAME_INSTRS],
    pub words: [u16; FRAME_INSTRS],
    /// The task's instruction frame and its index in the run's task list.
    pub frame: usize,
    pub task: usize,
    pub ip: u8,
    /// The cycle its next slot starts.
    pub next: u64,
    /// The cycle of its part's first slot.
    pub part_start: u64,
    /// B1 bubbles still due.
    pub bubbles: u64,
    /// A B2/B3 bubble has gone before the instruction at `ip`.
    pub bubbled: bool,
    /// The next slot is the implicit ready after IP 15.
    pub implicit_ready: bool,
    /// The last three slots, the latest first.
    pub past: [Past; 3],
    /// The B value of the latest slot; `None` before a task's first slot (it sees R0).
    pub prev_b: Option<u8>,
    /// The memory slot under way.
    pub memory: Option<MemorySlot>,
}

impl Core {
    pub fn new(id: u8) -> Core {
        Core {
            id,
            regs: [0; 16],
            phase: Phase::Idle,
            code: [Instr::Nop; FRAME_INSTRS],
            words: [0; FRAME_INSTRS],
            frame: 0,
            task: 0,
            ip: 0,
            next: 0,
            part_start: 0,
            bubbles: 0,
            bubbled: false,
            implicit_ready: false,
            past: [Past::Other; 3],
            prev_b: None,
            memory: None,
        }
    }

    /// Start a task whose first slot is in `start`.
    pub fn start(&mut self, frame: usize, task: usize, words: [u16; FRAME_INSTRS], start: u64) {
        self.phase = Phase::Running;
        self.frame = frame;
        self.task = task;
        self.words = words;
        self.code = words.map(Instr::decode_mcst);
        self.ip = 0;
        self.next = start;
        self.part_start = start;
        self.bubbles = 0;
        self.bubbled = false;
        self.implicit_ready = false;
        self.past = [Past::Other; 3];
        self.prev_b = None;
        self.memory = None;
    }

    /// Record a finished slot.
    pub fn push(&mut self, past: Past, b: u8) {
        self.past = [past, self.past[0], self.past[1]];
        self.prev_b = Some(b);
    }

    /// The previous slot's B value (R0 before a task's first slot).
    pub fn prev_b(&self) -> u8 {
        self.prev_b.unwrap_or(self.regs[0])
    }

    /// Whether a B2 or B3 bubble goes before the instruction at `ip`.
    pub fn needs_bubble(&self, t: &SlotTiming) -> bool {
        let word = self.words[usize::from(self.ip)];
        let opc = word >> 12;
        let fa = ((word >> 8) & 0xF) as u8;
        let fb = ((word >> 4) & 0xF) as u8;
        let b2 = t.load_use_bubbles > 0
            && match self.past[0] {
                Past::Load { dest, .. } => match opc {
                    1..=11 => dest == fa || dest == fb,
                    0xe => dest == fa,
                    _ => false,
                },
                _ => false,
            };
        let b3 = t.branch_after_load_bubbles > 0
            && opc == 0xe
            && matches!(self.past[2], Past::Load { .. });
        b2 || b3
    }

    /// The B value of the instruction at `ip`, read before it executes: R[b field], except
    /// that a nop, set_const, bnz or ready right after an ld into its b field carries the
    /// ld's row (section 5.3).
    pub fn b_value(&self) -> u8 {
        let word = self.words[usize::from(self.ip)];
        let fb = ((word >> 4) & 0xF) as u8;
        if let Past::Load { dest, row } = self.past[0] {
            if dest == fb && matches!(word >> 12, 0x0 | 0xc | 0xe | 0xf) {
                return row;
            }
        }
        self.regs[usize::from(fb)]
    }
}
