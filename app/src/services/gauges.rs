//! The database-wide figures `/metrics` reports (`server/src/metrics.rs`): the same on every
//! node, read at each scrape.

use chrono::{DateTime, Utc};
use sea_orm::{
    ColumnTrait, ConnectionTrait, DbErr, EntityTrait, JoinType, PaginatorTrait, QueryFilter,
    QuerySelect, RelationTrait,
};

use crate::domain::chat::DeliveryStatus;
use crate::domain::mail::MailStatus;
use crate::domain::run::RunStatus;
use crate::entities::{channel_delivery, job, job_run, mail_outbox};

pub struct Gauges {
    /// Runs not ended, by status (every active status present, zero included).
    pub runs: Vec<(RunStatus, i64)>,
    /// Runs due now and not yet started.
    pub due: i64,
    /// Dead runs waiting in the failed queue, by job.
    pub failed_queue: Vec<(String, i64)>,
    /// Messages waiting or refused: (`mail` or the channel's name, status, count); the mail
    /// outbox's two statuses are always present.
    pub outbox: Vec<(String, String, i64)>,
}

pub async fn read(db: &impl ConnectionTrait, now: DateTime<Utc>) -> Result<Gauges, DbErr> {
    let counted: Vec<(RunStatus, i64)> = job_run::Entity::find()
        .select_only()
        .column(job_run::Column::Status)
        .column_as(job_run::Column::Id.count(), "n")
        .filter(job_run::Column::Status.is_in(RunStatus::ACTIVE.iter().copied()))
        .group_by(job_run::Column::Status)
        .into_tuple()
        .all(db)
        .await?;
    let runs = RunStatus::ACTIVE
        .iter()
        .map(|s| {
            let n = counted.iter().find(|(c, _)| c == s).map_or(0, |(_, n)| *n);
            (*s, n)
        })
        .collect();
    let due = job_run::Entity::find()
        .filter(job_run::Column::DueAt.lte(now))
        .filter(job_run::Column::Status.ne(RunStatus::Running))
        .count(db)
        .await? as i64;
    let failed_queue: Vec<(String, i64)> = job_run::Entity::find()
        .select_only()
        .column_as(job::Column::Name, "job")
        .column_as(job_run::Column::Id.count(), "n")
        .join(JoinType::InnerJoin, job_run::Relation::Job.def())
        .filter(job_run::Column::Status.eq(RunStatus::Dead))
        .filter(job_run::Column::Resolution.is_null())
        .group_by(job::Column::Name)
        .into_tuple()
        .all(db)
        .await?;
    let mail: Vec<(MailStatus, i64)> = mail_outbox::Entity::find()
        .select_only()
        .column(mail_outbox::Column::Status)
        .column_as(mail_outbox::Column::Id.count(), "n")
        .filter(mail_outbox::Column::Status.is_in([MailStatus::Pending, MailStatus::Failed]))
        .group_by(mail_outbox::Column::Status)
        .into_tuple()
        .all(db)
        .await?;
    let mut outbox: Vec<(String, String, i64)> = [MailStatus::Pending, MailStatus::Failed]
        .iter()
        .map(|s| {
            let n = mail.iter().find(|(c, _)| c == s).map_or(0, |(_, n)| *n);
            ("mail".to_string(), s.as_str().to_string(), n)
        })
        .collect();
    let channels: Vec<(String, DeliveryStatus, i64)> = channel_delivery::Entity::find()
        .select_only()
        .column(channel_delivery::Column::ChannelName)
        .column(channel_delivery::Column::Status)
        .column_as(channel_delivery::Column::Id.count(), "n")
        .filter(
            channel_delivery::Column::Status
                .is_in([DeliveryStatus::Pending, DeliveryStatus::Failed]),
        )
        .group_by(channel_delivery::Column::ChannelName)
        .group_by(channel_delivery::Column::Status)
        .into_tuple()
        .all(db)
        .await?;
    outbox.extend(
        channels
            .into_iter()
            .map(|(name, status, n)| (name, status.as_str().to_string(), n)),
    );
    Ok(Gauges {
        runs,
        due,
        failed_queue,
        outbox,
    })
}
