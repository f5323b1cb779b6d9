//! `--timing KEY=VALUE[,...]`: the latencies of the timing model, set for what-if studies.
//!
//! This module is the one place the keys are named; every value lives in
//! [`gpu16_machine::Timing`], whose defaults are the machine's (decisions.md). A spec is a
//! comma-separated list of items, applied left to right to the defaults: `KEY=VALUE`, each
//! key at most once, and first, if wanted, the name of a profile, a whole set of values that
//! the later items change ([`PROFILES`]: only `default` so far; machine profiles such as
//! `mcst-rtl,broadcast=5` fit there).
//!
//! | key | `Timing` field | default | range |
//! |---|---|---|---|
//! | `cf` | `control_frame_cycles` | 1 | 0 to 2^58 cycles |
//! | `broadcast` | `broadcast_cycles` | 4 | 0 to 2^58 cycles |
//! | `lookahead` | `lookahead_window` | 64 | 1 to 4096 frames |
//!
//! Why these ranges: a CF or a broadcast of 0 cycles is a meaningful what-if (the scheduler
//! then processes it without spending a cycle: the next frame is processed, or the task's
//! cores start, in the same cycle); the scheduler's arithmetic holds for any latency up to
//! [`MAX_CYCLE_LIMIT`], the longest run the watchdog allows, and a longer one could only trip
//! the watchdog. The lookahead window counts frames: 1 is in-order, and 4096 (64 times the
//! hardware's task memory) bounds how far the scheduler scans on each decision.

use gpu16_machine::config::MAX_CYCLE_LIMIT;
use gpu16_machine::Timing;
use std::fmt::Write;

/// The largest lookahead window `--timing lookahead=N` accepts, in frames.
pub const MAX_LOOKAHEAD_WINDOW: u64 = 4096;

/// One latency a spec can set.
pub struct Key {
    /// The key as a spec names it.
    pub name: &'static str,
    /// What it sets, for the help text.
    pub what: &'static str,
    /// The unit of its value, for messages.
    pub unit: &'static str,
    /// The smallest value allowed.
    pub min: u64,
    /// The largest value allowed.
    pub max: u64,
    get: fn(&Timing) -> u64,
    set: fn(&mut Timing, u64),
}

impl Key {
    /// Its value in `timing`.
    pub fn get(&self, timing: &Timing) -> u64 {
        (self.get)(timing)
    }

    /// Its value in the machine's default timing.
    pub fn default_value(&self) -> u64 {
        self.get(&Timing::default())
    }

    /// `min to max unit`, with 2^58 written as a power.
    fn range(&self) -> String {
        let show = |v: u64| {
            if v == MAX_CYCLE_LIMIT {
                "2^58".to_string()
            } else {
                v.to_string()
            }
        };
        format!("{} to {} {}", show(self.min), show(self.max), self.unit)
    }
}

/// Every key, in the order the help text, the JSON `config.timing` object and the docs list
/// them.
pub const KEYS: [Key; 3] = [
    Key {
        name: "cf",
        what: "cycles the task scheduler spends on a control frame",
        unit: "cycles",
        min: 0,
        max: MAX_CYCLE_LIMIT,
        get: |t| t.control_frame_cycles,
        set: |t, v| t.control_frame_cycles = v,
    },
    Key {
        name: "broadcast",
        what: "cycles an instruction frame's code broadcast takes, after which its cores start",
        unit: "cycles",
        min: 0,
        max: MAX_CYCLE_LIMIT,
        get: |t| t.broadcast_cycles,
        set: |t, v| t.broadcast_cycles = v,
    },
    Key {
        name: "lookahead",
        what: "frames the lookahead issue policy scans, used only with --issue lookahead",
        unit: "frames",
        min: 1,
        max: MAX_LOOKAHEAD_WINDOW,
        get: |t| t.lookahead_window as u64,
        // At most MAX_LOOKAHEAD_WINDOW, so it fits any usize.
        set: |t, v| t.lookahead_window = v as usize,
    },
];

