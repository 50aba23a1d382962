//! Work calendars in the database (`crate::domain::calendar`): kept, listed, and looked up
//! by the trigger, the editor's preview and backfill. A calendar a job follows cannot be
//! removed, nor changed so the job's cron could no longer follow it; a change moves the next
//! tick of every job following it.

use std::collections::{BTreeMap, HashMap};

use chrono::{DateTime, NaiveDate, Utc};
use sea_orm::{
    ActiveModelTrait, ColumnTrait, ConnectionTrait, DatabaseConnection, DbErr, EntityTrait,
    IntoActiveModel, QueryFilter, QueryOrder, Set,
};

use crate::domain::Problem;
use crate::domain::calendar::{Calendar, CalendarInput, DateInput, Weekdays, days_from_calendar};
use crate::entities::{calendar, job};
use crate::services::audit::{self, Actor};
use crate::views::calendars::CalendarSummary;

#[derive(Debug, thiserror::Error)]
pub enum CalendarServiceError {
    #[error("invalid calendar")]
    Invalid(Vec<Problem>),
    #[error("there is no calendar named '{0}'")]
    NotFound(String),
    #[error("calendar '{name}' holds a value the code cannot read ({what}); import it again")]
    Corrupt { name: String, what: String },
    #[error(transparent)]
    Db(#[from] DbErr),
}

/// The calendar a row holds.
pub fn from_row(row: &calendar::Model) -> Result<Calendar, CalendarServiceError> {
    let corrupt = |what: &str| CalendarServiceError::Corrupt {
        name: row.name.clone(),
        what: what.to_string(),
    };
    let dates = |text: &str, what: &str| -> Result<BTreeMap<NaiveDate, String>, _> {
        let list: Vec<DateInput> = serde_json::from_str(text).map_err(|_| corrupt(what))?;
        list.into_iter()
            .map(|entry| {
                let (date, name) = match entry {
                    DateInput::Date(date) => (date, String::new()),
                    DateInput::Named { date, name } => (date, name),
                };
                let date =
                    NaiveDate::parse_from_str(&date, "%Y-%m-%d").map_err(|_| corrupt(what))?;
                Ok::<_, CalendarServiceError>((date, name))
            })
            .collect()
    };
    Ok(Calendar {
        name: row.name.clone(),
        base: Weekdays::parse(&row.base).ok_or_else(|| corrupt("base"))?,
        off: dates(&row.off, "off")?,
        on: dates(&row.on, "on")?,
    })
}

/// Every calendar, by name.
pub async fn all(
    db: &impl ConnectionTrait,
) -> Result<HashMap<String, Calendar>, CalendarServiceError> {
    let rows = calendar::Entity::find().all(db).await?;
    rows.iter()
        .map(|row| Ok((row.name.clone(), from_row(row)?)))
        .collect()
}

/// The calendar named `name`, if there is one.
pub async fn named(
    db: &impl ConnectionTrait,
    name: &str,
) -> Result<Option<Calendar>, CalendarServiceError> {
    let row = calendar::Entity::find()
        .filter(calendar::Column::Name.eq(name))
        .one(db)
        .await?;
    row.as_ref().map(from_row).transpose()
}

/// The calendar named `name`, or [`CalendarServiceError::NotFound`].
pub async fn get(db: &impl ConnectionTrait, name: &str) -> Result<Calendar, CalendarServiceError> {
    named(db, name)
        .await?
        .ok_or_else(|| CalendarServiceError::NotFound(name.to_string()))
}

/// Every calendar with what it holds and which jobs follow it, by name.
pub async fn list(db: &impl ConnectionTrait) -> Result<Vec<CalendarSummary>, CalendarServiceError> {
    let rows = calendar::Entity::find()
        .order_by_asc(calendar::Column::Name)
        .all(db)
        .await?;
    let mut followers = followers(db).await?;
    rows.iter()
        .map(|row| {
            let calendar = from_row(row)?;
            Ok(CalendarSummary {
                base: calendar.base.text(),
                years: calendar.years(),
                off: calendar.off.len(),
                on: calendar.on.len(),
                jobs: followers.remove(&row.name).unwrap_or_default(),
                updated_at: row.updated_at,
                calendar: calendar.to_input(),
            })
        })
        .collect()
}

/// The jobs following each calendar, by calendar name.
async fn followers(db: &impl ConnectionTrait) -> Result<HashMap<String, Vec<String>>, DbErr> {
    let rows = job::Entity::find()
        .filter(job::Column::Calendar.is_not_null())
        .order_by_asc(job::Column::Name)
        .all(db)
        .await?;
    let mut by_calendar: HashMap<String, Vec<String>> = HashMap::new();
    for row in rows {
        if let Some(name) = row.calendar {
            by_calendar.entry(name).or_default().push(row.name);
        }
    }
    Ok(by_calendar)
}

/// Creates or replaces the calendar `input` writes, and records who did, in one transaction.
/// Refused when a job following it could no longer (its cron's day-of-week is the old base).
pub async fn save(
    db: &DatabaseConnection,
    input: &CalendarInput,
    who: &Actor<'_>,
    now: DateTime<Utc>,
) -> Result<Calendar, CalendarServiceError> {
    let calendar = input.parse().map_err(CalendarServiceError::Invalid)?;
    let txn = super::sql::begin_write(db).await?;
    store(&txn, &calendar, now).await?;
    let detail = serde_json::to_value(calendar.to_input()).unwrap_or_default();
    audit::record(&txn, who, "calendar.saved", &calendar.name, detail, now).await?;
    let wake = crate::wake::jobs_changed_in(&txn).await;
    txn.commit().await?;
    wake.after_commit();
    Ok(calendar)
}

/// Writes `calendar` in the caller's transaction (who did is the caller's to record, and the
/// triggers its to wake): `false` when it was stored as it is already. Refused when a job
/// following it could no longer.
pub async fn store(
    db: &impl ConnectionTrait,
    calendar: &Calendar,
    now: DateTime<Utc>,
) -> Result<bool, CalendarServiceError> {
    check_followers(calendar, &following(db, &calendar.name).await?)?;
    let input = calendar.to_input();
    let encode = |list: &[DateInput]| serde_json::to_string(list).unwrap_or_else(|_| "[]".into());
    let existing = calendar::Entity::find()
        .filter(calendar::Column::Name.eq(&calendar.name))
        .one(db)
        .await?;
    if let Some(row) = &existing
        && from_row(row).ok().as_ref() == Some(calendar)
    {
        return Ok(false);
    }
    let mut model = match existing {
        Some(row) => row.into_active_model(),
        None => calendar::ActiveModel {
            name: Set(calendar.name.clone()),
            created_at: Set(now),
            ..Default::default()
        },
    };
    model.base = Set(calendar.base.text());
    model.off = Set(encode(&input.off));
    model.on = Set(encode(&input.on));
    model.updated_at = Set(now);
    model.save(db).await?;
    move_next_ticks(db, calendar, now).await?;
    Ok(true)
}

/// Removes a calendar no job follows.
pub async fn delete(
    db: &DatabaseConnection,
    name: &str,
    who: &Actor<'_>,
    now: DateTime<Utc>,
) -> Result<(), CalendarServiceError> {
    let txn = super::sql::begin_write(db).await?;
    let jobs = following(&txn, name).await?;
    if !jobs.is_empty() {
        let names: Vec<&str> = jobs.iter().map(|j| j.name.as_str()).collect();
        return Err(CalendarServiceError::Invalid(vec![crate::problem!(
            "calendar-error-in-use",
            name = name,
            jobs = names.join(", ")
        )]));
    }
    let deleted = calendar::Entity::delete_many()
        .filter(calendar::Column::Name.eq(name))
        .exec(&txn)
        .await?;
    if deleted.rows_affected == 0 {
        return Err(CalendarServiceError::NotFound(name.to_string()));
    }
    audit::record(
        &txn,
        who,
        "calendar.deleted",
        name,
        serde_json::json!({}),
        now,
    )
    .await?;
    txn.commit().await?;
    Ok(())
}

async fn following(db: &impl ConnectionTrait, name: &str) -> Result<Vec<job::Model>, DbErr> {
    job::Entity::find()
        .filter(job::Column::Calendar.eq(name))
        .order_by_asc(job::Column::Name)
        .all(db)
        .await
}

/// Every job following the calendar can still: its cron's day fields agree with the base.
fn check_followers(calendar: &Calendar, jobs: &[job::Model]) -> Result<(), CalendarServiceError> {
    let mut broken = Vec::new();
    let mut reason = None;
    for row in jobs {
        let Ok(cron) = crate::domain::cron::CronExpr::parse(&row.cron) else {
            continue;
        };
        if let Err(e) = days_from_calendar(&cron, calendar) {
            broken.push(row.name.clone());
            reason.get_or_insert(e);
        }
    }
    match reason {
        None => Ok(()),
        Some(e) => Err(CalendarServiceError::Invalid(vec![crate::problem!(
            "calendar-error-breaks",
            name = calendar.name.clone(),
            jobs = broken.join(", "),
            reason = e.to_string()
        )])),
    }
}

/// Every enabled job following the changed calendar is due now: the trigger's next pass
/// finds no tick between then and now and works its next one out by the calendar's new days.
/// A tick already due stays due (recorded by the calendar as it is now).
async fn move_next_ticks(
    db: &impl ConnectionTrait,
    calendar: &Calendar,
    now: DateTime<Utc>,
) -> Result<(), DbErr> {
    job::Entity::update_many()
        .col_expr(
            job::Column::NextFireAt,
            sea_orm::sea_query::Expr::value(now),
        )
        .filter(job::Column::Calendar.eq(&calendar.name))
        .filter(job::Column::Enabled.eq(true))
        .filter(job::Column::NextFireAt.gt(now))
        .exec(db)
        .await?;
    Ok(())
}
