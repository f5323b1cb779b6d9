//! `gpu16 serve`, the playground, through the built binary: its HTTP API over a plain
//! `TcpStream` (diagnostics, the session's stops against `gpu16 debug --json` and
//! `gpu16 run --json`, bad requests, paths that must not reach the disk, downloads, the
//! time bound and `stop`), and the page itself in headless Chromium driven over WebDriver
//! (`the_page_in_a_browser`), which skips only where chromedriver is absent and
//! `GPU16_BROWSER_TESTS` is not set.

mod common;

use common::{s, scratch, stdout, BUSY};
use serde_json::{json, Value};
use std::io::{BufRead, BufReader, Read, Write};
use std::net::TcpStream;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

/// A running `gpu16 serve`, ended when dropped.
struct Served {
    child: Child,
    port: u16,
}

impl Drop for Served {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// Start `gpu16 serve --port 0 ARGS` and read the address it prints.
fn serve(args: &[&str]) -> Served {
    let mut child = Command::new(env!("CARGO_BIN_EXE_gpu16"))
        .args(["serve", "--port", "0"])
        .args(args)
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .expect("the binary runs");
    let mut line = String::new();
    BufReader::new(child.stdout.take().unwrap())
        .read_line(&mut line)
        .unwrap();
    let port = line
        .split("127.0.0.1:")
        .nth(1)
        .and_then(|rest| rest.split('/').next())
        .and_then(|p| p.parse().ok())
        .unwrap_or_else(|| panic!("no address in {line:?}"));
    Served { child, port }
}

/// An HTTP reply: status and body.
struct Http {
    status: u16,
    body: Vec<u8>,
}

impl Http {
    fn json(&self) -> Value {
        serde_json::from_slice(&self.body)
            .unwrap_or_else(|e| panic!("{e}: {}", String::from_utf8_lossy(&self.body)))
    }
}

/// One HTTP/1.1 request to 127.0.0.1:`port` (`Connection: close`), with a raw `path` and
/// `host` as given.
fn http_raw(port: u16, method: &str, path: &str, host: &str, body: &[u8]) -> Http {
    let mut stream = TcpStream::connect(("127.0.0.1", port)).unwrap();
    stream
        .set_read_timeout(Some(Duration::from_secs(60)))
        .unwrap();
    let head = format!(
        "{method} {path} HTTP/1.1\r\nHost: {host}\r\nConnection: close\r\n\
         Content-Type: application/json\r\nContent-Length: {}\r\n\r\n",
        body.len()
    );
    stream.write_all(head.as_bytes()).unwrap();
    // The server may answer before the whole of an oversized body is sent.
    let _ = stream.write_all(body);
    // Read the head, then as many bytes as it says: a server may keep the connection
    // open whatever the request asked (chromedriver does).
    let mut reply = Vec::new();
    let mut buf = [0u8; 8192];
    let split = loop {
        if let Some(i) = reply.windows(4).position(|w| w == b"\r\n\r\n") {
            break i;
        }
        let n = stream.read(&mut buf).unwrap_or(0);
        if n == 0 {
            panic!("no HTTP reply: {}", String::from_utf8_lossy(&reply));
        }
        reply.extend_from_slice(&buf[..n]);
    };
    let head = String::from_utf8_lossy(&reply[..split]).to_ascii_lowercase();
    let status = head.split(' ').nth(1).unwrap().parse().unwrap();
    let length = head
        .lines()
        .find_map(|l| l.strip_prefix("content-length:"))
        .map(|n| n.trim().parse::<usize>().unwrap());
    let chunked = head.contains("transfer-encoding: chunked");
    let mut body = reply[split + 4..].to_vec();
    loop {
        let done = match length {
            Some(n) => body.len() >= n,
            None if chunked => body.ends_with(b"0\r\n\r\n"),
            None => false,
        };
        if done {
            break;
        }
        let n = stream.read(&mut buf).unwrap_or(0);
        if n == 0 {
            break;
        }
        body.extend_from_slice(&buf[..n]);
    }
    if chunked {
        body = unchunk(&body);
    }
    Http { status, body }
}

fn unchunk(mut b: &[u8]) -> Vec<u8> {
    let mut out = Vec::new();
    loop {
        let end = b.windows(2).position(|w| w == b"\r\n").unwrap();
        let n = usize::from_str_radix(std::str::from_utf8(&b[..end]).unwrap().trim(), 16).unwrap();
        if n == 0 {
            return out;
        }
        out.extend_from_slice(&b[end + 2..end + 2 + n]);
        b = &b[end + 4 + n..];
    }
}

fn get(port: u16, path: &str) -> Http {
    http_raw(port, "GET", path, &format!("127.0.0.1:{port}"), b"")
}

fn post(port: u16, path: &str, body: &Value) -> Http {
    let body = body.to_string();
    http_raw(
        port,
        "POST",
        path,
        &format!("127.0.0.1:{port}"),
        body.as_bytes(),
    )
}

/// `POST /api/command`, expecting 200: `{"reply", "state"}`.
fn command(port: u16, line: &str) -> Value {
    let r = post(port, "/api/command", &json!({ "line": line }));
    assert_eq!(r.status, 200, "{}", String::from_utf8_lossy(&r.body));
    r.json()
}

fn example(name: &str) -> String {
    std::fs::read_to_string(
        Path::new(env!("CARGO_MANIFEST_DIR"))
            .join("examples")
            .join(name),
    )
    .unwrap()
}

/// The replies of `gpu16 debug --json PROGRAM ARGS` to `script`, one a line, run in the
/// program's directory (so source locations name it `program.s`, as the page's do).
fn debug_json(program: &Path, args: &[&str], script: &str) -> Vec<Value> {
    let name = program.file_name().unwrap().to_str().unwrap();
    let mut child = Command::new(env!("CARGO_BIN_EXE_gpu16"))
        .args(["debug", "--json", name])
        .args(args)
        .current_dir(program.parent().unwrap())
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .spawn()
        .unwrap();
    child
        .stdin
        .take()
        .unwrap()
        .write_all(script.as_bytes())
        .unwrap();
    let o = child.wait_with_output().unwrap();
    stdout(&o)
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect()
}

/// The registers of every core in a `regs` reply.
fn registers(regs: &Value) -> Vec<Value> {
    regs["cores"]
        .as_array()
        .unwrap()
        .iter()
        .map(|c| c["registers"].clone())
        .collect()
}

#[test]
fn the_page_and_its_assets_are_served_and_nothing_else() {
    let srv = serve(&[]);
    let p = srv.port;
    let page = get(p, "/");
    assert_eq!(page.status, 200);
    let html = String::from_utf8_lossy(&page.body);
    assert!(html.contains("<script src=\"/app.js\">"), "{html}");
    assert_eq!(get(p, "/app.js").status, 200);
    assert_eq!(get(p, "/style.css").status, 200);
    for path in [
        "/../Cargo.toml",
        "/%2e%2e/Cargo.toml",
        "/%2e%2e/",
        "/assets/app.js",
        "/src/serve/assets/app.js",
        "/examples/counter.s",
        "/api/example?name=../Cargo.toml",
        "/api/example?name=%2e%2e%2fCargo.toml",
        "/api/example?name=/etc/passwd",
        "/api/download/../../Cargo.toml",
        "//etc/passwd",
    ] {
        let r = get(p, path);
        assert_eq!(
            r.status,
            404,
            "{path}: {}",
            String::from_utf8_lossy(&r.body)
        );
    }
    // No FILE was given: there is none to read.
    assert_eq!(get(p, "/api/file").status, 404);
    // Another site's name for this address is refused.
    let r = http_raw(p, "GET", "/", "evil.example:80", b"");
    assert_eq!(r.status, 403);
    // The examples are the bundled ones, byte for byte.
    let list = get(p, "/api/examples").json();
    assert!(list["examples"].as_array().unwrap().len() >= 10, "{list}");
    let v = get(p, "/api/example?name=dot_product.s").json();
    assert_eq!(v["source"], example("dot_product.s"));
    assert_eq!(v["memory"], example("dot_product.mem.hex"));
}

#[test]
fn the_users_file_is_served_and_includes_are_refused() {
    let d = scratch("serve", "file");
    let file = d.join("mine.s");
    std::fs::write(&file, example("counter.s")).unwrap();
    let srv = serve(&[s(&file)]);
    let v = get(srv.port, "/api/file").json();
    assert_eq!(v["name"], "mine.s");
    assert_eq!(v["source"], example("counter.s"));
    // `.include` would read another file: refused, with the line.
    let v = post(
        srv.port,
        "/api/assemble",
        &json!({"source": format!(".include \"{}\"\n", s(&file))}),
    )
    .json();
    assert_eq!(v["errors"], 1, "{v}");
    assert_eq!(v["diagnostics"][0]["line"], 1, "{v}");
    assert!(
        v["diagnostics"][0]["message"]
            .as_str()
            .unwrap()
            .contains("reads no other files"),
        "{v}"
    );
}

#[test]
fn assembling_an_error_gives_a_structured_diagnostic() {
    let srv = serve(&[]);
    let source = ".cf mask=0x1\n.if\n    set_const 1, r1\n    ad r1, r1, r2\n";
    let v = post(srv.port, "/api/assemble", &json!({ "source": source })).json();
    assert_eq!(v["errors"], 1, "{v}");
    let d = &v["diagnostics"][0];
    assert_eq!(d["severity"], "error");
    assert_eq!(d["file"], "program.s");
    assert_eq!(d["line"], 4);
    assert_eq!(d["column"], 5);
    assert!(d["message"].as_str().unwrap().contains("ad"), "{d}");
    // Opening it gives the same diagnostics and no session.
    let v = post(srv.port, "/api/open", &json!({ "source": source })).json();
    assert_eq!(v["ok"], false);
    assert_eq!(v["diagnostics"][0]["line"], 4);
    assert_eq!(
        post(srv.port, "/api/command", &json!({"line": "regs"})).status,
        409
    );
    // Fixed, it assembles.
    let fixed = source.replace(" ad ", " add ");
    let v = post(srv.port, "/api/assemble", &json!({ "source": fixed })).json();
    assert_eq!(v["errors"], 0, "{v}");
}

#[test]
fn break_step_reverse_and_the_end_agree_with_the_cli() {
    let srv = serve(&[]);
    let p = srv.port;
    let d = scratch("serve", "agree");
    let file = d.join("program.s");
    std::fs::write(&file, example("counter.s")).unwrap();
    let v = post(
        p,
        "/api/open",
        &json!({"source": example("counter.s"), "machine": {"backend": "interp"}}),
    )
    .json();
    assert_eq!(v["ok"], true, "{v}");
    assert_eq!(v["state"]["cycle"], 0);
    let b = command(p, "break program.s:14");
    assert_eq!(b["reply"]["breakpoint"], 1, "{b}");
    let script =
        "break program.s:14\ncontinue\nregs\nmem 0 4096\nlocks\nstep 7\nregs\nmem 0 4096\n\
                  reverse-step 3\nregs\nmem 0 4096\nlocks\nwhere\n";
    let cli = debug_json(&file, &["--backend", "interp"], script);
    assert_eq!(cli.len(), 13, "{cli:?}");
    let stop = command(p, "continue");
    assert_eq!(stop["reply"], cli[1]);
    assert_eq!(stop["reply"]["event"], "break");
    assert_eq!(registers(&stop["state"]["regs"]), registers(&cli[2]));
    assert_eq!(stop["state"]["memory"], cli[3]["bytes"]);
    assert_eq!(stop["state"]["locks"], cli[4]);
    let step = command(p, "step 7");
    assert_eq!(step["reply"], cli[5]);
    assert_eq!(step["state"]["regs"], cli[6]);
    assert_eq!(step["state"]["memory"], cli[7]["bytes"]);
    let back = command(p, "reverse-step 3");
    assert_eq!(back["reply"], cli[8]);
    assert_eq!(back["reply"]["reverse"], true);
    assert_eq!(back["state"]["regs"], cli[9]);
    assert_eq!(back["state"]["memory"], cli[10]["bytes"]);
    assert_eq!(back["state"]["locks"], cli[11]);
    assert_eq!(back["state"]["where"], cli[12]);
    // To the end: the final registers and memory of `gpu16 run --json`.
    command(p, "delete all");
    let end = command(p, "continue");
    assert_eq!(end["reply"]["event"], "end", "{end}");
    let o = common::gpu16(&["run", "--json", "--backend", "interp", s(&file)]);
    let run: Value = serde_json::from_str(&stdout(&o)).unwrap();
    assert_eq!(
        registers(&end["state"]["regs"]),
        registers(
            &json!({"cores": run["registers"].as_array().unwrap().iter().map(|r| json!({"registers": r})).collect::<Vec<_>>()})
        )
    );
    assert_eq!(end["state"]["memory"], run["memory"]);
    assert_eq!(end["reply"]["cycle"], run["cycles"]);
    // The whole run the page was given at open: the same statistics.
    assert_eq!(v["run"]["cycles"], run["cycles"]);
    assert_eq!(v["run"]["stats"], run["stats"]);
    assert!(!v["run"]["events"].as_array().unwrap().is_empty());
}

#[test]
fn a_memory_image_and_machine_choices_are_the_clis() {
    let srv = serve(&[]);
    let p = srv.port;
    let d = scratch("serve", "memory");
    let (prog, mem) = (d.join("program.s"), d.join("m.hex"));
    std::fs::write(&prog, example("dot_product.s")).unwrap();
    std::fs::write(&mem, example("dot_product.mem.hex")).unwrap();
    let v = post(
        p,
        "/api/open",
        &json!({"source": example("dot_product.s"), "memory": example("dot_product.mem.hex"),
                "machine": {"backend": "jit", "timing": "broadcast=2", "issue": "lookahead"}}),
    )
    .json();
    assert_eq!(v["ok"], true, "{v}");
    let end = command(p, "continue");
    let o = common::gpu16(&[
        "run",
        "--json",
        "--backend",
        "jit",
        "--timing",
        "broadcast=2",
        "--issue",
        "lookahead",
        "--mem",
        s(&mem),
        s(&prog),
    ]);
    let run: Value = serde_json::from_str(&stdout(&o)).unwrap();
    assert_eq!(end["state"]["memory"], run["memory"]);
    assert_eq!(end["reply"]["cycle"], run["cycles"]);
    // Choices the command line refuses are refused, with its message.
    for (machine, says) in [
        (json!({"max_cycles": "288230376151711745"}), "max-cycles"),
        (json!({"backend": "gpu"}), "gpu"),
        (json!({"timing": "nonsense=1"}), "nonsense"),
        (json!({"bank_conflicts": "yes"}), "bank_conflicts"),
        (json!("interp"), "machine"),
    ] {
        let r = post(
            p,
            "/api/open",
            &json!({"source": example("counter.s"), "machine": machine}),
        );
        assert_eq!(r.status, 400, "{machine}");
        let e = r.json()["error"].as_str().unwrap().to_string();
        assert!(e.contains(says), "{machine}: {e}");
    }
    // A bad memory image is the program's error, not the request's.
    let v = post(
        p,
        "/api/open",
        &json!({"source": example("counter.s"), "memory": "zz not hex"}),
    )
    .json();
    assert_eq!(v["ok"], false, "{v}");
}

#[test]
fn bad_requests_get_4xx_with_a_message() {
    let srv = serve(&[]);
    let p = srv.port;
    let host = format!("127.0.0.1:{p}");
    let big = vec![b' '; (1 << 20) + 1];
    let r = http_raw(p, "POST", "/api/assemble", &host, &big);
    assert_eq!(r.status, 413);
    for (body, says) in [
        (&b"{not json"[..], "not JSON"),
        (b"[1, 2]", "object"),
        (b"{}", "`source`"),
        (b"{\"source\": 5}", "`source`"),
        (b"\xff\xfe", "not JSON"),
    ] {
        let r = http_raw(p, "POST", "/api/assemble", &host, body);
        assert_eq!(r.status, 400, "{}", String::from_utf8_lossy(body));
        assert!(
            r.json()["error"].as_str().unwrap().contains(says),
            "{}",
            String::from_utf8_lossy(&r.body)
        );
    }
    assert_eq!(get(p, "/api/open").status, 405);
    assert_eq!(http_raw(p, "DELETE", "/app.js", &host, b"").status, 405);
    assert_eq!(get(p, "/api/download/trace").status, 409);
    let v = post(p, "/api/open", &json!({"source": example("counter.s")})).json();
    assert_eq!(v["ok"], true);
    for line in ["regs\nregs", "step\r"] {
        assert_eq!(
            post(p, "/api/command", &json!({ "line": line })).status,
            400
        );
    }
    let long = "x".repeat(4097);
    assert_eq!(
        post(p, "/api/command", &json!({ "line": long })).status,
        400
    );
    assert_eq!(get(p, "/api/download/core").status, 404);
    // A bad command is the session's error reply, and the session goes on.
    let v = command(p, "frobnicate");
    assert!(v["reply"]["error"].is_string(), "{v}");
    assert_eq!(command(p, "step 2")["state"]["cycle"], 2);
}

#[test]
fn downloads_are_the_run_commands_files() {
    let srv = serve(&[]);
    let p = srv.port;
    let d = scratch("serve", "downloads");
    let prog = d.join("program.s");
    std::fs::write(&prog, example("counter.s")).unwrap();
    let v = post(p, "/api/open", &json!({"source": example("counter.s")})).json();
    assert_eq!(v["ok"], true);
    let (trace, vcd, png) = (d.join("t.json"), d.join("w.vcd"), d.join("m.png"));
    let o = common::gpu16(&[
        "run",
        "--json",
        "--trace",
        s(&trace),
        "--vcd",
        s(&vcd),
        "--mem-png",
        s(&png),
        "--png-scale",
        "4",
        s(&prog),
    ]);
    let run: Value = serde_json::from_str(&stdout(&o)).unwrap();
    let t = get(p, "/api/download/trace");
    assert_eq!(t.status, 200);
    let ours: Value = serde_json::from_slice(&t.body).unwrap();
    let theirs: Value = serde_json::from_slice(&std::fs::read(&trace).unwrap()).unwrap();
    assert_eq!(ours["traceEvents"], theirs["traceEvents"]);
    assert_eq!(
        get(p, "/api/download/vcd").body,
        std::fs::read(&vcd).unwrap()
    );
    assert_eq!(
        get(p, "/api/download/png").body,
        std::fs::read(&png).unwrap()
    );
    let j = get(p, "/api/download/json").json();
    for key in ["cycles", "registers", "memory", "stats", "tasks"] {
        assert_eq!(j[key], run[key], "{key}");
    }
}

#[test]
fn a_run_is_bounded_in_time_and_can_be_stopped() {
    // --timeout bounds the whole run made at open and every command.
    let srv = serve(&["--timeout", "0.5"]);
    let p = srv.port;
    let started = Instant::now();
    let v = post(p, "/api/open", &json!({ "source": BUSY })).json();
    assert_eq!(v["ok"], true, "{v}");
    assert!(v["run"]["error"].is_object(), "{}", v["run"]);
    let c = command(p, "continue");
    assert!(
        c["reply"]["error"]
            .as_str()
            .unwrap()
            .contains("interrupted"),
        "{c}"
    );
    assert_eq!(c["state"]["cycle"], 0);
    assert!(started.elapsed() < Duration::from_secs(20));
    drop(srv);
    // POST /api/stop stops a run under way; the session stays where it was.
    let srv = serve(&["--timeout", "60"]);
    let p = srv.port;
    let opener = std::thread::spawn(move || {
        post(
            p,
            "/api/open",
            &json!({ "source": BUSY, "machine": {"max_cycles": 100000000000u64} }),
        )
        .json()
    });
    let started = Instant::now();
    // Stop until it is stopped: a stop before the run has begun stops nothing.
    let stop_until = |done: &dyn Fn() -> bool| {
        while !done() {
            std::thread::sleep(Duration::from_millis(300));
            let r = post(p, "/api/stop", &json!({}));
            assert_eq!(r.status, 200);
            assert!(started.elapsed() < Duration::from_secs(20), "not stopped");
        }
    };
    stop_until(&|| opener.is_finished());
    let v = opener.join().unwrap();
    assert_eq!(v["ok"], true, "{v}");
    command(p, "step 3");
    let runner = std::thread::spawn(move || command(p, "continue"));
    stop_until(&|| runner.is_finished());
    let c = runner.join().unwrap();
    assert!(
        c["reply"]["error"]
            .as_str()
            .unwrap()
            .contains("interrupted"),
        "{c}"
    );
    assert_eq!(c["state"]["cycle"], 3);
    assert!(started.elapsed() < Duration::from_secs(20));
}

/// An open `GET /api/events` stream: its events, read one by one.
struct Events(BufReader<TcpStream>);

impl Events {
    /// Open the stream, or give the status it was refused with.
    fn open(port: u16, host: &str) -> Result<Events, u16> {
        Events::open_at(port, host, "/api/events")
    }

