//! How the session's JSON replies become DAP's views: threads (the 16 cores), a stack frame
//! per core, scopes and variables (registers, locks, tasks, memory banks) and the numbers
//! that name them (`variablesReference`s). Pure functions of the replies, so the views show
//! exactly what `gpu16 debug --json` answers.

use serde_json::{json, Value};
use std::path::Path;

/// Cores of the machine, each a DAP thread `core + 1` (DAP ids start at 1).
pub const CORES: u8 = 16;

/// The variables reference of core K's registers is `REGISTERS + K`.
pub const REGISTERS: i64 = 1;
/// The locks held, and who waits for them.
pub const LOCKS: i64 = 17;
/// The task timeline.
pub const TASKS: i64 = 18;
/// Shared memory, as its 16 banks.
pub const MEMORY: i64 = 19;
/// The variables reference of bank B's 256 rows is `BANK + B`.
pub const BANK: i64 = 32;

/// The core a DAP thread or frame id names (ids are `core + 1`).
pub fn core_of(id: i64) -> Option<u8> {
    (1..=i64::from(CORES)).contains(&id).then(|| (id - 1) as u8)
}

/// The `threads` body: every core, busy or not, so thread ids never come and go. With
/// the session's `where` reply, a core that waits says for what in its name (`core 4
/// (waits for bank 0)`); a running or idle one is just `core K`.
pub fn threads(cores: Option<&Value>) -> Value {
    let threads: Vec<Value> = (0..CORES)
        .map(|k| {
            let state = cores
                .and_then(|w| w["cores"].as_array())
                .and_then(|cs| cs.iter().find(|c| c["core"] == k))
                .and_then(waiting);
            let name = match state {
                Some(why) => format!("core {k} ({why})"),
                None => format!("core {k}"),
            };
            json!({"id": i64::from(k) + 1, "name": name})
        })
        .collect();
    json!({ "threads": threads })
}

/// What a core of a `where` or `regs K` reply waits for, in a few words; `None` for a
/// running or idle core.
pub fn waiting(core: &Value) -> Option<String> {
    match core["state"].as_str()? {
        "stalled" => Some(format!(
            "stalled on {:#05x}, held by core {}",
            core["addr"].as_u64().unwrap_or(0),
            core["holder"]
        )),
        "not_started" => Some(format!("starts in cycle {}", core["start"])),
        "bank_conflict" => Some(match core["bank"].as_u64() {
            Some(bank) => format!("waits for bank {bank}"),
            None => "bank conflict".to_string(),
        }),
        "faulted" => Some("faulted".to_string()),
        _ => None,
    }
}

/// A DAP `source` for a file a location names.
pub fn source(file: &str) -> Value {
    let name = Path::new(file)
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_else(|| file.to_string());
    json!({"name": name, "path": file})
}

/// The one stack frame of core `core`, from the session's `regs K` reply: its frame and IP,
/// at the source line when the program has a source map.
pub fn stack_frame(core: u8, regs: &Value) -> Value {
    let id = i64::from(core) + 1;
    let state = waiting(regs).unwrap_or_else(|| regs["state"].as_str().unwrap_or("unknown").into());
    let mut frame = match (regs["frame"].as_u64(), regs["ip"].as_u64()) {
        (Some(f), Some(ip)) => json!({
            "id": id,
            "name": format!("core {core}: frame {f} IP {ip} ({state})"),
            "line": 0,
            "column": 0,
            "instructionPointerReference": format!("{f}:{ip}"),
        }),
        _ => json!({"id": id, "name": format!("core {core} ({state})"), "line": 0, "column": 0}),
    };
    if let Some(file) = regs["location"]["file"].as_str() {
        frame["source"] = source(file);
        frame["line"] = regs["location"]["line"].clone();
        frame["column"] = regs["location"]["col"].clone();
    }
    frame
}

/// The `scopes` of core `core`'s frame.
pub fn scopes(core: u8) -> Value {
    let scope = |name: &str, reference: i64, expensive: bool| json!({"name": name, "variablesReference": reference, "expensive": expensive});
    json!({ "scopes": [
        scope(&format!("Registers (core {core})"), REGISTERS + i64::from(core), false),
        scope("Locks", LOCKS, false),
        scope("Tasks", TASKS, false),
        scope("Memory", MEMORY, true),
    ]})
}

/// A variable with no children.
fn leaf(name: &str, value: String) -> Value {
    json!({"name": name, "value": value, "variablesReference": 0})
}

/// A byte as `5 (0x05)`.
pub fn byte(b: u64) -> String {
    format!("{b} ({b:#04x})")
}

