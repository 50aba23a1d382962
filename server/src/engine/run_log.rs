//! An attempt's whole output, written to the database while the job prints
//! (`app/src/services/run_logs.rs` stores and reads it).
//!
//! The executor hands every piece of output to a [`Sink`]; one task per attempt takes the
//! job's secrets out of each stream ([`Redactor`]), cuts lines ([`Splitter`]) and gathers them
//! into chunks of about [`CHUNK_BYTES`], stored as they fill (or every few seconds, so a
//! slow job's log can be read while it runs). Memory stays bounded whatever the job prints:
//! the queue to the task is short (a job that prints faster than chunks are stored waits on
//! its pipe), and a log over `run_log_max_mb` keeps its first half as stored and only its
//! last half in memory, compressed, until the end — then a marker saying how much was left
//! out goes between the two.

use std::collections::VecDeque;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use app::domain::run_log::{Redactor, Splitter, Stream};
use app::services::run_logs::{self, CHUNK_BYTES, NewChunk, Owner, Packed};
use sea_orm::DatabaseConnection;
use tokio::sync::{mpsc, oneshot};

/// Pieces of output waiting for the writer at most (each at most a read's worth).
const QUEUE: usize = 16;

/// A chunk is stored when it is this old even if not full, while a log is young; later every
/// [`FLUSH_LATER`], so a job printing a line a second for hours makes few small chunks.
const FLUSH_EARLY: Duration = Duration::from_secs(2);
const FLUSH_LATER: Duration = Duration::from_secs(10);
const EARLY_CHUNKS: i32 = 30;

/// Where an attempt's output goes: clone it for each stream's reader. The writing task starts
/// with the first piece of output: most attempts print nothing, and cost no task at all.
#[derive(Clone)]
pub struct Sink(Arc<Mutex<State>>);

enum State {
    /// No output yet: what starting the writer takes.
    Planned(Box<Plan>),
    Running {
        tx: mpsc::Sender<(Stream, Vec<u8>)>,
        close: Option<oneshot::Sender<()>>,
        task: Option<tokio::task::JoinHandle<()>>,
    },
    Closed,
}

struct Plan {
    db: DatabaseConnection,
    owner: Owner,
    log: Log,
}

impl Sink {
    /// Hands `bytes` on; waits while the writer is behind. False once the log is closed.
    pub async fn send(&self, stream: Stream, bytes: &[u8]) -> bool {
        if bytes.is_empty() {
            return true;
        }
        let Some(tx) = self.sender() else {
            return false;
        };
        tx.send((stream, bytes.to_vec())).await.is_ok()
    }

    /// The writer's queue, starting the writer on the first call.
    fn sender(&self) -> Option<mpsc::Sender<(Stream, Vec<u8>)>> {
        let mut state = lock(&self.0);
        if let State::Planned(_) = &*state {
            let State::Planned(plan) = std::mem::replace(&mut *state, State::Closed) else {
                return None;
            };
            let (tx, rx) = mpsc::channel(QUEUE);
            let (close, closed) = oneshot::channel();
            let task = tokio::spawn(write(plan.db, plan.owner, plan.log, rx, closed));
            *state = State::Running {
                tx,
                close: Some(close),
                task: Some(task),
            };
        }
        match &*state {
            State::Running { tx, .. } => Some(tx.clone()),
            _ => None,
        }
    }
}

fn lock(state: &Mutex<State>) -> std::sync::MutexGuard<'_, State> {
    state
        .lock()
        .unwrap_or_else(|poisoned| poisoned.into_inner())
}

/// The end of one attempt's log. Dropped without [`Writer::finish`] (the attempt was stopped
/// by its fence or the end of a shutdown's grace), the writer stops where it is.
pub struct Writer(Arc<Mutex<State>>);

impl Writer {
    /// Ends the log: what is queued is written, then the tail of a log over its cap.
    pub async fn finish(self) {
        let (close, task) = match std::mem::replace(&mut *lock(&self.0), State::Closed) {
            State::Running { close, task, .. } => (close, task),
            _ => return,
        };
        if let Some(close) = close {
            let _ = close.send(());
        }
        if let Some(task) = task
            && let Err(e) = task.await
        {
            tracing::warn!(error = %e, "the output log's writer failed");
        }
    }
}

impl Drop for Writer {
    fn drop(&mut self) {
        if let State::Running {
            task: Some(task), ..
        } = std::mem::replace(&mut *lock(&self.0), State::Closed)
        {
            task.abort();
        }
    }
}