    /// [`Events::open`] at `path`.
    fn open_at(port: u16, host: &str, path: &str) -> Result<Events, u16> {
        let mut stream = TcpStream::connect(("127.0.0.1", port)).unwrap();
        stream
            .set_read_timeout(Some(Duration::from_secs(30)))
            .unwrap();
        write!(stream, "GET {path} HTTP/1.1\r\nHost: {host}\r\n\r\n").unwrap();
        let mut r = BufReader::new(stream);
        let mut head = String::new();
        loop {
            let mut line = String::new();
            r.read_line(&mut line).unwrap();
            if line == "\r\n" || line.is_empty() {
                break;
            }
            head.push_str(&line.to_ascii_lowercase());
        }
        let status: u16 = head.split(' ').nth(1).unwrap().parse().unwrap();
        if status != 200 {
            return Err(status);
        }
        assert!(head.contains("content-type: text/event-stream"), "{head}");
        Ok(Events(r))
    }

    /// The next event: its kind and its data.
    fn next(&mut self) -> (String, Value) {
        let (mut kind, mut data) = (String::new(), String::new());
        loop {
            let mut line = String::new();
            let n = self.0.read_line(&mut line).expect("an event in time");
            assert!(n > 0, "the stream ended");
            let line = line.trim_end_matches('\n');
            if line.is_empty() {
                if !kind.is_empty() {
                    return (kind, serde_json::from_str(&data).unwrap());
                }
                continue;
            }
            if let Some(k) = line.strip_prefix("event: ") {
                kind = k.to_string();
            } else if let Some(d) = line.strip_prefix("data: ") {
                data.push_str(d);
            }
        }
    }
}

#[test]
fn live_updates_tell_what_runs_and_how_far() {
    let srv = serve(&["--timeout", "1.5"]);
    let p = srv.port;
    // The Host rule holds for the stream too.
    assert_eq!(Events::open(p, "evil.example").err(), Some(403));
    let mut events = Events::open(p, &format!("127.0.0.1:{p}")).unwrap();
    // A whole run the time limit ends: busy, its progress every quarter second, idle.
    let opener = std::thread::spawn(move || {
        post(
            p,
            "/api/open",
            &json!({ "source": BUSY, "machine": {"max_cycles": 100000000000u64} }),
        )
        .json()
    });
    assert_eq!(events.next(), ("busy".into(), json!({"what": "open"})));
    let mut seen = Vec::new();
    let idle = loop {
        match events.next() {
            (k, v) if k == "progress" => seen.push(v),
            (k, v) if k == "idle" => break v,
            other => panic!("{other:?}"),
        }
    };
    let opened = opener.join().unwrap();
    assert_eq!(opened["ok"], true, "{opened}");
    // 1.5 s at a tick every 0.25 s: five or six ticks, fewer on a machine so busy that
    // the clock's thread waits for its turn.
    assert!((2..=6).contains(&seen.len()), "{seen:?}");
    for (i, v) in seen.iter().enumerate() {
        assert_eq!(v["what"], "open");
        assert!(
            v["elapsed_ms"].as_u64().unwrap() >= 250 * (i as u64 + 1),
            "{v}"
        );
        // BUSY is one task of one control frame and one frame of a loop; its 16 cores
        // execute 16 instructions a cycle after the first few (the count may trail the
        // checkpoint's cycle by a few cycles).
        assert_eq!(v["tasks"], 1, "{v}");
        let cycle = v["cycle"].as_u64().unwrap();
        let instructions = v["instructions"].as_u64().unwrap();
        assert!(cycle > 0 && instructions <= 16 * cycle, "{v}");
        assert!(instructions + 16 * 16 >= 16 * cycle, "{v}");
        if i > 0 {
            assert!(cycle > seen[i - 1]["cycle"].as_u64().unwrap(), "{seen:?}");
        }
    }
    assert_eq!(idle["what"], "open");
    assert_eq!(idle["error"]["rule"], "timeout", "{idle}");
    assert_eq!(idle["error"], opened["run"]["error"]);
    assert_eq!(
        (idle["cycle"].clone(), idle["status"].clone()),
        (json!(0), json!("paused"))
    );
    // A quick command: busy and idle, no progress.
    let c = command(p, "step 3");
    assert_eq!(events.next(), ("busy".into(), json!({"what": "step 3"})));
    let (kind, idle) = events.next();
    assert_eq!(kind, "idle");
    assert_eq!(idle["what"], "step 3");
    assert_eq!(idle["cycle"], 3);
    assert_eq!(idle["cycle"], c["state"]["cycle"]);
    assert_eq!(idle["error"], Value::Null);
    // A stream opened now is told where the server stands first (a query is ignored).
    let mut late = Events::open_at(p, "localhost", "/api/events?since=0").unwrap();
    assert_eq!(late.next(), ("idle".into(), idle));
    // A search the stop request ends: its progress, then idle with the error.
    command(p, "watch 4000");
    assert_eq!(events.next().0, "busy");
    assert_eq!(events.next().0, "idle");
    let runner = std::thread::spawn(move || command(p, "continue"));
    assert_eq!(events.next(), ("busy".into(), json!({"what": "continue"})));
    // Its progress climbs from cycle 0 (the session stands there; a search runs on from it).
    loop {
        let (kind, v) = events.next();
        assert_eq!(kind, "progress", "{v}");
        if v["cycle"].as_u64().is_some_and(|c| c > 0) {
            break;
        }
    }
    assert_eq!(post(p, "/api/stop", &json!({})).json()["stopped"], true);
    let idle = loop {
        match events.next() {
            (k, _) if k == "progress" => {}
            (k, v) if k == "idle" => break v,
            other => panic!("{other:?}"),
        }
    };
    let c = runner.join().unwrap();
    assert!(
        idle["error"].as_str().unwrap().contains("interrupted"),
        "{idle}"
    );
    assert_eq!(idle["error"], c["reply"]["error"]);
    assert_eq!(idle["cycle"], 3);
    // At most eight streams at once: two are open.
    let more: Vec<Events> = (0..6)
        .map(|_| Events::open(p, "127.0.0.1").unwrap())
        .collect();
    assert_eq!(Events::open(p, "127.0.0.1").err(), Some(503));
    drop((more, late, events));
}

// ---- the page in a browser ------------------------------------------------------------

/// The program the browser test types, with an error on line 5 (`ad`).
const TYPED: &str =
    ".cf mask=0x000f\n.if\n    set_const 0, r1\n    set_const 5, r2\n    ad r1, r2, r3\n    \
                     st [r2, r1], r3\n    add r3, r2, r4\n    st [r4, r1], r4\n";

/// Where chromedriver is: on PATH, or Debian's place.
fn chromedriver() -> Option<PathBuf> {
    let on_path = std::env::var_os("PATH").and_then(|paths| {
        std::env::split_paths(&paths)
            .map(|d| d.join("chromedriver"))
            .find(|p| p.is_file())
    });
    on_path.or_else(|| {
        let p = PathBuf::from("/usr/bin/chromedriver");
        p.is_file().then_some(p)
    })
}

/// A chromedriver and one headless Chromium session, both ended when dropped.
struct Browser {
    driver: Child,
    port: u16,
    session: String,
}

impl Drop for Browser {
    fn drop(&mut self) {
        let path = format!("/session/{}", self.session);
        let _ = std::panic::catch_unwind(|| {
            http_raw(self.port, "DELETE", &path, "127.0.0.1", b"");
        });
        let _ = self.driver.kill();
        let _ = self.driver.wait();
    }
}

impl Browser {
    fn start(driver: &Path, downloads: &Path) -> Browser {
        let port = std::net::TcpListener::bind("127.0.0.1:0")
            .unwrap()
            .local_addr()
            .unwrap()
            .port();
        let child = Command::new(driver)
            .arg(format!("--port={port}"))
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .expect("chromedriver starts");
        let mut browser = Browser {
            driver: child,
            port,
            session: String::new(),
        };
        let deadline = Instant::now() + Duration::from_secs(20);
        while TcpStream::connect(("127.0.0.1", port)).is_err() {
            assert!(Instant::now() < deadline, "chromedriver did not listen");
            std::thread::sleep(Duration::from_millis(50));
        }
        let mut options = json!({
            "args": ["--headless=new", "--no-sandbox", "--disable-gpu",
                     "--disable-dev-shm-usage", "--window-size=1500,1250"],
            "prefs": {"download.default_directory": s(downloads),
                      "download.prompt_for_download": false},
        });
        for chromium in ["/usr/bin/chromium", "/usr/bin/chromium-browser"] {
            if Path::new(chromium).is_file() {
                options["binary"] = json!(chromium);
                break;
            }
        }
        let caps = json!({"capabilities": {"alwaysMatch": {
            "browserName": "chrome", "goog:chromeOptions": options}}});
        let v = browser.raw("POST", "/session", &caps);
        browser.session = v["value"]["sessionId"]
            .as_str()
            .unwrap_or_else(|| panic!("no WebDriver session: {v}"))
            .to_string();
        browser
    }

