//! The instances sharing one database: each registers itself and heart-beats, and answers
//! commands addressed to every live node.
//!
//! Commands exist because some state lives only in a process: `bulwark traffic flush` (or the
//! `traffic-flush` job, on whichever node runs it) must make every server write *its own*
//! buffer. The requester inserts a `node_commands` row and waits for one
//! `node_command_results` row per live node; each node polls for commands newer than the
//! newest one it saw at start. Nothing but the database is needed, on SQLite or PostgreSQL.

use std::sync::Arc;
use std::sync::atomic::{AtomicI64, Ordering};
use std::time::Duration;

use app::domain::node as node_rules;
use app::entities::{node, node_command, node_command_result};
use chrono::{DateTime, Utc};
use sea_orm::sea_query::OnConflict;
use sea_orm::{
    ActiveModelTrait, ActiveValue::Set, ColumnTrait, DatabaseConnection, DbErr, EntityTrait,
    QueryFilter, QueryOrder, QuerySelect,
};
use serde::Serialize;

use crate::duties::Duties;
use crate::traffic::{Recorder, store};

/// How often a node says it is alive.
pub const HEARTBEAT: Duration = Duration::from_secs(node_rules::HEARTBEAT_SECONDS as u64);
/// A node silent for this long is lost: not asked, not waited for.
pub const LOST_AFTER: Duration = Duration::from_secs(node_rules::LOST_AFTER_SECONDS as u64);
/// Stopped or lost nodes are listed this long, then forgotten.
const FORGET_AFTER_DAYS: i64 = 7;
/// How often a node looks for commands.
const COMMAND_POLL: Duration = Duration::from_secs(1);
/// Commands are kept this long, then deleted by the next broadcast.
const COMMAND_RETENTION_DAYS: i64 = 7;

/// The command that makes every node write its traffic buffer now.
pub const TRAFFIC_FLUSH: &str = "traffic_flush";

/// This process, as registered.
#[derive(Debug, Clone)]
pub struct NodeIdentity {
    pub node_id: String,
    pub addr: String,
    /// What it may run, as other nodes and the console read it.
    pub labels: app::domain::labels::Labels,
    pub commands: bool,
    /// Whether it serves the console.
    pub web: bool,
    /// Whether it runs jobs.
    pub engine: bool,
    /// How it reaches PostgreSQL.
    pub pooler: crate::db::Pooler,
}

/// Registers the node (again, after a restart with the same id).
pub async fn register(db: &DatabaseConnection, me: &NodeIdentity) -> Result<(), DbErr> {
    let skew = clock_skew_ms(db).await.ok();
    if let Some(skew) = skew {
        crate::clock::set_offset_ms(skew);
    }
    let now = crate::clock::now();
    let row = node::ActiveModel {
        node_id: Set(me.node_id.clone()),
        host: Set(hostname()),
        pid: Set(std::process::id() as i32),
        version: Set(crate::version::LONG.clone()),
        addr: Set(me.addr.clone()),
        started_at: Set(now),
        heartbeat_at: Set(now),
        stopped_at: Set(None),
        clock_skew_ms: Set(skew),
        labels: Set(me.labels.to_string()),
        commands: Set(me.commands),
        web: Set(me.web),
        engine: Set(me.engine),
        database_pooler: Set(me.pooler.as_str().to_string()),
    };
    node::Entity::insert(row)
        .on_conflict(
            OnConflict::column(node::Column::NodeId)
                .update_columns([
                    node::Column::Host,
                    node::Column::Pid,
                    node::Column::Version,
                    node::Column::Addr,
                    node::Column::StartedAt,
                    node::Column::HeartbeatAt,
                    node::Column::StoppedAt,
                    node::Column::ClockSkewMs,
                    node::Column::Labels,
                    node::Column::Commands,
                    node::Column::Web,
                    node::Column::Engine,
                    node::Column::DatabasePooler,
                ])
                .to_owned(),
        )
        .exec_without_returning(db)
        .await
        .map(|_| ())
}

