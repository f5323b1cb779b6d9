//! Stopping a run from outside the machine: a wall-clock limit (`--timeout`) and Ctrl-C.
//! Either sets one shared flag; the run loop asks for it where it reports progress, then
//! ends the run like the watchdog at the cycle it had reached (`RunError::Stopped`), so the
//! report lists every unfinished core. A second Ctrl-C ends the process at once.
//!
//! Signals are handled for the whole process by one handler ([`handle_signals`]): Ctrl-C
//! (SIGINT), SIGTERM and SIGHUP, each known for which it is. While a command [`listen`]s (a
//! run, a debugging session), the listener decides what a signal does; otherwise, or when
//! it declines, the process ends at once with 128 + the signal's number ([`exit_at_once`]),
//! after removing the temporary files of the outputs it was writing, so no signal leaves
//! one behind.
//!
//! The handler is no signal handler in the C sense: the three signals are blocked in every
//! thread (the mask is set before any other thread starts, and threads inherit it) and one
//! thread waits for them with `sigwait`, so what a signal does runs as ordinary code, safe
//! to lock, allocate and print.

use gpu16_machine::{Observer, StopCause};
use std::sync::atomic::{AtomicBool, AtomicU8, Ordering};
use std::sync::{Arc, Mutex, MutexGuard, OnceLock, PoisonError};
use std::time::Duration;

/// A signal the process handles.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Signal {
    /// SIGINT: Ctrl-C at a terminal.
    Interrupt,
    /// SIGHUP: the terminal went away.
    Hangup,
    /// SIGTERM: asked to end (`kill`, `timeout`).
    Terminate,
}

impl Signal {
    /// The status of a process this signal ends: 128 + its number, as a shell reports a
    /// process a signal killed (130 for SIGINT, 129 for SIGHUP, 143 for SIGTERM).
    pub fn status(self) -> i32 {
        128 + match self {
            Signal::Hangup => 1,
            Signal::Interrupt => 2,
            Signal::Terminate => 15,
        }
    }
}

/// What a signal does while a command listens: `true` if the listener took it, `false` to
/// end the process at once.
type Listener = Box<dyn FnMut(Signal) -> bool + Send>;

static LISTENER: Mutex<Option<Listener>> = Mutex::new(None);

fn listener() -> MutexGuard<'static, Option<Listener>> {
    LISTENER.lock().unwrap_or_else(PoisonError::into_inner)
}

/// Handle Ctrl-C, SIGTERM and SIGHUP for the whole process, from now on: each goes to the
/// listener ([`listen`]), or ends the process at once ([`exit_at_once`]). Call it before
/// any other thread starts: the signals are blocked in the calling thread, and only the
/// threads started after that inherit the mask (a thread started before would die of a
/// signal delivered to it). Installed once; later calls give the first call's result.
/// Fails only if the signals cannot be blocked or the waiting thread cannot start.
pub fn handle_signals() -> Result<(), String> {
    static INSTALLED: OnceLock<Result<(), String>> = OnceLock::new();
    INSTALLED.get_or_init(install).clone()
}

#[cfg(unix)]
fn install() -> Result<(), String> {
    use nix::sys::signal::{SigSet, Signal as Number};
    let set: SigSet = [Number::SIGINT, Number::SIGTERM, Number::SIGHUP]
        .into_iter()
        .collect();
    set.thread_block()
        .map_err(|e| format!("cannot handle signals: {e}"))?;
    let waiting = std::thread::Builder::new()
        .name("signals".into())
        .spawn(move || loop {
            // Only EINTR-like failures are possible for a valid set: wait again.
            let Ok(number) = set.wait() else { continue };
            let signal = match number {
                Number::SIGINT => Signal::Interrupt,
                Number::SIGHUP => Signal::Hangup,
                _ => Signal::Terminate,
            };
            let taken = listener().as_mut().is_some_and(|listen| listen(signal));
            if !taken {
                exit_at_once(signal);
            }
        });
    if let Err(e) = waiting {
        // Nobody would hear them: let them act as they did before.
        let _ = set.thread_unblock();
        return Err(format!("cannot handle signals: {e}"));
    }
    Ok(())
}

#[cfg(not(unix))]
fn install() -> Result<(), String> {
    Err("signals are handled on Unix only".into())
}

/// End the process now with `signal`'s status ([`Signal::status`]: 130 for Ctrl-C), after
/// removing the temporary files of outputs being written
/// ([`remove_staged`](crate::run_output::file::remove_staged)).
pub fn exit_at_once(signal: Signal) -> ! {
    crate::run_output::file::remove_staged();
    std::process::exit(signal.status())
}

/// Run `on_deadline` once `limit` has passed, unless the returned guard was dropped first:
/// for the loading of inputs, where an open or a read can block (a FIFO no one writes)
/// before anything polls a [`StopSignal`], so that `--timeout` holds there too.
pub fn deadline(limit: Duration, on_deadline: impl FnOnce() + Send + 'static) -> Deadline {
    let armed = Arc::new(AtomicBool::new(true));
    let flag = armed.clone();
    std::thread::spawn(move || {
        std::thread::sleep(limit);
        if flag.load(Ordering::Relaxed) {
            on_deadline();
        }
    });
    Deadline(armed)
}

