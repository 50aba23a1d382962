//! An attempt's whole output as it is kept: lines in the order they arrived, each with its
//! stream and arrival time, the bytes exactly as the job wrote them.
//!
//! A job's output reaches the engine in pieces of any size, from two streams. Per stream,
//! [`Redactor`] takes the job's secrets out (whole, though a value may be split between two
//! pieces), then [`Splitter`] cuts lines at `\n` — a line longer than [`MAX_LINE`] is cut
//! there too, so no single line holds memory or a page hostage. Lines are stored in chunks:
//! the bytes, and beside them a line table ([`encode_table`]) of each line's stream, length
//! and arrival after the chunk's start.

use serde::{Deserialize, Serialize};

/// Longest line kept as one: a longer one continues on the next line.
pub const MAX_LINE: usize = 64 * 1024;

/// Where a line came from.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Stream {
    Stdout,
    Stderr,
    /// Bulwark's own line: the marker where a log over its cap was cut.
    Note,
}

impl Stream {
    fn code(self) -> u8 {
        match self {
            Stream::Stdout => 1,
            Stream::Stderr => 2,
            Stream::Note => 3,
        }
    }

    fn from_code(code: u8) -> Option<Stream> {
        match code {
            1 => Some(Stream::Stdout),
            2 => Some(Stream::Stderr),
            3 => Some(Stream::Note),
            _ => None,
        }
    }

    pub fn as_str(self) -> &'static str {
        match self {
            Stream::Stdout => "stdout",
            Stream::Stderr => "stderr",
            Stream::Note => "note",
        }
    }

    pub fn parse(text: &str) -> Option<Stream> {
        [Stream::Stdout, Stream::Stderr, Stream::Note]
            .into_iter()
            .find(|s| s.as_str() == text)
    }
}

/// One line of a chunk's table: its stream, its length in bytes (with its `\n`), and when it
/// arrived, in milliseconds after the chunk's first line.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Entry {
    pub stream: Stream,
    pub len: u32,
    pub after_ms: u32,
}

/// A line table as bytes: per line its stream's code, then length and arrival as LEB128.
pub fn encode_table(entries: &[Entry]) -> Vec<u8> {
    let mut out = Vec::with_capacity(entries.len() * 4);
    for e in entries {
        out.push(e.stream.code());
        put_varint(&mut out, e.len);
        put_varint(&mut out, e.after_ms);
    }
    out
}

/// A line table stored by [`encode_table`]; `None` when the bytes are not one.
pub fn decode_table(mut bytes: &[u8]) -> Option<Vec<Entry>> {
    let mut entries = Vec::new();
    while let Some((&code, rest)) = bytes.split_first() {
        let stream = Stream::from_code(code)?;
        let (len, rest) = take_varint(rest)?;
        let (after_ms, rest) = take_varint(rest)?;
        entries.push(Entry {
            stream,
            len,
            after_ms,
        });
        bytes = rest;
    }
    Some(entries)
}

fn put_varint(out: &mut Vec<u8>, mut n: u32) {
    while n >= 0x80 {
        out.push((n as u8 & 0x7f) | 0x80);
        n >>= 7;
    }
    out.push(n as u8);
}

fn take_varint(bytes: &[u8]) -> Option<(u32, &[u8])> {
    let mut n: u32 = 0;
    for (i, &b) in bytes.iter().enumerate().take(5) {
        n |= u32::from(b & 0x7f).checked_shl(7 * i as u32)?;
        if b & 0x80 == 0 {
            return Some((n, &bytes[i + 1..]));
        }
    }
    None
}

/// Cuts each stream's bytes into lines: at every `\n` (kept with its line), and after
/// [`MAX_LINE`] bytes without one. What a stream printed after its last `\n` waits for more,
/// until [`Splitter::finish`].
#[derive(Default)]
pub struct Splitter {
    partial: [Vec<u8>; 2],
}

impl Splitter {
    /// The lines `bytes` completes, in order, for `emit(stream, line)`.
    pub fn push(&mut self, stream: Stream, bytes: &[u8], mut emit: impl FnMut(Stream, &[u8])) {
        let partial = &mut self.partial[usize::from(stream == Stream::Stderr)];
        let mut rest = bytes;
        while !rest.is_empty() {
            let room = MAX_LINE - partial.len();
            let window = &rest[..rest.len().min(room)];
            match window.iter().position(|&b| b == b'\n') {
                Some(end) => {
                    let line = &window[..=end];
                    if partial.is_empty() {
                        emit(stream, line);
                    } else {
                        partial.extend_from_slice(line);
                        emit(stream, partial);
                        partial.clear();
                    }
                    rest = &rest[end + 1..];
                }
                None => {
                    partial.extend_from_slice(window);
                    rest = &rest[window.len()..];
                    if partial.len() == MAX_LINE {
                        emit(stream, partial);
                        partial.clear();
                    }
                }
            }
        }
    }