pub async fn heartbeat(db: &DatabaseConnection, node_id: &str) -> Result<(), DbErr> {
    let skew = match clock_skew_ms(db).await {
        Ok(skew) => {
            crate::clock::set_offset_ms(skew);
            Some(skew)
        }
        Err(e) => {
            tracing::debug!(error = %e, "could not read the database clock");
            None
        }
    };
    node::Entity::update_many()
        .col_expr(node::Column::HeartbeatAt, crate::clock::now().into())
        .col_expr(node::Column::ClockSkewMs, skew.into())
        .filter(node::Column::NodeId.eq(node_id))
        .exec(db)
        .await?;
    node::Entity::delete_many()
        .filter(
            node::Column::HeartbeatAt
                .lt(crate::clock::now() - chrono::Duration::days(FORGET_AFTER_DAYS)),
        )
        .exec(db)
        .await
        .map(|_| ())
}

/// This process's clock minus the database server's, in milliseconds. (Measured against the
/// raw clock, never [`crate::clock::now`].) Zero for SQLite, which runs in this process and
/// reads this machine's clock.
///
/// Three readings on one connection held for them (so no wait for a pooled connection is
/// counted), and the one with the shortest round trip kept, its round trip halved out: one
/// reading delayed by a busy moment does not move the node's clock. What the offset still
/// decides is when cron ticks fall due; leases never depend on it (`engine/lease.rs`).
pub async fn clock_skew_ms(db: &DatabaseConnection) -> Result<i64, DbErr> {
    use sea_orm::{ConnectionTrait, DatabaseBackend, Statement, TransactionTrait};
    if db.get_database_backend() != DatabaseBackend::Postgres {
        return Ok(0);
    }
    let sql = "SELECT CAST(EXTRACT(EPOCH FROM clock_timestamp()) * 1000 AS BIGINT) AS now_ms";
    let held = db.begin().await?;
    let mut best: Option<(i64, i64)> = None;
    for _ in 0..3 {
        let before = Utc::now().timestamp_millis();
        let row = held
            .query_one_raw(Statement::from_string(DatabaseBackend::Postgres, sql))
            .await?
            .ok_or_else(|| DbErr::RecordNotFound("database clock".into()))?;
        let after = Utc::now().timestamp_millis();
        let db_ms: i64 = row.try_get("", "now_ms")?;
        let reading = (after - before, (before + after) / 2 - db_ms);
        if best.is_none_or(|(rtt, _)| reading.0 < rtt) {
            best = Some(reading);
        }
    }
    held.commit().await?;
    Ok(best.map_or(0, |(_, offset)| offset))
}

pub async fn mark_stopped(db: &DatabaseConnection, node_id: &str) -> Result<(), DbErr> {
    let now = crate::clock::now();
    node::Entity::update_many()
        .col_expr(node::Column::HeartbeatAt, now.into())
        .col_expr(node::Column::StoppedAt, Some(now).into())
        .filter(node::Column::NodeId.eq(node_id))
        .exec(db)
        .await
        .map(|_| ())
}

/// Nodes that heart-beat within [`LOST_AFTER`] and have not stopped.
pub async fn live_nodes(
    db: &DatabaseConnection,
    now: DateTime<Utc>,
) -> Result<Vec<node::Model>, DbErr> {
    let since = now - chrono::Duration::from_std(LOST_AFTER).unwrap_or_default();
    node::Entity::find()
        .filter(node::Column::StoppedAt.is_null())
        .filter(node::Column::HeartbeatAt.gte(since))
        .order_by_asc(node::Column::NodeId)
        .all(db)
        .await
}

/// A node's answer to [`TRAFFIC_FLUSH`]: what it wrote, and what its buffer could not keep.
#[derive(Debug, Clone, Copy, Serialize, serde::Deserialize)]
pub struct FlushAnswer {
    #[serde(flatten)]
    pub report: store::FlushReport,
    #[serde(default)]
    pub dropped_since_start: u64,
    #[serde(default)]
    pub truncated_since_start: u64,
}

/// What a broadcast got back.
#[derive(Debug, Clone, Serialize)]
pub struct Broadcast {
    /// The nodes that were live when it was sent.
    pub asked: Vec<String>,
    pub answers: Vec<Answer>,
    /// Asked nodes that did not answer in time.
    pub silent: Vec<String>,
}

