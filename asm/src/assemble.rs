//! Items to frames: groups of `.if` frames behind their `.cf` (IF_Num counted here),
//! frame-local labels, the 16-slot and 63-frame limits, `ready` fill, the MCST dialect's
//! `.halt` (NextCF = its own index) and 64-frame task memory, and the source map that lets
//! `check` point its findings at source lines.

use crate::diagnostics::{Diagnostic, Severity, Span};
use crate::operands::{Item, Target, NEXT_CF_BITS};
use crate::report::Report;
use gpu16_machine::engine::isa::FRAME_INSTRS;
use gpu16_machine::frame::{FRAME_BYTES, TASK_MEMORY_FRAMES};
use gpu16_machine::{Dialect, Program};
use std::collections::HashMap;

/// The most `.if` frames one `.cf` can lead: IF_Num is a 6-bit field.
pub const MAX_GROUP: usize = 63;
const READY: u16 = 0xf000;

/// Where a frame came from: its `.cf`/`.if` directive and the source of each slot it used.
#[derive(Clone, Debug)]
pub struct FrameSource {
    /// The frame's `.cf` or `.if` directive.
    pub span: Span,
    /// The instruction written for each slot, in IP order; slots past its end are `ready`
    /// fill. Empty for a control frame.
    pub slots: Vec<Span>,
    /// The frame's labels, (name, slot), in slot order (then name order): a label after the
    /// last instruction names the slot past it. Empty for a control frame.
    pub labels: Vec<(String, usize)>,
}

/// Frame index -> source, for every frame of an assembled program.
#[derive(Clone, Debug, Default)]
pub struct SourceMap {
    /// One entry per frame of the program, in frame order.
    pub frames: Vec<FrameSource>,
}

impl SourceMap {
    /// The source of `slot` of `frame`, or of the frame itself when the slot is `ready`
    /// fill or not given.
    pub fn span(&self, frame: usize, slot: Option<usize>) -> Option<&Span> {
        let f = self.frames.get(frame)?;
        Some(slot.and_then(|s| f.slots.get(s)).unwrap_or(&f.span))
    }
}

/// An assembled program and where each frame and slot came from.
#[derive(Clone, Debug)]
pub struct Assembly {
    /// The program image, ready to run (`gpu16_machine::run`) or to write out
    /// ([`Program::image`]).
    pub program: Program,
    /// Where each frame and slot came from, for [`check`](crate::check) and tools.
    pub source_map: SourceMap,
    /// The initial shared memory the source's `.data` directives give: 4096 bytes, bank 0
    /// rows 0..255 first, bytes no directive placed 0. `None` when the source has no
    /// `.data`, so a tool can tell "no memory given" from "all zero".
    pub memory: Option<Vec<u8>>,
}

struct OpenIf {
    frame: usize,
    slots: Vec<(u16, Span, Option<Target>)>,
    labels: HashMap<String, (usize, Span)>,
}

struct Builder<'d> {
    frames: Vec<[u8; FRAME_BYTES]>,
    map: SourceMap,
    diags: &'d mut Report,
    /// The frame index of the open group's CF and how many IFs it has so far.
    group: Option<(usize, usize)>,
    /// The open group's CF is a `.halt`, which has no instruction frames.
    halt: bool,
    /// The open group's IF_Num given outright (MCST `if_num=`).
    explicit: Option<(u8, Span)>,
    /// A closed group whose `if_num=` is more than its `.if`s: only the last may be.
    short: Option<(u8, usize, Span)>,
    open: Option<OpenIf>,
}

