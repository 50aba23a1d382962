//! Attempts' whole output in the database: written a chunk at a time as a job prints
//! (`server/src/engine/run_log.rs`), read a screen or a byte range at a time, searched across
//! runs through the index `migration/src/m20261206_000033_run_logs.rs` makes, and deleted with
//! the runs.
//!
//! A chunk holds whole lines — about [`CHUNK_BYTES`] of them — zstd-compressed, with their line
//! table (`crate::domain::run_log`) compressed beside them, and its place in the log: the
//! number of its first line and the offset of its first byte. Reading any screen or range
//! decompresses only the chunks it covers, whatever the log's size.

use chrono::{DateTime, Utc};
use sea_orm::{ConnectionTrait, DatabaseBackend, DbErr, QueryResult, TransactionTrait};

use super::sql::Binder;
use crate::domain::run::RunStatus;
use crate::domain::run_log::{self, Entry, Stream};
use crate::views::run_logs::{Anchor, LogLine, LogMatch, LogPage, LogSummary};

/// About this much output makes a chunk.
pub const CHUNK_BYTES: usize = 256 * 1024;

/// zstd's default level: most of the ratio for little time.
const LEVEL: i32 = 3;

/// A chunk as the writer made it.
#[derive(Debug, Clone, Default)]
pub struct NewChunk {
    pub first_line: i64,
    pub entries: Vec<Entry>,
    pub bytes: Vec<u8>,
    pub started_ms: i64,
    /// On the marker chunk: what was left out where it stands.
    pub omitted_bytes: i64,
    pub omitted_lines: i64,
}

impl NewChunk {
    pub fn is_empty(&self) -> bool {
        self.entries.is_empty()
    }

    /// Adds a line that arrived at `at_ms` (milliseconds since the epoch).
    pub fn push(&mut self, stream: Stream, line: &[u8], at_ms: i64) {
        if self.entries.is_empty() {
            self.started_ms = at_ms;
        }
        self.entries.push(Entry {
            stream,
            len: line.len() as u32,
            after_ms: u32::try_from((at_ms - self.started_ms).max(0)).unwrap_or(u32::MAX),
        });
        self.bytes.extend_from_slice(line);
    }

    pub fn line_count(&self) -> i64 {
        self.entries.len() as i64
    }
}

/// A chunk compressed for storage.
#[derive(Debug, Clone)]
pub struct Packed {
    pub first_line: i64,
    pub line_count: i32,
    pub stderr_lines: i32,
    pub byte_len: i32,
    pub started_ms: i64,
    pub omitted_bytes: i64,
    pub omitted_lines: i64,
    pub data: Vec<u8>,
    pub lines: Vec<u8>,
}

/// Compresses `chunk`.
pub fn pack(chunk: &NewChunk) -> std::io::Result<Packed> {
    Ok(Packed {
        first_line: chunk.first_line,
        line_count: chunk.entries.len() as i32,
        stderr_lines: chunk
            .entries
            .iter()
            .filter(|e| e.stream == Stream::Stderr)
            .count() as i32,
        byte_len: chunk.bytes.len() as i32,
        started_ms: chunk.started_ms,
        omitted_bytes: chunk.omitted_bytes,
        omitted_lines: chunk.omitted_lines,
        data: zstd::bulk::compress(&chunk.bytes, LEVEL)?,
        lines: zstd::bulk::compress(&run_log::encode_table(&chunk.entries), LEVEL)?,
    })
}

/// A packed chunk opened again.
pub fn unpack(packed: &Packed) -> std::io::Result<NewChunk> {
    let bytes = zstd::bulk::decompress(&packed.data, packed.byte_len.max(0) as usize)?;
    let table = zstd::stream::decode_all(packed.lines.as_slice())?;
    let entries = run_log::decode_table(&table).ok_or_else(corrupt)?;
    Ok(NewChunk {
        first_line: packed.first_line,
        entries,
        bytes,
        started_ms: packed.started_ms,
        omitted_bytes: packed.omitted_bytes,
        omitted_lines: packed.omitted_lines,
    })
}

fn corrupt() -> std::io::Error {
    std::io::Error::new(std::io::ErrorKind::InvalidData, "not a stored line table")
}

