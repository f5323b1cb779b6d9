//! The `run --json` object written as the run goes, for `--tasks all`: a long stream's task
//! list is the bulk of the object (a million tasks are about 90 MB of JSON, and far more as
//! [`Value`]s), so the tasks go out one by one as the machine hands them over
//! ([`Observer::task`]) and none is kept. The rest of the object is known only once the run
//! is over; [`JsonStream::finish`] writes it from the document [`gpu16::output::json::run_document`]
//! builds, so every key has the one serialization of [`gpu16::output::json`].
//!
//! The object is therefore `{"tasks":[...],` followed by the other keys in the order of the
//! in-memory object (alphabetical): the same keys and values, `tasks` moved to the front.
//! It is one valid JSON object whatever ends the run (a fault, the watchdog, a stop), as
//! long as [`JsonStream::finish`] is called; only a failed write leaves it cut short, and
//! the first such failure is what `finish` returns.

use gpu16::output::json::Task;
use gpu16_machine::{Observer, TaskRecord};
use serde_json::Value;
use std::io::{self, Write};

/// An observer that writes the `run --json` object to `out`: the opening and each task as
/// it arrives, the other keys at [`JsonStream::finish`]. Give it a buffered writer; it
/// keeps nothing per task.
#[derive(Debug)]
pub struct JsonStream<W: Write> {
    out: W,
    /// Whether `{"tasks":[` is written.
    opened: bool,
    /// Whether an element of `tasks` is written (the next needs a comma).
    any_task: bool,
    /// The first failed write; nothing is written after it.
    failed: Option<io::Error>,
}

impl<W: Write> JsonStream<W> {
    /// A stream that has written nothing yet: the opening goes out with the first task, or
    /// at [`JsonStream::finish`], so a run refused before it starts prints its own object.
    pub fn new(out: W) -> JsonStream<W> {
        JsonStream {
            out,
            opened: false,
            any_task: false,
            failed: None,
        }
    }

    /// Write with `f` unless an earlier write failed, keeping the first failure.
    fn write(&mut self, f: impl FnOnce(&mut W) -> io::Result<()>) {
        if self.failed.is_none() {
            self.failed = f(&mut self.out).err();
        }
    }

    fn open(&mut self) {
        if !self.opened {
            self.opened = true;
            self.write(|out| out.write_all(b"{\"tasks\":["));
        }
    }

    /// Write one element of `tasks`, already in its JSON form.
    fn element(&mut self, task: &impl serde::Serialize) {
        self.open();
        let comma = std::mem::replace(&mut self.any_task, true);
        self.write(|out| {
            if comma {
                out.write_all(b",")?;
            }
            serde_json::to_writer(&mut *out, task).map_err(io::Error::from)
        });
    }

    /// The writer the object goes to.
    pub fn writer(&mut self) -> &mut W {
        &mut self.out
    }

    /// Whether the object has begun on the writer (a task has arrived).
    pub fn opened(&self) -> bool {
        self.opened
    }

    /// Close `tasks` and write the other keys of `document`, the run's whole `--json`
    /// object as [`gpu16::output::json::run_document`] and the command built it: its `tasks` is
    /// empty when the run handed every task to this stream, and any element it does have
    /// is written after the streamed ones. Then the closing brace, a newline and a flush.
    /// Returns the first write that failed, here or while the run went.
    ///
    /// # Panics
    /// If `document` is not an object (a run's document always is).
    pub fn finish(mut self, document: Value) -> io::Result<()> {
        let Value::Object(mut keys) = document else {
            panic!("a run's --json document is an object, not {document}");
        };
        self.open();
        if let Some(Value::Array(kept)) = keys.remove("tasks") {
            for task in &kept {
                self.element(task);
            }
        }
        self.write(|out| out.write_all(b"]"));
        for (key, value) in &keys {
            self.write(|out| {
                out.write_all(b",")?;
                serde_json::to_writer(&mut *out, key)?;
                out.write_all(b":")?;
                serde_json::to_writer(&mut *out, value).map_err(io::Error::from)
            });
        }
        self.write(|out| out.write_all(b"}\n").and_then(|()| out.flush()));
        self.failed.map_or(Ok(()), Err)
    }
}

impl<W: Write> Observer for JsonStream<W> {
    const WANTS_EVENTS: bool = false;
    const WANTS_TASKS: bool = true;