/// The log of attempt `owner`, keeping at most `max_bytes`, with `secrets` (name, value) taken
/// out before anything is kept.
pub fn start(
    db: DatabaseConnection,
    owner: Owner,
    max_bytes: u64,
    secrets: &[(String, String)],
) -> (Writer, Sink) {
    let plan = Plan {
        db,
        owner,
        log: Log::new(max_bytes, secrets),
    };
    let state = Arc::new(Mutex::new(State::Planned(Box::new(plan))));
    (Writer(state.clone()), Sink(state))
}

async fn write(
    db: DatabaseConnection,
    owner: Owner,
    mut log: Log,
    mut rx: mpsc::Receiver<(Stream, Vec<u8>)>,
    mut closed: oneshot::Receiver<()>,
) {
    let mut store = Store::new(db, owner);
    let mut tick = tokio::time::interval(FLUSH_EARLY);
    loop {
        tokio::select! {
            piece = rx.recv() => match piece {
                Some((stream, bytes)) => log.push(stream, &bytes, now_ms()),
                None => break,
            },
            _ = &mut closed => {
                // Readers may still hold a sender (a grandchild keeps the pipe open): take
                // what they queued, refuse the rest.
                rx.close();
                while let Some((stream, bytes)) = rx.recv().await {
                    log.push(stream, &bytes, now_ms());
                }
                break;
            }
            _ = tick.tick() => {
                let after = if store.seq < EARLY_CHUNKS { FLUSH_EARLY } else { FLUSH_LATER };
                log.flush_older_than(now_ms() - after.as_millis() as i64);
            }
        }
        store.all(log.take_ready()).await;
    }
    log.finish(now_ms());
    store.all(log.take_ready()).await;
}

fn now_ms() -> i64 {
    crate::clock::now().timestamp_millis()
}

/// Stores chunks in order, numbering them and placing their bytes one after another.
struct Store {
    db: DatabaseConnection,
    owner: Owner,
    seq: i32,
    offset: i64,
}

impl Store {
    fn new(db: DatabaseConnection, owner: Owner) -> Store {
        Store {
            db,
            owner,
            seq: 0,
            offset: 0,
        }
    }

    async fn all(&mut self, chunks: Vec<(Packed, String)>) {
        for (packed, text) in chunks {
            let stored =
                run_logs::store(&self.db, self.owner, self.seq, self.offset, &packed, &text).await;
            match stored {
                Ok(()) => {
                    self.seq += 1;
                    self.offset += i64::from(packed.byte_len);
                }
                // The job goes on; its log has a gap where the database refused a chunk.
                Err(e) => tracing::warn!(
                    run = self.owner.run_id,
                    lines = packed.line_count,
                    error = %e,
                    "a chunk of the attempt's output could not be stored"
                ),
            }
        }
    }
}

/// The log's state between pieces: what each stream has not finished, and the chunks.
struct Log {
    redactors: [Redactor; 2],
    splitter: Splitter,
    chunks: Chunks,
}

impl Log {
    fn new(max_bytes: u64, secrets: &[(String, String)]) -> Log {
        Log {
            redactors: [Redactor::new(secrets), Redactor::new(secrets)],
            splitter: Splitter::default(),
            chunks: Chunks::new(max_bytes),
        }
    }

    fn push(&mut self, stream: Stream, bytes: &[u8], at_ms: i64) {
        let clean = self.redactors[usize::from(stream == Stream::Stderr)].push(bytes);
        let chunks = &mut self.chunks;
        self.splitter
            .push(stream, &clean, |s, line| chunks.line(s, line, at_ms));
    }

    fn flush_older_than(&mut self, at_ms: i64) {
        self.chunks.flush_older_than(at_ms);
    }

    fn finish(&mut self, at_ms: i64) {
        for (i, stream) in [Stream::Stdout, Stream::Stderr].into_iter().enumerate() {
            let rest = self.redactors[i].finish();
            let chunks = &mut self.chunks;
            self.splitter
                .push(stream, &rest, |s, line| chunks.line(s, line, at_ms));
        }
        let chunks = &mut self.chunks;
        self.splitter.finish(|s, line| chunks.line(s, line, at_ms));
        self.chunks.finish(at_ms);
    }

    fn take_ready(&mut self) -> Vec<(Packed, String)> {
        std::mem::take(&mut self.chunks.ready)
    }
}

/// Lines gathered into chunks: the head stored as it fills, past half the cap the tail kept
/// in memory, compressed, letting go of its oldest chunks.
struct Chunks {
    head_budget: u64,
    tail_budget: u64,
    /// The next line's number.
    next_line: i64,
    building: NewChunk,
    head_bytes: u64,
    in_tail: bool,
    tail: VecDeque<Packed>,
    tail_bytes: u64,
    omitted_bytes: i64,
    omitted_lines: i64,
    /// Chunks to store now, with their text for the index.
    ready: Vec<(Packed, String)>,
}