/// Where an attempt's chunks go.
#[derive(Debug, Clone, Copy)]
pub struct Owner {
    pub run_id: i64,
    pub attempt_id: i64,
}

/// Stores a packed chunk as number `seq` of `owner`'s log, its first byte at `offset`, with
/// its text in the search index (invalid UTF-8 replaced there only).
pub async fn store(
    db: &sea_orm::DatabaseConnection,
    owner: Owner,
    seq: i32,
    offset: i64,
    packed: &Packed,
    text: &str,
) -> Result<(), DbErr> {
    let txn = db.begin().await?;
    let mut b = Binder::new(txn.get_database_backend());
    let values = [
        b.bind(owner.run_id),
        b.bind(owner.attempt_id),
        b.bind(seq),
        b.bind(packed.first_line),
        b.bind(packed.line_count),
        b.bind(packed.stderr_lines),
        b.bind(offset),
        b.bind(packed.byte_len),
        b.bind(packed.started_ms),
        b.bind(packed.omitted_bytes),
        b.bind(packed.omitted_lines),
        b.bind(packed.data.clone()),
        b.bind(packed.lines.clone()),
    ]
    .join(", ");
    let sql = format!(
        "INSERT INTO run_log_chunks (run_id, attempt_id, seq, first_line, line_count, \
         stderr_lines, byte_offset, byte_len, started_ms, omitted_bytes, omitted_lines, data, \
         lines) VALUES ({values}) RETURNING id"
    );
    let row = txn
        .query_one_raw(b.statement(sql))
        .await?
        .ok_or_else(|| DbErr::RecordNotInserted)?;
    let id: i64 = row.try_get("", "id")?;
    if !text.is_empty() {
        let mut b = Binder::new(txn.get_database_backend());
        let sql = match txn.get_database_backend() {
            // Lower-cased: a case-sensitive `LIKE` checks candidates several times faster
            // than `ILIKE` (`search` lower-cases the text it looks for the same way).
            DatabaseBackend::Postgres => format!(
                "INSERT INTO run_log_index (chunk_id, text) VALUES ({}, {})",
                b.bind(id),
                b.bind(text.to_lowercase())
            ),
            _ => format!(
                "INSERT INTO run_log_index (rowid, text) VALUES ({}, {})",
                b.bind(id),
                b.bind(text)
            ),
        };
        txn.execute_raw(b.statement(sql)).await?;
    }
    txn.commit().await
}

/// Adds `bytes` (secrets already taken out) to the end of `owner`'s log as stdout lines that
/// arrived at `at_ms`: what a watched job's pings carry (`super::watch`), one body at a time.
pub async fn append(
    db: &sea_orm::DatabaseConnection,
    owner: Owner,
    bytes: &[u8],
    at_ms: i64,
) -> Result<(), DbErr> {
    if bytes.is_empty() {
        return Ok(());
    }
    let mut b = Binder::new(db.get_database_backend());
    let sql = format!(
        "SELECT CAST(COALESCE(MAX(seq) + 1, 0) AS BIGINT) AS n, \
           CAST(COALESCE(MAX(byte_offset + byte_len), 0) AS BIGINT) AS bytes, \
           CAST(COALESCE(MAX(first_line + line_count), 1) AS BIGINT) AS lines \
         FROM run_log_chunks WHERE attempt_id = {}",
        b.bind(owner.attempt_id)
    );
    let row = db
        .query_one_raw(b.statement(sql))
        .await?
        .ok_or_else(|| DbErr::RecordNotFound("run_log_chunks".into()))?;
    let (seq, offset, first_line) = (wide(&row, "n")?, wide(&row, "bytes")?, wide(&row, "lines")?);
    let mut chunk = NewChunk {
        first_line,
        ..NewChunk::default()
    };
    let mut splitter = run_log::Splitter::default();
    splitter.push(Stream::Stdout, bytes, |s, line| chunk.push(s, line, at_ms));
    splitter.finish(|s, line| chunk.push(s, line, at_ms));
    let packed = pack(&chunk).map_err(|e| DbErr::Custom(format!("could not compress: {e}")))?;
    let text = index_text(&chunk.bytes);
    store(db, owner, seq as i32, offset, &packed, &text).await
}