    fn raw(&self, method: &str, path: &str, body: &Value) -> Value {
        let body = if method == "GET" {
            Vec::new()
        } else {
            body.to_string().into_bytes()
        };
        let r = http_raw(self.port, method, path, "127.0.0.1", &body);
        r.json()
    }

    /// A WebDriver command of the session; its `value`, or a panic with the error.
    fn call(&self, method: &str, path: &str, body: &Value) -> Value {
        if std::env::var_os("GPU16_WEBDRIVER_LOG").is_some() {
            println!("webdriver {method} {path}");
        }
        let v = self.raw(method, &format!("/session/{}/{path}", self.session), body);
        if v["value"]["error"].is_string() {
            panic!("WebDriver {path}: {}", v["value"]);
        }
        v["value"].clone()
    }

    fn go(&self, url: &str) {
        self.call("POST", "url", &json!({ "url": url }));
    }

    fn find(&self, css: &str) -> String {
        let v = self.call(
            "POST",
            "element",
            &json!({"using": "css selector", "value": css}),
        );
        v.as_object()
            .and_then(|o| o.values().next())
            .and_then(Value::as_str)
            .unwrap()
            .to_string()
    }

    /// Click `css` and wait for the page to show the machine after `event`. The status's
    /// event is cleared first: the one before the click may be the same (an `end` after
    /// an `end`), and seeing it would read the page before the new command's reply.
    fn click_until_event(&self, css: &str, event: &str, what: &str) {
        self.js("delete document.getElementById('status').dataset.event; return 1;");
        self.click(css);
        self.wait(
            &format!("return document.getElementById('status').dataset.event === '{event}'"),
            what,
        );
    }

