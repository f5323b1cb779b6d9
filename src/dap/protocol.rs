//! The Debug Adapter Protocol's wire format: each message is a `Content-Length: N` header
//! block (lines ending in CRLF, then an empty line) followed by N bytes of JSON. This file
//! owns reading and writing one message, with bounds: a header line, the number of header
//! lines and the body are all capped, so hostile input costs bounded memory and time.

use serde_json::Value;
use std::io::{self, BufRead, Read, Write};

/// The largest message body accepted: real requests are a few KiB.
pub const MAX_MESSAGE: usize = 1 << 20;

/// The longest header line accepted (the name, the value and the line end).
const MAX_HEADER_LINE: u64 = 1024;

/// The most header lines one message may have (DAP defines only two).
const MAX_HEADERS: usize = 16;

/// One read from the client.
#[derive(Debug)]
pub enum Incoming {
    /// A well-framed body that is JSON.
    Message(Value),
    /// A well-framed body that is not JSON, and why: the framing is intact, so the next
    /// message can still be read.
    NotJson(String),
    /// The input ended between messages.
    End,
    /// The framing is lost (a bad header, a missing or too large Content-Length, the input
    /// ending inside a message, a read error), and why: nothing more can be read.
    Broken(String),
}

/// Read the next message.
pub fn read_message(input: &mut impl BufRead) -> Incoming {
    let mut length = None;
    let mut headers = 0;
    loop {
        let mut line = Vec::new();
        let n = match input
            .by_ref()
            .take(MAX_HEADER_LINE)
            .read_until(b'\n', &mut line)
        {
            Ok(n) => n,
            Err(e) => return Incoming::Broken(format!("cannot read standard input: {e}")),
        };
        if n == 0 {
            return if headers == 0 && length.is_none() {
                Incoming::End
            } else {
                Incoming::Broken("the input ended inside a message's headers".into())
            };
        }
        if !line.ends_with(b"\n") {
            return Incoming::Broken(if n as u64 >= MAX_HEADER_LINE {
                format!("a header line is longer than {MAX_HEADER_LINE} bytes")
            } else {
                "the input ended inside a message's headers".into()
            });
        }
        let text = match std::str::from_utf8(&line) {
            Ok(t) => t.trim_end_matches(['\r', '\n']),
            Err(_) => return Incoming::Broken("a header line is not UTF-8".into()),
        };
        if text.is_empty() {
            // Blank lines before any header are tolerated (some clients send a stray CRLF
            // after a body); after headers, an empty line ends them.
            if headers == 0 {
                continue;
            }
            break;
        }
        headers += 1;
        if headers > MAX_HEADERS {
            return Incoming::Broken(format!("a message has more than {MAX_HEADERS} headers"));
        }
        let Some((name, value)) = text.split_once(':') else {
            return Incoming::Broken(format!("`{}` is not a header (NAME: VALUE)", clip(text)));
        };
        if name.trim().eq_ignore_ascii_case("content-length") {
            let value = value.trim();
            match value.parse::<u64>() {
                Ok(n) if n <= MAX_MESSAGE as u64 => length = Some(n as usize),
                Ok(n) => {
                    return Incoming::Broken(format!(
                        "Content-Length {n} is over the limit of {MAX_MESSAGE} bytes"
                    ))
                }
                Err(_) => {
                    return Incoming::Broken(format!(
                        "Content-Length `{}` is not a byte count",
                        clip(value)
                    ))
                }
            }
        }
        // Other headers (Content-Type) carry nothing the adapter needs.
    }
    let Some(length) = length else {
        return Incoming::Broken("a message has no Content-Length header".into());
    };
    let mut body = vec![0; length];
    if let Err(e) = input.read_exact(&mut body) {
        return Incoming::Broken(if e.kind() == io::ErrorKind::UnexpectedEof {
            format!("the input ended inside a message body of {length} bytes")
        } else {
            format!("cannot read standard input: {e}")
        });
    }
    match serde_json::from_slice(&body) {
        Ok(v) => Incoming::Message(v),
        Err(e) => Incoming::NotJson(format!("a message body is not JSON: {e}")),
    }
}

/// Write one message and flush it, so the client sees it at once.
pub fn write_message(output: &mut impl Write, message: &Value) -> io::Result<()> {
    let body = message.to_string();
    write!(output, "Content-Length: {}\r\n\r\n{body}", body.len())?;
    output.flush()
}

/// At most 80 characters of a header, for an error message.
fn clip(s: &str) -> String {
    let mut c: String = s.chars().take(80).collect();
    if c.len() < s.len() {
        c.push_str("...");
    }
    c
}

#[cfg(test)]
mod tests {
    use super::*;

    fn read(bytes: &[u8]) -> Vec<String> {
        let mut input = bytes;
        let mut out = Vec::new();
        loop {
            match read_message(&mut input) {
                Incoming::Message(v) => out.push(format!("message {v}")),
                Incoming::NotJson(_) => out.push("not json".into()),
                Incoming::End => return out,
                Incoming::Broken(why) => {
                    out.push(format!("broken: {why}"));
                    return out;
                }
            }
        }
    }

    #[test]
    fn messages_are_framed_by_content_length() {
        assert_eq!(
            read(b"Content-Length: 2\r\n\r\n{}content-length:3\r\nContent-Type: x\r\n\r\n[1]"),
            ["message {}", "message [1]"]
        );
        assert_eq!(
            read(b"Content-Length: 3\r\n\r\n{x}Content-Length: 1\r\n\r\n7"),
            ["not json", "message 7"]
        );
        assert_eq!(read(b""), Vec::<String>::new());
    }

    #[test]
    fn bad_framing_is_broken_with_a_reason() {
        let broken = |b: &[u8]| read(b).pop().unwrap();
        assert_eq!(
            broken(b"Content-Length: 99999999999\r\n\r\n"),
            "broken: Content-Length 99999999999 is over the limit of 1048576 bytes"
        );
        assert_eq!(
            broken(b"Content-Length: 10\r\n\r\n{}"),
            "broken: the input ended inside a message body of 10 bytes"
        );
        assert_eq!(
            broken(b"hello\r\n\r\n"),
            "broken: `hello` is not a header (NAME: VALUE)"
        );
        assert_eq!(
            broken(b"Content-Type: x\r\n\r\n"),
            "broken: a message has no Content-Length header"
        );
        assert_eq!(
            broken(b"Content-Length: x\r\n\r\n"),
            "broken: Content-Length `x` is not a byte count"
        );
        assert_eq!(
            broken(&[b'a'; 5000]),
            "broken: a header line is longer than 1024 bytes"
        );
        assert_eq!(
            broken(b"Content-Length: 2\r\n"),
            "broken: the input ended inside a message's headers"
        );
    }
}