impl Chunks {
    fn new(max_bytes: u64) -> Chunks {
        Chunks {
            head_budget: max_bytes / 2,
            tail_budget: max_bytes - max_bytes / 2,
            next_line: 1,
            building: NewChunk::default(),
            head_bytes: 0,
            in_tail: false,
            tail: VecDeque::new(),
            tail_bytes: 0,
            omitted_bytes: 0,
            omitted_lines: 0,
            ready: Vec::new(),
        }
    }

    fn line(&mut self, stream: Stream, line: &[u8], at_ms: i64) {
        if !self.in_tail
            && self.head_bytes + (self.building.bytes.len() + line.len()) as u64 > self.head_budget
        {
            self.seal_head();
            self.in_tail = true;
        }
        if self.building.is_empty() {
            self.building.first_line = self.next_line;
        }
        self.building.push(stream, line, at_ms);
        self.next_line += 1;
        if self.building.bytes.len() >= CHUNK_BYTES {
            if self.in_tail {
                self.seal_tail();
            } else {
                self.seal_head();
            }
        }
    }

    /// Stores the chunk being filled with the head, if it has waited since before `at_ms`.
    fn flush_older_than(&mut self, at_ms: i64) {
        if !self.in_tail && !self.building.is_empty() && self.building.started_ms <= at_ms {
            self.seal_head();
        }
    }

    fn seal_head(&mut self) {
        if self.building.is_empty() {
            return;
        }
        let chunk = std::mem::take(&mut self.building);
        self.head_bytes += chunk.bytes.len() as u64;
        let text = run_logs::index_text(&chunk.bytes);
        if let Some(packed) = packed(&chunk) {
            self.ready.push((packed, text));
        }
    }

    /// Moves the chunk being filled into the tail, and lets go of the tail's oldest chunks
    /// while the rest is still at least the tail's budget.
    fn seal_tail(&mut self) {
        if !self.building.is_empty() {
            let chunk = std::mem::take(&mut self.building);
            if let Some(packed) = packed(&chunk) {
                self.tail_bytes += chunk.bytes.len() as u64;
                self.tail.push_back(packed);
            }
        }
        while let Some(front) = self.tail.front() {
            let without = self.tail_bytes - front.byte_len as u64;
            if without < self.tail_budget {
                break;
            }
            self.tail_bytes = without;
            self.omitted_bytes += i64::from(front.byte_len);
            self.omitted_lines += i64::from(front.line_count);
            self.tail.pop_front();
        }
    }

    fn finish(&mut self, at_ms: i64) {
        if !self.in_tail {
            self.seal_head();
            return;
        }
        self.seal_tail();
        self.trim_tail();
        if self.omitted_bytes > 0 {
            self.marker(at_ms);
        }
        for packed in std::mem::take(&mut self.tail) {
            if let Ok(chunk) = run_logs::unpack(&packed) {
                self.ready
                    .push((packed, run_logs::index_text(&chunk.bytes)));
            }
        }
    }

    /// Cuts the tail's oldest chunk to the line, so the tail is at most its budget.
    fn trim_tail(&mut self) {
        if self.tail_bytes <= self.tail_budget {
            return;
        }
        let Some(front) = self.tail.pop_front() else {
            return;
        };
        let Ok(mut chunk) = run_logs::unpack(&front) else {
            return;
        };
        let mut over = self.tail_bytes - self.tail_budget;
        let mut drop_lines = 0;
        let mut drop_bytes = 0usize;
        for entry in &chunk.entries {
            if over == 0 {
                break;
            }
            drop_lines += 1;
            drop_bytes += entry.len as usize;
            over = over.saturating_sub(u64::from(entry.len));
        }
        self.omitted_lines += drop_lines as i64;
        self.omitted_bytes += drop_bytes as i64;
        self.tail_bytes -= drop_bytes as u64;
        let first_kept = chunk.entries.get(drop_lines).map(|e| e.after_ms);
        chunk.first_line += drop_lines as i64;
        chunk.entries.drain(..drop_lines);
        chunk.bytes.drain(..drop_bytes);
        if let Some(after) = first_kept {
            chunk.started_ms += i64::from(after);
            for entry in &mut chunk.entries {
                entry.after_ms -= after;
            }
        }
        if !chunk.is_empty()
            && let Some(packed) = packed(&chunk)
        {
            self.tail.push_front(packed);
        }
    }