/// A chunk's bytes as the index keeps them: text, NUL (which PostgreSQL's `text` refuses)
/// as a space.
pub fn index_text(bytes: &[u8]) -> String {
    String::from_utf8_lossy(bytes).replace('\0', " ")
}

/// What is kept of each attempt of `run_id` (attempts that printed nothing included).
pub async fn summaries(db: &impl ConnectionTrait, run_id: i64) -> Result<Vec<LogSummary>, DbErr> {
    let mut b = Binder::new(db.get_database_backend());
    let sql = format!(
        "SELECT a.number, a.finished_at IS NULL AS running, \
           COALESCE(SUM(c.byte_len), 0) AS bytes, \
           COALESCE(MAX(c.first_line + c.line_count) - 1, 0) AS last_line, \
           COALESCE(SUM(c.omitted_bytes), 0) AS omitted_bytes, \
           COALESCE(SUM(c.omitted_lines), 0) AS omitted_lines \
         FROM job_attempts a LEFT JOIN run_log_chunks c ON c.attempt_id = a.id \
         WHERE a.run_id = {} GROUP BY a.id, a.number, a.finished_at ORDER BY a.number",
        b.bind(run_id)
    );
    db.query_all_raw(b.statement(sql))
        .await?
        .iter()
        .map(|row| {
            Ok(LogSummary {
                attempt: row.try_get("", "number")?,
                bytes: wide(row, "bytes")?,
                last_line: wide(row, "last_line")?,
                omitted_bytes: wide(row, "omitted_bytes")?,
                omitted_lines: wide(row, "omitted_lines")?,
                running: row.try_get("", "running")?,
            })
        })
        .collect()
}

/// An aggregate: `bigint` on SQLite, `numeric` for a PostgreSQL `SUM` of `bigint`.
fn wide(row: &QueryResult, column: &str) -> Result<i64, DbErr> {
    row.try_get::<i64>("", column).or_else(|_| {
        row.try_get::<sea_orm::prelude::Decimal>("", column)
            .map(|d| i64::try_from(d).unwrap_or(i64::MAX))
    })
}

/// The id of attempt `number` of `run_id` (the last one when `None`).
pub async fn attempt_id(
    db: &impl ConnectionTrait,
    run_id: i64,
    number: Option<i32>,
) -> Result<Option<(i64, i32)>, DbErr> {
    let mut b = Binder::new(db.get_database_backend());
    let which = match number {
        Some(n) => format!(" AND number = {}", b.bind(n)),
        None => String::new(),
    };
    let sql = format!(
        "SELECT id, number FROM job_attempts WHERE run_id = {}{which} ORDER BY number DESC LIMIT 1",
        b.bind(run_id)
    );
    let row = db.query_one_raw(b.statement(sql)).await?;
    row.map(|r| Ok((r.try_get("", "id")?, r.try_get("", "number")?)))
        .transpose()
}

/// Whether attempt `attempt_id` is still running (its log may grow).
pub async fn running(db: &impl ConnectionTrait, attempt_id: i64) -> Result<bool, DbErr> {
    let mut b = Binder::new(db.get_database_backend());
    let sql = format!(
        "SELECT finished_at IS NULL AS running FROM job_attempts WHERE id = {}",
        b.bind(attempt_id)
    );
    let row = db.query_one_raw(b.statement(sql)).await?;
    Ok(row
        .map(|r| r.try_get::<bool>("", "running"))
        .transpose()?
        .unwrap_or(false))
}

/// Where one chunk sits in its log.
#[derive(Debug, Clone, Copy)]
pub struct Placed {
    pub id: i64,
    pub seq: i32,
    pub byte_offset: i64,
    pub byte_len: i32,
}

/// The chunks of an attempt from chunk `after_seq` on (all with `-1`), where they sit.
pub async fn placed(
    db: &impl ConnectionTrait,
    attempt_id: i64,
    after_seq: i32,
) -> Result<Vec<Placed>, DbErr> {
    let mut b = Binder::new(db.get_database_backend());
    let sql = format!(
        "SELECT id, seq, byte_offset, byte_len FROM run_log_chunks \
         WHERE attempt_id = {} AND seq > {} ORDER BY seq",
        b.bind(attempt_id),
        b.bind(after_seq)
    );
    db.query_all_raw(b.statement(sql))
        .await?
        .iter()
        .map(|r| {
            Ok(Placed {
                id: r.try_get("", "id")?,
                seq: r.try_get("", "seq")?,
                byte_offset: r.try_get("", "byte_offset")?,
                byte_len: r.try_get("", "byte_len")?,
            })
        })
        .collect()
}

