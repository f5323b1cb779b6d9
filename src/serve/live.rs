//! The playground's live updates: server-sent events on `GET /api/events`. The worker
//! publishes when a command or a program's whole run begins (`busy`) and ends (`idle`),
//! and the clock publishes how far it has come every [`TICK`] while it runs
//! (`progress`); each open stream has a thread of its own and a bounded queue, so a slow
//! or vanished page never holds the worker up. `docs/playground.md` lists the events.

use serde_json::Value;
use std::io::Write;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::mpsc::{self, Receiver, RecvTimeoutError, SyncSender, TrySendError};
use std::sync::{Arc, Mutex};
use std::time::Duration;
use tiny_http::Request;

/// How often a command under way reports its progress.
pub const TICK: Duration = Duration::from_millis(250);

/// The most streams open at once: a page has one, so this is room for a few tabs and for
/// streams of closed pages not yet noticed (a write to them fails at the next heartbeat).
pub const MAX_STREAMS: usize = 8;

/// Events waiting for a stream's thread; a stream that falls this far behind is closed
/// (the page reconnects and is sent where the worker stands).
const QUEUE: usize = 256;

/// How often an idle stream is sent a comment, so that a page that went away is noticed.
const HEARTBEAT: Duration = Duration::from_secs(10);

/// Where the events go.
#[derive(Default)]
pub struct Hub {
    streams: Mutex<Streams>,
    /// Streams whose thread has not ended.
    open: AtomicUsize,
}

/// The open streams' queues, and the last `busy` or `idle` event, which a new stream is
/// sent first.
#[derive(Default)]
struct Streams(Vec<SyncSender<Arc<str>>>, Option<Arc<str>>);

impl Hub {
    /// Send the event `kind` with `data` (one line of JSON) to every open stream.
    pub fn publish(&self, kind: &str, data: &Value) {
        let frame: Arc<str> = format!("event: {kind}\ndata: {data}\n\n").into();
        let Ok(mut streams) = self.streams.lock() else {
            return;
        };
        if kind == "busy" || kind == "idle" {
            streams.1 = Some(frame.clone());
        }
        streams.0.retain(|s| match s.try_send(frame.clone()) {
            Ok(()) => true,
            Err(TrySendError::Full(_) | TrySendError::Disconnected(_)) => false,
        });
    }

    /// A new stream's queue, with the last `busy` or `idle` event in it, or `None` when
    /// [`MAX_STREAMS`] are open.
    fn subscribe(&self) -> Option<Receiver<Arc<str>>> {
        let Ok(mut streams) = self.streams.lock() else {
            return None;
        };
        if self.open.load(Ordering::Relaxed) >= MAX_STREAMS {
            return None;
        }
        self.open.fetch_add(1, Ordering::Relaxed);
        let (tx, rx) = mpsc::sync_channel(QUEUE);
        if let Some(last) = &streams.1 {
            let _ = tx.try_send(last.clone());
        }
        streams.0.push(tx);
        Some(rx)
    }
}

/// Counts a stream's thread out of [`Hub::open`] however it ends.
struct Leaving(Arc<Hub>);

impl Drop for Leaving {
    fn drop(&mut self) {
        self.0.open.fetch_sub(1, Ordering::Relaxed);
    }
}

/// Answer `GET /api/events` with an event stream on a thread of its own: 503 when
/// [`MAX_STREAMS`] are open or no thread can be made.
pub fn stream(request: Request, hub: &Arc<Hub>) {
    let Some(rx) = hub.subscribe() else {
        super::respond(
            request,
            super::error(503, "too many event streams are open"),
        );
        return;
    };
    let leaving = Leaving(hub.clone());
    // The head is written by hand: tiny_http's own responses buffer a body of unknown
    // length in chunks of 8 KiB, and events must go out as they happen.
    let mut out = request.into_writer();
    let spawned = std::thread::Builder::new()
        .name("serve-events".into())
        .spawn(move || {
            let _leaving = leaving;
            let head = "HTTP/1.1 200 OK\r\nContent-Type: text/event-stream\r\n\
                        Cache-Control: no-store\r\nX-Content-Type-Options: nosniff\r\n\
                        Connection: close\r\n\r\nretry: 1000\n\n";
            if send(&mut out, head).is_err() {
                return;
            }
            loop {
                let sent = match rx.recv_timeout(HEARTBEAT) {
                    Ok(frame) => send(&mut out, &frame),
                    Err(RecvTimeoutError::Timeout) => send(&mut out, ":\n\n"),
                    Err(RecvTimeoutError::Disconnected) => return,
                };
                if sent.is_err() {
                    return;
                }
            }
        });
    // Without a thread the writer and the queue are dropped: the page sees the stream
    // close and tries again.
    drop(spawned);
}

fn send(out: &mut dyn Write, text: &str) -> std::io::Result<()> {
    out.write_all(text.as_bytes())?;
    out.flush()
}
