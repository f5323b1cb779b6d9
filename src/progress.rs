//! The progress bar of long runs: on stderr, shown only once a run has taken a second, only
//! when stderr is a terminal, and never with `--quiet`. It reports frames and tasks done, the
//! emulated cycle (which moves during a long frame too, at each checkpoint) and the emulated
//! instruction rate. [`CommandProgress`] is the same for one command of `gpu16 debug`, drawn
//! from a thread of its own while the session's thread runs the command.

use gpu16_machine::{Observer, Progress};
use indicatif::{ProgressBar, ProgressStyle};
use std::io::IsTerminal;
use std::sync::{Arc, Condvar, Mutex};
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

/// How long a command runs before its progress is shown.
const QUIET_FOR: Duration = Duration::from_secs(1);

/// How often a command's progress is redrawn.
const REDRAW: Duration = Duration::from_millis(200);

/// The progress of one debugger command on stderr, once it has run for a second: what
/// runs, the cycle its run has reached (a search re-executes from cycle 0, so it climbs to
/// the stop), the instructions and the time. Drawn by a thread of its own, which
/// [`CommandProgress::finish`] ends, removing the line.
pub struct CommandProgress {
    done: Arc<(Mutex<bool>, Condvar)>,
    thread: Option<JoinHandle<()>>,
}

impl CommandProgress {
    /// Start showing `what`'s progress, as `probe` reports it, if stderr is a terminal
    /// (else nothing is drawn and no thread made).
    pub fn start(
        what: &str,
        probe: impl Fn() -> Option<Progress> + Send + 'static,
    ) -> CommandProgress {
        let done: Arc<(Mutex<bool>, Condvar)> = Arc::default();
        let thread = std::io::stderr().is_terminal().then(|| {
            let theirs = done.clone();
            let what = what.to_string();
            std::thread::Builder::new()
                .name("debug-progress".into())
                .spawn(move || draw(&what, &probe, &theirs))
                .ok()
        });
        CommandProgress {
            done,
            thread: thread.flatten(),
        }
    }

    /// The command has ended: remove its line.
    pub fn finish(mut self) {
        if let Ok(mut done) = self.done.0.lock() {
            *done = true;
        }
        self.done.1.notify_one();
        if let Some(t) = self.thread.take() {
            let _ = t.join();
        }
    }
}

/// The drawing thread: quiet for [`QUIET_FOR`], then a line every [`REDRAW`] until done.
fn draw(what: &str, probe: &dyn Fn() -> Option<Progress>, done: &(Mutex<bool>, Condvar)) {
    let started = Instant::now();
    let mut bar: Option<ProgressBar> = None;
    let Ok(mut finished) = done.0.lock() else {
        return;
    };
    let mut wait = QUIET_FOR;
    while !*finished {
        finished = match done.1.wait_timeout(finished, wait) {
            Ok((g, _)) => g,
            Err(_) => return,
        };
        if *finished {
            break;
        }
        wait = REDRAW;
        let bar = bar.get_or_insert_with(|| {
            let bar = ProgressBar::new_spinner();
            if let Ok(style) = ProgressStyle::with_template("{spinner} {msg}") {
                bar.set_style(style);
            }
            bar
        });
        let elapsed = started.elapsed().as_secs_f64();
        bar.set_message(match probe() {
            Some(p) => format!(
                "{what}: cycle {}  {:.1} M instr/s  {elapsed:.0} s",
                p.cycle,
                p.instructions as f64 / elapsed / 1e6
            ),
            None => format!("{what}…  {elapsed:.0} s"),
        });
        bar.tick();
    }
    if let Some(bar) = bar {
        bar.finish_and_clear();
    }
}

/// The progress bar as an [`Observer`]: pass it (or a pair of it and another observer) to
/// [`run_observed`](gpu16::run_observed). It wants progress, not events.
pub struct ProgressDisplay {
    enabled: bool,
    total_frames: u64,
    started: Instant,
    last_draw: Instant,
    /// The checkpoint cycle of the last report: a new one comes from inside a long frame.
    last_cycle: u64,
    bar: Option<ProgressBar>,
}

impl ProgressDisplay {
    /// A display for a program of `total_frames` (0: not known, a stream from a pipe);
    /// `quiet` turns it off.
    pub fn new(total_frames: u64, quiet: bool) -> ProgressDisplay {
        let now = Instant::now();
        ProgressDisplay {
            enabled: !quiet && std::io::stderr().is_terminal(),
            total_frames,
            started: now,
            last_draw: now,
            last_cycle: 0,
            bar: None,
        }
    }

    /// Remove the bar before the report is printed.
    pub fn finish(&mut self) {
        if let Some(bar) = self.bar.take() {
            bar.finish_and_clear();
        }
    }
}

impl Observer for ProgressDisplay {
    const WANTS_EVENTS: bool = false;
    const WANTS_PROGRESS: bool = true;

    fn progress(&mut self, p: Progress) {
        // Frames come by the million in a stream: look at the clock every 64th only.
        let at_checkpoint = p.cycle != self.last_cycle;
        self.last_cycle = p.cycle;
        if !self.enabled || !(at_checkpoint || p.frames.is_multiple_of(64)) {
            return;
        }
        let now = Instant::now();
        if now - self.last_draw < Duration::from_millis(100) {
            return;
        }
        self.last_draw = now;
        let elapsed = now - self.started;
        if elapsed < Duration::from_secs(1) {
            return;
        }
        let bar = self.bar.get_or_insert_with(|| {
            // A stream from a pipe has no known length: count frames without a bar.
            let (bar, template) = match self.total_frames {
                0 => (
                    ProgressBar::no_length(),
                    "{spinner} {pos} frames  {msg}  {elapsed}",
                ),
                n => (
                    ProgressBar::new(n),
                    "{bar:30} {pos}/{len} frames  {msg}  eta {eta}",
                ),
            };
            if let Ok(style) = ProgressStyle::with_template(template) {
                bar.set_style(style);
            }
            bar
        });
        bar.set_position(p.frames);
        let rate = p.instructions as f64 / elapsed.as_secs_f64();
        bar.set_message(format!(
            "{} tasks  cycle {}  {:.1} M instr/s",
            p.tasks,
            p.cycle,
            rate / 1e6
        ));
    }

    fn rewind_events(&mut self, _cycle: u64) {}
}