const CHUNK_COLUMNS: &str = "id, seq, first_line, line_count, stderr_lines, byte_len, \
    started_ms, omitted_bytes, omitted_lines, data, lines";

fn packed_of(row: &QueryResult) -> Result<(i32, Packed), DbErr> {
    Ok((
        row.try_get("", "seq")?,
        Packed {
            first_line: row.try_get("", "first_line")?,
            line_count: row.try_get("", "line_count")?,
            stderr_lines: row.try_get("", "stderr_lines")?,
            byte_len: row.try_get("", "byte_len")?,
            started_ms: row.try_get("", "started_ms")?,
            omitted_bytes: row.try_get("", "omitted_bytes")?,
            omitted_lines: row.try_get("", "omitted_lines")?,
            data: row.try_get("", "data")?,
            lines: row.try_get("", "lines")?,
        },
    ))
}

/// One chunk by id, opened.
pub async fn chunk(db: &impl ConnectionTrait, id: i64) -> Result<Option<NewChunk>, DbErr> {
    let mut b = Binder::new(db.get_database_backend());
    let sql = format!(
        "SELECT {CHUNK_COLUMNS} FROM run_log_chunks WHERE id = {}",
        b.bind(id)
    );
    match db.query_one_raw(b.statement(sql)).await? {
        Some(row) => Ok(Some(open(&packed_of(&row)?.1)?)),
        None => Ok(None),
    }
}

fn open(packed: &Packed) -> Result<NewChunk, DbErr> {
    unpack(packed).map_err(|e| DbErr::Custom(format!("a stored log chunk cannot be read: {e}")))
}

/// Which way a screen is gathered.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Way {
    Forward,
    Backward,
}

/// The next chunk of `attempt_id` after (or before) chunk `seq` that may hold lines of
/// `stream`, opened.
async fn next_chunk(
    db: &impl ConnectionTrait,
    attempt_id: i64,
    seq: i32,
    way: Way,
    stream: Option<Stream>,
) -> Result<Option<(i32, NewChunk)>, DbErr> {
    let mut b = Binder::new(db.get_database_backend());
    let (cmp, order) = match way {
        Way::Forward => (">", "ASC"),
        Way::Backward => ("<", "DESC"),
    };
    // The marker shows whatever the filter.
    let has = match stream {
        Some(Stream::Stderr) => " AND (stderr_lines > 0 OR omitted_bytes > 0)",
        Some(Stream::Stdout) => " AND (stderr_lines < line_count OR omitted_bytes > 0)",
        _ => "",
    };
    let sql = format!(
        "SELECT {CHUNK_COLUMNS} FROM run_log_chunks WHERE attempt_id = {} AND seq {cmp} {}{has} \
         ORDER BY seq {order} LIMIT 1",
        b.bind(attempt_id),
        b.bind(seq),
    );
    match db.query_one_raw(b.statement(sql)).await? {
        Some(row) => {
            let (seq, packed) = packed_of(&row)?;
            Ok(Some((seq, open(&packed)?)))
        }
        None => Ok(None),
    }
}

/// The chunk holding line `line` of `attempt_id` (or the first after it): its `seq`.
async fn seq_of_line(
    db: &impl ConnectionTrait,
    attempt_id: i64,
    line: i64,
) -> Result<Option<i32>, DbErr> {
    let mut b = Binder::new(db.get_database_backend());
    let sql = format!(
        "SELECT seq FROM run_log_chunks WHERE attempt_id = {} AND first_line + line_count > {} \
         ORDER BY seq LIMIT 1",
        b.bind(attempt_id),
        b.bind(line)
    );
    let row = db.query_one_raw(b.statement(sql)).await?;
    row.map(|r| r.try_get("", "seq")).transpose()
}

