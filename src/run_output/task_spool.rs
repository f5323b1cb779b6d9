//! The human report's task table for a long run: each task's line is written, as the run
//! hands the task over ([`Observer::task`]), to an unnamed temporary file, and copied into
//! the report at its place once the run is over. The report is the same text as one built
//! in memory, and a stream of any length keeps no task in memory.

use gpu16::output::human::TaskTable;
use gpu16_machine::{Observer, TaskRecord};
use std::fs::File;
use std::io::{self, Read, Seek, SeekFrom, Write};

/// How many bytes of lines are written to the file at a time.
const SPOOL_CHUNK: usize = 1 << 16;

/// The spooled table (see the module docs).
pub struct TaskSpool {
    file: File,
    lines: u64,
    /// Lines not yet written to the file: they are made here in place and go out in
    /// pieces of about [`SPOOL_CHUNK`] bytes, so a task costs no allocation and no copy.
    pending: Vec<u8>,
    /// The first write that failed, reported when the table is copied.
    failed: Option<io::Error>,
}

impl TaskSpool {
    /// A spool in a new unnamed temporary file.
    pub fn new() -> io::Result<TaskSpool> {
        Ok(TaskSpool {
            file: gpu16::scratch::unnamed_file("tasks")?,
            lines: 0,
            pending: Vec::with_capacity(SPOOL_CHUNK + 256),
            failed: None,
        })
    }

    /// Hand the table, heading and header included, to `print` in pieces of at most 64
    /// KiB; nothing if no task came.
    pub fn copy(self, mut print: impl FnMut(&str)) -> io::Result<()> {
        if let Some(e) = self.failed {
            return Err(e);
        }
        if self.lines == 0 {
            return Ok(());
        }
        let mut file = self.file;
        file.write_all(&self.pending)?;
        file.seek(SeekFrom::Start(0))?;
        print(TaskTable::HEADING);
        print(TaskTable::HEADER);
        let mut buf = vec![0u8; 1 << 16];
        loop {
            let n = file.read(&mut buf)?;
            if n == 0 {
                return Ok(());
            }
            // Task lines are ASCII, so any cut is at a character boundary.
            print(std::str::from_utf8(&buf[..n]).map_err(io::Error::other)?);
        }
    }
}

impl Observer for TaskSpool {
    const WANTS_EVENTS: bool = false;
    const WANTS_TASKS: bool = true;

    fn task(&mut self, record: &TaskRecord) {
        if self.failed.is_some() {
            return;
        }
        TaskTable::push_line(&mut self.pending, record);
        self.lines += 1;
        if self.pending.len() >= SPOOL_CHUNK {
            match self.file.write_all(&self.pending) {
                Ok(()) => self.pending.clear(),
                Err(e) => self.failed = Some(e),
            }
        }
    }

    fn rewind_events(&mut self, _cycle: u64) {}
}
