//! `auto`'s background compiler: one thread with a Cranelift compiler of its own that turns
//! hot frames into machine code while the interpreter keeps running them. It never touches a
//! module (those are not `Send`): it hands back [`MachineCode`], which the thread that runs
//! code places in its own modules. The thread ends when its [`Worker`] drops; a panic in the
//! code generator becomes an error for that frame, and a thread that dies anyway shows as
//! [`Gone`], so no failure of the worker can change what runs, only how fast.

use crate::cache::panic_message;
use crate::compile::{Compiler, MachineCode, OptLevel};
use crate::error::JitError;
use gpu16_machine::engine::isa::{Instr, FRAME_INSTRS};
use std::panic::{catch_unwind, AssertUnwindSafe};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::mpsc::{channel, Receiver, Sender, TryRecvError};
use std::sync::Arc;
use std::thread::JoinHandle;

/// A frame to compile, and into which forms.
pub(crate) struct Request {
    /// Names the frame when its code comes back.
    pub(crate) ticket: usize,
    pub(crate) instrs: [Instr; FRAME_INSTRS],
    /// Compile the per-core form.
    pub(crate) scalar: bool,
    /// Compile the lockstep form.
    pub(crate) lanes: bool,
    /// Compile the lockstep form first: the frame last ran in a group, so its code is
    /// the one wanted soonest (both are handed back together).
    pub(crate) lanes_first: bool,
    /// Tests make the worker fail in a chosen way.
    #[cfg(test)]
    pub(crate) fault: Option<Fault>,
}

/// How a test makes the worker fail.
#[cfg(test)]
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Fault {
    /// The code generator returns an error.
    Error,
    /// The code generator panics.
    Panic,
    /// The thread dies outside the code generator.
    Die,
}

/// The code of one request: every form it asked for, or why not.
pub(crate) struct Done {
    pub(crate) ticket: usize,
    pub(crate) code: Result<Vec<MachineCode>, JitError>,
}

/// The worker thread ended without being asked to (it panicked outside the code generator).
#[derive(Debug)]
pub(crate) struct Gone;

/// The handle of the compiler thread.
pub(crate) struct Worker {
    /// `None` once dropping: closing the channel ends the thread's wait.
    requests: Option<Sender<Request>>,
    results: Receiver<Done>,
    /// Set when dropping, so that the thread skips requests still queued.
    pub(crate) stop: Arc<AtomicBool>,
    thread: Option<JoinHandle<()>>,
}

impl Worker {
    /// Start the thread, compiling at `opt`; or why the thread could not start.
    pub(crate) fn spawn(opt: OptLevel) -> Result<Worker, JitError> {
        let (requests, inbox) = channel::<Request>();
        let (outbox, results) = channel::<Done>();
        let stop = Arc::new(AtomicBool::new(false));
        let stopped = stop.clone();
        let thread = std::thread::Builder::new()
            .name("gpu16-jit-compile".into())
            .spawn(move || serve(opt, &inbox, &outbox, &stopped))
            .map_err(|e| JitError::Host(format!("cannot start the compile thread: {e}")))?;
        Ok(Worker {
            requests: Some(requests),
            results,
            stop,
            thread: Some(thread),
        })
    }

    /// Queue `request`; `Err` if the thread is gone.
    pub(crate) fn send(&self, request: Request) -> Result<(), Gone> {
        let requests = self.requests.as_ref().ok_or(Gone)?;
        requests.send(request).map_err(|_| Gone)
    }

    /// A finished request if there is one, without waiting.
    pub(crate) fn try_done(&self) -> Result<Option<Done>, Gone> {
        match self.results.try_recv() {
            Ok(done) => Ok(Some(done)),
            Err(TryRecvError::Empty) => Ok(None),
            Err(TryRecvError::Disconnected) => Err(Gone),
        }
    }

    /// The next finished request, waiting for it.
    pub(crate) fn wait_done(&self) -> Result<Done, Gone> {
        self.results.recv().map_err(|_| Gone)
    }

    /// For tests: whether the thread has ended.
    #[cfg(test)]
    pub(crate) fn ended(&self) -> bool {
        self.thread.as_ref().is_none_or(|t| t.is_finished())
    }
}

impl Drop for Worker {
    fn drop(&mut self) {
        self.stop.store(true, Ordering::Relaxed);
        self.requests = None;
        if let Some(thread) = self.thread.take() {
            // A thread that panicked has nothing left to clean up; its panic was reported.
            let _ = thread.join();
        }
    }
}

/// The thread's loop: compile each request until the channel closes or `stop` is set.
fn serve(opt: OptLevel, inbox: &Receiver<Request>, outbox: &Sender<Done>, stop: &AtomicBool) {
    let mut compiler = Compiler::new(opt, crate::runtime::callbacks());
    while let Ok(request) = inbox.recv() {
        if stop.load(Ordering::Relaxed) {
            return;
        }
        let code = match &mut compiler {
            Ok(compiler) => compile(compiler, &request),
            Err(e) => Err(e.clone()),
        };
        #[cfg(test)]
        if request.fault == Some(Fault::Die) {
            panic!("the compile thread dies (a test's fault injection)");
        }
        let done = Done {
            ticket: request.ticket,
            code,
        };
        if outbox.send(done).is_err() {
            return;
        }
    }
}

/// The forms `request` asks for. A panic in Cranelift (its bug or ours) fails the frame,
/// and the compiler's buffers start afresh since it left them in an unknown state.
fn compile(compiler: &mut Compiler, request: &Request) -> Result<Vec<MachineCode>, JitError> {
    let made = catch_unwind(AssertUnwindSafe(|| {
        #[cfg(test)]
        match request.fault {
            Some(Fault::Error) => {
                return Err(JitError::Codegen("failure injected by a test".into()))
            }
            Some(Fault::Panic) => panic!("a test's injected panic"),
            _ => {}
        }
        let mut code = Vec::with_capacity(2);
        for lockstep in [request.lanes_first, !request.lanes_first] {
            if lockstep && request.lanes {
                code.push(compiler.lanes_code(&request.instrs, 0)?);
            } else if !lockstep && request.scalar {
                code.push(compiler.scalar_code(&request.instrs, 0)?);
            }
        }
        Ok(code)
    }));
    made.unwrap_or_else(|payload| {
        compiler.reset();
        Err(JitError::Panicked(panic_message(payload.as_ref())))
    })
}