#[derive(Debug, Clone, Serialize)]
pub struct Answer {
    pub node_id: String,
    pub ok: bool,
    pub detail: String,
}

/// Asks every live node to carry out `command` and waits up to `wait` for their answers.
/// With no live node it returns at once with nobody asked.
pub async fn broadcast(
    db: &DatabaseConnection,
    command: &str,
    requested_by: &str,
    wait: Duration,
) -> Result<Broadcast, DbErr> {
    let now = crate::clock::now();
    let asked: Vec<String> = live_nodes(db, now)
        .await?
        .into_iter()
        .map(|n| n.node_id)
        .collect();
    if asked.is_empty() {
        return Ok(Broadcast {
            asked,
            answers: Vec::new(),
            silent: Vec::new(),
        });
    }
    node_command::Entity::delete_many()
        .filter(
            node_command::Column::RequestedAt
                .lt(now - chrono::Duration::days(COMMAND_RETENTION_DAYS)),
        )
        .exec(db)
        .await?;
    let sent = node_command::ActiveModel {
        command: Set(command.into()),
        requested_by: Set(requested_by.into()),
        requested_at: Set(now),
        ..Default::default()
    }
    .insert(db)
    .await?;

    let deadline = tokio::time::Instant::now() + wait;
    loop {
        let answers: Vec<Answer> = node_command_result::Entity::find()
            .filter(node_command_result::Column::CommandId.eq(sent.id))
            .order_by_asc(node_command_result::Column::NodeId)
            .all(db)
            .await?
            .into_iter()
            .map(|r| Answer {
                node_id: r.node_id,
                ok: r.ok,
                detail: r.detail,
            })
            .collect();
        let silent: Vec<String> = asked
            .iter()
            .filter(|n| !answers.iter().any(|a| &a.node_id == *n))
            .cloned()
            .collect();
        if silent.is_empty() || tokio::time::Instant::now() >= deadline {
            return Ok(Broadcast {
                asked,
                answers,
                silent,
            });
        }
        tokio::time::sleep(Duration::from_millis(200)).await;
    }
}

/// Registers this node and starts its duties: the heartbeat (with the clock offset and the
/// forgetting of long-gone nodes), answering commands sent to every node, and flushing the
/// traffic buffer early when it fills. The final flush and [`mark_stopped`] are the caller's,
/// after the web server has drained (hits still arrive until then). Returns the duties' ids.
pub async fn start(
    duties: &Duties,
    db: DatabaseConnection,
    me: NodeIdentity,
    recorder: Arc<Recorder>,
    privacy: store::IpPrivacy,
) -> Vec<uuid::Uuid> {
    if let Err(e) = register(&db, &me).await {
        tracing::error!(error = %e, "could not register this node; retrying with the heartbeat");
    }
    let seen = Arc::new(AtomicI64::new(match newest_command(&db).await {
        Ok(id) => id,
        Err(e) => {
            tracing::error!(error = %e, "could not read node commands");
            0
        }
    }));
    let mut ids = Vec::new();
    let heartbeat = {
        let (db, me) = (db.clone(), me.clone());
        duties
            .every("heartbeat", HEARTBEAT, move || {
                let (db, me) = (db.clone(), me.clone());
                Box::pin(async move {
                    // A node marked lost (or never registered) comes back with its row
                    // re-written.
                    if let Err(e) = register_or_beat(&db, &me).await {
                        tracing::warn!(error = %e, "heartbeat failed");
                    }
                })
            })
            .await
    };
    let commands = {
        let (db, me, recorder) = (db.clone(), me.clone(), recorder.clone());
        duties
            .every("node commands", COMMAND_POLL, move || {
                let (db, me, recorder, seen) =
                    (db.clone(), me.clone(), recorder.clone(), seen.clone());
                Box::pin(async move { answer_commands(&db, &me, &recorder, privacy, &seen).await })
            })
            .await
    };
    let early_flush = {
        let (db, recorder) = (db.clone(), recorder.clone());
        duties
            .every("traffic buffer", COMMAND_POLL, move || {
                let (db, recorder) = (db.clone(), recorder.clone());
                Box::pin(async move {
                    if !recorder.buffer.take_nearly_full() {
                        return;
                    }
                    match store::flush(&db, &recorder.buffer, privacy).await {
                        Ok(report) => tracing::info!(
                            rows = report.rows,
                            "traffic buffer nearly full: flushed early"
                        ),
                        Err(e) => tracing::error!(error = %e, "early traffic flush failed"),
                    }
                })
            })
            .await
    };
    for (name, id) in [
        ("heartbeat", heartbeat),
        ("node commands", commands),
        ("traffic buffer", early_flush),
    ] {
        match id {
            Ok(id) => ids.push(id),
            Err(e) => tracing::error!(error = %e, duty = name, "could not start a duty"),
        }
    }
    ids
}

