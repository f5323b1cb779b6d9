//! The URLs the playground answers, each matched exactly: the page (`/`, `/app.js`,
//! `/style.css`, embedded in the binary), the bundled examples (embedded too, found by
//! name in a fixed list), and the JSON API of [`super::play`]. No URL names a path on the
//! disk: anything else, `/../Cargo.toml` or `/%2e%2e/` included, is 404.

use super::play::Play;
use super::{body_json, error, ok, respond, Reply};
use serde_json::{json, Value};
use tiny_http::{Method, Request};

/// The page.
const INDEX_HTML: &str = include_str!("assets/index.html");
/// The page's script.
const APP_JS: &str = include_str!("assets/app.js");
/// The page's style.
const STYLE_CSS: &str = include_str!("assets/style.css");

/// The bundled examples: name, source and memory image (`$readmemh` text), if one.
pub const EXAMPLES: &[(&str, &str, Option<&str>)] = &[
    ("counter.s", include_str!("../../examples/counter.s"), None),
    (
        "dot_product.s",
        include_str!("../../examples/dot_product.s"),
        Some(include_str!("../../examples/dot_product.mem.hex")),
    ),
    (
        "histogram.s",
        include_str!("../../examples/histogram.s"),
        Some(include_str!("../../examples/histogram.mem.hex")),
    ),
    (
        "matmul.s",
        include_str!("../../examples/matmul.s"),
        Some(include_str!("../../examples/matmul.mem.hex")),
    ),
    (
        "mcst_bank0.s",
        include_str!("../../examples/mcst_bank0.s"),
        None,
    ),
    ("picture.s", include_str!("../../examples/picture.s"), None),
    (
        "prefix_sum.s",
        include_str!("../../examples/prefix_sum.s"),
        Some(include_str!("../../examples/prefix_sum.mem.hex")),
    ),
    (
        "sort.s",
        include_str!("../../examples/sort.s"),
        Some(include_str!("../../examples/sort.mem.hex")),
    ),
    (
        "spec_example1.s",
        include_str!("../../examples/spec_example1.s"),
        None,
    ),
    (
        "spec_example2.s",
        include_str!("../../examples/spec_example2.s"),
        None,
    ),
    (
        "vector_add.s",
        include_str!("../../examples/vector_add.s"),
        Some(include_str!("../../examples/vector_add.mem.hex")),
    ),
];

/// Whether the request's `Host` names this server (127.0.0.1 or localhost at `port`), so
/// that another site's page cannot reach the server through a name that resolves here.
pub fn host_allowed(request: &Request, port: u16) -> bool {
    let host = request
        .headers()
        .iter()
        .find(|h| h.field.equiv("Host"))
        .map(|h| h.value.as_str().to_ascii_lowercase());
    match host {
        None => true,
        Some(h) => [
            format!("127.0.0.1:{port}"),
            format!("localhost:{port}"),
            "127.0.0.1".into(),
            "localhost".into(),
        ]
        .contains(&h),
    }
}

/// Answer one request.
pub fn handle(play: &mut Play, mut request: Request) {
    let url = request.url().to_string();
    let (path, query) = url.split_once('?').unwrap_or((&url, ""));
    let reply = match (request.method().clone(), path) {
        (Method::Get | Method::Head, "/" | "/index.html") => {
            asset("text/html; charset=utf-8", INDEX_HTML)
        }
        (Method::Get | Method::Head, "/app.js") => asset("text/javascript; charset=utf-8", APP_JS),
        (Method::Get | Method::Head, "/style.css") => asset("text/css; charset=utf-8", STYLE_CSS),
        (Method::Get, "/api/examples") => ok(json!({
            "examples": EXAMPLES.iter().map(|(n, _, m)| json!({"name": n, "memory": m.is_some()})).collect::<Vec<_>>(),
            "file": play.has_file(),
        })),
        (Method::Get, "/api/example") => example(query),
        (Method::Get, "/api/file") => play.file(),
        (Method::Get, p) if p.starts_with("/api/download/") => {
            play.download(&p["/api/download/".len()..])
        }
        (Method::Post, "/api/assemble" | "/api/open" | "/api/command") => {
            match body_json(&mut request) {
                Err(r) => r,
                Ok(body) if !body.is_object() => {
                    error(400, "the request body must be a JSON object")
                }
                Ok(body) => match path {
                    "/api/assemble" => play.assemble(&body),
                    "/api/open" => play.open(&body),
                    _ => play.command(&body),
                },
            }
        }
        (
            _,
            "/" | "/index.html" | "/app.js" | "/style.css" | "/api/examples" | "/api/example"
            | "/api/file" | "/api/assemble" | "/api/open" | "/api/command" | "/api/stop"
            | "/api/events",
        ) => error(405, "method not allowed"),
        _ => error(404, "not found"),
    };
    respond(request, reply);
}

fn asset(content_type: &'static str, text: &str) -> Reply {
    Reply {
        status: 200,
        content_type,
        body: text.as_bytes().to_vec(),
        download: None,
    }
}

/// `GET /api/example?name=NAME`: a bundled example's `{"name", "source", "memory"}`.
fn example(query: &str) -> Reply {
    let name = query
        .split('&')
        .find_map(|kv| kv.strip_prefix("name="))
        .unwrap_or("");
    match EXAMPLES.iter().find(|(n, _, _)| *n == name) {
        Some((n, source, memory)) => ok(json!({
            "name": n,
            "source": source,
            "memory": memory.map_or(Value::Null, |m| json!(m)),
        })),
        None => error(404, "no such example"),
    }
}