    /// What each stream printed after its last line, as a last line without `\n`.
    pub fn finish(&mut self, mut emit: impl FnMut(Stream, &[u8])) {
        for (i, partial) in self.partial.iter_mut().enumerate() {
            if !partial.is_empty() {
                let stream = if i == 0 {
                    Stream::Stdout
                } else {
                    Stream::Stderr
                };
                emit(stream, partial);
                partial.clear();
            }
        }
    }
}

/// Takes secrets out of one stream of output that arrives in pieces: each value, and the
/// encoded forms [`super::secrets::redact`] takes out, becomes its `${secret:NAME}` reference,
/// however the pieces split it. It holds back only what could still be the start of a value
/// (at most the longest form less one byte).
pub struct Redactor {
    matcher: Option<aho_corasick::AhoCorasick>,
    references: Vec<Vec<u8>>,
    longest: usize,
    held: Vec<u8>,
}

impl Redactor {
    /// A redactor for `secrets` (name, value); with none, it passes everything on at once.
    pub fn new(secrets: &[(String, String)]) -> Redactor {
        let mut patterns: Vec<(Vec<u8>, Vec<u8>)> = Vec::new();
        for (name, value) in secrets.iter().filter(|(_, v)| v.len() >= 4) {
            for form in super::secrets::forms(value) {
                let reference = super::secrets::reference(name).into_bytes();
                patterns.push((form.into_bytes(), reference));
            }
        }
        let longest = patterns.iter().map(|(p, _)| p.len()).max().unwrap_or(0);
        let matcher = if patterns.is_empty() {
            None
        } else {
            aho_corasick::AhoCorasick::builder()
                .match_kind(aho_corasick::MatchKind::LeftmostLongest)
                .build(patterns.iter().map(|(p, _)| p))
                .ok()
        };
        Redactor {
            matcher,
            references: patterns.into_iter().map(|(_, r)| r).collect(),
            longest,
            held: Vec::new(),
        }
    }

    /// What of `bytes` (after what was held back) can be passed on now, redacted.
    pub fn push(&mut self, bytes: &[u8]) -> Vec<u8> {
        let Some(matcher) = &self.matcher else {
            return bytes.to_vec();
        };
        self.held.extend_from_slice(bytes);
        // A value that starts before `safe` ends inside what is here: it is whole.
        let safe = self.held.len().saturating_sub(self.longest - 1);
        let mut out = Vec::with_capacity(self.held.len());
        let mut done = 0;
        for m in matcher.find_iter(&self.held) {
            if m.start() >= safe {
                break;
            }
            out.extend_from_slice(&self.held[done..m.start()]);
            out.extend_from_slice(&self.references[m.pattern().as_usize()]);
            done = m.end();
        }
        let keep_from = done.max(safe);
        out.extend_from_slice(&self.held[done..keep_from]);
        self.held.drain(..keep_from);
        out
    }

    /// The rest, at the end of the stream.
    pub fn finish(&mut self) -> Vec<u8> {
        let Some(matcher) = &self.matcher else {
            return Vec::new();
        };
        let held = std::mem::take(&mut self.held);
        let mut out = Vec::with_capacity(held.len());
        let mut done = 0;
        for m in matcher.find_iter(&held) {
            out.extend_from_slice(&held[done..m.start()]);
            out.extend_from_slice(&self.references[m.pattern().as_usize()]);
            done = m.end();
        }
        out.extend_from_slice(&held[done..]);
        out
    }
}

/// The shortest text a search looks for: the indexes work on three characters at a time.
pub const MIN_SEARCH_CHARS: usize = 3;

