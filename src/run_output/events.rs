//! The event recorder behind `--trace`, `--timeline` and `--vcd`: an observer that keeps the
//! run's events in cycle order, bounded in memory. The run command hands it to the machine
//! only when one of those outputs is asked for; plain runs use the no-op observer.
//!
//! Events arrive grouped per core, not in cycle order, so a plain "stop after N events" would
//! keep an arbitrary, gappy subset. The recorder instead keeps every event that starts before
//! a cutoff cycle and lowers the cutoff whenever it holds too many: what survives is a clean
//! prefix in time ("everything before cycle C"), which the writers can state honestly.

use super::core_trace::CoreChanges;
use gpu16_machine::{Config, Event, Observer};

/// The recorder's default limit on kept events.
pub const DEFAULT_LIMIT: usize = 200_000;

/// The first cycle of an event: the key events are ordered and cut by.
pub fn start_of(e: &Event) -> u64 {
    match *e {
        Event::ControlFrame { cycle, .. } => cycle,
        Event::Broadcast { from, .. } => from,
        Event::SchedulerWait { from, .. } => from,
        Event::CorePart { start, .. } => start,
        Event::LockHeld { from, .. } => from,
        Event::Stall { from, .. } => from,
    }
}

/// Keeps a run's events, at most about `limit` of them, earliest cycles first.
#[derive(Clone, Debug)]
pub struct Recorder {
    limit: usize,
    events: Vec<Event>,
    /// Events starting at or after this cycle are dropped (u64::MAX: nothing dropped yet).
    cutoff: u64,
    /// How many events were kept after the last cut: the next cut waits for twice as many,
    /// so a pile of same-cycle events cannot make every push re-sort.
    floor: usize,
    seen: u64,
    config: Config,
    sorted: bool,
    /// What each core executed, for the VCD, and whether it shows the registers.
    cores: Option<(CoreChanges, bool)>,
}

impl Recorder {
    /// A recorder keeping at most `limit` events (at least one).
    pub(crate) fn new(limit: usize) -> Recorder {
        Recorder {
            limit: limit.max(1),
            events: Vec::new(),
            cutoff: u64::MAX,
            floor: 0,
            seen: 0,
            config: Config::default(),
            sorted: true,
            cores: None,
        }
    }

    /// Keep what each core executed beside the events (`registers`: the VCD shows the
    /// registers too).
    pub(crate) fn set_cores(&mut self, changes: CoreChanges, registers: bool) {
        self.cores = Some((changes, registers));
    }

    /// What each core executed, if kept, and whether the VCD shows the registers.
    pub(crate) fn cores(&self) -> Option<(&CoreChanges, bool)> {
        self.cores.as_ref().map(|(c, r)| (c, *r))
    }

    /// The configuration the run started with.
    pub(crate) fn config(&self) -> &Config {
        &self.config
    }

    /// Every event the run reported, kept or not.
    pub(crate) fn seen(&self) -> u64 {
        self.seen
    }

    /// Events dropped by the limit.
    pub(crate) fn dropped(&self) -> u64 {
        self.seen - self.events.len() as u64
    }

    /// If events were dropped: the cycle from which on none are kept. Every event that starts
    /// before it is kept.
    pub fn cut_at(&self) -> Option<u64> {
        (self.cutoff != u64::MAX).then_some(self.cutoff)
    }

    /// The kept events, ordered by start cycle (ties in the order the run reported them).
    pub fn events(&mut self) -> &[Event] {
        self.finish();
        &self.events
    }

    fn finish(&mut self) {
        if !self.sorted {
            self.events.sort_by_key(start_of);
            self.sorted = true;
        }
        if self.events.len() > self.limit {
            self.cut();
        }
    }

    fn cut(&mut self) {
        self.events.sort_by_key(start_of);
        self.sorted = true;
        let s = start_of(&self.events[self.limit]);
        // Cutting at the first cycle would keep nothing; keep that cycle whole instead.
        let cut = if s > start_of(&self.events[0]) {
            s
        } else {
            s + 1
        };
        let keep = self.events.partition_point(|e| start_of(e) < cut);
        self.events.truncate(keep);
        self.cutoff = self.cutoff.min(cut);
        self.floor = keep;
    }
}

impl Observer for Recorder {
    fn start(&mut self, config: &Config) {
        self.config = *config;
    }

    fn event(&mut self, event: Event) {
        self.seen += 1;
        let s = start_of(&event);
        if s >= self.cutoff {
            return;
        }
        if let Some(last) = self.events.last() {
            if start_of(last) > s {
                self.sorted = false;
            }
        }
        self.events.push(event);
        if self.events.len() > 2 * self.limit.max(self.floor) {
            self.cut();
        }
    }

    fn rewind_events(&mut self, _cycle: u64) {
        *self = Recorder {
            config: self.config,
            ..Recorder::new(self.limit)
        };
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn part(core: u8, start: u64) -> Event {
        Event::CorePart {
            core,
            frame: 1,
            start,
            end: start + 2,
        }
    }

    #[test]
    fn keeps_everything_under_the_limit_in_cycle_order() {
        let mut r = Recorder::new(10);
        for (c, s) in [(1, 7), (0, 3), (2, 5)] {
            r.event(part(c, s));
        }
        let starts: Vec<u64> = r.events().iter().map(start_of).collect();
        assert_eq!(starts, [3, 5, 7]);
        assert_eq!((r.dropped(), r.cut_at()), (0, None));
    }

    #[test]
    fn a_cut_keeps_a_clean_prefix_in_time() {
        let mut r = Recorder::new(3);
        // Out of order, as cores running ahead report them.
        for s in [9, 1, 8, 2, 7, 3, 6, 4, 5, 0] {
            r.event(part(0, s));
        }
        let starts: Vec<u64> = r.events().iter().map(start_of).collect();
        assert_eq!(starts, [0, 1, 2]);
        assert_eq!(r.cut_at(), Some(3));
        assert_eq!((r.seen(), r.dropped()), (10, 7));
    }

    #[test]
    fn same_cycle_events_are_kept_whole_rather_than_all_dropped() {
        let mut r = Recorder::new(2);
        for c in 0..5 {
            r.event(part(c, 4));
        }
        r.event(part(0, 9));
        assert_eq!(r.events().len(), 5);
        assert_eq!(r.cut_at(), Some(5));
    }

    #[test]
    fn a_rewind_forgets_every_event_and_cut_but_keeps_the_limit_and_config() {
        let mut r = Recorder::new(2);
        let config = Config {
            max_cycles: 77,
            ..Config::default()
        };
        r.start(&config);
        for s in [9, 1, 8, 2, 7] {
            r.event(part(0, s));
        }
        assert_eq!(r.cut_at(), Some(7));
        r.rewind_events(4);
        assert_eq!((r.seen(), r.dropped(), r.cut_at()), (0, 0, None));
        assert!(r.events().is_empty());
        assert_eq!(r.config().max_cycles, 77);
        // The limit still holds after it.
        for s in [3, 0, 2, 1] {
            r.event(part(0, s));
        }
        let starts: Vec<u64> = r.events().iter().map(start_of).collect();
        assert_eq!(starts, [0, 1]);
        assert_eq!(r.cut_at(), Some(2));
    }
}
