//! Lock waits: the one owner of the rule "a core whose access finds a byte's sequence held
//! sleeps, retries when the holder's `st_sync` closes it, and is charged a stall for every
//! cycle in between". It keeps, for every core, the access it sleeps on (or, woken, retries)
//! and since when, the cycle of its retry, and the ledger of stall cycles charged to it;
//! and it decides a herd: sleepers woken together of whom all but the first go back to
//! sleep at once (the run loop's cores answer a settling herd through `Herd`, so each goes
//! to sleep in the one pass that finds it).
//!
//! The run loop and every [`Port`](crate::backend::Port) (and through the port, each
//! engine's compiled code) change waits only through these methods. The lock itself (who
//! holds a bank's sequence, who is queued on it, whom its close wakes and when each retries)
//! is the memory's: [`SharedMemory`] and [`Wakes`].

use crate::config::INSTRUCTION_CYCLES;
use crate::event_key::EventKey;
use crate::isa::MemOp;
use crate::memory::{bank_of, SharedMemory, Wakes, BANKS};

/// One stretch of cycles a running core slept on a lock, from its stalled attempt up to
/// (not including) the retry its wake-up gave it; charged to it as stalls.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct LockStall {
    /// The core that slept.
    pub core: u8,
    /// The cycle of its stalled attempt, the first stalled cycle.
    pub from: u64,
    /// The cycle of its retry (exclusive): `to - from` stalled cycles.
    pub to: u64,
    /// The byte address (0..4095) whose lock it waited for.
    pub addr: u16,
}

/// The run loop's cores as [`LockWaits::settle`] meets them: which are parked to retry,
/// with their event keys, and where it puts one to sleep (the loop's core table keeps its
/// mode). Asked core by core in one pass, so a herd goes to sleep in that pass.
pub(crate) trait Herd {
    /// Core `j`'s event key if it is parked to retry below the limit, else `None`.
    fn parked(&self, j: usize) -> Option<EventKey>;
    /// Core `j` goes to sleep on `addr`.
    fn asleep(&mut self, j: usize, addr: u16);
}

/// Every core's lock wait and the stall ledger; see the module docs.
#[derive(Clone, Debug)]
pub(crate) struct LockWaits {
    /// The cores asleep on a lock, as a mask.
    asleep: u16,
    /// For each core, whether the access it last slept on is an `ld_sync` (meaningful only
    /// for the sleepers of `asleep`).
    ld_sync_sleepers: u16,
    /// Cores woken by a close and parked to retry their access in the run loop, which
    /// [`LockWaits::retrying`] names (the run loop may put them back to sleep).
    retrying: u16,
    /// For a sleeper, the first cycle of its sleep not yet charged (its stalled attempt,
    /// until it is charged); and the access (op, address) each sleeping or retrying core
    /// waits to perform.
    since: [u64; 16],
    access: [(MemOp, u16); 16],
    /// The cycle of each woken core's retry.
    retry_at: [u64; 16],
    /// Lock-stall cycles charged to each core over the run: the one ledger.
    charged: [u64; 16],
    /// Sleepers a herd sent back to sleep whose charge lags (see [`LockWaits::herd`]), and
    /// for each bank the last such herd.
    lagging: u16,
    herd: [Wakes; BANKS],
    /// Each charged stretch of a port's sleepers, where the run reports events (`None`
    /// where it does not); the run loop drains it after each port.
    log: Option<Vec<LockStall>>,
}

impl LockWaits {
    /// A copy (a snapshot's) whose charged stretches are logged if `log`.
    pub(crate) fn copy_logging(&self, log: bool) -> LockWaits {
        LockWaits {
            log: log.then(Vec::new),
            ..self.clone()
        }
    }

    /// No core waits; each charged stretch of a port's sleepers is logged if `log`.
    #[inline]
    pub(crate) fn new(log: bool) -> LockWaits {
        LockWaits {
            asleep: 0,
            ld_sync_sleepers: 0,
            retrying: 0,
            since: [0; 16],
            access: [(MemOp::Ld, 0); 16],
            retry_at: [0; 16],
            charged: [0; 16],
            lagging: 0,
            herd: [Wakes::default(); BANKS],
            log: log.then(Vec::new),
        }
    }

    /// Core `core`'s access `op` of `addr` (12 bits) stalled on a lock in `cycle`: it sleeps
    /// from `cycle` until the sequence open on the address's bank closes.
    #[inline]
    pub(crate) fn sleep(
        &mut self,
        memory: &mut SharedMemory,
        core: u8,
        op: MemOp,
        addr: u16,
        cycle: u64,
    ) {
        let (i, bit) = (usize::from(core & 0xF), 1u16 << (core & 0xF));
        // A core retrying in the run loop runs (see `run`) or is settled (`settle`) before it
        // can sleep again, and both take it out of `retrying` first.
        debug_assert!(
            self.retrying & bit == 0,
            "core {core} sleeps while retrying"
        );
        memory.sleep_on(bank_of(addr), core);
        self.asleep |= bit;
        self.ld_sync_sleepers =
            (self.ld_sync_sleepers & !bit) | u16::from(op == MemOp::LdSync) << i;
        self.since[i] = cycle;
        self.access[i] = (op, addr);
    }

