//! A spec-dialect raw program image read in parts of whole groups, for the commands that go
//! over a program once without running it (`check`, `disasm`): memory holds one part, not
//! the image (issue 33: a 1 GiB image took 21 GB to check). Each part is checked as
//! loading the whole image checks it, and the first load error names the frame of the
//! whole image, in the words [`load_program_as`](gpu16::input::load_program_as) gives.
//! An image on stdin or a FIFO is first copied to an unnamed temporary file
//! ([`PartsImage`]): each part is read twice, and the text needs the image's length.

use gpu16::input::stream::FrameStream;
use gpu16::input::InputError;
use gpu16_machine::frame::FRAME_BYTES;
use gpu16_machine::{ControlFrame, Dialect, FrameSource, LoadError, Program};
use std::fs::File;
use std::io::{self, Read, Seek, SeekFrom};
use std::path::Path;

/// A raw image to read in parts: a regular file, read where it is, or stdin or a FIFO,
/// copied to an unnamed temporary file first (in memory independent of its size).
pub struct PartsImage<'a> {
    path: &'a Path,
    spooled: Option<File>,
    frames: usize,
}

impl<'a> PartsImage<'a> {
    /// The image at `path` (`-`: stdin) ready to read in parts, or `None` for something
    /// else (a directory, a device), which is loaded whole and fails there as before.
    pub fn open(path: &'a Path) -> Result<Option<PartsImage<'a>>, InputError> {
        if let Some(frames) = frames_of(path) {
            return Ok(Some(PartsImage {
                path,
                spooled: None,
                frames,
            }));
        }
        let stream = path == Path::new("-")
            || std::fs::metadata(path).is_ok_and(|m| {
                use std::os::unix::fs::FileTypeExt;
                m.file_type().is_fifo()
            });
        if !stream {
            return Ok(None);
        }
        let cannot = |e: io::Error| InputError::new(path, format!("cannot read: {e}"));
        let mut spool = gpu16::scratch::unnamed_file("image").map_err(|e| {
            InputError::new(
                path,
                format!(
                    "cannot make the temporary file in $TMPDIR ({}) the image is copied to: {e}",
                    std::env::temp_dir().display()
                ),
            )
        })?;
        let copied = if path == Path::new("-") {
            io::copy(
                &mut io::stdin().lock().take(FrameStream::MAX_BYTES + 1),
                &mut spool,
            )
        } else {
            io::copy(
                &mut File::open(path)
                    .map_err(cannot)?
                    .take(FrameStream::MAX_BYTES + 1),
                &mut spool,
            )
        }
        .map_err(|e| {
            InputError::new(
                path,
                format!("cannot copy it to the temporary file in $TMPDIR: {e}"),
            )
        })?;
        if copied > FrameStream::MAX_BYTES {
            return Err(InputError::new(
                path,
                format!(
                    "too large: a program image may have at most {} bytes",
                    FrameStream::MAX_BYTES
                ),
            ));
        }
        Ok(Some(PartsImage {
            path,
            spooled: Some(spool),
            frames: usize::try_from(copied).unwrap_or(usize::MAX) / FRAME_BYTES,
        }))
    }

    /// Its number of frames (for a length that is not a whole number of frames, the
    /// whole ones: reading it refuses it).
    pub fn frames(&self) -> usize {
        self.frames
    }

    fn stream(&self) -> Result<FrameStream, InputError> {
        match &self.spooled {
            None => FrameStream::open(self.path),
            Some(file) => {
                let cannot = |e: io::Error| InputError::new(self.path, format!("cannot read: {e}"));
                let mut file = file.try_clone().map_err(cannot)?;
                file.seek(SeekFrom::Start(0)).map_err(cannot)?;
                FrameStream::of_file(file, self.path)
            }
        }
    }
}

/// The fewest frames a part holds before it ends (at the end of a group): 512 KiB.
pub(crate) const PART_FRAMES: usize = 1 << 14;

/// Why reading in parts ended early.
#[derive(Debug)]
pub enum PartsError<E> {
    /// The image cannot be read or does not load.
    Load(InputError),
    /// What the caller's function returned.
    Stopped(E),
}

/// The number of frames of the raw image at `path` if it can be read in parts: a regular
/// file (its length is known before reading, which the text of each part needs); `None`
/// for stdin, a FIFO or a device, which are loaded whole as before.
fn frames_of(path: &Path) -> Option<usize> {
    if path == Path::new("-") {
        return None;
    }
    let meta = std::fs::metadata(path).ok()?;
    meta.is_file()
        .then(|| usize::try_from(meta.len()).ok())
        .flatten()
        .map(|len| len / FRAME_BYTES)
}

/// Read the spec-dialect raw `image` and give `each` its parts in
/// order, each with the index of its first frame and the image's number of frames. A part
/// is whole groups of at least [`PART_FRAMES`] frames (the last may have fewer). Ends at
/// the first load error (no later part is given) or the first error of `each`.
pub fn for_each_part<E>(
    image: &PartsImage,
    mut each: impl FnMut(&Program, usize, usize) -> Result<(), E>,
) -> Result<(), PartsError<E>> {
    let path = image.path;
    let mut stream = image.stream().map_err(PartsError::Load)?;
    let total = stream
        .known_frames()
        .and_then(|n| usize::try_from(n).ok())
        .ok_or_else(|| PartsError::Load(InputError::new(path, "not a regular file")))?;
    let load = |e: LoadError| PartsError::Load(InputError::new(path, e.to_string()));
    let mut next = || -> Result<[u8; FRAME_BYTES], LoadError> {
        // The length was checked when the stream was opened: a frame missing now is a file
        // cut short while it was read.
        stream.next_frame()?.ok_or(LoadError::Truncated {
            frame: 0,
            offset: 0,
            bytes: 0,
        })
    };
    let (mut base, mut at) = (0, 0);
    let mut frames = Vec::with_capacity(PART_FRAMES + 64);
    while at < total {
        let control = next().map_err(load)?;
        let if_num = ControlFrame::decode(&control)
            .map_err(|_| load(LoadError::ReservedFence { frame: at }))?
            .if_num;
        let n = usize::from(if_num);
        if at + n >= total {
            return Err(load(LoadError::GroupPastEnd {
                frame: at,
                if_num,
                frames: total,
            }));
        }
        frames.push(control);
        for _ in 0..n {
            frames.push(next().map_err(load)?);
        }
        at += n + 1;
        if frames.len() >= PART_FRAMES || at == total {
            let part = Program::from_frames_in(std::mem::take(&mut frames), Dialect::Spec)
                .map_err(|e| {
                    load(match e {
                        LoadError::ReservedMode {
                            frame,
                            slot,
                            detail,
                        } => LoadError::ReservedMode {
                            frame: base + frame,
                            slot,
                            detail,
                        },
                        e => e,
                    })
                })?;
            each(&part, base, total).map_err(PartsError::Stopped)?;
            base = at;
            frames.reserve(PART_FRAMES + 64);
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn scratch(name: &str, bytes: &[u8]) -> std::path::PathBuf {
        let p = std::env::temp_dir().join(format!("gpu16-parts-{}-{name}", std::process::id()));
        std::fs::write(&p, bytes).unwrap();
        p
    }

    /// A control frame with IF_Num `n`, fence no, mask 1; and an instruction frame of 16
    /// `ready`s (0xf000).
    fn group(n: u8) -> Vec<u8> {
        let mut g = vec![0u8; FRAME_BYTES];
        g[0] = n;
        g[2] = 1;
        for _ in 0..n {
            g.extend([0x00, 0xf0].repeat(16));
        }
        g
    }

    #[test]
    fn parts_are_whole_groups_numbered_as_in_the_image() {
        // Groups of 3 frames: a part ends at the first group end at or past PART_FRAMES.
        let groups = PART_FRAMES / 3 + 2;
        let image: Vec<u8> = (0..groups).flat_map(|_| group(2)).collect();
        let p = scratch("whole", &image);
        let mut seen = Vec::new();
        for_each_part(
            &PartsImage::open(&p).unwrap().unwrap(),
            |part, base, total| {
                seen.push((base, part.len(), total));
                Ok::<(), ()>(())
            },
        )
        .unwrap();
        let first = (PART_FRAMES / 3 + 1) * 3;
        assert_eq!(
            seen,
            [
                (0, first, groups * 3),
                (first, groups * 3 - first, groups * 3)
            ]
        );
        std::fs::remove_file(p).unwrap();
    }

    #[test]
    fn errors_name_the_frame_of_the_whole_image() {
        // A fence of 3 at frame 2 (the second group's control frame).
        let mut image = [group(1), group(1)].concat();
        image[2 * FRAME_BYTES] |= 0xC0;
        let p = scratch("fence", &image);
        let e = for_each_part(&PartsImage::open(&p).unwrap().unwrap(), |_, _, _| {
            Ok::<(), ()>(())
        })
        .unwrap_err();
        let PartsError::Load(e) = e else { panic!() };
        assert_eq!(
            e.message,
            "frame 2: control frame has the reserved fence value 3"
        );
        // The last group announces 2 instruction frames; the image ends after 1.
        let image = [group(1), group(2)[..2 * FRAME_BYTES].to_vec()].concat();
        let p2 = scratch("past", &image);
        let e = for_each_part(&PartsImage::open(&p2).unwrap().unwrap(), |_, _, _| {
            Ok::<(), ()>(())
        })
        .unwrap_err();
        let PartsError::Load(e) = e else { panic!() };
        assert_eq!(
            e.message,
            "frame 2: control frame announces 2 instruction frames but the image ends after 1 more"
        );
        std::fs::remove_file(p).unwrap();
        std::fs::remove_file(p2).unwrap();
    }
}
