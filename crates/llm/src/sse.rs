//! A server-sent-events parser fed with the response body's bytes as they arrive.
//!
//! Hand-written rather than `eventsource-stream` over `bytes_stream()`: a streamed reply must keep
//! the exact bytes received (for the store and the 8 MiB body limit), its idle time between
//! chunks and the events read so far when the call is stopped from outside (a chess clock drops
//! the reading future). A parser that the reading loop feeds chunk by chunk keeps all of that in
//! plain values the caller owns, where a stream adapter would hide it. The format is the HTML
//! standard's "event stream interpretation": lines end in CRLF, LF or CR; `event:` names the
//! event, `data:` lines are joined with newlines, lines starting with `:` are comments, a blank
//! line dispatches the event; `id:` and `retry:` are read and ignored, since a chat reply is
//! never resumed.

/// One dispatched event.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SseEvent {
    /// The `event:` field, `message` when absent.
    pub(super) event: String,
    /// The `data:` lines, joined with `\n`.
    pub(super) data: String,
}

/// The parser's state between chunks.
#[derive(Debug, Default)]
pub struct SseParser {
    /// Bytes of a line not yet ended.
    line: Vec<u8>,
    /// The last chunk ended in CR: an LF opening the next one belongs to that line end.
    after_cr: bool,
    /// Whether the first line was reached (a byte-order mark before it is dropped).
    started: bool,
    event: Option<String>,
    data: String,
    has_data: bool,
}

impl SseParser {
    /// Reads `bytes`, appending the events they complete to `out`.
    pub fn feed(&mut self, bytes: &[u8], out: &mut Vec<SseEvent>) {
        let mut bytes = bytes;
        if !self.started && !bytes.is_empty() {
            self.started = true;
            bytes = bytes.strip_prefix(b"\xEF\xBB\xBF").unwrap_or(bytes);
        }
        for &byte in bytes {
            let after_cr = std::mem::take(&mut self.after_cr);
            match byte {
                b'\n' if after_cr => {}
                b'\n' => self.end_line(out),
                b'\r' => {
                    self.after_cr = true;
                    self.end_line(out);
                }
                _ => self.line.push(byte),
            }
        }
    }

    /// Whether bytes of an event not yet dispatched are held (a stream that ends here was cut
    /// inside an event).
    pub(super) fn is_mid_event(&self) -> bool {
        !self.line.is_empty() || self.has_data || self.event.is_some()
    }

    fn end_line(&mut self, out: &mut Vec<SseEvent>) {
        let line = std::mem::take(&mut self.line);
        if line.is_empty() {
            let event = self.event.take();
            if std::mem::take(&mut self.has_data) {
                out.push(SseEvent {
                    event: event.unwrap_or_else(|| "message".to_owned()),
                    data: std::mem::take(&mut self.data),
                });
            }
            return;
        }
        let line = String::from_utf8_lossy(&line);
        if line.starts_with(':') {
            return;
        }
        let (field, value) = match line.split_once(':') {
            Some((field, value)) => (field, value.strip_prefix(' ').unwrap_or(value)),
            None => (&*line, ""),
        };
        match field {
            "event" => self.event = Some(value.to_owned()),
            "data" => {
                if self.has_data {
                    self.data.push('\n');
                }
                self.data.push_str(value);
                self.has_data = true;
            }
            // `id` and `retry` serve reconnection, which a chat reply never does.
            _ => {}
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn parse_in_chunks(text: &[u8], size: usize) -> Vec<SseEvent> {
        let mut parser = SseParser::default();
        let mut out = Vec::new();
        for chunk in text.chunks(size) {
            parser.feed(chunk, &mut out);
        }
        out
    }

    fn event(event: &str, data: &str) -> SseEvent {
        SseEvent {
            event: event.into(),
            data: data.into(),
        }
    }

    #[test]
    fn reads_events_whatever_the_chunk_boundaries() {
        let text = b"\xEF\xBB\xBF: keep-alive\r\nevent: message_start\r\ndata: {\"a\":1}\r\n\r\n\
                     data: first\ndata:second\n\nevent: ping\rdata: {}\r\rid: 7\nretry: 10\ndata: x\n\n";
        let want = vec![
            event("message_start", "{\"a\":1}"),
            event("message", "first\nsecond"),
            event("ping", "{}"),
            event("message", "x"),
        ];
        for size in [1, 2, 3, 7, text.len()] {
            assert_eq!(parse_in_chunks(text, size), want, "chunks of {size} bytes");
        }
    }

    #[test]
    fn an_event_without_its_blank_line_is_not_dispatched() {
        let mut parser = SseParser::default();
        let mut out = Vec::new();
        parser.feed(b"data: done\n\ndata: {\"cut", &mut out);
        assert_eq!(out, vec![event("message", "done")]);
        assert!(parser.is_mid_event());
        parser.feed(b"\"}\n", &mut out);
        assert_eq!(out.len(), 1, "a data line alone dispatches nothing");
        assert!(parser.is_mid_event());
        // An event name with no data dispatches nothing either, as the standard says.
        let mut parser = SseParser::default();
        parser.feed(b"event: ping\n\n", &mut out);
        assert_eq!(out.len(), 1);
        assert!(!parser.is_mid_event());
    }
}