/// Carries out the commands sent since the newest one seen, and records each answer.
async fn answer_commands(
    db: &DatabaseConnection,
    me: &NodeIdentity,
    recorder: &Recorder,
    privacy: store::IpPrivacy,
    seen: &AtomicI64,
) {
    let commands = match commands_after(db, seen.load(Ordering::Acquire)).await {
        Ok(commands) => commands,
        Err(e) => {
            tracing::warn!(error = %e, "could not read node commands");
            return;
        }
    };
    for command in commands {
        seen.fetch_max(command.id, Ordering::AcqRel);
        let (ok, detail) = carry_out(db, recorder, privacy, &command.command).await;
        let answer = node_command_result::ActiveModel {
            command_id: Set(command.id),
            node_id: Set(me.node_id.clone()),
            finished_at: Set(crate::clock::now()),
            ok: Set(ok),
            detail: Set(detail),
        };
        if let Err(e) = node_command_result::Entity::insert(answer)
            .on_conflict(
                OnConflict::columns([
                    node_command_result::Column::CommandId,
                    node_command_result::Column::NodeId,
                ])
                .do_nothing()
                .to_owned(),
            )
            .exec_without_returning(db)
            .await
        {
            tracing::error!(error = %e, command = command.id, "could not record a command's answer");
        }
    }
}

async fn register_or_beat(db: &DatabaseConnection, me: &NodeIdentity) -> Result<(), DbErr> {
    let known = node::Entity::find_by_id(me.node_id.clone()).one(db).await?;
    match known {
        Some(row) if row.stopped_at.is_none() => heartbeat(db, &me.node_id).await,
        _ => register(db, me).await,
    }
}

async fn carry_out(
    db: &DatabaseConnection,
    recorder: &Recorder,
    privacy: store::IpPrivacy,
    command: &str,
) -> (bool, String) {
    match command {
        TRAFFIC_FLUSH => match store::flush(db, &recorder.buffer, privacy).await {
            // JSON, so the requester can add up rows across nodes.
            Ok(report) => {
                let stats = recorder.buffer.stats();
                let answer = FlushAnswer {
                    report,
                    dropped_since_start: stats.dropped,
                    truncated_since_start: stats.truncated,
                };
                match serde_json::to_string(&answer) {
                    Ok(json) => (true, json),
                    Err(e) => (false, format!("could not encode the flush report: {e}")),
                }
            }
            Err(e) => (false, e.to_string()),
        },
        other => (false, format!("unknown command '{other}'")),
    }
}

async fn newest_command(db: &DatabaseConnection) -> Result<i64, DbErr> {
    Ok(node_command::Entity::find()
        .order_by_desc(node_command::Column::Id)
        .limit(1)
        .one(db)
        .await?
        .map_or(0, |c| c.id))
}

async fn commands_after(
    db: &DatabaseConnection,
    id: i64,
) -> Result<Vec<node_command::Model>, DbErr> {
    node_command::Entity::find()
        .filter(node_command::Column::Id.gt(id))
        .order_by_asc(node_command::Column::Id)
        .all(db)
        .await
}

pub fn hostname() -> String {
    std::fs::read_to_string("/etc/hostname")
        .map(|h| h.trim().to_string())
        .ok()
        .filter(|h| !h.is_empty())
        .unwrap_or_else(|| "localhost".into())
}
