//! Cutting an mbox file into messages, with the byte offset of each.
//!
//! Every line that starts with `From ` opens a message (mboxo/mboxrd); `>From `, `>>From `, …
//! lose one `>` (mboxrd unquoting). Text before the first `From ` line is returned as a
//! preamble so it can be dead lettered rather than dropped unseen.

use std::io::{self, BufRead};

/// One message cut out of an mbox file.
#[derive(Debug, Default)]
pub(crate) struct MboxEntry {
    /// Position in the file, from 1; 0 for the preamble.
    pub index: usize,
    /// Byte offset of its `From ` line (of its first byte, for the preamble).
    pub offset: u64,
    /// Size of the message in bytes, after unquoting.
    pub size: u64,
    /// The message bytes, at most the reader's cap.
    pub raw: Vec<u8>,
    /// Text before the first `From ` line.
    pub preamble: bool,
}

impl MboxEntry {
    fn push(&mut self, line: &[u8], cap: usize) {
        self.size += line.len() as u64;
        let room = cap.saturating_sub(self.raw.len());
        self.raw.extend_from_slice(&line[..line.len().min(room)]);
    }

    /// Drop the blank line that separates a message from the next `From ` line.
    fn finish(mut self) -> Self {
        if self.raw.ends_with(b"\r\n\r\n") {
            self.raw.truncate(self.raw.len() - 2);
        } else if self.raw.ends_with(b"\n\n") {
            self.raw.pop();
        }
        self
    }
}

/// The messages of an mbox stream, in order; each keeps at most `cap` bytes in memory.
#[derive(Debug)]
pub(crate) struct MboxEntries<R> {
    reader: R,
    cap: usize,
    offset: u64,
    next_index: usize,
    current: Option<MboxEntry>,
    line: Vec<u8>,
}

impl<R: BufRead> MboxEntries<R> {
    pub(crate) fn new(reader: R, cap: usize) -> Self {
        MboxEntries {
            reader,
            cap,
            offset: 0,
            next_index: 1,
            current: None,
            line: Vec::with_capacity(256),
        }
    }
}

impl<R: BufRead> Iterator for MboxEntries<R> {
    type Item = io::Result<MboxEntry>;

    fn next(&mut self) -> Option<Self::Item> {
        loop {
            self.line.clear();
            let read = match self.reader.read_until(b'\n', &mut self.line) {
                Ok(read) => read,
                Err(e) => return Some(Err(e)),
            };
            if read == 0 {
                return self.current.take().map(|entry| Ok(entry.finish()));
            }
            let line_offset = self.offset;
            self.offset += read as u64;
            if self.line.starts_with(b"From ") {
                let next = MboxEntry {
                    index: self.next_index,
                    offset: line_offset,
                    ..MboxEntry::default()
                };
                self.next_index += 1;
                if let Some(done) = self.current.replace(next) {
                    return Some(Ok(done.finish()));
                }
                continue;
            }
            let entry = self.current.get_or_insert_with(|| MboxEntry {
                offset: line_offset,
                preamble: true,
                ..MboxEntry::default()
            });
            entry.push(unquote(&self.line), self.cap);
        }
    }
}

/// `>From ` → `From `, `>>From ` → `>From `; other lines unchanged.
fn unquote(line: &[u8]) -> &[u8] {
    let depth = line.iter().take_while(|&&b| b == b'>').count();
    if depth > 0 && line[depth..].starts_with(b"From ") {
        &line[1..]
    } else {
        line
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn entries(bytes: &[u8], cap: usize) -> Vec<MboxEntry> {
        MboxEntries::new(bytes, cap).map(Result::unwrap).collect()
    }

    #[test]
    fn offsets_unquoting_preamble_and_cap() {
        let mbox = b"junk\nFrom a@b Mon\nX: 1\n\n>From here\n>>From there\n\nFrom c@d Tue\nY: 2\n";
        let all = entries(mbox, 1024);
        assert_eq!(all.len(), 3);
        assert!(all[0].preamble && all[0].raw == b"junk\n");
        assert_eq!((all[1].index, all[1].offset), (1, 5));
        assert_eq!(all[1].raw, b"X: 1\n\nFrom here\n>From there\n");
        assert_eq!(
            (all[2].index, all[2].offset, all[2].raw.as_slice()),
            (2, 49, &b"Y: 2\n"[..])
        );
        let capped = entries(mbox, 4);
        assert_eq!(
            (capped[1].raw.as_slice(), capped[1].size),
            (&b"X: 1"[..], 29)
        );
        assert!(entries(b"", 10).is_empty());
    }
}
