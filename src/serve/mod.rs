//! `gpu16 serve`: the playground, a local web server for one user on their own machine. It
//! serves one page (HTML, CSS and JS embedded in the binary, [`routes`]) and a small JSON
//! API over the same debugger session `gpu16 debug` runs ([`play`]): every step, stop and
//! view of the page is a command line of one [`gpu16::debugger::Session`] in JSON mode.
//!
//! One thread accepts requests and hands them over a bounded channel to the worker thread,
//! which owns the session and answers them in order; `POST /api/stop` is answered by the
//! accepting thread itself, raising the session's interrupt flag, so a long run can be
//! stopped while the worker is busy with it. `GET /api/events`, the live updates, is
//! answered there too, each stream on a thread of its own ([`live`]). `docs/playground.md`
//! has the API.

pub mod live;
pub mod play;
pub mod routes;

use gpu16_asm::Diagnostic;
use serde_json::{json, Value};
use std::io::Read;
use std::path::PathBuf;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{mpsc, Arc, Mutex};
use std::time::Duration;
use tiny_http::{Header, Method, Request, Response, Server};

/// The largest request body read: a program's source and memory image as JSON. A larger
/// one is refused with 413 before it is read.
pub const MAX_BODY: usize = 1 << 20;

/// How many requests may wait while the worker runs a command: one more is answered 503.
const QUEUE: usize = 32;

/// The machine a page's choices select: what `--backend`, `--dialect`, `--timing`,
/// `--max-cycles`, `--issue` and `--bank-conflicts` select on the command line.
pub struct Machine {
    /// The backend and its engine.
    pub runner: gpu16::Runner,
    /// The configuration (its `max_cycles` is the watchdog).
    pub config: gpu16_machine::Config,
    /// How the source is assembled and the program read.
    pub dialect: gpu16_machine::Dialect,
}

/// Turns the page's machine choices (a JSON object: `backend`, `dialect`, `timing`,
/// `max_cycles`, `issue`, `bank_conflicts`) into the [`Machine`] the same flags give on the
/// command line, or says why they are refused.
pub type MachineOf = Box<dyn Fn(&Value) -> Result<Machine, String> + Send>;

/// One assembler diagnostic as the `--json` of `gpu16 check` prints it (the binary's
/// `json_out::diagnostic`): the page shows what the CLI says.
pub type DiagnosticJson = fn(&Diagnostic, &str) -> Value;

/// What the server serves besides its page.
pub struct Options {
    /// The user's file, shown first and the only file the server reads.
    pub file: Option<PathBuf>,
    /// The wall-clock limit of each command and of each session's whole run (`--timeout`).
    pub timeout: Duration,
    /// Events kept for the timeline and the trace and VCD downloads (`--trace-limit`).
    pub trace_limit: u64,
    /// The page's machine choices, checked as the command line checks its flags.
    pub machine: MachineOf,
    /// Diagnostics as JSON.
    pub diagnostic: DiagnosticJson,
}

/// Listen on 127.0.0.1 at `port` (0: a free port the system picks), giving the server and
/// the port it listens on.
pub fn bind(port: u16) -> Result<(Server, u16), String> {
    let server = Server::http(("127.0.0.1", port))
        .map_err(|e| format!("cannot listen on 127.0.0.1:{port}: {e}"))?;
    let port = server
        .server_addr()
        .to_ip()
        .map(|a| a.port())
        .ok_or("the server has no IP address")?;
    Ok((server, port))
}

/// Serve requests until the process ends.
pub fn run(server: Server, port: u16, options: Options) -> Result<(), String> {
    let (tx, rx) = mpsc::sync_channel::<Request>(QUEUE);
    let slot: Arc<Mutex<Option<Arc<AtomicBool>>>> = Arc::default();
    let worker_slot = slot.clone();
    let hub: Arc<live::Hub> = Arc::default();
    let worker_hub = hub.clone();
    std::thread::Builder::new()
        .name("serve-worker".into())
        .spawn(move || {
            let mut play = play::Play::new(options, worker_slot, worker_hub);
            for request in rx {
                routes::handle(&mut play, request);
            }
        })
        .map_err(|e| format!("cannot start the worker thread: {e}"))?;
    for request in server.incoming_requests() {
        if !routes::host_allowed(&request, port) {
            respond(
                request,
                error(403, "the playground answers only 127.0.0.1 and localhost"),
            );
            continue;
        }
        if request.method() == &Method::Post && request.url() == "/api/stop" {
            let raised = match slot.lock().ok().and_then(|s| s.clone()) {
                Some(flag) => {
                    flag.store(true, Ordering::Relaxed);
                    true
                }
                None => false,
            };
            respond(request, ok(json!({ "stopped": raised })));
            continue;
        }
        let path = request.url().split('?').next().unwrap_or("");
        if request.method() == &Method::Get && path == "/api/events" {
            live::stream(request, &hub);
            continue;
        }
        if let Err(mpsc::TrySendError::Full(request)) = tx.try_send(request) {
            respond(
                request,
                error(503, "the playground is busy: too many requests wait"),
            );
        }
    }
    Ok(())
}

/// A response: status, content type, body and, for a download, its file name.
pub struct Reply {
    /// The HTTP status.
    pub status: u16,
    /// The `Content-Type`.
    pub content_type: &'static str,
    /// The body.
    pub body: Vec<u8>,
    /// Sent as `Content-Disposition: attachment` when set.
    pub download: Option<String>,
}

/// A 200 JSON reply.
pub fn ok(v: Value) -> Reply {
    json_reply(200, &v)
}

/// A JSON reply with `status`.
pub fn json_reply(status: u16, v: &Value) -> Reply {
    Reply {
        status,
        content_type: "application/json",
        body: format!("{v}\n").into_bytes(),
        download: None,
    }
}

/// An error reply: `{"error": message}` with `status`.
pub fn error(status: u16, message: &str) -> Reply {
    json_reply(status, &json!({ "error": message }))
}

/// Send `reply`; a client that went away is no error of the server's.
pub fn respond(request: Request, reply: Reply) {
    let mut headers = vec![
        header("Content-Type", reply.content_type),
        header("Cache-Control", "no-store"),
        header("X-Content-Type-Options", "nosniff"),
    ];
    if let Some(name) = &reply.download {
        headers.push(header(
            "Content-Disposition",
            &format!("attachment; filename=\"{name}\""),
        ));
    }
    let mut response = Response::from_data(reply.body).with_status_code(reply.status);
    for h in headers.into_iter().flatten() {
        response.add_header(h);
    }
    let _ = request.respond(response);
}

fn header(name: &str, value: &str) -> Option<Header> {
    Header::from_bytes(name.as_bytes(), value.as_bytes()).ok()
}

/// The body of `request` as JSON, within [`MAX_BODY`]: 413 for a larger body, 400 for one
/// that is not UTF-8 JSON.
pub fn body_json(request: &mut Request) -> Result<Value, Reply> {
    if request.body_length().is_some_and(|n| n > MAX_BODY) {
        return Err(error(
            413,
            &format!("a request body is at most {MAX_BODY} bytes"),
        ));
    }
    let mut bytes = Vec::new();
    request
        .as_reader()
        .take(MAX_BODY as u64 + 1)
        .read_to_end(&mut bytes)
        .map_err(|e| error(400, &format!("cannot read the request body: {e}")))?;
    if bytes.len() > MAX_BODY {
        return Err(error(
            413,
            &format!("a request body is at most {MAX_BODY} bytes"),
        ));
    }
    serde_json::from_slice(&bytes)
        .map_err(|e| error(400, &format!("the request body is not JSON: {e}")))
}
