//! How a run ends: its report, or the error it fails with (a fault, a livelock, the
//! watchdog, a stop), built from the state the loop left.

use super::event_loop::Run;
use crate::backend::Backend;
use crate::config::Config;
use crate::cores::Mode;
use crate::memory::FaultRule;
use crate::observe::Observer;
use crate::report::{CoreWait, KeptTasks, RunError, RunReport, UnfinishedCore};

/// The run's outcomes.
impl<B: Backend, O: Observer> Run<'_, B, O> {
    pub(super) fn fault(
        &self,
        i: usize,
        rule: FaultRule,
        cycle: u64,
        addr: Option<u16>,
    ) -> RunError {
        RunError::Fault {
            rule,
            frame: self.cores.part(i).frame,
            core: i as u8,
            ip: self.cores.state[i].ip,
            cycle,
            addr,
        }
    }

    /// Core `i` was proven to repeat every `period` cycles (see [`Proofs::checkpoint`](super::proofs::Proofs::checkpoint)).
    pub(super) fn livelock(&mut self, i: usize, period: u64, polls: bool) -> RunError {
        let RunError::Watchdog {
            cores, next_frame, ..
        } = self.watchdog()
        else {
            unreachable!("watchdog() makes a watchdog report")
        };
        RunError::Livelock {
            core: i as u8,
            frame: self.cores.part(i).frame,
            ip: self.cores.state[i].ip,
            period,
            polls,
            cycle: self.cores.state[i].cycle,
            cores,
            next_frame,
        }
    }

    /// The run reached its watchdog limit: the watchdog, or the stop that lowered it.
    pub(super) fn limit_reached(&mut self) -> RunError {
        let watchdog = self.watchdog();
        match (self.tele.stopped, watchdog) {
            (
                Some(cause),
                RunError::Watchdog {
                    limit,
                    cores,
                    next_frame,
                },
            ) => RunError::Stopped {
                cause,
                cycle: limit,
                cores,
                next_frame,
            },
            (_, w) => w,
        }
    }

    pub(super) fn watchdog(&mut self) -> RunError {
        let mut cores = Vec::new();
        for i in 0..16 {
            let part = self.cores.part(i);
            let core = &self.cores.state[i];
            let wait = match self.cores.mode(i) {
                Mode::Idle => continue,
                Mode::Runnable if core.cycle == part.start => {
                    CoreWait::NotStarted { start: part.start }
                }
                Mode::Runnable
                | Mode::Parked { bank_retry: false }
                | Mode::Faulted { .. }
                | Mode::Looping { .. } => CoreWait::Running,
                Mode::Parked { bank_retry: true } => CoreWait::BankConflict,
                Mode::Sleeping { bank, .. } => {
                    let since = self.waits.since(i);
                    let (holder, addr) = self.memory.bank_lock(bank).unwrap_or((i as u8, 0));
                    CoreWait::Lock {
                        addr,
                        holder,
                        since,
                    }
                }
            };
            cores.push(UnfinishedCore {
                core: i as u8,
                frame: part.frame,
                ip: core.ip,
                wait,
            });
        }
        RunError::Watchdog {
            limit: self.config.max_cycles,
            cores,
            next_frame: self.driver.ts.next_frame(),
        }
    }

    pub(super) fn end_cycle(&self) -> u64 {
        let last = match (self.driver.ts.last_activity(), self.driver.last_core_cycle) {
            (Some(a), Some(b)) => Some(a.max(b)),
            (a, b) => a.or(b),
        };
        last.map_or(0, |l| l + 1)
    }

    pub(super) fn report(&mut self) -> RunReport {
        self.report_tasks(KeptTasks::Take)
    }

    /// The run's report, with the task records kept so far as `kept` says.
    pub(super) fn report_tasks(&mut self, kept: KeptTasks) -> RunReport {
        let mut counters = self.counters;
        for (i, (c, core)) in counters.iter_mut().zip(&self.cores.state).enumerate() {
            c.instructions = core.instructions;
            c.lock_stalls = self.waits.charged(i);
            c.stalls += c.lock_stalls;
        }
        RunReport {
            backend: self.backend.name().to_string(),
            config: Config {
                max_cycles: self.tele.asked_limit,
                ..self.config
            },
            dialect: self.driver.ts.frames().dialect(),
            cycles: self.end_cycle(),
            registers: std::array::from_fn(|i| self.cores.state[i].regs),
            memory: self.memory.bytes(),
            tasks: match kept {
                KeptTasks::Take => self.driver.ts.take_records(),
                KeptTasks::Copy => self.driver.ts.records(),
                KeptTasks::Leave => Vec::new(),
            },
            task_summary: self.driver.ts.summary.clone(),
            instructions: counters.iter().map(|c| c.instructions).sum(),
            stalls: counters.iter().map(|c| c.stalls).sum(),
            cores: counters,
            memory_stats: self.memory.stats(),
        }
    }
}
