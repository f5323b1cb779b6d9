//! One statement to frame-level items: the operands of every instruction in the spec's
//! order (encoded through the machine crate's instruction table), `.word`, `.if`, `.halt`
//! and the options of `.cf`, each read as the source's dialect ([`Env::dialect`]) has it.

use crate::cursor::{register_number, Cursor, Env, PResult};
use crate::diagnostics::{Diagnostic, Diagnostics, Span};
use crate::lexer::Tok;
use crate::source::Stmt;
use gpu16_machine::engine::isa::{AluOp, Instr, MemOp};
use gpu16_machine::{ControlFrame, Dialect, Fence};

/// Header bits 13:8 of a control frame in the MCST dialect: NextCF.
pub const NEXT_CF_BITS: u8 = 0x3F;
/// Header bit 14 of a control frame in the MCST dialect: stop.
pub const STOP_BIT: u8 = 0x40;

/// A `bnz` target given by name: a label of the frame, else a constant.
#[derive(Clone, Debug)]
pub struct Target {
    pub name: String,
    pub constant: Option<i64>,
    pub span: Span,
}

/// What the frame builder sees.
#[derive(Clone, Debug)]
pub enum Item {
    /// A control frame; its IF_Num is filled in when the group ends. `halt`: written as
    /// `.halt` (MCST), whose NextCF is its own index, filled in when it is placed.
    /// `if_num`: an IF_Num given outright (MCST `if_num=`), with where it was given.
    Cf {
        span: Span,
        frame: ControlFrame,
        halt: bool,
        if_num: Option<(u8, Span)>,
    },
    If {
        span: Span,
    },
    Label {
        name: String,
        span: Span,
    },
    /// One instruction slot; a named `bnz` target is patched into bits 7:4 later.
    Slot {
        word: u16,
        span: Span,
        target: Option<Target>,
    },
}

impl Item {
    pub fn span(&self) -> &Span {
        match self {
            Item::Cf { span, .. }
            | Item::If { span }
            | Item::Label { span, .. }
            | Item::Slot { span, .. } => span,
        }
    }
}

/// Mnemonics of the instruction set, for "unknown instruction" suggestions.
pub fn mnemonics() -> Vec<&'static str> {
    let mut m: Vec<&str> = vec!["nop", "mul", "rshft", "lshft", "set_const", "bnz", "ready"];
    m.extend(AluOp::ALL.iter().map(|op| op.mnemonic()));
    m.extend(
        [MemOp::Ld, MemOp::LdSync, MemOp::St, MemOp::StSync]
            .iter()
            .map(|op| op.mnemonic()),
    );
    m
}

pub fn statement(stmt: &Stmt, cur: &mut Cursor, env: &Env) -> PResult<Vec<Item>> {
    let span = stmt.span.clone();
    let name = stmt.name.as_str();
    match name {
        ".cf" => {
            let (frame, if_num) = control(cur, env, &span)?;
            Ok(vec![Item::Cf {
                frame,
                span,
                halt: false,
                if_num,
            }])
        }
        ".halt" => {
            if env.dialect != Dialect::Mcst {
                return Err(Diagnostic::error(
                    &span,
                    format!(
                        "`.halt` (a stop control frame) belongs to the mcst dialect: assemble with {}",
                        Diagnostics::MCST_OPTION
                    ),
                ));
            }
            cur.expect_end("`.halt`")?;
            Ok(vec![Item::Cf {
                frame: ControlFrame {
                    if_num: 0,
                    fence: Fence::No,
                    active: 0,
                    init_vect: 0,
                    init_r0: [0; 16],
                    reserved_header: STOP_BIT,
                    reserved: [0; 10],
                },
                span,
                halt: true,
                if_num: None,
            }])
        }
        ".if" => {
            cur.expect_end("`.if`")?;
            Ok(vec![Item::If { span }])
        }
        ".word" => {
            let mut out = Vec::new();
            loop {
                let (v, vspan) = cur.value(env, 0, 0xFFFF, "an instruction word")?;
                if let Err(e) = Instr::decode_in(v as u16, env.dialect) {
                    return Err(Diagnostic::error(
                        &vspan,
                        format!("`.word` {e}: not an instruction"),
                    ));
                }
                out.push(Item::Slot {
                    word: v as u16,
                    span: vspan,
                    target: None,
                });
                if !cur.eat(",") {
                    break;
                }
            }
            cur.expect_end("the words")?;
            Ok(out)
        }
        _ if name.starts_with('.') => {
            Err(Diagnostic::error(
                &span,
                format!(
                "unknown directive `{}` (known: .cf .if .word .data .equ .reg .repeat .end .macro .endm .when .otherwise .endwhen .include{})",
                stmt.name,
                if env.dialect == Dialect::Mcst { " .halt" } else { "" }
            ),
            ))
        }
        _ => {
            let (instr, target) = instruction(name, &span, cur, env)?;
            Ok(vec![Item::Slot {
                word: instr.encode(),
                span,
                target,
            }])
        }
    }
}