    /// The cores asleep on a lock, as a mask.
    #[inline]
    pub(crate) fn asleep(&self) -> u16 {
        self.asleep
    }

    /// The first cycle of sleeper `core`'s sleep not yet charged: its stalled attempt.
    #[inline]
    pub(crate) fn since(&self, core: usize) -> u64 {
        self.since[core]
    }

    /// The access (op, address) sleeping or retrying core `core` waits to perform.
    #[inline]
    pub(crate) fn access(&self, core: usize) -> (MemOp, u16) {
        self.access[core]
    }

    /// The cycle in which woken core `core` retries.
    #[inline]
    pub(crate) fn retry_at(&self, core: usize) -> u64 {
        self.retry_at[core]
    }

    /// Lock-stall cycles charged to core `core` so far.
    #[inline]
    pub(crate) fn charged(&self, core: usize) -> u64 {
        self.charged[core]
    }

    /// The logged stretches, for the run loop to report.
    #[inline]
    pub(crate) fn drain_log(&mut self) -> impl Iterator<Item = LockStall> + '_ {
        self.log.iter_mut().flat_map(|l| l.drain(..))
    }

    /// Charge sleeper `core` every cycle from its sleep's first uncharged one up to (not
    /// including) `at`, the cycle of its retry, from which it is awake or asleep again.
    /// Returns the stretch charged.
    #[inline]
    fn charge(&mut self, core: u8, at: u64) -> LockStall {
        let i = usize::from(core);
        let stretch = LockStall {
            core,
            from: self.since[i],
            to: at,
            addr: self.access[i].1,
        };
        self.charged[i] += at - self.since[i];
        self.since[i] = at;
        stretch
    }

    /// Sleeper `core` was woken to retry in cycle `at` by the run loop, which parks it to
    /// retry in turn. Returns the stretch charged, for the run loop to report.
    #[inline]
    pub(crate) fn wake_to_retry(&mut self, core: u8, at: u64) -> LockStall {
        let bit = 1u16 << core;
        self.asleep &= !bit;
        self.retrying |= bit;
        self.retry_at[usize::from(core)] = at;
        self.charge(core, at)
    }

    /// Cores woken by a close and parked to retry, as a mask.
    #[cfg(test)]
    fn retrying(&self) -> u16 {
        self.retrying
    }

    /// The cores of `cores` run again (retrying or not): none is parked to retry any more.
    #[inline]
    pub(crate) fn run(&mut self, cores: u16) {
        self.retrying &= !cores;
    }

    /// Core `core`, outside the cores a port runs (none of them runs while a port lives),
    /// was woken to retry in cycle `at`, as [`Wakes::retry`] says; the run loop wakes it
    /// when the port ends.
    #[inline]
    pub(crate) fn note_retry(&mut self, core: u8, at: u64) {
        self.retry_at[usize::from(core)] = at;
    }

    /// A close woke sleepers among `running`, the cores a port runs: each retries in the
    /// cycle [`Wakes::retry`] gives it. Returns the cores that retry now; the others of a
    /// herd went back to sleep.
    ///
    /// A herd is served at once: where every core the close wakes is a running core
    /// waiting to `ld_sync` (with no bank-conflict model, and both retry cycles below
    /// `limit`), the first retry either opens the bank's next sequence or finds one opened
    /// since, and that sequence cannot close before the last retry (it closes at the
    /// earliest in the cycle after it opened, from its holder, who acts after every retry
    /// of that cycle). So every other retry stalls on it, and each of those cores sleeps
    /// again from its retry cycle now, as it would retrying in turn; only the first retry
    /// is the port's to make.
    ///
    /// Where nothing is logged, the cores a herd sends back to sleep are left as they are
    /// (`lagging`), and the herd is remembered for their bank: a core's stalled cycles add
    /// up (retry - sleep start) over its sleeps, and each sleep starts where the last
    /// ended, so the sum is the same if it is charged once, from the first sleep's start to
    /// the last retry. That is done when the core is woken otherwise, or at
    /// [`LockWaits::catch_up`] with the last herd's retry; so a contended lock costs one
    /// core's work a hand-over, not the whole herd's.
    #[inline]
    pub(crate) fn wake_running(
        &mut self,
        memory: &mut SharedMemory,
        wakes: Wakes,
        running: u16,
        limit: u64,
    ) -> u16 {
        let woken = wakes.mask() & self.asleep & running;
        if woken == 0 {
            return 0;
        }
        let herd = !memory.bank_conflicts()
            && wakes.cycle() + 1 < limit
            && wakes.mask() & !(self.asleep & running & self.ld_sync_sleepers) == 0;
        let again = match wakes.first() {
            Some(first) if herd => woken & !(1 << first),
            _ => 0,
        };
        let lag = if self.log.is_none() { again } else { 0 };
        let mut m = woken & !lag;
        while m != 0 {
            let w = m.trailing_zeros() as u8;
            m &= m - 1;
            let at = wakes.retry(w);
            let stretch = self.charge(w, at);
            if let Some(log) = &mut self.log {
                log.push(stretch);
            }
            self.retry_at[usize::from(w)] = at;
        }
        self.lagging = (self.lagging & !woken) | lag;
        let retrying = woken & !again;
        self.asleep &= !retrying;
        if again != 0 {
            let bank = bank_of(self.access[again.trailing_zeros() as usize].1);
            memory.sleep_all_on(bank, again);
            if lag != 0 {
                self.herd[bank] = wakes;
            }
        }
        retrying
    }

    /// A sequence just opened on `bank` in cycle `opened`, by `holder`. A retrying core
    /// (parked, with its event key given by `parked`, `None` where it is not parked or
    /// past the limit) whose access to the bank comes after that `ld_sync`, yet before the
    /// holder's next instruction (the earliest the sequence can close), meets the lock as
    /// it is now: where the lock blocks it, it goes to sleep now, from its retry's cycle,
    /// exactly as performing it in its turn would. Returns the cores put to sleep.
    ///
    /// This is the run loop's side of a herd ([`LockWaits::wake_running`] is a port's): it
    /// spares a sequence's waiters, woken together when it closes and all but one blocked
    /// again by the next holder, one trip each through the run loop.
    #[inline]
    pub(crate) fn settle(
        &mut self,
        memory: &mut SharedMemory,
        bank: usize,
        holder: u8,
        opened: u64,
        mut herd: impl Herd,
    ) -> u16 {
        let after = EventKey::new(opened, holder);
        let before = EventKey::new(opened + INSTRUCTION_CYCLES, holder);
        let (mut slept, mut ld_sync) = (0u16, 0u16);
        let mut retrying = self.retrying;
        while retrying != 0 {
            let j = retrying.trailing_zeros() as usize;
            retrying &= retrying - 1;
            let (op, addr) = self.access[j];
            if bank_of(addr) != bank {
                continue;
            }
            let Some(key) = herd.parked(j).filter(|&k| k > after && k < before) else {
                continue;
            };
            // A sleeper holds no lock and never sleeps on a `st_sync`, so only the lock rule
            // can answer for it.
            debug_assert!(memory.held(j as u8).is_none() && op != MemOp::StSync);
            if memory.lock_stall(j as u8, op, addr).is_some() {
                // As `sleep` would, on the access it retries (already in `access`), for the
                // whole herd at once below.
                slept |= 1 << j;
                ld_sync |= u16::from(op == MemOp::LdSync) << j;
                self.since[j] = key.cycle();
                herd.asleep(j, addr);
            }
        }
        if slept != 0 {
            self.retrying &= !slept;
            memory.sleep_all_on(bank, slept);
            self.asleep |= slept;
            self.ld_sync_sleepers = (self.ld_sync_sleepers & !slept) | ld_sync;
        }
        slept
    }

    /// Bring the charges of the sleepers a herd sent back to sleep up to date, with their
    /// bank's last herd's retry (see [`LockWaits::wake_running`]); a port does this as it
    /// ends.
    #[inline]
    pub(crate) fn catch_up(&mut self) {
        let mut m = std::mem::take(&mut self.lagging);
        while m != 0 {
            let w = m.trailing_zeros() as u8;
            m &= m - 1;
            let herd = self.herd[bank_of(self.access[usize::from(w)].1)];
            self.charge(w, herd.retry(w));
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Hand-worked: core 3 sleeps on 0x105 from cycle 10; woken to retry in 14, it was
    /// charged 4 cycles, the stretch [10, 14).
    #[test]
    fn a_wake_charges_the_cycles_since_the_stalled_attempt() {
        let mut memory = SharedMemory::new(&[], false);
        let mut waits = LockWaits::new(false);
        waits.sleep(&mut memory, 3, MemOp::Ld, 0x105, 10);
        assert_eq!(waits.asleep(), 1 << 3);
        let stretch = waits.wake_to_retry(3, 14);
        assert_eq!(
            stretch,
            LockStall {
                core: 3,
                from: 10,
                to: 14,
                addr: 0x105
            }
        );
        assert_eq!(
            (waits.charged(3), waits.asleep(), waits.retrying()),
            (4, 0, 1 << 3)
        );
        assert_eq!(waits.retry_at(3), 14);
    }
}
