//! A JSONL line reader that holds at most a set number of bytes of a line in memory,
//! shared by the `lgcodec` record format (`records`) and store backups
//! (`crate::store`): a line longer than the limit is skipped, not kept, however long it is.

use std::io::{self, BufRead};

/// One line of JSONL input.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum JsonlLine {
    /// The line's text (without the line break).
    Text(String),
    /// Empty or whitespace only.
    Blank,
    /// Longer than the limit; its bytes were skipped, not kept.
    TooLong {
        /// The limit in force.
        limit: usize,
    },
    /// Not valid UTF-8.
    NotUtf8 {
        /// The byte offset of the first invalid byte in the line.
        offset: usize,
    },
}

/// Reads JSONL input line by line, holding at most `max_line_bytes` of a line in memory.
#[derive(Debug)]
pub struct JsonlReader<R> {
    input: R,
    max_line_bytes: usize,
    line_number: u64,
    buf: Vec<u8>,
}

impl<R: BufRead> JsonlReader<R> {
    /// Reads `input`, refusing lines longer than `max_line_bytes` (line break excluded).
    pub fn new(input: R, max_line_bytes: usize) -> Self {
        JsonlReader {
            input,
            max_line_bytes,
            line_number: 0,
            buf: Vec::new(),
        }
    }

    /// The next line and its 1-based number; `None` at the end of the input.
    ///
    /// # Errors
    /// The input's I/O errors.
    pub fn next_line(&mut self) -> io::Result<Option<(u64, JsonlLine)>> {
        self.buf.clear();
        let mut too_long = false;
        let mut saw_any = false;
        loop {
            let chunk = match self.input.fill_buf() {
                Ok(c) => c,
                Err(e) if e.kind() == io::ErrorKind::Interrupted => continue,
                Err(e) => return Err(e),
            };
            if chunk.is_empty() {
                if !saw_any {
                    return Ok(None);
                }
                break;
            }
            saw_any = true;
            let (part, done) = match chunk.iter().position(|&b| b == b'\n') {
                Some(end) => (chunk.get(..end).unwrap_or_default(), true),
                None => (chunk, false),
            };
            if !too_long {
                if self.buf.len().saturating_add(part.len()) > self.max_line_bytes.saturating_add(1)
                {
                    too_long = true;
                    self.buf = Vec::new();
                } else {
                    self.buf.extend_from_slice(part);
                }
            }
            let used = part.len().saturating_add(usize::from(done));
            self.input.consume(used);
            if done {
                break;
            }
        }
        self.line_number = self.line_number.saturating_add(1);
        if self.buf.last() == Some(&b'\r') {
            self.buf.pop();
        }
        let line = if too_long || self.buf.len() > self.max_line_bytes {
            self.buf = Vec::new();
            JsonlLine::TooLong {
                limit: self.max_line_bytes,
            }
        } else if self.buf.trim_ascii().is_empty() {
            JsonlLine::Blank
        } else {
            match std::str::from_utf8(&self.buf) {
                Ok(text) => JsonlLine::Text(text.to_owned()),
                Err(e) => JsonlLine::NotUtf8 {
                    offset: e.valid_up_to(),
                },
            }
        };
        Ok(Some((self.line_number, line)))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn lines(input: &[u8], limit: usize) -> Vec<(u64, JsonlLine)> {
        let mut reader = JsonlReader::new(io::BufReader::with_capacity(4, input), limit);
        std::iter::from_fn(|| reader.next_line().expect("in memory")).collect()
    }

    #[test]
    fn jsonl_lines_are_bounded_and_numbered() {
        let got = lines(b"abc\n\n  \r\nabcdef\r\nxyz\xff\nabcd", 4);
        let want = [
            (1, JsonlLine::Text("abc".into())),
            (2, JsonlLine::Blank),
            (3, JsonlLine::Blank),
            (4, JsonlLine::TooLong { limit: 4 }),
            (5, JsonlLine::NotUtf8 { offset: 3 }),
            (6, JsonlLine::Text("abcd".into())),
        ];
        assert_eq!(got, want);
        // The buffer never holds more than the limit and a chunk of input.
        let mut reader = JsonlReader::new(io::BufReader::with_capacity(8, &[b'x'; 10_000][..]), 16);
        assert_eq!(
            reader.next_line().expect("ok"),
            Some((1, JsonlLine::TooLong { limit: 16 }))
        );
        assert!(reader.buf.capacity() <= 64, "{}", reader.buf.capacity());
    }
}