/// One stored line before it is shown: its number, its entry in the line table and its bytes
/// (with their `\n`). Text is made only for the lines a screen or a search keeps.
#[derive(Debug, Clone, Copy)]
pub struct RawLine<'a> {
    pub number: i64,
    pub entry: Entry,
    pub bytes: &'a [u8],
    started_ms: i64,
}

impl RawLine<'_> {
    pub fn at(&self) -> DateTime<Utc> {
        DateTime::from_timestamp_millis(self.started_ms + i64::from(self.entry.after_ms))
            .unwrap_or_default()
    }

    /// The line as the viewer and the API show it.
    pub fn shown(&self) -> LogLine {
        let bytes = self.bytes.strip_suffix(b"\n").unwrap_or(self.bytes);
        LogLine {
            number: self.number,
            stream: self.entry.stream,
            at: self.at(),
            text: String::from_utf8_lossy(bytes).into_owned(),
        }
    }
}

/// The lines of an opened chunk, in order.
pub fn lines_of(chunk: &NewChunk) -> impl Iterator<Item = RawLine<'_>> + '_ {
    let mut offset = 0usize;
    chunk.entries.iter().enumerate().map(move |(i, e)| {
        let bytes = &chunk.bytes[offset..offset + e.len as usize];
        offset += e.len as usize;
        RawLine {
            number: chunk.first_line + i as i64,
            entry: *e,
            bytes,
            started_ms: chunk.started_ms,
        }
    })
}

/// A chunk as `runs log --timestamps` and the API's `?timestamps=true` print it: each line
/// after its time (RFC 3339, UTC) and stream, ending in `\n`.
pub fn stamped(chunk: &NewChunk) -> Vec<u8> {
    let mut out = Vec::with_capacity(chunk.bytes.len() * 2);
    for line in lines_of(chunk) {
        let at = line
            .at()
            .to_rfc3339_opts(chrono::SecondsFormat::Millis, true);
        out.extend_from_slice(format!("{at} {} ", line.entry.stream.as_str()).as_bytes());
        out.extend_from_slice(line.bytes);
        if !line.bytes.ends_with(b"\n") {
            out.push(b'\n');
        }
    }
    out
}

/// Chunks one screen may open at most, so a filter that matches little cannot make one
/// request read a whole large log.
const SCREEN_CHUNKS: usize = 64;

/// A screen of at most `count` lines of attempt `attempt` of `run_id` (its last when `None`),
/// of `stream` only when given; `None` when the run has no such attempt.
pub async fn page(
    db: &impl ConnectionTrait,
    run_id: i64,
    attempt: Option<i32>,
    anchor: Anchor,
    count: usize,
    stream: Option<Stream>,
) -> Result<Option<LogPage>, DbErr> {
    let Some((attempt_id, number)) = attempt_id(db, run_id, attempt).await? else {
        return Ok(None);
    };
    let all = summaries(db, run_id).await?;
    let attempts = all.iter().map(|s| s.attempt).max().unwrap_or(0);
    let Some(summary) = all.into_iter().find(|s| s.attempt == number) else {
        return Ok(None);
    };
    let wanted = |l: &RawLine| {
        let of = l.entry.stream;
        stream.is_none_or(|s| of == s || of == Stream::Note)
    };
    let (way, start, keep) = match anchor {
        Anchor::End => (Way::Backward, i32::MAX, i64::MAX),
        Anchor::Before(n) => match seq_of_line(db, attempt_id, n).await? {
            Some(seq) => (Way::Backward, seq + 1, n),
            None => (Way::Backward, i32::MAX, n),
        },
        Anchor::From(n) => match seq_of_line(db, attempt_id, n).await? {
            Some(seq) => (Way::Forward, seq - 1, n),
            None => (Way::Forward, i32::MAX, n),
        },
    };
    let mut lines: Vec<LogLine> = Vec::new();
    let mut seq = start;
    for _ in 0..SCREEN_CHUNKS {
        let Some((at, chunk)) = next_chunk(db, attempt_id, seq, way, stream).await? else {
            break;
        };
        seq = at;
        let found = lines_of(&chunk).filter(|l| wanted(l));
        if way == Way::Forward {
            let room = count - lines.len();
            let kept = found.filter(|l| l.number >= keep).take(room);
            lines.extend(kept.map(|l| l.shown()));
            if lines.len() >= count {
                break;
            }
        } else {
            let before: Vec<RawLine> = found.filter(|l| l.number < keep).collect();
            let room = count - lines.len();
            let skip = before.len().saturating_sub(room);
            let mut shown: Vec<LogLine> = before[skip..].iter().map(RawLine::shown).collect();
            shown.append(&mut lines);
            lines = shown;
            if lines.len() >= count {
                break;
            }
        }
    }
    Ok(Some(LogPage {
        run: run_id,
        attempts,
        more_before: lines.first().is_some_and(|l| l.number > 1),
        more_after: lines.last().is_some_and(|l| l.number < summary.last_line),
        summary,
        lines,
    }))
}