    /// Click the element `css` finds; found again if the page re-drew it in between (the
    /// gutter is re-drawn as the page hears from the server).
    fn click(&self, css: &str) {
        for _ in 0..20 {
            let e = self.find(css);
            let path = format!("/session/{}/element/{e}/click", self.session);
            let v = self.raw("POST", &path, &json!({}));
            match v["value"]["error"].as_str() {
                None => return,
                Some("stale element reference") => {
                    std::thread::sleep(Duration::from_millis(50));
                }
                Some(_) => panic!("WebDriver click {css}: {}", v["value"]),
            }
        }
        panic!("{css} stayed stale");
    }

    fn type_into(&self, css: &str, text: &str) {
        let e = self.find(css);
        self.call("POST", &format!("element/{e}/clear"), &json!({}));
        self.call(
            "POST",
            &format!("element/{e}/value"),
            &json!({ "text": text }),
        );
    }

    fn js(&self, script: &str) -> Value {
        self.call(
            "POST",
            "execute/sync",
            &json!({"script": script, "args": []}),
        )
    }

    /// Wait (10 s at most) until `script` returns something truthy, and give it.
    fn wait(&self, script: &str, what: &str) -> Value {
        let deadline = Instant::now() + Duration::from_secs(10);
        loop {
            let v = self.js(script);
            let truthy =
                !matches!(&v, Value::Null | Value::Bool(false)) && v != json!(0) && v != json!("");
            if truthy {
                return v;
            }
            assert!(Instant::now() < deadline, "waited in vain for {what}");
            std::thread::sleep(Duration::from_millis(50));
        }
    }