fn instruction(
    name: &str,
    span: &Span,
    cur: &mut Cursor,
    env: &Env,
) -> PResult<(Instr, Option<Target>)> {
    let three = |cur: &mut Cursor| -> PResult<(u8, u8, u8)> {
        let (a, _) = cur.reg(env, "the first source register")?;
        cur.expect(",", "after the first source register")?;
        let (b, _) = cur.reg(env, "the second source register")?;
        cur.expect(",", "after the second source register")?;
        let (c, _) = cur.reg(env, "the destination register")?;
        Ok((a, b, c))
    };
    let mut target = None;
    let mcst = env.dialect == Dialect::Mcst;
    let instr = match name {
        "nop" => Instr::Nop,
        "ready" => Instr::Ready,
        "mul" if mcst => {
            let (a, b, c) = three(cur)?;
            Instr::McstMul { a, b, c }
        }
        "mul" => {
            let (a, b, c) = three(cur)?;
            Instr::Mul { a, b, c }
        }
        "rshft" | "lshft" if mcst => {
            let (a, _) = cur.reg(env, "the source register")?;
            cur.expect(",", "after the source register")?;
            if !cur.at_register(env) {
                let here = cur.here();
                return cur.error(
                    &here,
                    format!("the mcst dialect's `{name}` takes its amount in a register (`{name} r1, r2, r3`), not an immediate: load the amount into a register first (`set_const k, r2`)"),
                );
            }
            let (b, _) = cur.reg(env, "the register holding the amount")?;
            cur.expect(",", "after the amount register")?;
            let (c, _) = cur.reg(env, "the destination register")?;
            Instr::McstShift {
                left: name == "lshft",
                a,
                b,
                c,
            }
        }
        "rshft" | "lshft" => {
            let (a, _) = cur.reg(env, "the source register")?;
            cur.expect(",", "after the source register")?;
            if cur.at_register(env) {
                let here = cur.here();
                return cur.error(
                    &here,
                    format!("the spec's `{name}` takes an immediate amount 0..7 (`{name} r1, 3, r3`); a register amount is the mcst dialect's ({})", Diagnostics::MCST_OPTION),
                );
            }
            let (k, _) = cur.value(env, 0, 7, "the shift amount")?;
            cur.expect(",", "after the shift amount")?;
            let (c, _) = cur.reg(env, "the destination register")?;
            Instr::Shift {
                left: name == "lshft",
                a,
                k: k as u8,
                c,
            }
        }
        "ld_sync" | "st_sync" if mcst => {
            let plain = name.trim_end_matches("_sync");
            return Err(Diagnostic::error(
                span,
                format!("the mcst dialect has no atomic sequences: `{name}` is not an instruction (use `{plain}`)"),
            ));
        }
        "ld" | "ld_sync" | "st" | "st_sync" => {
            let op = match name {
                "ld" => MemOp::Ld,
                "ld_sync" => MemOp::LdSync,
                "st" => MemOp::St,
                _ => MemOp::StSync,
            };
            cur.expect("[", format_args!("to open the address of `{name}`"))?;
            let (a, _) = cur.reg(env, "the low-address register")?;
            cur.expect(",", "after the low-address register")?;
            let (hi, hspan) = cur.reg(env, "the high-address register")?;
            if hi > 3 && !mcst {
                return Err(Diagnostic::error(
                    &hspan,
                    format!("the second address register of {name} must be r0..r3"),
                ));
            }
            cur.expect("]", "to close the address")?;
            cur.expect(",", "after the address")?;
            let what = if op.is_read() {
                "the destination register"
            } else {
                "the value register"
            };
            let (r, _) = cur.reg(env, what)?;
            Instr::Mem { op, a, hi, r }
        }
        "set_const" => {
            let (k, _) = cur.value(env, -128, 255, "the constant")?;
            cur.expect(",", "after the constant")?;
            let (d, _) = cur.reg(env, "the destination register")?;
            if mcst {
                Instr::McstSetConst { k: k as u8, d }
            } else {
                Instr::SetConst { k: k as u8, d }
            }
        }
        "bnz" => {
            let named = match (cur.peek(), cur.peek2()) {
                (Some(t), next) if next.is_none_or(|n| n.is_punct(",")) => t
                    .ident()
                    .filter(|n| register_number(n).is_none() && !env.regs.contains_key(*n))
                    .map(|n| (n.to_string(), cur.span(t))),
                _ => None,
            };
            let b = if let Some((n, tspan)) = named {
                cur.next();
                target = Some(Target {
                    constant: env.consts.get(&n).copied(),
                    name: n,
                    span: tspan,
                });
                0
            } else {
                cur.value(env, 0, 15, "a bnz target")?.0 as u8
            };
            cur.expect(",", "after the bnz target")?;
            let (a, _) = cur.reg(env, "the condition register")?;
            Instr::Bnz { a, target: b }
        }
        _ => match AluOp::ALL.into_iter().find(|op| op.mnemonic() == name) {
            Some(op) => {
                let (a, b, c) = three(cur)?;
                Instr::Alu { op, a, b, c }
            }
            None => {
                let hint = mnemonics()
                    .into_iter()
                    .find(|m| m.starts_with(name) || name.starts_with(m))
                    .map(|m| format!(" (did you mean `{m}`?)"))
                    .unwrap_or_default();
                return Err(Diagnostic::error(
                    span,
                    format!("unknown instruction `{name}`{hint}"),
                ));
            }
        },
    };
    cur.expect_end(format_args!("the operands of `{name}`"))?;
    Ok((instr, target))
}