/// A search across runs' output.
#[derive(Debug, Clone, Default)]
pub struct SearchFilter {
    pub text: String,
    pub job: Option<String>,
    pub tag: Option<String>,
    pub status: Option<RunStatus>,
    /// Runs created since.
    pub since: Option<DateTime<Utc>>,
    pub limit: usize,
}

/// `since` (`7d`, `12h`) before `now`: where a search by age starts.
pub fn since(
    text: &str,
    now: DateTime<Utc>,
) -> Result<DateTime<Utc>, crate::domain::duration::DurationError> {
    let ms = crate::domain::duration::parse_ms(text)?;
    let ms = i64::try_from(ms).unwrap_or(i64::MAX);
    Ok(now - chrono::Duration::milliseconds(ms.min(100 * 365 * 86_400_000)))
}

/// Why a search could not be made.
#[derive(Debug, thiserror::Error)]
pub enum SearchError {
    #[error("search for at least {} characters", run_log::MIN_SEARCH_CHARS)]
    TooShort,
    #[error(transparent)]
    Db(#[from] DbErr),
}

/// Candidate chunks one search opens at most: the bound on its work.
pub const SEARCH_CHUNKS: u64 = 200;

/// Lines of runs' output that contain `filter.text` (ignoring case), newest run first, at most
/// `filter.limit`: the index names chunks that may hold it, and only those are opened.
pub async fn search(
    db: &impl ConnectionTrait,
    filter: &SearchFilter,
) -> Result<Vec<LogMatch>, SearchError> {
    let text = filter.text.trim();
    if text.chars().count() < run_log::MIN_SEARCH_CHARS {
        return Err(SearchError::TooShort);
    }
    let candidates = candidates(db, text, filter).await?;
    let mut found = Vec::new();
    for (id, run, attempt, job) in candidates {
        let Some(chunk) = chunk(db, id).await? else {
            continue;
        };
        for raw in lines_of(&chunk) {
            if run_log::line_matches(raw.bytes, text) {
                let line = raw.shown();
                found.push(LogMatch {
                    run,
                    attempt,
                    line: line.number,
                    text: line.text,
                    job: job.clone(),
                    stream: line.stream,
                    at: line.at,
                });
                if found.len() >= filter.limit {
                    return Ok(found);
                }
            }
        }
    }
    Ok(found)
}

/// Chunks that may hold `text`, by the index, in the order their matches are listed: (chunk
/// id, run, attempt number, job).
async fn candidates(
    db: &impl ConnectionTrait,
    text: &str,
    filter: &SearchFilter,
) -> Result<Vec<(i64, i64, i32, String)>, DbErr> {
    let backend = db.get_database_backend();
    let mut b = Binder::new(backend);
    let (join, matched) = match backend {
        DatabaseBackend::Postgres => (
            "i.chunk_id",
            format!(
                "i.text LIKE {} ESCAPE '\\'",
                b.bind(like_pattern(&text.to_lowercase()))
            ),
        ),
        _ => (
            "i.rowid",
            format!("run_log_index MATCH {}", b.bind(trigram_query(text))),
        ),
    };
    let mut conditions = vec![matched];
    if let Some(job) = &filter.job {
        conditions.push(format!("j.name = {}", b.bind(job.clone())));
    }
    if let Some(status) = filter.status {
        conditions.push(format!("r.status = {}", b.bind(status.as_str())));
    }
    if let Some(since) = filter.since {
        conditions.push(format!("r.created_at >= {}", b.bind(since)));
    }
    if let Some(tag) = &filter.tag {
        let pattern = format!("%\"{}\"%", tag.replace('\\', "").replace('_', "\\_"));
        conditions.push(format!("j.tags LIKE {} ESCAPE '\\'", b.bind(pattern)));
    }
    let sql = format!(
        "SELECT c.id, c.run_id, a.number, j.name FROM run_log_index i \
         JOIN run_log_chunks c ON c.id = {join} \
         JOIN job_attempts a ON a.id = c.attempt_id \
         JOIN job_runs r ON r.id = c.run_id JOIN jobs j ON j.id = r.job_id \
         WHERE {} ORDER BY c.run_id DESC, a.number DESC, c.seq ASC LIMIT {SEARCH_CHUNKS}",
        conditions.join(" AND ")
    );
    db.query_all_raw(b.statement(sql))
        .await?
        .iter()
        .map(|r| {
            Ok((
                r.try_get("", "id")?,
                r.try_get("", "run_id")?,
                r.try_get("", "number")?,
                r.try_get("", "name")?,
            ))
        })
        .collect()
}

/// `%text%` for `LIKE`, its own `%`, `_` and `\` taken literally.
fn like_pattern(text: &str) -> String {
    let escaped = text
        .replace('\\', "\\\\")
        .replace('%', "\\%")
        .replace('_', "\\_");
    format!("%{escaped}%")
}

/// An FTS5 query for the trigram index: every three-character window of `text`, quoted, all
/// required. The index keeps no positions, so this names chunks holding all the pieces;
/// [`search`] then finds the lines that hold the whole text.
fn trigram_query(text: &str) -> String {
    let chars: Vec<char> = text.chars().collect();
    let mut grams: Vec<String> = chars
        .windows(3)
        .map(|w| format!("\"{}\"", w.iter().collect::<String>().replace('"', "\"\"")))
        .collect();
    grams.sort();
    grams.dedup();
    grams.join(" AND ")
}

/// Deletes the logs of runs `ids`, index first.
pub async fn delete_for_runs(db: &impl ConnectionTrait, ids: &[i64]) -> Result<u64, DbErr> {
    if ids.is_empty() {
        return Ok(0);
    }
    let backend = db.get_database_backend();
    if backend == DatabaseBackend::Sqlite {
        let mut b = Binder::new(backend);
        let runs = b.in_ids("run_id", ids);
        let sql = format!(
            "DELETE FROM run_log_index WHERE rowid IN (SELECT id FROM run_log_chunks WHERE {runs})"
        );
        db.execute_raw(b.statement(sql)).await?;
    }
    // On PostgreSQL the index rows go with their chunks (ON DELETE CASCADE).
    let mut b = Binder::new(backend);
    let runs = b.in_ids("run_id", ids);
    let sql = format!("DELETE FROM run_log_chunks WHERE {runs}");
    Ok(db.execute_raw(b.statement(sql)).await?.rows_affected())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_chunk_packs_and_opens_again() {
        let mut chunk = NewChunk {
            first_line: 41,
            ..NewChunk::default()
        };
        chunk.push(Stream::Stdout, b"one\n", 1_000);
        chunk.push(Stream::Stderr, b"\xff\0two\n", 1_250);
        chunk.push(Stream::Stdout, b"three", 1_300);
        let packed = pack(&chunk).unwrap();
        assert_eq!((packed.line_count, packed.stderr_lines), (3, 1));
        let opened = unpack(&packed).unwrap();
        assert_eq!(opened.bytes, chunk.bytes);
        let lines: Vec<LogLine> = lines_of(&opened).map(|l| l.shown()).collect();
        assert_eq!(lines[1].number, 42);
        assert_eq!(lines[1].text, "\u{FFFD}\0two");
        assert_eq!(lines[2].at.timestamp_millis(), 1_300);
        assert_eq!(index_text(&opened.bytes), "one\n\u{FFFD} two\nthree");
    }

    #[test]
    fn search_text_is_taken_literally() {
        assert_eq!(like_pattern("50%_a\\b"), "%50\\%\\_a\\\\b%");
        assert_eq!(
            trigram_query("a\"bcb\"a"),
            "\"\"\"bc\" AND \"a\"\"b\" AND \"b\"\"a\" AND \"bcb\" AND \"cb\"\"\""
        );
    }
}