    fn screenshot(&self, path: &Path) {
        let v = self.call("GET", "screenshot", &Value::Null);
        std::fs::write(path, base64(v.as_str().unwrap())).unwrap();
    }
}

fn base64(text: &str) -> Vec<u8> {
    let value = |c: u8| match c {
        b'A'..=b'Z' => c - b'A',
        b'a'..=b'z' => c - b'a' + 26,
        b'0'..=b'9' => c - b'0' + 52,
        b'+' => 62,
        _ => 63,
    };
    let digits: Vec<u8> = text
        .bytes()
        .filter(|c| c.is_ascii_alphanumeric() || *c == b'+' || *c == b'/')
        .map(value)
        .collect();
    let mut out = Vec::with_capacity(digits.len() * 3 / 4);
    for chunk in digits.chunks(4) {
        let n = chunk
            .iter()
            .enumerate()
            .fold(0u32, |n, (i, &d)| n | u32::from(d) << (18 - 6 * i));
        out.extend_from_slice(&n.to_be_bytes()[1..chunk.len()]);
    }
    out
}

/// The page's registers (16 cores x 16) and memory (4096 bytes), read from its cells.
fn page_machine(b: &Browser) -> (Value, Value) {
    let regs = b.js(
        "const o = []; for (let k = 0; k < 16; k++) { const r = []; \
         for (let n = 0; n < 16; n++) r.push(Number(document.getElementById(`reg-${k}-${n}`).dataset.value)); \
         o.push(r); } return o;",
    );
    let mem = b.js(
        "let h = ''; for (let a = 0; a < 4096; a++) \
         h += Number(document.getElementById('mem-' + a).dataset.value).toString(16).padStart(2, '0'); \
         return h;",
    );
    (regs, mem)
}

#[test]
fn the_page_in_a_browser() {
    let Some(driver) = chromedriver() else {
        if std::env::var_os("GPU16_BROWSER_TESTS").is_some() {
            panic!("GPU16_BROWSER_TESTS is set but chromedriver is not installed");
        }
        println!(
            "SKIPPED the_page_in_a_browser: chromedriver is not installed (apt-get install \
             chromium chromium-driver); set GPU16_BROWSER_TESTS=1 to make this a failure"
        );
        return;
    };
    let target = Path::new(env!("CARGO_TARGET_TMPDIR")).parent().unwrap();
    let shots = target.join("serve-screenshots");
    let _ = std::fs::remove_dir_all(&shots);
    std::fs::create_dir_all(&shots).unwrap();
    let shot = |b: &Browser, name: &str| b.screenshot(&shots.join(format!("{name}.png")));
    let d = scratch("serve", "browser");
    let downloads = d.join("downloads");
    std::fs::create_dir_all(&downloads).unwrap();
    // A long --timeout: only the stop button stops the long run at the end.
    let srv = serve(&["--timeout", "60"]);
    let b = Browser::start(&driver, &downloads);
    b.go(&format!("http://127.0.0.1:{}/", srv.port));
    b.wait(
        "return document.getElementById('editor').value.includes('counter.s') \
         && document.getElementById('examples').options.length > 10",
        "the first example and the menu",
    );
    shot(&b, "00-loaded");

    // A program with an error: the diagnostic, and the caret's message on its line.
    b.type_into("#editor", TYPED);
    b.wait(
        "return document.querySelector('#diagnostics li.error[data-line=\"5\"]')",
        "the diagnostic of line 5",
    );
    assert!(
        b.js("return document.querySelector('#gutter .ln[data-line=\"5\"]').classList.contains('err')")
            == json!(true)
    );
    b.click("#diagnostics li.error");
    let message = b.wait(
        "return document.getElementById('caret-msg').textContent",
        "the caret's message",
    );
    assert!(
        message
            .as_str()
            .unwrap()
            .starts_with("line 5:5: error: unknown instruction"),
        "{message}"
    );
    shot(&b, "01-diagnostic");

    // Fixed: no diagnostic.
    let e = b.find("#editor");
    b.call("POST", &format!("element/{e}/clear"), &json!({}));
    let fixed = TYPED.replace(" ad ", " add ");
    b.call(
        "POST",
        &format!("element/{e}/value"),
        &json!({ "text": fixed }),
    );
    b.wait(
        "return document.getElementById('diagnostics').dataset.errors === '0'",
        "no errors",
    );
    assert_eq!(
        b.js("return document.getElementById('caret-msg').className"),
        json!("")
    );

    // A breakpoint by clicking line 8's number, then run to it.
    b.click("#gutter .ln[data-line=\"8\"]");
    b.wait(
        "return document.querySelector('#gutter .ln[data-line=\"8\"]').classList.contains('bp')",
        "the breakpoint mark",
    );
    shot(&b, "02-fixed-with-a-breakpoint");
    b.click_until_event("#run", "break", "the stop at the breakpoint");
    let file = d.join("program.s");
    std::fs::write(&file, &fixed).unwrap();
    let cli = debug_json(
        &file,
        &[],
        "break program.s:8\ncontinue\nregs\nmem 0 4096\nreverse-step\nregs\nmem 0 4096\n\
         run\nstep 2\nregs\n",
    );
    let cycle = cli[1]["cycle"].as_u64().unwrap();
    assert_eq!(
        b.js("return Number(document.getElementById('status').dataset.cycle)"),
        json!(cycle)
    );
    // The IP of the cores is marked on the line.
    assert_eq!(
        b.js("return document.querySelector('#gutter .ln[data-line=\"8\"]').classList.contains('ip')"),
        json!(true)
    );
    let (regs, mem) = page_machine(&b);
    assert_eq!(regs, json!(registers(&cli[2])));
    assert_eq!(mem, cli[3]["bytes"]);
    assert_ne!(
        mem.as_str().unwrap(),
        "0".repeat(8192),
        "the stores are seen"
    );
    assert!(
        b.js("return document.querySelectorAll('#memory-grid .written').length")
            .as_u64()
            .unwrap()
            > 0
    );
    shot(&b, "03-stopped-at-the-breakpoint");

    // Back one cycle.
    b.click("#rstep");
    b.wait(
        &format!(
            "return document.getElementById('status').dataset.cycle === '{}'",
            cycle - 1
        ),
        "the reverse step",
    );
    let (regs, mem) = page_machine(&b);
    assert_eq!(regs, json!(registers(&cli[5])));
    assert_eq!(mem, cli[6]["bytes"]);
    shot(&b, "04-reverse-step");

    // The timeline: zoom in, then click cycle 2 to go there.
    let zoom = b.js("return Number(document.getElementById('timeline').dataset.zoom)");
    b.click("#zoom-in");
    let zoomed = b.js("return Number(document.getElementById('timeline').dataset.zoom)");
    assert_eq!(zoomed.as_f64().unwrap(), zoom.as_f64().unwrap() * 2.0);
    b.js(
        "const c = document.getElementById('timeline'); const r = c.getBoundingClientRect(); \
         const z = Number(c.dataset.zoom); c.scrollIntoView(); \
         const r2 = c.getBoundingClientRect(); \
         c.dispatchEvent(new MouseEvent('click', {clientX: r2.left + 46 + 2.5 * z, \
         clientY: r2.top + 40, bubbles: true})); return r.width;",
    );
    b.wait(
        "return document.getElementById('status').dataset.cycle === '2' \
         && document.getElementById('timeline').dataset.cursor === '2'",
        "the click on cycle 2",
    );
    let (regs, _) = page_machine(&b);
    assert_eq!(regs, json!(registers(&cli[9])));
    shot(&b, "05-timeline-zoomed-at-cycle-2");

    // The trace of the whole run, downloaded.
    b.click("#dl-trace");
    let trace = downloads.join("trace.json");
    let deadline = Instant::now() + Duration::from_secs(10);
    let text = loop {
        if let Ok(text) = std::fs::read_to_string(&trace) {
            if let Ok(v) = serde_json::from_str::<Value>(&text) {
                break v;
            }
        }
        assert!(Instant::now() < deadline, "no trace.json downloaded");
        std::thread::sleep(Duration::from_millis(100));
    };
    assert!(!text["traceEvents"].as_array().unwrap().is_empty());
    // The breakpoint removed by a second click, on to the end: the statistics' cycles.
    b.click("#gutter .ln[data-line=\"8\"]");
    b.wait(
        "return !document.querySelector('#gutter .ln[data-line=\"8\"]').classList.contains('bp')",
        "the breakpoint removed",
    );
    b.click_until_event("#continue", "end", "the end");
    let run = common::gpu16(&["run", "--json", s(&file)]);
    let run: Value = serde_json::from_str(&stdout(&run)).unwrap();
    assert_eq!(
        b.js("return Number(document.getElementById('stat-cycles').textContent)"),
        run["cycles"]
    );
    assert_eq!(page_machine(&b).1, run["memory"]);
    // The whole page, for the README when asked.
    if let Some(out) = std::env::var_os("GPU16_PLAYGROUND_PNG") {
        b.js("window.scrollTo(0, 0); return 1;");
        b.screenshot(Path::new(&out));
    }
    shot(&b, "06-downloaded-and-ended");

    // An example from the menu on the interpreter: a lock held, its waiters, a stalled
    // core and the locked byte, as `gpu16 debug` shows them.
    b.click("#examples option[value=\"counter.s\"]");
    b.wait(
        "return document.getElementById('editor').value.startsWith('; counter.s')",
        "the example in the editor",
    );
    b.click("#backend option[value=\"interp\"]");
    b.type_into("#step-n", "2");
    b.click("#gutter .ln[data-line=\"14\"]");
    b.click_until_event("#run", "break", "the stop in counter.s");
    b.click("#step");
    b.wait(
        "return document.getElementById('status').dataset.cycle === '11'",
        "two cycles on",
    );
    let locks = b.js("return document.getElementById('locks').textContent");
    assert!(
        locks
            .as_str()
            .unwrap()
            .starts_with("0x000: held by core 0 since cycle 9; waiting: core 1, 2, 3"),
        "{locks}"
    );
    let core1 = b.js("return document.querySelector('#core-1 .state').textContent");
    assert_eq!(core1, "stalled on lock 0x000 held by core 0 since 9");
    assert_eq!(
        b.js("return document.getElementById('mem-0').classList.contains('locked')"),
        json!(true)
    );
    assert_eq!(
        b.js("return document.getElementById('stat-backend').textContent"),
        "interp"
    );
    shot(&b, "07-counter-locks");

    // The machine choices and the memory box, each against `gpu16 run --json` with the same
    // flags: an example whose memory image fills the box, on the compiled backend with a
    // timing choice; and the MCST dialect under the RTL's timing.
    let ends = [
        ("dot_product.s", "spec", "jit", "broadcast=2"),
        ("mcst_bank0.s", "mcst", "auto", "mcst-rtl"),
    ];
    for (name, dialect, backend, timing) in ends {
        b.click(&format!("#examples option[value=\"{name}\"]"));
        b.wait(
            &format!("return document.getElementById('editor').value.startsWith('; ') && document.getElementById('editor').value.includes('{}')", &name[..4]),
            "the example in the editor",
        );
        b.click(&format!("#dialect option[value=\"{dialect}\"]"));
        b.click(&format!("#backend option[value=\"{backend}\"]"));
        b.type_into("#timing", timing);
        let program = Path::new(env!("CARGO_MANIFEST_DIR"))
            .join("examples")
            .join(name);
        let mut flags = vec!["run", "--json", "--dialect", dialect, "--backend", backend];
        flags.extend(["--timing", timing]);
        let memory_file = program.with_extension("mem.hex");
        let memory_box = b.js("return document.getElementById('memory').value");
        if memory_file.is_file() {
            assert_eq!(
                memory_box.as_str().unwrap(),
                std::fs::read_to_string(&memory_file).unwrap()
            );
            flags.extend(["--mem", s(&memory_file)]);
        } else {
            assert_eq!(memory_box, "");
        }
        flags.push(s(&program));
        b.click_until_event("#run", "end", "the end");
        let run: Value = serde_json::from_str(&stdout(&common::gpu16(&flags))).unwrap();
        assert_eq!(
            b.js("return Number(document.getElementById('stat-cycles').textContent)"),
            run["cycles"],
            "{name}"
        );
        assert_eq!(page_machine(&b).1, run["memory"], "{name}");
        shot(&b, &format!("07-{dialect}-{backend}-{timing}"));
    }
    b.type_into("#timing", "");
    b.click("#dialect option[value=\"spec\"]");
    // Save downloads the editor's text; load file reads a local file into the editor.
    b.click("#save-file");
    let saved = downloads.join("program.s");
    let deadline = Instant::now() + Duration::from_secs(10);
    while std::fs::read_to_string(&saved).ok().as_deref() != Some(example("mcst_bank0.s").as_str())
    {
        assert!(Instant::now() < deadline, "no program.s saved");
        std::thread::sleep(Duration::from_millis(100));
    }
    let local = d.join("local.s");
    std::fs::write(&local, "; a local file\n.cf mask=1\n.if\n    ready\n").unwrap();
    // WebDriver types a path only into a file input it can see; the page's is hidden
    // behind its button.
    b.js("document.getElementById('load-file').hidden = false; return 1;");
    let input = b.find("#load-file");
    b.call(
        "POST",
        &format!("element/{input}/value"),
        &json!({ "text": s(&local) }),
    );
    b.wait(
        "return document.getElementById('editor').value.startsWith('; a local file')",
        "the local file in the editor",
    );

    // A run that would go on for long, stopped by the stop button (the page's run is an
    // open, whose whole run the first click stops, then a continue).
    b.type_into("#editor", BUSY);
    b.type_into("#max-cycles", "100000000000");
    b.click("#backend option[value=\"auto\"]");
    let started = Instant::now();
    b.click("#run");
    // The whole run's progress arrives live (server-sent events) while it runs.
    let live = loop {
        std::thread::sleep(Duration::from_millis(100));
        let live = b.js("const l = document.getElementById('live'); \
             return [l.hidden, l.dataset.what || '', l.dataset.cycle || '', l.textContent, \
             document.getElementById('stop').className]");
        if live[2]
            .as_str()
            .is_some_and(|c| c.parse::<u64>().is_ok_and(|c| c > 0))
        {
            break live;
        }
        assert!(
            started.elapsed() < Duration::from_secs(30),
            "no live progress: {live}"
        );
    };
    assert_eq!(live[0], false, "{live}");
    assert_eq!(live[1], "open", "{live}");
    assert!(
        live[3]
            .as_str()
            .unwrap()
            .starts_with("the whole run: cycle "),
        "{live}"
    );
    assert_eq!(live[4], "armed", "{live}");
    shot(&b, "08-live-progress");
    loop {
        std::thread::sleep(Duration::from_millis(300));
        b.click("#stop");
        let status = b.js("return document.getElementById('status').textContent");
        if status.as_str().unwrap().contains("interrupted") {
            break;
        }
        assert!(
            started.elapsed() < Duration::from_secs(30),
            "the stop button did not stop the run: {status}"
        );
    }
    assert_eq!(
        b.js("return document.getElementById('status').dataset.cycle"),
        "0"
    );
    // The stream's `idle` may come a moment after the command's reply.
    while b.js("return document.getElementById('live').hidden") != json!(true) {
        assert!(
            started.elapsed() < Duration::from_secs(40),
            "the live progress stays after the stop"
        );
        std::thread::sleep(Duration::from_millis(100));
    }
    shot(&b, "09-stopped");
    // A run of a trillion cycles draws its timeline at once: the page's work is bounded
    // by the canvas, not by the cycles (a tick a step over every cycle held the page past
    // WebDriver's script timeout once runs stopped late went past 10^8 cycles).
    let drawn = b.js("const t = performance.now();          ui.run = Object.assign({}, ui.run, { cycles: 1e12 }); drawTimeline();          return [performance.now() - t, document.getElementById('timeline').width]");
    assert!(drawn[0].as_f64().unwrap() < 5000.0, "{drawn}");
    assert!(drawn[1].as_u64().unwrap() <= 32000, "{drawn}");
}
