//! Binary program images read as a stream of frames, from a file or from stdin (`-`), so
//! that a run holds the scheduler's window of the program rather than the program
//! ([`gpu16_machine::FrameSource`]). A file is checked for its length before the run (the
//! errors loading it whole gives); a pipe is checked as it arrives, and a last frame cut
//! short is an error naming its index and byte offset.
//!
//! A fault's state is taken from a second run over the program, so a stream must be able
//! to start again: a file seeks back to its start; stdin is spooled, as it is read, to an
//! unnamed temporary file (in `$TMPDIR`) that a second run reads back. The spool costs
//! disk, never memory, and goes away with the process.
//!
//! Stdin is read on a helper thread that hands chunks to the run through a bounded channel,
//! so a run waiting for input that does not come (a pipe that stalls) still hears a stop
//! ([`FrameStream::stop_on`]: `--timeout`, Ctrl-C) and ends as stopped.

use super::limits::{self, Limit};
use super::{err, InputError};
use gpu16_machine::frame::FRAME_BYTES;
use gpu16_machine::{FrameSource, LoadError};
use std::fs::File;
use std::io::{self, BufReader, Read, Seek, SeekFrom, Write};
use std::os::unix::fs::FileExt;
use std::path::Path;
use std::sync::mpsc::{sync_channel, Receiver, RecvTimeoutError};
use std::time::Duration;

use gpu16_machine::StopCause;

/// The most bytes a stream may have: a program image's limit, as for a file loaded whole.
const LIMIT: Limit = limits::PROGRAM_IMAGE;

/// Bytes read from a file or stdin at a time.
const READ_BUFFER: usize = 1 << 16;

/// A binary program image read frame by frame.
pub struct FrameStream {
    input: Input,
    /// Frames read since the start (or the last rewind).
    frames: u64,
    known_frames: Option<u64>,
}

enum Input {
    File(BufReader<File>),
    Stdin {
        stdin: StdinReader,
        spool: Spool,
        /// Reading back the spool, at this frame; `None` when reading stdin.
        replay: Option<u64>,
    },
}

impl FrameStream {
    /// The most bytes a program image may have.
    pub const MAX_BYTES: u64 = LIMIT.bytes;

    /// The image at `path` (`-`: stdin), checked for what can be checked before reading it:
    /// a file must be a whole number of frames, not empty, and within the limit of a
    /// program image.
    pub fn open(path: &Path) -> Result<FrameStream, InputError> {
        if path != Path::new("-") {
            let file = File::open(path).map_err(|e| err(path, format!("cannot read: {e}")))?;
            return FrameStream::of_file(file, path);
        }
        Ok(FrameStream {
            input: Input::Stdin {
                stdin: StdinReader::start(),
                spool: Spool::new().map_err(|e| {
                    err(
                        path,
                        format!(
                            "cannot keep stdin for the run's second pass (a fault's state): {e}"
                        ),
                    )
                })?,
                replay: None,
            },
            frames: 0,
            known_frames: None,
        })
    }

    /// The image in `file`, open already, named `path` in messages, from its start: the
    /// checks of [`FrameStream::open`].
    pub fn of_file(file: File, path: &Path) -> Result<FrameStream, InputError> {
        let meta = file
            .metadata()
            .map_err(|e| err(path, format!("cannot read: {e}")))?;
        let mut known_frames = None;
        if meta.is_file() {
            let len = meta.len();
            if len > LIMIT.bytes {
                return Err(err(
                    path,
                    format!(
                        "too large: {} may have at most {}; this file has {len}",
                        LIMIT.what,
                        limits::size(LIMIT.bytes)
                    ),
                ));
            }
            let whole = usize::try_from(len).unwrap_or(usize::MAX);
            let check = if len == 0 {
                Err(LoadError::Empty)
            } else if !whole.is_multiple_of(FRAME_BYTES) {
                Err(LoadError::Length { bytes: whole })
            } else {
                Ok(())
            };
            check.map_err(|e| err(path, e.to_string()))?;
            known_frames = Some(len / FRAME_BYTES as u64);
        }
        Ok(FrameStream {
            input: Input::File(BufReader::with_capacity(READ_BUFFER, file)),
            frames: 0,
            known_frames,
        })
    }

