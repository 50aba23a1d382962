use sea_orm::entity::prelude::*;

use crate::domain::calendar::OnOffDay;
use crate::domain::job::{ExhaustedAction, Kind, Misfire, Overlap, TimeoutMode, WhenPaused};
use crate::domain::retry::Jitter;

/// A job definition. Column meanings and units are in the migration that creates the table.
#[derive(Clone, Debug, PartialEq, Eq, DeriveEntityModel)]
#[sea_orm(table_name = "jobs")]
pub struct Model {
    #[sea_orm(primary_key)]
    pub id: i64,
    #[sea_orm(unique)]
    pub name: String,
    pub description: String,
    pub kind: Kind,
    pub config: String,
    pub cron: String,
    pub timezone: String,
    pub enabled: bool,
    pub retry_first_ms: i64,
    pub retry_multiplier_x10: i32,
    pub retry_max: i32,
    pub retry_jitter: Jitter,
    pub retry_cap_ms: Option<i64>,
    pub timeout_mode: TimeoutMode,
    pub timeout_static_ms: i64,
    pub timeout_window: i32,
    pub timeout_factor_x10: i32,
    pub timeout_floor_ms: i64,
    pub timeout_hard_cap_ms: i64,
    pub overlap: Overlap,
    pub misfire: Misfire,
    pub on_exhausted: ExhaustedAction,
    /// The job `on_exhausted = fallback` starts.
    pub fallback_job: Option<String>,
    /// JSON array of addresses.
    pub alert_to: String,
    pub escalate_after: i32,
    /// JSON array of addresses.
    pub escalate_to: String,
    /// JSON array of channel names the job's alerts go to.
    pub alert_channels: String,
    /// JSON array of channel names escalations go to (empty: the alert channels).
    pub escalate_channels: String,
    /// JSON array of the parameters a run takes (`crate::domain::job::params`).
    pub parameters: String,
    /// The unguessable id of the job's trigger URL (`/hooks/<id>`), when it has one.
    pub hook_id: Option<String>,
    /// The trigger URL's signing secret, sealed.
    pub hook_secret: Option<String>,
    pub created_at: DateTimeUtc,
    /// JSON array of the names of jobs that depend on this one.
    pub dependants: String,
    pub updated_at: DateTimeUtc,
    /// The next cron tick not yet recorded as a run (`None` while disabled, or before the first
    /// trigger pass after an upgrade).
    pub next_fire_at: Option<DateTimeUtc>,
    /// Bumped by every transaction that adds runs to the job's lane or ends one: the write
    /// that takes the job's row lock first (`services::lanes`).
    pub lane_seq: i64,
    pub stall_timeout_ms: Option<i64>,
    /// Paused: ticks wait (`next_fire_at` is not moved) and no retry starts; on resume the
    /// ticks missed follow the misfire policy. Unlike `enabled`, which forgets them.
    pub paused: bool,
    /// JSON array of tags (`crate::domain::job::tags`).
    pub tags: String,
    /// Why the job is held: JSON array of the parameters it uses where they are no longer
    /// allowed (`crate::domain::job::placement::Misplaced`); the job is paused while held.
    pub params_held: Option<String>,
    /// An administrator confirmed the job may run with its parameters as written (the rules
    /// before `placement`), until its next edit.
    pub params_as_written: bool,
    /// What the trigger URL does while the job is paused.
    pub hook_when_paused: WhenPaused,
    pub ping_token_hash: Option<String>,
    pub ping_token: Option<String>,
    /// The work calendar the job follows, by name.
    pub calendar: Option<String>,
    pub on_off_day: OnOffDay,
    /// The current revision (`crate::services::revisions`); 0 until the first is recorded.
    pub revision: i32,
    /// The labels a node must carry to run it, as `dc=sh,role=db` (`crate::domain::labels`);
    /// empty: any node.
    pub run_on: String,
    /// The concurrency pool it belongs to (`crate::domain::pool`); empty: none.
    pub pool: String,
    /// `all`: a tick makes one child run per matching live node (`crate::domain::job::Spread`);
    /// empty: one run.
    pub run_on_count: String,
    /// A tick makes this many child runs spread over the matching nodes; 0: none.
    pub shards: i32,
}

#[derive(Copy, Clone, Debug, EnumIter, DeriveRelation)]
pub enum Relation {}

impl ActiveModelBehavior for ActiveModel {}