/// The value of `fence=`: a keyword `no`, `acq` or `rel` (a keyword wins over a constant
/// of the same name), or an expression giving the field's encoding, header bits 7:6: 0 no,
/// 1 acq, 2 rel (3 is reserved, a load error).
fn fence(cur: &mut Cursor, env: &Env) -> PResult<Fence> {
    let here = cur.here();
    let keyword = cur.peek().and_then(|t| t.ident()).and_then(|n| {
        [Fence::No, Fence::Acq, Fence::Rel]
            .into_iter()
            .find(|f| f.name().eq_ignore_ascii_case(n))
    });
    if let Some(f) = keyword {
        cur.next();
        return Ok(f);
    }
    let starts_value = cur.peek().is_some_and(|t| match &t.tok {
        Tok::Ident(n) => env.consts.contains_key(n),
        Tok::Num(_) | Tok::Punct("(" | "-" | "~" | "!") => true,
        _ => false,
    });
    if !starts_value {
        // An unknown word is most likely a misspelt keyword: name only the keywords.
        let msg = if cur.peek().and_then(|t| t.ident()).is_some() {
            "fence must be no, acq or rel"
        } else {
            "fence must be no, acq or rel, or an expression giving its encoding 0, 1 or 2"
        };
        return cur.error(&here, msg);
    }
    let (v, vspan) = cur.value(env, 0, 3, "the fence (0 no, 1 acq, 2 rel)")?;
    match v {
        0 => Ok(Fence::No),
        1 => Ok(Fence::Acq),
        2 => Ok(Fence::Rel),
        _ => cur.error(
            &vspan,
            "fence 3 is reserved (a load error): use 0 no, 1 acq or 2 rel",
        ),
    }
}