    /// The number of frames, when it is known before reading them (a regular file).
    pub fn known_frames(&self) -> Option<u64> {
        self.known_frames
    }

    /// Give up waiting for stdin once `stop` gives a cause (the binary's `--timeout` or
    /// Ctrl-C): the read then fails and the run ends as stopped by that cause
    /// ([`FrameSource::stopped`]). A file is never waited on.
    pub fn stop_on(&mut self, stop: impl Fn() -> Option<StopCause> + Send + 'static) {
        if let Input::Stdin { stdin, .. } = &mut self.input {
            stdin.stop = Some(Box::new(stop));
        }
    }

    fn read_error(&self, message: String) -> LoadError {
        LoadError::Read {
            frame: self.frames as usize,
            offset: self.frames * FRAME_BYTES as u64,
            message,
        }
    }
}

impl FrameSource for FrameStream {
    fn next_frame(&mut self) -> Result<Option<[u8; FRAME_BYTES]>, LoadError> {
        let mut frame = [0u8; FRAME_BYTES];
        let got = match &mut self.input {
            Input::File(file) => fill(file, &mut frame),
            Input::Stdin {
                spool,
                replay: Some(at),
                ..
            } if *at < spool.frames => {
                let read = spool.read(*at, &mut frame).map(|()| FRAME_BYTES);
                *at += 1;
                read
            }
            Input::Stdin {
                stdin,
                spool,
                replay,
            } => {
                // Past the spool: reading stdin again, and keeping what it gives.
                *replay = None;
                let got = fill(stdin, &mut frame);
                if let Ok(FRAME_BYTES) = got {
                    // A failed write is the spool's, not stdin's (issue 33: a full
                    // $TMPDIR read as an unreadable input frame).
                    if let Err(e) = spool.push(&frame) {
                        return Err(LoadError::Keep {
                            frame: self.frames as usize,
                            offset: self.frames * FRAME_BYTES as u64,
                            message: format!(
                                "the temporary file in {} that keeps stdin for the run's \
                                 second pass cannot take it: {e}",
                                crate::scratch::place()
                            ),
                        });
                    }
                }
                got
            }
        };
        let got = got.map_err(|e| self.read_error(e.to_string()))?;
        match got {
            0 if self.frames == 0 => Err(LoadError::Empty),
            0 => Ok(None),
            FRAME_BYTES => {
                self.frames += 1;
                if self.frames * FRAME_BYTES as u64 > LIMIT.bytes {
                    self.frames -= 1;
                    return Err(self.read_error(format!(
                        "too large: {} may have at most {}; this input has more",
                        LIMIT.what,
                        limits::size(LIMIT.bytes)
                    )));
                }
                Ok(Some(frame))
            }
            bytes => Err(LoadError::Truncated {
                frame: self.frames as usize,
                offset: self.frames * FRAME_BYTES as u64,
                bytes,
            }),
        }
    }

    fn stopped(&self) -> Option<StopCause> {
        match &self.input {
            Input::Stdin { stdin, .. } => stdin.stopped,
            Input::File(_) => None,
        }
    }

    fn rewind(&mut self) -> Result<(), LoadError> {
        match &mut self.input {
            Input::File(file) => {
                file.seek(SeekFrom::Start(0)).map_err(|e| LoadError::Read {
                    frame: 0,
                    offset: 0,
                    message: e.to_string(),
                })?;
            }
            Input::Stdin { replay, .. } => *replay = Some(0),
        }
        self.frames = 0;
        Ok(())
    }
}

/// Read up to a whole frame: fewer bytes only at the end of the input.
fn fill(reader: &mut impl Read, frame: &mut [u8; FRAME_BYTES]) -> io::Result<usize> {
    let mut got = 0;
    while got < FRAME_BYTES {
        match reader.read(&mut frame[got..]) {
            Ok(0) => break,
            Ok(n) => got += n,
            Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
            Err(e) => return Err(e),
        }
    }
    Ok(got)
}

/// Chunks of stdin (at most this many) the helper thread may read ahead of the run.
const CHUNKS_AHEAD: usize = 4;

/// How often a read waiting for stdin looks at the stop signal.
const STOP_POLL: Duration = Duration::from_millis(20);

