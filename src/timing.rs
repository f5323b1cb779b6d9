//! `--timing KEY=VALUE[,...]`: the latencies of the timing model, set for what-if studies.
//!
//! This module is the one place the keys are named; every value lives in
//! [`gpu16_machine::Timing`], whose defaults are the machine's (decisions.md). A spec is a
//! comma-separated list of items, applied left to right to the defaults: `KEY=VALUE`, each
//! key at most once, and first, if wanted, the name of a profile, a whole set of values that
//! the later items change (`PROFILES`: `default`, and `mcst-rtl`, the MCST RTL's pipeline,
//! as in `mcst-rtl,broadcast=5`).
//!
//! | key | `Timing` field | default | `mcst-rtl` | range |
//! |---|---|---|---|---|
//! | `cf` | `control_frame_cycles` | 1 | 1 | 0 to 2^58 cycles |
//! | `broadcast` | `broadcast_cycles` | 4 | 4 | 0 to 2^58 cycles |
//! | `lookahead` | `lookahead_window` | 64 | 64 | 1 to 4096 frames |
//! | `fill` | `slots.pipeline_fill` | 0 | 3 | 0 to 2^58 cycles |
//! | `ip15_end` | `slots.ip15_end_cycles` | 0 | 1 | 0 to 1 slots |
//! | `taken_branch` | `slots.taken_branch_bubbles` | 0 | 1 | 0 to 64 bubbles |
//! | `load` | `slots.load_cycles` | 1 | 2 | 1 to 64 cycles |
//! | `load_use` | `slots.load_use_bubbles` | 0 | 1 | 0 to 1 bubbles |
//! | `branch_after_load` | `slots.branch_after_load_bubbles` | 0 | 1 | 0 to 1 bubbles |
//! | `bank_switch` | `slots.bank_switch` | 0 | 1 | 0 (off) or 1 (on) |
//! | `round_robin` | `slots.round_robin` | 0 | 1 | 0 (off) or 1 (on) |
//!
//! The keys from `fill` on are the MCST dialect's slot model (mcst-dialect.md section 5):
//! the spec dialect's run loop has no bubbles or arbitration, so `check` refuses them
//! (and the `mcst-rtl` profile) without `--dialect mcst`.
//!
//! Why these ranges: a CF or a broadcast of 0 cycles is a meaningful what-if (the scheduler
//! then processes it without spending a cycle: the next frame is processed, or the task's
//! cores start, in the same cycle); the scheduler's arithmetic holds for any latency up to
//! [`Config::MAX_CYCLE_LIMIT`], the longest run the watchdog allows, and a longer one could only trip
//! the watchdog. The lookahead window counts frames: 1 is in-order, and 4096 (64 times the
//! hardware's task memory) bounds how far the scheduler scans on each decision.

use gpu16_machine::{Config, Dialect, Timing};
use std::fmt::Write;

// The watchdog's bounds, by the names this file uses.
const MAX_CYCLE_LIMIT: u64 = Config::MAX_CYCLE_LIMIT;

/// The largest lookahead window `--timing lookahead=N` accepts, in frames.
pub(crate) const MAX_LOOKAHEAD_WINDOW: u64 = 4096;

/// One latency a spec can set.
pub(crate) struct Key {
    /// The key as a spec names it.
    pub(crate) name: &'static str,
    /// What it sets, for the help text.
    pub(crate) what: &'static str,
    /// The unit of its value, for messages.
    pub(crate) unit: &'static str,
    /// The smallest value allowed.
    pub(crate) min: u64,
    /// The largest value allowed.
    pub(crate) max: u64,
    /// A key of the MCST dialect's slot model, which the spec dialect does not have.
    pub(crate) slot: bool,
    get: fn(&Timing) -> u64,
    set: fn(&mut Timing, u64),
}

impl Key {
    /// Its value in `timing`.
    pub(crate) fn get(&self, timing: &Timing) -> u64 {
        (self.get)(timing)
    }

