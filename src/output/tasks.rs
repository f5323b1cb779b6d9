//! A task's end as the reports show it. The scheduler records a task when it issues it, with
//! `end` set to its last broadcast cycle (one before its cores start), and sets the real end
//! when the task's last core finishes. In the state of a run that faulted or hit the
//! watchdog, a task still running keeps that placeholder, which would read as a task that
//! ended before it began; the reports show its end as unknown (`null` in JSON) instead.

use gpu16_machine::scheduler::TaskRecord;

/// The cycle of the task's last instruction, or `None` if it had not finished when the run
/// stopped. A task without cores ends at its broadcast. (With a zero-cycle broadcast, which
/// the command line cannot set, a task still running at its first cycle would read as
/// finished there.)
pub(crate) fn end(t: &TaskRecord) -> Option<u64> {
    (t.mask == 0 || t.end >= t.start).then_some(t.end)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::BackendKind;
    use gpu16_machine::{Config, Program};

    fn assemble(source: &str) -> Program {
        gpu16_asm::assemble(source, "t.s").unwrap().program
    }

    #[test]
    fn a_task_the_watchdog_stopped_has_no_end_and_a_finished_one_has_its_own() {
        // One core stores in a loop forever in frame 1.
        let p = assemble(
            ".cf mask=1\n.if\n    set_const 1, r9\nloop:\n    st [r0, r0], r9\n    bnz loop, r9\n",
        );
        let config = Config {
            max_cycles: 50,
            ..Config::default()
        };
        let Err(f) = crate::run(BackendKind::Interp, &p, &[], &config) else {
            panic!("the watchdog did not stop the loop");
        };
        let t = &f.state.tasks[0];
        assert!(t.end < t.start, "the placeholder: {t:?}");
        assert_eq!(end(t), None);
        let r = crate::run(
            BackendKind::Interp,
            &assemble(".cf mask=3\n.if\n    nop\n"),
            &[],
            &Config::default(),
        )
        .unwrap();
        // The nop in cycle 5, the `ready` fill in cycle 6.
        assert_eq!((r.tasks[0].start, end(&r.tasks[0])), (5, Some(6)));
    }
}