/// Stdin, read on a helper thread: a read waits for the thread's next chunk, and gives up
/// when its stop signal is raised. The thread reads at most [`CHUNKS_AHEAD`] chunks of
/// [`READ_BUFFER`] bytes ahead, and ends at the end of stdin, at an error, or with the
/// process.
struct StdinReader {
    chunks: Receiver<io::Result<Vec<u8>>>,
    chunk: Vec<u8>,
    at: usize,
    /// The end of stdin (or its error) was handed over.
    ended: bool,
    /// Asked while a read waits: why the run is being stopped, if it is.
    stop: Option<Box<dyn Fn() -> Option<StopCause> + Send>>,
    /// Why a read gave up waiting, if it did.
    stopped: Option<StopCause>,
}

impl StdinReader {
    fn start() -> StdinReader {
        let (send, chunks) = sync_channel(CHUNKS_AHEAD);
        std::thread::spawn(move || {
            let mut stdin = io::stdin().lock();
            loop {
                let mut chunk = vec![0; READ_BUFFER];
                let read = match stdin.read(&mut chunk) {
                    Err(e) if e.kind() == io::ErrorKind::Interrupted => continue,
                    Ok(n) => {
                        chunk.truncate(n);
                        Ok(chunk)
                    }
                    Err(e) => Err(e),
                };
                let last = !matches!(&read, Ok(c) if !c.is_empty());
                if send.send(read).is_err() || last {
                    return;
                }
            }
        });
        StdinReader {
            chunks,
            chunk: Vec::new(),
            at: 0,
            ended: false,
            stop: None,
            stopped: None,
        }
    }

    /// The next chunk from the thread (empty at the end of stdin), waiting for it until the
    /// stop signal is raised.
    fn next_chunk(&mut self) -> io::Result<Vec<u8>> {
        if self.ended {
            return Ok(Vec::new());
        }
        loop {
            let got = match &self.stop {
                None => self
                    .chunks
                    .recv()
                    .map_err(|_| RecvTimeoutError::Disconnected),
                Some(stop) => {
                    if let Some(cause) = stop() {
                        self.stopped = Some(cause);
                        return Err(io::Error::other(
                            "the run was stopped while it waited for input",
                        ));
                    }
                    self.chunks.recv_timeout(STOP_POLL)
                }
            };
            match got {
                Ok(Ok(chunk)) if !chunk.is_empty() => return Ok(chunk),
                Ok(other) => {
                    self.ended = true;
                    return other;
                }
                Err(RecvTimeoutError::Timeout) => {}
                Err(RecvTimeoutError::Disconnected) => {
                    self.ended = true;
                    return Ok(Vec::new());
                }
            }
        }
    }
}

impl Read for StdinReader {
    fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        if self.at == self.chunk.len() {
            self.chunk = self.next_chunk()?;
            self.at = 0;
        }
        let n = buf.len().min(self.chunk.len() - self.at);
        buf[..n].copy_from_slice(&self.chunk[self.at..self.at + n]);
        self.at += n;
        Ok(n)
    }
}

/// Frames read from stdin, kept in an unnamed temporary file for a second run.
struct Spool {
    file: File,
    /// Frames not yet written to the file.
    pending: Vec<u8>,
    /// Frames kept, written or pending.
    frames: u64,
}

impl Spool {
    fn new() -> io::Result<Spool> {
        Ok(Spool {
            file: crate::scratch::unnamed_file("stdin")?,
            pending: Vec::with_capacity(READ_BUFFER),
            frames: 0,
        })
    }

    fn push(&mut self, frame: &[u8; FRAME_BYTES]) -> io::Result<()> {
        self.pending.extend_from_slice(frame);
        self.frames += 1;
        if self.pending.len() >= READ_BUFFER {
            self.flush()?;
        }
        Ok(())
    }

    fn flush(&mut self) -> io::Result<()> {
        self.file.write_all(&self.pending)?;
        self.pending.clear();
        Ok(())
    }

    /// Frame `at` of those kept.
    fn read(&mut self, at: u64, frame: &mut [u8; FRAME_BYTES]) -> io::Result<()> {
        let written = self.frames - (self.pending.len() / FRAME_BYTES) as u64;
        if at >= written {
            let i = (at - written) as usize * FRAME_BYTES;
            frame.copy_from_slice(&self.pending[i..i + FRAME_BYTES]);
            return Ok(());
        }
        self.file.read_exact_at(frame, at * FRAME_BYTES as u64)
    }
}