    /// Its value in the machine's default timing.
    pub(crate) fn default_value(&self) -> u64 {
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
pub(crate) const KEYS: [Key; 11] = [
    Key {
        name: "cf",
        what: "cycles the task scheduler spends on a control frame",
        unit: "cycles",
        min: 0,
        max: MAX_CYCLE_LIMIT,
        slot: false,
        get: |t| t.control_frame_cycles,
        set: |t, v| t.control_frame_cycles = v,
    },
    Key {
        name: "broadcast",
        what: "cycles an instruction frame's code broadcast takes, after which its cores start",
        unit: "cycles",
        min: 0,
        max: MAX_CYCLE_LIMIT,
        slot: false,
        get: |t| t.broadcast_cycles,
        set: |t, v| t.broadcast_cycles = v,
    },
    Key {
        name: "lookahead",
        what: "frames the lookahead issue policy scans, used only with --issue lookahead",
        unit: "frames",
        min: 1,
        max: MAX_LOOKAHEAD_WINDOW,
        slot: false,
        get: |t| t.lookahead_window as u64,
        // At most MAX_LOOKAHEAD_WINDOW, so it fits any usize.
        set: |t, v| t.lookahead_window = v as usize,
    },
    Key {
        name: "fill",
        what: "cycles of pipeline fill between a broadcast and its task's first instruction (mcst only)",
        unit: "cycles",
        min: 0,
        max: MAX_CYCLE_LIMIT,
        slot: true,
        get: |t| t.slots.pipeline_fill,
        set: |t, v| t.slots.pipeline_fill = v,
    },
    Key {
        name: "ip15_end",
        what: "an extra ready slot for a task that runs off IP 15 (mcst only)",
        unit: "slots",
        min: 0,
        max: 1,
        slot: true,
        get: |t| t.slots.ip15_end_cycles,
        set: |t, v| t.slots.ip15_end_cycles = v,
    },
    Key {
        name: "taken_branch",
        what: "bubbles after a taken bnz (mcst only)",
        unit: "bubbles",
        min: 0,
        max: MAX_BUBBLES,
        slot: true,
        get: |t| t.slots.taken_branch_bubbles,
        set: |t, v| t.slots.taken_branch_bubbles = v,
    },
    Key {
        name: "load",
        what: "cycles an ld granted at once occupies (mcst only)",
        unit: "cycles",
        min: 1,
        max: MAX_BUBBLES,
        slot: true,
        get: |t| t.slots.load_cycles,
        set: |t, v| t.slots.load_cycles = v,
    },
    Key {
        name: "load_use",
        what: "a bubble before an instruction that reads the register the ld before it loads (mcst only)",
        unit: "bubbles",
        min: 0,
        max: 1,
        slot: true,
        get: |t| t.slots.load_use_bubbles,
        set: |t, v| t.slots.load_use_bubbles = v,
    },
    Key {
        name: "branch_after_load",
        what: "a bubble before a bnz whose third slot back is an ld (mcst only)",
        unit: "bubbles",
        min: 0,
        max: 1,
        slot: true,
        get: |t| t.slots.branch_after_load_bubbles,
        set: |t, v| t.slots.branch_after_load_bubbles = v,
    },
    Key {
        name: "bank_switch",
        what: "1: an ld's first-cycle grant does not count after a slot that addressed another bank (mcst only)",
        unit: "(0 off, 1 on)",
        min: 0,
        max: 1,
        slot: true,
        get: |t| u64::from(t.slots.bank_switch),
        set: |t, v| t.slots.bank_switch = v == 1,
    },
    Key {
        name: "round_robin",
        what: "1: each bank serves one access a cycle, round robin, no multicast (mcst only)",
        unit: "(0 off, 1 on)",
        min: 0,
        max: 1,
        slot: true,
        get: |t| u64::from(t.slots.round_robin),
        set: |t, v| t.slots.round_robin = v == 1,
    },
];

/// The most bubbles (or load cycles) a slot key accepts: more could only model a different
/// machine, and stays far from any cycle limit.
pub(crate) const MAX_BUBBLES: u64 = 64;

/// The value of every key in `timing`, in [`KEYS`] order.
#[cfg(test)] // The tests check every key; the reports use `values_in`.
pub(crate) fn values(timing: &Timing) -> impl Iterator<Item = (&'static str, u64)> + '_ {
    KEYS.iter().map(move |k| (k.name, k.get(timing)))
}

/// The value of every key that `dialect` has (the spec dialect has no slot keys), in
/// [`KEYS`] order.
pub(crate) fn values_in(
    timing: &Timing,
    dialect: Dialect,
) -> impl Iterator<Item = (&'static str, u64)> + '_ {
    KEYS.iter()
        .filter(move |k| dialect == Dialect::Mcst || !k.slot)
        .map(move |k| (k.name, k.get(timing)))
}

/// Whether `timing` can run a program of `dialect`: the spec dialect has no slot model
/// (its keys and the `mcst-rtl` profile need `--dialect mcst`), and the MCST scheduler
/// spends at least a cycle on a CF and on a broadcast. The error is a usage error, naming
/// the dialect option by `option` as [`crate::dialect::check_config`] does.
pub(crate) fn check(
    timing: &Timing,
    dialect: Dialect,
    option: impl Fn(&str, Option<&str>) -> String,
) -> Result<(), String> {
    match dialect {
        Dialect::Spec => {
            let set: Vec<&str> = KEYS
                .iter()
                .filter(|k| k.slot && k.get(timing) != k.default_value())
                .map(|k| k.name)
                .collect();
            if set.is_empty() {
                Ok(())
            } else {
                Err(format!(
                    "timing keys {} (or the mcst-rtl profile) belong to the MCST dialect's slot \
                     model: give {}",
                    set.join(", "),
                    option("dialect", Some(Dialect::Mcst.name()))
                ))
            }
        }
        Dialect::Mcst => {
            for (name, v) in [
                ("cf", timing.control_frame_cycles),
                ("broadcast", timing.broadcast_cycles),
            ] {
                if v == 0 {
                    return Err(format!(
                        "`{name}=0`: the mcst dialect's task scheduler spends at least one cycle \
                         on each decision; give {name}=1 or more"
                    ));
                }
            }
            Ok(())
        }
    }
}

/// The spec that gives `timing`: the profile it starts from (`mcst-rtl` when its slot
/// model is that profile's) and the keys that differ from it, or `default`.
pub fn spec(timing: &Timing) -> String {
    let rtl = Timing::mcst_rtl();
    let base = if timing.slots == rtl.slots {
        rtl
    } else {
        Timing::default()
    };
    let mut set: Vec<String> = KEYS
        .iter()
        .filter(|k| k.get(timing) != k.get(&base))
        .map(|k| format!("{}={}", k.name, k.get(timing)))
        .collect();
    if base == rtl {
        set.insert(0, "mcst-rtl".to_string());
    }
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
pub(crate) struct Profile {
    /// The name a spec gives.
    pub(crate) name: &'static str,
    /// Its values.
    pub(crate) timing: fn() -> Timing,
}

/// Every profile.
pub(crate) const PROFILES: [Profile; 2] = [
    Profile {
        name: "default",
        timing: Timing::default,
    },
    Profile {
        name: "mcst-rtl",
        timing: Timing::mcst_rtl,
    },
];

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
pub(crate) fn apply(base: Timing, spec: &str) -> Result<Timing, String> {
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
        assert_eq!(d[..3], [("cf", 1), ("broadcast", 4), ("lookahead", 64)]);
        let spec_keys: Vec<_> = values_in(&Timing::default(), Dialect::Spec).collect();
        assert_eq!(spec_keys, [("cf", 1), ("broadcast", 4), ("lookahead", 64)]);
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
        let e = parse("mcst-rt").unwrap_err();
        assert!(e.contains("neither KEY=VALUE nor a profile"), "{e}");
        assert!(parse("cf=2,default")
            .unwrap_err()
            .contains("must come first"));
        assert!(parse("cf=+1").is_err());
        assert!(parse("CF=1").is_err());
    }

    #[test]
    fn the_mcst_rtl_profile_has_the_doc_s_values_and_combines() {
        // mcst-dialect.md 5.1: cf 1, broadcast 4, start_delay 7 = 4 + fill 3, ip15_end 1,
        // taken branch 1, load 2, load-use 1, branch-after-load 1, bank switch, round robin.
        let t = parse("mcst-rtl").unwrap();
        let got: Vec<_> = values(&t).collect();
        assert_eq!(
            got,
            [
                ("cf", 1),
                ("broadcast", 4),
                ("lookahead", 64),
                ("fill", 3),
                ("ip15_end", 1),
                ("taken_branch", 1),
                ("load", 2),
                ("load_use", 1),
                ("branch_after_load", 1),
                ("bank_switch", 1),
                ("round_robin", 1)
            ]
        );
        let t = parse("mcst-rtl,broadcast=5").unwrap();
        assert_eq!(t.broadcast_cycles, 5);
        assert_eq!(t.slots.pipeline_fill, 3);
        assert_eq!(spec(&t), "mcst-rtl,broadcast=5");
        assert_eq!(spec(&parse("mcst-rtl").unwrap()), "mcst-rtl");
        assert_eq!(spec(&parse("load=3").unwrap()), "load=3");
        // The slot keys need the mcst dialect, named as the caller spells the option; the
        // mcst scheduler needs cf, broadcast >= 1.
        let option = |name: &str, value: Option<&str>| format!("<{name}={value:?}>");
        assert!(check(&parse("mcst-rtl").unwrap(), Dialect::Spec, option)
            .unwrap_err()
            .ends_with("slot model: give <dialect=Some(\"mcst\")>"));
        assert!(check(&parse("fill=2").unwrap(), Dialect::Spec, option).is_err());
        assert!(check(&parse("cf=0").unwrap(), Dialect::Spec, option).is_ok());
        assert!(check(&parse("cf=0").unwrap(), Dialect::Mcst, option).is_err());
        assert!(check(&parse("mcst-rtl").unwrap(), Dialect::Mcst, option).is_ok());
        assert!(parse("load=0").is_err());
        assert!(parse("bank_switch=2").is_err());
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