/// Build the frames of `items`; problems go to `diags`.
pub fn build(
    items: Vec<Item>,
    file: &str,
    dialect: Dialect,
    diags: &mut Report,
) -> Option<Assembly> {
    let mut b = Builder {
        frames: Vec::new(),
        map: SourceMap::default(),
        diags,
        group: None,
        halt: false,
        explicit: None,
        short: None,
        open: None,
    };
    for item in items {
        if b.diags.stopped() {
            return None;
        }
        b.item(item);
    }
    b.close_if();
    b.close_group();
    // A `.cf` that failed to parse leaves no frame; its own error says enough.
    if b.frames.is_empty() && b.diags.is_empty() {
        b.diags.push(Diagnostic::bare(
            Severity::Error,
            file,
            "no frames: a program starts with `.cf mask=...` followed by `.if` frames",
        ));
        return None;
    }
    if dialect == Dialect::Mcst && b.frames.len() > TASK_MEMORY_FRAMES {
        let n = b.frames.len();
        b.diags.push(Diagnostic::error(
            &b.map.frames[TASK_MEMORY_FRAMES].span,
            format!("the program has {n} frames, but the mcst dialect's task memory holds {TASK_MEMORY_FRAMES} (its NextCF field addresses no more): this is frame {TASK_MEMORY_FRAMES}"),
        ));
    }
    if b.frames.is_empty() || b.diags.has_errors() {
        return None;
    }
    match Program::from_frames_in(b.frames, dialect) {
        Ok(program) => Some(Assembly {
            program,
            source_map: b.map,
            memory: None,
        }),
        Err(e) => {
            // The builder only makes loadable frames; this guards the guarantee.
            b.diags
                .push(Diagnostic::bare(Severity::Error, file, e.to_string()));
            None
        }
    }
}