    fn task(&mut self, record: &TaskRecord) {
        self.element(&Task::of(record));
    }

    fn rewind_events(&mut self, _cycle: u64) {}
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::run_output::see::{state_of, Outcome};
    use gpu16::output::json::run_document;
    use gpu16::BackendKind;
    use gpu16_machine::{Config, Program, TaskLog};

    fn assemble(source: &str) -> Program {
        gpu16_asm::assemble(source, "t.s").unwrap().program
    }

    /// The streamed text of a run of `p`, and its outcome.
    fn streamed(p: &Program, config: &Config) -> (String, Outcome) {
        let mut text = Vec::new();
        let mut stream = JsonStream::new(&mut text);
        let outcome = gpu16::run_observed(BackendKind::Interp, p, &[], config, &mut stream);
        stream.finish(run_document(&outcome, None)).unwrap();
        (String::from_utf8(text).unwrap(), outcome)
    }

    /// The in-memory document's text with `tasks` moved to the front: what the stream
    /// should write, byte for byte.
    fn reordered(document: &Value) -> String {
        let mut keys = document.as_object().unwrap().clone();
        let tasks = keys.remove("tasks").unwrap();
        let rest = Value::Object(keys).to_string();
        format!("{{\"tasks\":{tasks},{}\n", &rest[1..])
    }

    #[test]
    fn a_finished_run_streams_the_bytes_of_the_in_memory_object_with_tasks_first() {
        // Two tasks; the first, frame 1 on cores 0 and 1, is issued in cycle 1 (its control
        // frame took cycle 0), broadcast in cycles 1 to 4, runs its nop in cycle 5 and the
        // `ready` fill in cycle 6.
        let p = assemble(".cf mask=3\n.if\n    nop\n.cf mask=4\n.if\n    nop\n    nop\n");
        let config = Config::default();
        assert_eq!(config.tasks, TaskLog::All);
        let (text, outcome) = streamed(&p, &config);
        assert!(
            state_of(&outcome).tasks.is_empty(),
            "the run kept its tasks"
        );
        assert!(
            text.starts_with(
                "{\"tasks\":[{\"end\":6,\"fence\":\"no\",\"frame\":1,\"issue\":1,\"mask\":3,\"start\":5},{"
            ),
            "{text}"
        );
        let kept = run_document(&gpu16::run(BackendKind::Interp, &p, &[], &config), None);
        assert_eq!(kept["tasks"].as_array().unwrap().len(), 2);
        assert_eq!(text, reordered(&kept));
    }

    #[test]
    fn a_run_the_watchdog_stopped_streams_its_unfinished_task_and_its_error() {
        // One core stores in a loop forever in frame 1.
        let p = assemble(
            ".cf mask=1\n.if\n    set_const 1, r9\nloop:\n    st [r0, r0], r9\n    bnz loop, r9\n",
        );
        let config = Config {
            max_cycles: 50,
            ..Config::default()
        };
        let (text, outcome) = streamed(&p, &config);
        assert!(outcome.is_err());
        let v: Value = serde_json::from_str(&text).unwrap();
        assert_eq!(v["error"]["rule"], "watchdog");
        assert_eq!(v["tasks"][0]["frame"], 1);
        assert_eq!(v["tasks"][0]["end"], Value::Null);
        let kept = run_document(&gpu16::run(BackendKind::Interp, &p, &[], &config), None);
        assert_eq!(text, reordered(&kept));
    }

    /// A writer that takes `room` bytes, then fails.
    struct Full {
        room: usize,
    }

    impl Write for Full {
        fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
            if self.room == 0 {
                return Err(io::Error::from_raw_os_error(28));
            }
            let n = buf.len().min(self.room);
            self.room -= n;
            Ok(n)
        }
        fn flush(&mut self) -> io::Result<()> {
            Ok(())
        }
    }

    #[test]
    fn a_failed_write_is_kept_and_returned_at_the_end() {
        let p = assemble(".cf mask=3\n.if\n    nop\n");
        let mut stream = JsonStream::new(Full { room: 20 });
        let outcome = gpu16::run_observed(
            BackendKind::Interp,
            &p,
            &[],
            &Config::default(),
            &mut stream,
        );
        assert!(
            stream.failed.is_some(),
            "20 bytes cannot hold the first task"
        );
        let e = stream.finish(run_document(&outcome, None)).unwrap_err();
        assert_eq!(e.raw_os_error(), Some(28));
    }
}