/// The options of `.cf`: `mask=`, `fence=`, `r0=core:value,...`, and for exact round trips
/// of any image `r0_vect=` (the Init_R0_Vect itself) and `reserved=offset:byte,...`; in the
/// MCST dialect also `next=N` (NextCF, header bits 13:8), the flag `stop` (bit 14), and
/// `if_num=N` (an IF_Num past the program's end, for its last group), returned beside.
fn control(
    cur: &mut Cursor,
    env: &Env,
    directive: &Span,
) -> PResult<(ControlFrame, Option<(u8, Span)>)> {
    let mcst = env.dialect == Dialect::Mcst;
    let mut cf = ControlFrame {
        if_num: 0,
        fence: Fence::No,
        active: 0,
        init_vect: 0,
        init_r0: [0; 16],
        reserved_header: 0,
        reserved: [0; 10],
    };
    let mut seen: Vec<String> = Vec::new();
    let mut vect: Option<u16> = None;
    let mut if_num: Option<(u8, Span)> = None;
    while !cur.at_end() {
        let here = cur.here();
        let key = match cur.next().and_then(|t| t.ident()) {
            Some(k) => k.to_ascii_lowercase(),
            None => return cur.error(&here, "expected an option of `.cf` (mask=, fence=, r0=)"),
        };
        if seen.contains(&key) {
            return cur.error(&here, format!("`{key}=` is given twice"));
        }
        seen.push(key.clone());
        if matches!(key.as_str(), "next" | "stop") && !mcst {
            return cur.error(
                &here,
                format!("`{key}` is a field of the mcst dialect's control frames (NextCF and the stop bit): assemble with {}", Diagnostics::MCST_OPTION),
            );
        }
        if key == "stop" {
            cf.reserved_header |= STOP_BIT;
            continue;
        }
        cur.expect("=", format_args!("after `{key}`"))?;
        match key.as_str() {
            "if_num" if mcst => {
                let (n, nspan) = cur.value(env, 0, i64::from(NEXT_CF_BITS), "if_num")?;
                if_num = Some((n as u8, nspan));
            }
            "next" => {
                let (n, _) = cur.value(env, 0, i64::from(NEXT_CF_BITS), "next (a frame index)")?;
                cf.reserved_header |= n as u8;
            }
            "mask" => cf.active = cur.value(env, 0, 0xFFFF, "mask")?.0 as u16,
            "r0_vect" => vect = Some(cur.value(env, 0, 0xFFFF, "r0_vect")?.0 as u16),
            "fence" => cf.fence = fence(cur, env)?,
            "r0" => loop {
                let (core, _) = cur.value(env, 0, 15, "a core number")?;
                cur.expect(":", "between the core and its R0 value")?;
                let (v, _) = cur.value(env, -128, 255, "an R0 value")?;
                cf.init_vect |= 1 << core;
                cf.init_r0[core as usize] = v as u8;
                if !cur.eat(",") {
                    break;
                }
            },
            "reserved" => loop {
                let (off, ospan) = cur.value(env, 0, 31, "a reserved byte offset")?;
                if !(off == 1 || (6..16).contains(&off)) {
                    return cur.error(
                        &ospan,
                        "reserved bytes of a control frame are at offsets 1 and 6..15",
                    );
                }
                cur.expect(":", "between the offset and the byte")?;
                let (v, _) = cur.value(env, 0, 255, "a reserved byte")?;
                if off == 1 && mcst && v as u8 & !0x80 != 0 {
                    return cur.error(
                        &ospan,
                        "in the mcst dialect header bits 13:8 are `next=` and bit 14 is `stop`: `reserved=1:` takes only bit 15 (0x80)",
                    );
                }
                if off == 1 && mcst {
                    // Only bit 15: `next=` and `stop` keep theirs.
                    cf.reserved_header = (cf.reserved_header & 0x7F) | v as u8;
                } else if off == 1 {
                    cf.reserved_header = v as u8;
                } else {
                    cf.reserved[off as usize - 6] = v as u8;
                }
                if !cur.eat(",") {
                    break;
                }
            },
            _ => {
                return cur.error(
                    &here,
                    format!(
                    "unknown option `{key}` of `.cf` (known: mask, fence, r0, r0_vect, reserved{})",
                    if mcst { ", next, stop, if_num" } else { "" }
                ),
                )
            }
        }
    }
    if !seen.iter().any(|k| k == "mask") {
        return cur.error(
            directive,
            "`.cf` needs `mask=` (the cores that run its frames)",
        );
    }
    if let Some(v) = vect {
        cf.init_vect = v;
    }
    Ok((cf, if_num))
}