/// An armed [`deadline`]; dropped, it is disarmed.
#[derive(Debug)]
pub struct Deadline(Arc<AtomicBool>);

impl Drop for Deadline {
    fn drop(&mut self) {
        self.0.store(false, Ordering::Relaxed);
    }
}

/// Have `take` decide what a signal does until the returned guard is dropped: it returns
/// `true` if it took the signal, `false` to end the process at once. Signals reach it only
/// once [`handle_signals`] has been called.
pub fn listen(take: impl FnMut(Signal) -> bool + Send + 'static) -> Listening {
    *listener() = Some(Box::new(take));
    Listening(())
}

/// A listener in place ([`listen`]); dropped, signals end the process at once again.
#[derive(Debug)]
pub struct Listening(());

impl Drop for Listening {
    fn drop(&mut self) {
        *listener() = None;
    }
}

const NONE: u8 = 0;
const TIMEOUT: u8 = 1;
const INTERRUPT: u8 = 2;

/// The largest `--timeout`, in seconds (about 31 years): past it a timeout is no limit.
pub const MAX_TIMEOUT_SECS: f64 = 1e9;

/// The flag a timer or a Ctrl-C handler raises and a run polls; as an [`Observer`], it
/// hears nothing and answers [`Observer::stop_requested`].
#[derive(Clone, Debug, Default)]
pub struct StopSignal {
    raised: Arc<AtomicU8>,
}

impl StopSignal {
    /// A signal nobody has raised.
    pub fn new() -> StopSignal {
        StopSignal::default()
    }

    /// Why it was raised, if it was: the first cause wins.
    pub(crate) fn cause(&self) -> Option<StopCause> {
        match self.raised.load(Ordering::Relaxed) {
            TIMEOUT => Some(StopCause::Timeout),
            INTERRUPT => Some(StopCause::Interrupt),
            _ => None,
        }
    }

    /// Raise it for `cause`, unless it already was.
    pub(crate) fn raise(&self, cause: StopCause) {
        let code = match cause {
            StopCause::Timeout => TIMEOUT,
            StopCause::Interrupt => INTERRUPT,
        };
        let _ = self
            .raised
            .compare_exchange(NONE, code, Ordering::Relaxed, Ordering::Relaxed);
    }

    /// Raise it as a timeout after `limit` of wall-clock time, from a timer thread that
    /// lives no longer than the process needs it (it holds nothing the process waits on).
    pub fn arm_timeout(&self, limit: Duration) {
        let signal = self.clone();
        std::thread::spawn(move || {
            std::thread::sleep(limit);
            signal.raise(StopCause::Timeout);
        });
    }

    /// Raise it on Ctrl-C (or SIGTERM, SIGHUP) while the returned guard lives; a second
    /// signal ends the process at once ([`exit_at_once`]), as does any signal once the
    /// guard is dropped. Fails only if the process's handler cannot be set
    /// ([`handle_signals`]).
    pub fn on_ctrl_c(&self) -> Result<Listening, String> {
        handle_signals()?;
        let signal = self.clone();
        let mut heard = false;
        Ok(listen(move |_| {
            if heard {
                return false;
            }
            heard = true;
            signal.raise(StopCause::Interrupt);
            true
        }))
    }
}

impl Observer for StopSignal {
    const WANTS_EVENTS: bool = false;
    const WANTS_PROGRESS: bool = true;

    fn stop_requested(&mut self) -> Option<StopCause> {
        self.cause()
    }

    fn rewind_events(&mut self, _cycle: u64) {}
}

/// Parse a `--timeout` value: seconds, a decimal number greater than 0 and at most
/// [`MAX_TIMEOUT_SECS`].
pub fn parse_timeout(text: &str) -> Result<Duration, String> {
    let secs: f64 = text
        .trim()
        .parse()
        .map_err(|_| format!("`{text}` is not a number of seconds"))?;
    if !(secs > 0.0 && secs <= MAX_TIMEOUT_SECS) {
        return Err(format!(
            "{text} is not in the range of a timeout: more than 0 and at most {MAX_TIMEOUT_SECS:e} seconds"
        ));
    }
    Ok(Duration::from_secs_f64(secs))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_first_cause_wins() {
        let s = StopSignal::new();
        assert_eq!(s.cause(), None);
        s.raise(StopCause::Timeout);
        s.raise(StopCause::Interrupt);
        assert_eq!(s.clone().stop_requested(), Some(StopCause::Timeout));
    }

    #[test]
    fn timeouts_are_positive_and_bounded() {
        assert_eq!(parse_timeout("1.5"), Ok(Duration::from_millis(1500)));
        for bad in ["0", "-1", "nan", "inf", "1e10", "soon", ""] {
            assert!(parse_timeout(bad).is_err(), "{bad}");
        }
    }
}