impl Builder<'_> {
    fn item(&mut self, item: Item) {
        match item {
            Item::Cf {
                span,
                frame,
                halt,
                if_num,
            } => {
                self.close_if();
                self.close_group();
                if let Some((n, written, at)) = self.short.take() {
                    self.diags.push(Diagnostic::error(
                        &at,
                        format!("if_num={n} is more than the group's {written} instruction frames: only the program's last group may run past its end (into task memory's zero frames)"),
                    ));
                }
                self.explicit = if_num;
                let index = self.frames.len();
                self.group = Some((index, 0));
                self.halt = halt;
                let mut frame = frame;
                if halt {
                    // NextCF is 6 bits; a `.halt` past frame 63 is reported with the count.
                    frame.reserved_header |= (index as u8) & NEXT_CF_BITS;
                }
                self.frames.push(frame.encode());
                self.map.frames.push(FrameSource {
                    span,
                    slots: Vec::new(),
                    labels: Vec::new(),
                });
            }
            Item::If { span } => {
                self.close_if();
                let Some((_, n)) = &mut self.group else {
                    self.diags.push(Diagnostic::error(
                        &span,
                        "`.if` before the first `.cf`: a program starts with a control frame",
                    ));
                    // Collect the frame's contents anyway so they are checked too.
                    self.open = Some(OpenIf {
                        frame: usize::MAX,
                        slots: Vec::new(),
                        labels: HashMap::new(),
                    });
                    return;
                };
                *n += 1;
                if self.halt && *n == 1 {
                    self.diags.push(Diagnostic::error(
                        &span,
                        "`.halt` is a control frame with no instruction frames: start a group with `.cf` before this `.if`",
                    ));
                }
                if *n == MAX_GROUP + 1 {
                    self.diags.push(Diagnostic::error(
                        &span,
                        format!(
                            "this is instruction frame {} of its group, but IF_Num is 6 bits (at most {MAX_GROUP}): start a new group with `.cf`",
                            MAX_GROUP + 1
                        ),
                    ));
                }
                self.open = Some(OpenIf {
                    frame: self.frames.len(),
                    slots: Vec::new(),
                    labels: HashMap::new(),
                });
                self.frames.push([0; FRAME_BYTES]);
                self.map.frames.push(FrameSource {
                    span,
                    slots: Vec::new(),
                    labels: Vec::new(),
                });
            }
            Item::Label { name, span } => {
                let Some(open) = &mut self.open else {
                    self.diags.push(Diagnostic::error(
                        &span,
                        format!("label `{name}` is outside an instruction frame (labels belong to an `.if`)"),
                    ));
                    return;
                };
                if let Some((_, first)) = open.labels.get(&name) {
                    let msg = format!(
                        "label `{name}` is already defined in this frame (line {})",
                        first.line
                    );
                    self.diags.push(Diagnostic::error(&span, msg));
                    return;
                }
                open.labels.insert(name, (open.slots.len(), span));
            }
            Item::Slot { word, span, target } => match &mut self.open {
                Some(open) => open.slots.push((word, span, target)),
                None => self.diags.push(Diagnostic::error(
                    &span,
                    "instruction outside an instruction frame (start one with `.if`)",
                )),
            },
        }
    }

    fn close_group(&mut self) {
        if let Some((cf, n)) = self.group.take() {
            // An oversized group was reported; the low six bits keep the image well-formed.
            let mut written = n.min(MAX_GROUP) as u8;
            if let Some((given, at)) = self.explicit.take() {
                if n > usize::from(given) {
                    self.diags.push(Diagnostic::error(
                        &at,
                        format!("if_num={given}, but the group has {n} instruction frames"),
                    ));
                } else {
                    if n < usize::from(given) {
                        self.short = Some((given, n, at));
                    }
                    written = given;
                }
            }
            self.frames[cf][0] = (self.frames[cf][0] & 0xC0) | written;
        }
    }

    fn close_if(&mut self) {
        let Some(open) = self.open.take() else { return };
        if open.slots.len() > FRAME_INSTRS {
            self.diags.push(Diagnostic::error(
                &open.slots[FRAME_INSTRS].1,
                format!(
                    "frame has {} instructions (at most {FRAME_INSTRS})",
                    open.slots.len()
                ),
            ));
        }
        let mut words = [READY; FRAME_INSTRS];
        for (i, (word, span, target)) in open.slots.iter().enumerate().take(FRAME_INSTRS) {
            let mut word = *word;
            if let Some(t) = target {
                match self.resolve(t, &open.labels) {
                    Ok(slot) => word |= u16::from(slot) << 4,
                    Err(d) => self.diags.push(d),
                }
            }
            words[i] = word;
            let _ = span;
        }
        if open.frame == usize::MAX {
            return;
        }
        let frame = &mut self.frames[open.frame];
        for (i, w) in words.iter().enumerate() {
            frame[2 * i..2 * i + 2].copy_from_slice(&w.to_le_bytes());
        }
        let mut labels: Vec<(String, usize)> = open
            .labels
            .into_iter()
            .map(|(name, (slot, _))| (name, slot))
            .collect();
        labels.sort_by(|a, b| (a.1, &a.0).cmp(&(b.1, &b.0)));
        self.map.frames[open.frame].labels = labels;
        self.map.frames[open.frame].slots = open
            .slots
            .into_iter()
            .take(FRAME_INSTRS)
            .map(|s| s.1)
            .collect();
    }

    fn resolve(
        &self,
        t: &Target,
        labels: &HashMap<String, (usize, Span)>,
    ) -> Result<u8, Diagnostic> {
        if let Some((slot, _)) = labels.get(&t.name) {
            return if *slot < FRAME_INSTRS {
                Ok(*slot as u8)
            } else {
                Err(Diagnostic::error(
                    &t.span,
                    format!(
                        "label `{}` is past the last slot of the frame (slot {slot})",
                        t.name
                    ),
                ))
            };
        }
        match t.constant {
            Some(v) if (0..FRAME_INSTRS as i64).contains(&v) => Ok(v as u8),
            Some(v) => Err(Diagnostic::error(
                &t.span,
                format!("a bnz target must be 0..15, not {v}"),
            )),
            None => Err(Diagnostic::error(
                &t.span,
                format!("label `{}` is not defined in this frame", t.name),
            )),
        }
    }
}