/// Whether `line` contains `term`, ignoring case (as both databases' indexes do).
pub fn line_matches(line: &[u8], term: &str) -> bool {
    if term.is_empty() {
        return false;
    }
    if term.is_ascii() {
        let term = term.as_bytes();
        return term.len() <= line.len()
            && line
                .windows(term.len())
                .any(|w| w.eq_ignore_ascii_case(term));
    }
    String::from_utf8_lossy(line)
        .to_lowercase()
        .contains(&term.to_lowercase())
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    fn split_all(pieces: &[(Stream, &[u8])]) -> Vec<(Stream, Vec<u8>)> {
        let mut s = Splitter::default();
        let mut out = Vec::new();
        for (stream, bytes) in pieces {
            s.push(*stream, bytes, |st, l| out.push((st, l.to_vec())));
        }
        s.finish(|st, l| out.push((st, l.to_vec())));
        out
    }

    #[test]
    fn lines_are_cut_per_stream_and_keep_their_newline() {
        let out = split_all(&[
            (Stream::Stdout, b"one\ntw"),
            (Stream::Stderr, b"err\n"),
            (Stream::Stdout, b"o\nthree"),
        ]);
        assert_eq!(
            out,
            vec![
                (Stream::Stdout, b"one\n".to_vec()),
                (Stream::Stderr, b"err\n".to_vec()),
                (Stream::Stdout, b"two\n".to_vec()),
                (Stream::Stdout, b"three".to_vec()),
            ]
        );
    }

    #[test]
    fn a_line_longer_than_the_limit_goes_on_the_next() {
        let long = vec![b'x'; MAX_LINE + 10];
        let out = split_all(&[(Stream::Stdout, &long), (Stream::Stdout, b"\n")]);
        assert_eq!(out.len(), 2);
        assert_eq!(out[0].1.len(), MAX_LINE);
        assert_eq!(out[1].1, b"xxxxxxxxxx\n");
    }

    #[test]
    fn the_table_reads_back() {
        let entries = vec![
            Entry {
                stream: Stream::Stdout,
                len: 5,
                after_ms: 0,
            },
            Entry {
                stream: Stream::Stderr,
                len: 70_000,
                after_ms: 1_234_567,
            },
            Entry {
                stream: Stream::Note,
                len: u32::MAX,
                after_ms: 127,
            },
        ];
        assert_eq!(decode_table(&encode_table(&entries)), Some(entries));
        assert_eq!(decode_table(&[9, 1, 1]), None);
        assert_eq!(decode_table(&[1, 0x80]), None);
    }

    fn redact_in_pieces(secrets: &[(String, String)], text: &[u8], cuts: &[usize]) -> Vec<u8> {
        let mut r = Redactor::new(secrets);
        let mut out = Vec::new();
        let mut from = 0;
        for &cut in cuts {
            let cut = cut.clamp(from, text.len());
            out.extend(r.push(&text[from..cut]));
            from = cut;
        }
        out.extend(r.push(&text[from..]));
        out.extend(r.finish());
        out
    }

    #[test]
    fn a_value_split_between_pieces_is_taken_out_whole() {
        let secrets = vec![("TOKEN".to_string(), "s3cr3t-value".to_string())];
        let text = b"before s3cr3t-value after, again s3cr3t-value";
        for cut in 0..text.len() {
            let out = redact_in_pieces(&secrets, text, &[cut]);
            assert_eq!(
                String::from_utf8(out).unwrap(),
                "before ${secret:TOKEN} after, again ${secret:TOKEN}",
                "cut at {cut}"
            );
        }
    }

    #[test]
    fn encoded_forms_are_taken_out_too() {
        use base64::Engine;
        let value = "p@ss w0rd/long";
        let secrets = vec![("PW".to_string(), value.to_string())];
        let basic = base64::engine::general_purpose::STANDARD.encode(format!("user:{value}"));
        let percent = "p%40ss%20w0rd%2Flong";
        let text = format!("auth {basic} url ?pw={percent}\n");
        let out = String::from_utf8(redact_in_pieces(&secrets, text.as_bytes(), &[9, 20])).unwrap();
        assert!(!out.contains(percent), "{out}");
        assert!(out.contains("?pw=${secret:PW}"), "{out}");
        assert!(out.contains("${secret:PW}"), "{out}");
        assert!(!out.contains(&basic), "{out}");
    }

    #[test]
    fn lines_match_ignoring_case() {
        assert!(line_matches(b"x NEEDLE-42 y\n", "needle-42"));
        assert!(!line_matches(b"needle-4", "needle-42"));
        assert!(line_matches("Ünïcode".as_bytes(), "ünï"));
        assert!(!line_matches(b"abc", ""));
    }

    proptest! {
        #[test]
        fn pieces_never_change_what_comes_out(
            text in "[a-z ]{0,40}(hunter22)?[a-z ]{0,40}",
            cuts in proptest::collection::vec(0usize..90, 0..6),
        ) {
            let secrets = vec![("P".to_string(), "hunter22".to_string())];
            let mut sorted = cuts.clone();
            sorted.sort_unstable();
            let whole = redact_in_pieces(&secrets, text.as_bytes(), &[]);
            let pieces = redact_in_pieces(&secrets, text.as_bytes(), &sorted);
            prop_assert_eq!(&whole, &pieces);
            prop_assert!(!String::from_utf8_lossy(&whole).contains("hunter22"));
        }

        #[test]
        fn splitting_keeps_every_byte(
            pieces in proptest::collection::vec(("[a-c\n]{0,20}", any::<bool>()), 0..8),
        ) {
            let input: Vec<(Stream, &[u8])> = pieces
                .iter()
                .map(|(t, err)| (if *err { Stream::Stderr } else { Stream::Stdout }, t.as_bytes()))
                .collect();
            let out = split_all(&input);
            for stream in [Stream::Stdout, Stream::Stderr] {
                let sent: Vec<u8> = input.iter().filter(|(s, _)| *s == stream).flat_map(|(_, b)| b.to_vec()).collect();
                let got: Vec<u8> = out.iter().filter(|(s, _)| *s == stream).flat_map(|(_, b)| b.clone()).collect();
                prop_assert_eq!(sent, got);
            }
        }
    }
}