    /// The line standing where the log was cut.
    fn marker(&mut self, at_ms: i64) {
        let first_omitted =
            self.tail.front().map_or(self.next_line, |p| p.first_line) - self.omitted_lines;
        let text = format!(
            "[Bulwark: {} bytes in {} lines left out here: the output was over run_log_max_mb = {}]\n",
            self.omitted_bytes,
            self.omitted_lines,
            (self.head_budget + self.tail_budget) >> 20
        );
        let mut chunk = NewChunk {
            first_line: first_omitted,
            omitted_bytes: self.omitted_bytes,
            omitted_lines: self.omitted_lines,
            ..NewChunk::default()
        };
        chunk.push(Stream::Note, text.as_bytes(), at_ms);
        if let Some(packed) = packed(&chunk) {
            self.ready.push((packed, String::new()));
        }
    }
}

fn packed(chunk: &NewChunk) -> Option<Packed> {
    run_logs::pack(chunk)
        .inspect_err(|e| tracing::warn!(error = %e, "a chunk of output could not be compressed"))
        .ok()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn opened(log: &mut Log) -> Vec<NewChunk> {
        log.take_ready()
            .iter()
            .map(|(p, _)| run_logs::unpack(p).unwrap())
            .collect()
    }

    fn numbered(lines: std::ops::Range<usize>) -> Vec<u8> {
        lines
            .flat_map(|i| format!("line {i:07}\n").into_bytes())
            .collect()
    }

    #[test]
    fn under_the_cap_everything_is_kept_in_order() {
        let mut log = Log::new(10 << 20, &[]);
        let all = numbered(1..100_001);
        for piece in all.chunks(10_000) {
            log.push(Stream::Stdout, piece, 5);
        }
        log.push(Stream::Stderr, b"no newline", 6);
        log.finish(7);
        let chunks = opened(&mut log);
        let kept: Vec<u8> = chunks.iter().flat_map(|c| c.bytes.clone()).collect();
        assert_eq!(&kept[..all.len()], &all[..]);
        assert_eq!(&kept[all.len()..], b"no newline");
        assert!(chunks.iter().all(|c| c.omitted_bytes == 0));
        let last = chunks.last().unwrap();
        assert_eq!(last.first_line + last.line_count() - 1, 100_001);
    }

    #[test]
    fn over_the_cap_the_head_and_the_tail_are_kept_with_a_marker() {
        let max = 1 << 20;
        let mut log = Log::new(max, &[]);
        let all = numbered(1..400_001); // 13 bytes a line: about 5 MiB
        for piece in all.chunks(65_536) {
            log.push(Stream::Stdout, piece, 1);
        }
        log.finish(2);
        let chunks = opened(&mut log);
        let marker = chunks.iter().position(|c| c.omitted_bytes > 0).unwrap();
        let head: Vec<u8> = chunks[..marker]
            .iter()
            .flat_map(|c| c.bytes.clone())
            .collect();
        let tail: Vec<u8> = chunks[marker + 1..]
            .iter()
            .flat_map(|c| c.bytes.clone())
            .collect();
        assert!(head.len() as u64 <= max / 2 && head.len() as u64 > max / 2 - 13);
        assert!(tail.len() as u64 <= max / 2 && tail.len() as u64 > max / 2 - 13);
        assert_eq!(&head[..], &all[..head.len()]);
        assert_eq!(&tail[..], &all[all.len() - tail.len()..]);
        let m = &chunks[marker];
        assert_eq!(
            m.omitted_bytes as usize,
            all.len() - head.len() - tail.len()
        );
        assert_eq!(m.first_line, (head.len() / 13) as i64 + 1);
        assert_eq!(
            chunks[marker + 1].first_line,
            m.first_line + m.omitted_lines
        );
        assert!(String::from_utf8_lossy(&m.bytes).contains("left out"));
    }

    #[test]
    fn a_secret_never_reaches_a_chunk() {
        let secrets = vec![("DB".to_string(), "pa55-w0rd-xyz".to_string())];
        let mut log = Log::new(10 << 20, &secrets);
        log.push(Stream::Stdout, b"connecting with pa55-w", 1);
        log.push(Stream::Stdout, b"0rd-xyz\n", 2);
        log.finish(3);
        let chunks = log.take_ready();
        let (packed, text) = &chunks[0];
        let bytes = run_logs::unpack(packed).unwrap().bytes;
        assert_eq!(bytes, b"connecting with ${secret:DB}\n");
        assert!(!text.contains("pa55"));
    }
}
