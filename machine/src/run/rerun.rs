//! A failed run's second run: a fault or a livelock is reported as the machine stood when
//! its cycle began, which a run stopped there by the watchdog gives exactly whatever the
//! engine, with the first run's observer hearing that run's events in place of its own.

use super::event_loop::run_once;
use super::Start;
use crate::backend::Backend;
use crate::config::Config;
use crate::observe::{Event, Observer};
use crate::report::{RunError, RunFailure};
use crate::task_memory::FrameSource;

/// The cycle as it began which a failure's state is taken again from a second run (see
/// [`state_when_cycle_began`]): a fault's below the watchdog, or where a livelock was
/// proven.
pub(crate) fn rewind_cycle(error: &RunError, max_cycles: u64) -> Option<u64> {
    match *error {
        RunError::Fault { cycle, .. } if max_cycles > cycle => Some(cycle),
        RunError::Livelock { cycle, .. } => Some(cycle),
        _ => None,
    }
}

/// Give `failure` the state of `stop`, the watchdog stop of a second run when the
/// failure's cycle began. Cores other than a looping one may have run past the checkpoint
/// when it was proven, so a livelock's unfinished cores are listed as they stood then too.
pub(crate) fn adopt_state(failure: &mut RunFailure, stop: RunFailure) {
    if let (
        RunError::Livelock {
            cores, next_frame, ..
        },
        RunError::Watchdog {
            cores: at,
            next_frame: next,
            ..
        },
    ) = (&mut failure.error, stop.error)
    {
        *cores = at;
        *next_frame = next;
    }
    failure.state = stop.state;
}

/// The machine as it was when `cycle` began: every instruction of the earlier cycles
/// executed, none of `cycle` and later. How far cores had run ahead when a fault showed
/// depends on the engine (one core at a time, or groups in lockstep), so the state a fault
/// leaves is taken from a second run that stops at the fault's cycle, which every engine
/// reaches exactly (from `start`, where the first run began); that run's watchdog failure is returned, and its events are reported
/// to `observer` in place of the first run's ([`Observer::rewind_events`]). `None` if that
/// run does not stop there as the watchdog (it always should).
pub(super) fn state_when_cycle_began<B: Backend, O: Observer>(
    backend: &mut B,
    source: &mut dyn FrameSource,
    start: Start<'_>,
    config: &Config,
    cycle: u64,
    observer: &mut O,
) -> Option<RunFailure> {
    let stop = Config {
        max_cycles: cycle,
        ..*config
    };
    source.rewind().ok()?;
    let rerun = if O::WANTS_EVENTS {
        let mut rewound = Rewound {
            sink: observer,
            cycle,
        };
        run_once(backend, source, start, &stop, &mut rewound)
    } else {
        run_once(backend, source, start, &stop, &mut ())
    };
    match rerun? {
        Err((mut f, _)) if matches!(f.error, RunError::Watchdog { .. }) => {
            f.state.config = *config;
            Some(*f)
        }
        _ => None,
    }
}

/// What a failed run's second run reports to an observer that wants events: one type for
/// every observer, so the run loop is compiled once more per backend, not once per observer.
trait EventSink {
    fn rewind_events(&mut self, cycle: u64);
    fn event(&mut self, event: Event);
}

impl<O: Observer> EventSink for O {
    fn rewind_events(&mut self, cycle: u64) {
        Observer::rewind_events(self, cycle);
    }
    fn event(&mut self, event: Event) {
        Observer::event(self, event);
    }
}

/// The observer of a failed run's second run ([`state_when_cycle_began`]): it has the
/// first run's observer forget that run's events and hands it the second run's, and
/// nothing else (the first run reported its progress, instructions and tasks).
struct Rewound<'a> {
    sink: &'a mut dyn EventSink,
    cycle: u64,
}

impl Observer for Rewound<'_> {
    fn start(&mut self, _config: &Config) {
        self.sink.rewind_events(self.cycle);
    }
    fn event(&mut self, event: Event) {
        self.sink.event(event);
    }
    /// Never called: the second run ends at the watchdog, which rewinds nothing.
    fn rewind_events(&mut self, _cycle: u64) {}
}