/// Core K's registers and state, from its `regs K` reply: `r0`..`r15`, then `state`, `frame`,
/// `ip` and the state's own keys (`start`, `addr`, `holder`, `since`, and under the MCST
/// dialect `bank`, `waits_for`).
pub fn registers(regs: &Value) -> Vec<Value> {
    let mut vars: Vec<Value> = regs["registers"]
        .as_array()
        .map(|rs| {
            rs.iter()
                .enumerate()
                .map(|(i, r)| {
                    let mut v = leaf(&format!("r{i}"), byte(r.as_u64().unwrap_or(0)));
                    v["evaluateName"] = json!(format!("r{i}"));
                    v
                })
                .collect()
        })
        .unwrap_or_default();
    for key in [
        "state",
        "frame",
        "ip",
        "start",
        "addr",
        "holder",
        "since",
        "bank",
        "waits_for",
    ] {
        match &regs[key] {
            Value::Null if key != "frame" && key != "ip" => {}
            Value::String(s) => vars.push(leaf(key, s.clone())),
            v => vars.push(leaf(key, v.to_string())),
        }
    }
    vars
}

/// The locks of a `locks` reply: one variable a lock, named by its address.
pub fn locks(reply: &Value) -> Vec<Value> {
    let locks = reply["locks"].as_array().map(Vec::as_slice).unwrap_or(&[]);
    locks
        .iter()
        .map(|l| {
            let waiting: Vec<String> = l["waiting"]
                .as_array()
                .map(|w| w.iter().map(|c| c.to_string()).collect())
                .unwrap_or_default();
            let mut value = format!("held by core {} since cycle {}", l["holder"], l["since"]);
            if !waiting.is_empty() {
                value.push_str(&format!("; waiting: core {}", waiting.join(", ")));
            }
            leaf(&format!("{:#05x}", l["addr"].as_u64().unwrap_or(0)), value)
        })
        .collect()
}

/// The tasks of a `tasks` reply: one variable a task, its keys as `key=value` pairs (the
/// keys of `run --json`'s task objects, whatever the dialect adds).
pub fn tasks(reply: &Value) -> Vec<Value> {
    let tasks = reply["tasks"].as_array().map(Vec::as_slice).unwrap_or(&[]);
    tasks
        .iter()
        .enumerate()
        .map(|(i, t)| {
            let value = t
                .as_object()
                .map(|o| {
                    o.iter()
                        .map(|(k, v)| match v {
                            Value::String(s) => format!("{k}={s}"),
                            v => format!("{k}={v}"),
                        })
                        .collect::<Vec<_>>()
                        .join(" ")
                })
                .unwrap_or_default();
            leaf(&format!("task {i}"), value)
        })
        .collect()
}

/// The 16 banks of shared memory, each a container of its 256 rows.
pub fn banks() -> Vec<Value> {
    (0..16i64)
        .map(|b| {
            json!({
                "name": format!("bank {b}"),
                "value": format!("{:#05x}..{:#05x}", b << 8, (b << 8) + 255),
                "variablesReference": BANK + b,
                "indexedVariables": 256,
            })
        })
        .collect()
}

/// The rows of a bank from the `mem` reply for its 256 bytes: one variable a byte, named
/// by its address (address = bank * 256 + row), which `dataBreakpointInfo` accepts.
pub fn rows(reply: &Value) -> Vec<Value> {
    let base = reply["addr"].as_u64().unwrap_or(0);
    let hex = reply["bytes"].as_str().unwrap_or("");
    hex.as_bytes()
        .chunks(2)
        .enumerate()
        .map(|(i, pair)| {
            let b = std::str::from_utf8(pair)
                .ok()
                .and_then(|p| u64::from_str_radix(p, 16).ok())
                .unwrap_or(0);
            let addr = base + i as u64;
            let mut v = leaf(&format!("{addr:#05x}"), byte(b));
            v["evaluateName"] = json!(format!("mem {addr:#05x} 1"));
            v
        })
        .collect()
}

/// An address as the debugger writes it: decimal or `0x` hex, at most 0xfff; `mem ` before
/// it is allowed, so an evaluate name works as well as a variable name.
pub fn address(text: &str) -> Option<u16> {
    let t = text.trim();
    let t = t
        .strip_prefix("mem ")
        .unwrap_or(t)
        .split_whitespace()
        .next()?;
    let n = match t.strip_prefix("0x").or_else(|| t.strip_prefix("0X")) {
        Some(h) => u16::from_str_radix(h, 16).ok()?,
        None => t.parse::<u16>().ok()?,
    };
    (n <= 0xfff).then_some(n)
}

/// The register a word names: `r0`..`r15`.
pub fn register(text: &str) -> Option<usize> {
    let n: usize = text.trim().strip_prefix('r')?.parse().ok()?;
    (n < 16).then_some(n)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_parse_and_bad_ones_are_none() {
        assert_eq!(address("0x010"), Some(16));
        assert_eq!(address("mem 0x10 1"), Some(16));
        assert_eq!(address("4095"), Some(4095));
        assert_eq!(address("0x1000"), None);
        assert_eq!(address("r3"), None);
        assert_eq!(register("r15"), Some(15));
        assert_eq!(register("r16"), None);
        assert_eq!(register("x1"), None);
        assert_eq!(core_of(1), Some(0));
        assert_eq!(core_of(16), Some(15));
        assert_eq!(core_of(0), None);
        assert_eq!(core_of(17), None);
    }
}
