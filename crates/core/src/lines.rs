//! Outside text read a line at a time with bounds: no line longer than a stated limit and no file
//! larger than another is ever held in memory, whatever the input. Books (EPD and PGN) and TRF
//! files are read through it, so that memory is bounded by the largest record, not by the file.
//!
//! Hand-written: the standard library's `BufRead::lines` reads a line of any length into memory
//! before the caller can see how long it is.

use std::io::{self, BufRead, Read};

/// Why a line could not be read.
#[derive(Debug, thiserror::Error)]
pub(crate) enum LineError {
    /// The reader failed.
    #[error("{0}")]
    Io(#[from] io::Error),
    /// A line over the limit; it was not read whole.
    #[error("line {line} is longer than the limit of {max} bytes")]
    TooLong {
        /// The line (1-based).
        line: usize,
        /// The limit in bytes.
        max: usize,
    },
    /// The input goes on past the limit of the whole file.
    #[error("the input is larger than the limit of {max} bytes")]
    TooLarge {
        /// The limit in bytes.
        max: u64,
    },
}

/// The lines of a reader, each without its line end (`\n` or `\r\n`), numbered from 1. Bytes that
/// are not UTF-8 are replaced (U+FFFD), so that a reader of the text names the bad line rather
/// than the file. After an error the iterator ends.
pub(crate) struct BoundedLines<R> {
    reader: R,
    max_line: usize,
    max_total: u64,
    read: u64,
    line: usize,
    done: bool,
    buf: Vec<u8>,
}

impl<R: BufRead> BoundedLines<R> {
    /// Lines of `reader`, none over `max_line` bytes (line end excluded), `max_total` bytes in
    /// all.
    pub fn new(reader: R, max_line: usize, max_total: u64) -> Self {
        Self {
            reader,
            max_line,
            max_total,
            read: 0,
            line: 0,
            done: false,
            buf: Vec::new(),
        }
    }

    fn read_line(&mut self) -> Result<Option<(usize, String)>, LineError> {
        self.buf.clear();
        // At most the limit, a `\r` and a `\n`: a longer line is refused before it is read whole.
        let cap = u64::try_from(self.max_line)
            .unwrap_or(u64::MAX)
            .saturating_add(2);
        let n = (&mut self.reader)
            .take(cap)
            .read_until(b'\n', &mut self.buf)?;
        if n == 0 {
            return Ok(None);
        }
        self.line += 1;
        self.read = self
            .read
            .saturating_add(u64::try_from(n).unwrap_or(u64::MAX));
        if self.read > self.max_total {
            return Err(LineError::TooLarge {
                max: self.max_total,
            });
        }
        if self.buf.last() == Some(&b'\n') {
            self.buf.pop();
            if self.buf.last() == Some(&b'\r') {
                self.buf.pop();
            }
        }
        if self.buf.len() > self.max_line {
            return Err(LineError::TooLong {
                line: self.line,
                max: self.max_line,
            });
        }
        Ok(Some((
            self.line,
            String::from_utf8_lossy(&self.buf).into_owned(),
        )))
    }
}

impl<R: BufRead> Iterator for BoundedLines<R> {
    type Item = Result<(usize, String), LineError>;

    fn next(&mut self) -> Option<Self::Item> {
        if self.done {
            return None;
        }
        let item = self.read_line().transpose();
        if !matches!(item, Some(Ok(_))) {
            self.done = true;
        }
        item
    }
}

/// Reads all of `reader` as text (invalid UTF-8 is an error), refusing input over `max` bytes
/// after reading at most one byte more: for files read whole whose size no one checked.
///
/// # Errors
///
/// The reader's error, or [`io::ErrorKind::InvalidData`] for input over `max` bytes or not UTF-8.
pub fn read_to_string_limited(reader: impl Read, max: u64) -> io::Result<String> {
    let mut text = String::new();
    reader
        .take(max.saturating_add(1))
        .read_to_string(&mut text)?;
    if u64::try_from(text.len()).map_or(true, |n| n > max) {
        return Err(io::Error::new(
            io::ErrorKind::InvalidData,
            format!("larger than the limit of {} MiB", max >> 20),
        ));
    }
    Ok(text)
}

#[cfg(test)]
mod tests {
    use super::{BoundedLines, LineError, read_to_string_limited};

    #[test]
    fn text_over_the_limit_is_refused() {
        assert_eq!(read_to_string_limited(&b"abcd"[..], 4).unwrap(), "abcd");
        let err = read_to_string_limited(&b"abcde"[..], 4).unwrap_err();
        assert_eq!(err.kind(), std::io::ErrorKind::InvalidData);
    }

    fn lines(text: &[u8], max_line: usize, max_total: u64) -> Vec<Result<String, String>> {
        BoundedLines::new(text, max_line, max_total)
            .map(|r| r.map(|(_, l)| l).map_err(|e| e.to_string()))
            .collect()
    }

    #[test]
    fn lines_end_in_lf_or_crlf_and_are_numbered() {
        let got: Vec<(usize, String)> = BoundedLines::new(&b"a\r\nb\n\nc"[..], 10, 100)
            .map(Result::unwrap)
            .collect();
        assert_eq!(
            got,
            vec![
                (1, "a".into()),
                (2, "b".into()),
                (3, String::new()),
                (4, "c".into())
            ]
        );
    }

    #[test]
    fn a_long_line_is_refused_at_its_number_and_reading_stops() {
        let text = format!("ok\n{}\nafter\n", "x".repeat(11));
        let got = lines(text.as_bytes(), 10, 1000);
        assert_eq!(got.len(), 2);
        assert_eq!(got[0], Ok("ok".into()));
        assert_eq!(
            got[1],
            Err("line 2 is longer than the limit of 10 bytes".into())
        );
        // Exactly at the limit, with a CRLF end, is fine.
        let text = format!("{}\r\n", "x".repeat(10));
        assert_eq!(lines(text.as_bytes(), 10, 1000), vec![Ok("x".repeat(10))]);
    }

    #[test]
    fn a_large_input_is_refused() {
        let text = "abc\n".repeat(10);
        let got: Vec<_> = BoundedLines::new(text.as_bytes(), 10, 20).collect();
        assert!(matches!(
            got.last(),
            Some(Err(LineError::TooLarge { max: 20 }))
        ));
        assert_eq!(got.len(), 6);
    }

    #[test]
    fn invalid_utf8_is_replaced() {
        assert_eq!(lines(b"a\xffb\n", 10, 100), vec![Ok("a\u{fffd}b".into())]);
    }
}