/// The value of every key in `timing`, in [`KEYS`] order.
pub fn values(timing: &Timing) -> impl Iterator<Item = (&'static str, u64)> + '_ {
    KEYS.iter().map(move |k| (k.name, k.get(timing)))
}

/// The spec that gives `timing` from the defaults: only the keys that differ, or `default`.
pub fn spec(timing: &Timing) -> String {
    let set: Vec<String> = KEYS
        .iter()
        .filter(|k| k.get(timing) != k.default_value())
        .map(|k| format!("{}={}", k.name, k.get(timing)))
        .collect();
    if set.is_empty() {
        "default".to_string()
    } else {
        set.join(",")
    }
}

/// The option's help: the keys with their meaning, default and range.
pub fn help() -> String {
    let mut s = String::from(
        "Latencies of the timing model, for what-if studies: comma-separated KEY=VALUE items \
         over the defaults. Keys:",
    );
    for k in &KEYS {
        let _ = write!(
            s,
            " {} ({}; default {}, {})",
            k.name,
            k.what,
            k.default_value(),
            k.range()
        );
        s.push(if k.name == KEYS[KEYS.len() - 1].name {
            '.'
        } else {
            ';'
        });
    }
    s
}

/// A named set of every value. A spec may start with one; its later items change it.
pub struct Profile {
    /// The name a spec gives.
    pub name: &'static str,
    /// Its values.
    pub timing: fn() -> Timing,
}

/// Every profile.
pub const PROFILES: [Profile; 1] = [Profile {
    name: "default",
    timing: Timing::default,
}];

fn profile_names() -> String {
    PROFILES
        .iter()
        .map(|p| p.name)
        .collect::<Vec<_>>()
        .join(", ")
}

fn key_names() -> String {
    KEYS.iter().map(|k| k.name).collect::<Vec<_>>().join(", ")
}

/// The timing a spec selects, over the machine's defaults. The error names the item, the
/// key and value and what is allowed; it is a usage error.
pub fn parse(spec: &str) -> Result<Timing, String> {
    apply(Timing::default(), spec)
}

/// `base` with the items of `spec` applied left to right. A key may be set once.
pub fn apply(base: Timing, spec: &str) -> Result<Timing, String> {
    let mut timing = base;
    let mut given: Vec<&str> = Vec::new();
    if spec.trim().is_empty() {
        return Err(format!(
            "an empty timing spec: give KEY=VALUE items (keys: {})",
            key_names()
        ));
    }
    for (i, item) in spec.split(',').enumerate() {
        let item = item.trim();
        if item.is_empty() {
            return Err(format!("`{spec}` has an empty item between commas"));
        }
        let Some((name, value)) = item.split_once('=') else {
            match PROFILES.iter().find(|p| p.name == item) {
                Some(profile) if i == 0 => {
                    timing = (profile.timing)();
                    continue;
                }
                Some(_) => {
                    return Err(format!(
                        "profile `{item}` must come first: later items change it"
                    ))
                }
                None => {
                    return Err(format!(
                        "`{item}` is neither KEY=VALUE nor a profile (keys: {}; profiles: {})",
                        key_names(),
                        profile_names()
                    ))
                }
            }
        };
        let (name, value) = (name.trim(), value.trim());
        let Some(key) = KEYS.iter().find(|k| k.name == name) else {
            return Err(format!(
                "unknown timing key `{name}` (keys: {})",
                key_names()
            ));
        };
        if given.contains(&key.name) {
            return Err(format!("timing key `{name}` is given twice"));
        }
        given.push(key.name);
        let wrong = match number(value) {
            Ok(v) if (key.min..=key.max).contains(&v) => {
                (key.set)(&mut timing, v);
                continue;
            }
            _ if value.is_empty() => "has no value".to_string(),
            Ok(_) | Err(true) => "is out of range".to_string(),
            Err(false) => "is not a whole number".to_string(),
        };
        return Err(format!(
            "`{name}={value}` {wrong}: {name} takes a whole number from {}",
            key.range()
        ));
    }
    Ok(timing)
}

/// A decimal number of ASCII digits (no sign). `Err(true)`: digits, but more than 64 bits
/// hold; `Err(false)`: not digits.
fn number(s: &str) -> Result<u64, bool> {
    if s.is_empty() || !s.bytes().all(|b| b.is_ascii_digit()) {
        return Err(false);
    }
    s.parse().map_err(|_| true)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn keys_set_their_field_and_nothing_else() {
        let t = parse("cf=3").unwrap();
        assert_eq!(
            t,
            Timing {
                control_frame_cycles: 3,
                ..Timing::default()
            }
        );
        let t = parse("broadcast=0, lookahead=1").unwrap();
        assert_eq!(t.broadcast_cycles, 0);
        assert_eq!(t.lookahead_window, 1);
        assert_eq!(t.control_frame_cycles, 1);
    }

    #[test]
    fn defaults_come_from_the_timing_struct() {
        let d: Vec<_> = values(&Timing::default()).collect();
        assert_eq!(d, [("cf", 1), ("broadcast", 4), ("lookahead", 64)]);
        assert_eq!(spec(&Timing::default()), "default");
        assert_eq!(
            spec(&parse("broadcast=2,cf=0").unwrap()),
            "cf=0,broadcast=2"
        );
    }

    #[test]
    fn a_profile_comes_first_and_later_items_change_it() {
        assert_eq!(parse("default").unwrap(), Timing::default());
        assert_eq!(parse("default,cf=5").unwrap().control_frame_cycles, 5);
        // `spec` gives back what `parse` takes.
        for s in ["default", "cf=0,broadcast=2", "lookahead=9"] {
            assert_eq!(spec(&parse(s).unwrap()), s);
        }
    }

    #[test]
    fn bounds_are_inclusive() {
        assert!(parse("cf=0").is_ok());
        assert!(parse("broadcast=288230376151711744").is_ok());
        assert!(parse("broadcast=288230376151711745").is_err());
        assert!(parse("lookahead=4096").is_ok());
        assert!(parse("lookahead=4097").is_err());
        assert!(parse("lookahead=0").is_err());
    }

    #[test]
    fn bad_specs_say_what_is_wrong() {
        let e = parse("cf=").unwrap_err();
        assert_eq!(
            e,
            "`cf=` has no value: cf takes a whole number from 0 to 2^58 cycles"
        );
        let e = parse("cf=-1").unwrap_err();
        assert!(e.contains("`cf=-1` is not a whole number"), "{e}");
        let e = parse("nope=3").unwrap_err();
        assert!(
            e.contains("`nope`") && e.contains("cf, broadcast, lookahead"),
            "{e}"
        );
        let e = parse("broadcast=99999999999999999999").unwrap_err();
        assert!(e.contains("99999999999999999999` is out of range"), "{e}");
        assert!(e.contains("from 0 to 2^58 cycles"), "{e}");
        let e = parse("lookahead=0").unwrap_err();
        assert!(e.contains("1 to 4096 frames"), "{e}");
        assert!(parse("cf=1,cf=2").unwrap_err().contains("twice"));
        assert!(parse("").unwrap_err().contains("empty"));
        assert!(parse("cf=1,").unwrap_err().contains("empty item"));
        let e = parse("mcst-rtl").unwrap_err();
        assert!(e.contains("neither KEY=VALUE nor a profile"), "{e}");
        assert!(parse("cf=2,default")
            .unwrap_err()
            .contains("must come first"));
        assert!(parse("cf=+1").is_err());
        assert!(parse("CF=1").is_err());
    }

    #[test]
    fn help_lists_every_key() {
        let h = help();
        for k in &KEYS {
            assert!(h.contains(k.name), "{h}");
        }
        assert!(h.contains("default 4"), "{h}");
    }
}
