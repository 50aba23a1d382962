//! `bulwark bench dashboard`: how fast the Traffic page's queries answer over many days of
//! traffic — every range preset, and the hits list's first and a deep page — on SQLite and
//! PostgreSQL. It generates the data into throwaway databases (`traffic generate`'s mix).
//! With `--before RANGES` it also times the same figures straight from the minute rows (what
//! the page did before the rollups) for those ranges and checks both give the same figures.
//! Each range's dashboard is timed `--rounds` times (fastest and slowest printed).
//!
//! Generating 90 days at 300,000 hits a day takes an hour or more; `--database URL` times a
//! database filled once (`bulwark traffic generate --days 90 --per-day 300000`) instead.

use std::time::Instant;

use app::domain::filters::HitSort;
use app::domain::traffic_range::{self, Preset, RangeSpec};
use app::services::traffic::{self, HitsQuery, StatsQuery};
use chrono::Utc;

use super::{ThrowawayPostgres, throwaway_sqlite};

#[derive(Debug, clap::Args)]
pub struct DashboardBenchArgs {
    /// Days of traffic generated (at most 90).
    #[arg(long, default_value_t = 90, value_parser = clap::value_parser!(u32).range(1..=90))]
    days: u32,
    /// Hits per day (the target is 300,000).
    #[arg(long, default_value_t = 30_000)]
    per_day: u64,
    /// Also time the figures from the minute rows for these presets (`today,7d`, …) and
    /// check they equal the rollups'.
    #[arg(long, value_delimiter = ',')]
    before: Vec<String>,
    /// Times each range's dashboard this many times, printing the fastest and the slowest
    /// (this machine is shared: one timing says little).
    #[arg(long, default_value_t = 3, value_parser = clap::value_parser!(u32).range(1..=100))]
    rounds: u32,
    /// Skip SQLite (to run the PostgreSQL half on its own).
    #[arg(long)]
    skip_sqlite: bool,
    /// A PostgreSQL server URL (its database is used only to create `bulwark_bench`).
    #[arg(long, env = "BULWARK_TEST_POSTGRES_URL")]
    postgres: Option<String>,
    /// Time the traffic already in this database (SQLite or PostgreSQL URL), generating
    /// nothing and dropping nothing.
    #[arg(long, conflicts_with_all = ["skip_sqlite", "postgres"])]
    database: Option<String>,
}

pub async fn dashboard(args: &DashboardBenchArgs) -> anyhow::Result<()> {
    if let Some(url) = &args.database {
        let label = if url.starts_with("postgres") {
            "PostgreSQL"
        } else {
            "SQLite"
        };
        return suite(label, url, args, false).await;
    }
    if !args.skip_sqlite {
        let sqlite = throwaway_sqlite("dashboard");
        let result = suite("SQLite", &sqlite.url, args, true).await;
        drop(sqlite);
        result?;
    }
    match &args.postgres {
        Some(base) => {
            let db = ThrowawayPostgres::create_named(base, "bulwark_bench_dashboard").await?;
            suite("PostgreSQL", &db.url, args, true).await?;
            db.drop_database().await
        }
        None => {
            println!("PostgreSQL: skipped (pass --postgres URL or set BULWARK_TEST_POSTGRES_URL)");
            Ok(())
        }
    }
}

async fn suite(
    label: &str,
    url: &str,
    args: &DashboardBenchArgs,
    fill: bool,
) -> anyhow::Result<()> {
    let db = crate::db::connect(url).await?;
    crate::db::migrate(&db).await?;
    // A database filled before the daily views existed gets them, as `serve` would.
    let rollup_zone = app::services::traffic::rebuild::zone_for_writes(&db).await?;
    app::services::traffic::rebuild::fill_daily_views(&db, rollup_zone).await?;
    let now = Utc::now();
    prepare(&db, label, args, fill, now).await?;
    let tz = app::domain::cron::parse_timezone("UTC")?;
    let today = traffic_range::today(now, tz);
    for preset in Preset::ALL {
        let range = traffic_range::resolve(RangeSpec::Preset(preset), today, tz, 90)?;
        let bench = Range {
            db: &db,
            label,
            name: preset.as_str(),
            query: StatsQuery::everyone(range.from, range.to, tz),
        };
        bench.dashboard(args.rounds, &range, tz).await?;
        bench.parts(range.bucket).await?;
        if args.before.iter().any(|p| p == preset.as_str()) {
            bench.against_minute_rows().await?;
        }
    }
    db.close().await.ok();
    Ok(())
}

/// The traffic to read (generated when `fill`), fresh statistics on PostgreSQL, and the
/// blocks the daily traffic-clean job builds.
async fn prepare(
    db: &sea_orm::DatabaseConnection,
    label: &str,
    args: &DashboardBenchArgs,
    fill: bool,
    now: chrono::DateTime<Utc>,
) -> anyhow::Result<()> {
    let started = Instant::now();
    if fill {
        let rows = crate::traffic::generate::generate(
            db,
            "shop.example.com",
            args.days,
            args.per_day,
            now,
            11,
        )
        .await?;
        println!(
            "{label}: {} days × {} hits = {} rows, generated in {:.1} s",
            args.days,
            args.per_day,
            rows,
            started.elapsed().as_secs_f64()
        );
    }
    if label == "PostgreSQL" {
        use sea_orm::ConnectionTrait;
        // Fresh statistics for every table the page reads, as autovacuum would have by now.
        db.execute_unprepared(
            "VACUUM ANALYZE traffic_statistics, traffic_hourly, traffic_daily_pages, \
             traffic_daily_sets, traffic_daily_facts, traffic_ids",
        )
        .await?;
    }
    // What the daily traffic-clean job (or else the first look at each range) does.
    let timer = Instant::now();
    let built = app::services::traffic::warm(db, 91).await?;
    println!(
        "{label}: built {built} traffic blocks and tails in {:.1} s (the daily traffic-clean job does this; \
         a day's new blocks cost little)",
        timer.elapsed().as_secs_f64()
    );
    Ok(())
}

fn ms_since(timer: Instant) -> f64 {
    timer.elapsed().as_secs_f64() * 1000.0
}

/// One preset range, timed.
struct Range<'a> {
    db: &'a sea_orm::DatabaseConnection,
    label: &'a str,
    name: &'static str,
    query: StatsQuery,
}

impl Range<'_> {
    /// What the page asks (this range, the previous one and the series), `rounds` times; then
    /// the hits list's first page and its 201st.
    async fn dashboard(
        &self,
        rounds: u32,
        range: &traffic_range::Resolved,
        tz: chrono_tz::Tz,
    ) -> anyhow::Result<()> {
        let before = traffic_range::previous(range, tz);
        let previous = StatsQuery {
            from: before.from,
            to: before.to,
            ..self.query.clone()
        };
        let (mut page_ms, mut slowest_ms) = (f64::MAX, 0f64);
        for _ in 0..rounds {
            let timer = Instant::now();
            traffic::dashboard(self.db, &self.query, &previous, range.bucket).await?;
            let ms = ms_since(timer);
            page_ms = page_ms.min(ms);
            slowest_ms = slowest_ms.max(ms);
        }
        let (first_ms, deep_ms) = self.hits().await?;
        println!(
            "{}: {:<12} dashboard {page_ms:>8.1} ms (slowest of {} {slowest_ms:.1})   hits list first page {first_ms:>6.1} ms, page 201 {deep_ms:>6.1} ms",
            self.label, self.name, rounds
        );
        Ok(())
    }

    /// The hits list's first page, and the page after walking 200 deep (10,000 rows).
    async fn hits(&self) -> anyhow::Result<(f64, f64)> {
        let mut hits = HitsQuery {
            stats: self.query.clone(),
            path: None,
            ip: None,
            sort: HitSort::Newest,
            after: None,
            limit: 50,
        };
        let timer = Instant::now();
        let (_, mut next) = traffic::hits(self.db, &hits).await?;
        let first_ms = ms_since(timer);
        for _ in 0..200 {
            let Some(cursor) = next else { break };
            hits.after = Some(cursor);
            next = traffic::hits(self.db, &hits).await?.1;
        }
        hits.after = next;
        let timer = Instant::now();
        traffic::hits(self.db, &hits).await?;
        Ok((first_ms, ms_since(timer)))
    }

    /// Where the time goes, part by part.
    async fn parts(&self, bucket: app::domain::traffic_range::Bucket) -> anyhow::Result<()> {
        use app::services::traffic::rollup_read::{self as rollup, Scope};
        use app::services::traffic::{answers, goals};
        let (db, query) = (self.db, &self.query);
        let scope = Scope {
            from: query.from,
            to: query.to,
            zone: query.zone,
            visitors: query.visitors,
            category: None,
            source: None,
            site: None,
        };
        let mut took: Vec<(&str, f64)> = Vec::new();
        let t = Instant::now();
        rollup::views_by_part(db, &scope).await?;
        took.push(("sums", ms_since(t)));
        let t = Instant::now();
        let planned = rollup::plan(db, &scope).await?;
        took.push(("plan", ms_since(t)));
        let t = Instant::now();
        rollup::distinct_counts(db, &scope, planned.as_ref()).await?;
        took.push(("distinct sets", ms_since(t)));
        let t = Instant::now();
        let top = rollup::top_pages(db, &scope, planned.as_ref(), 20).await?;
        took.push(("top pages", ms_since(t)));
        let t = Instant::now();
        rollup::series(db, &scope, bucket).await?;
        took.push(("chart", ms_since(t)));
        let t = Instant::now();
        rollup::people(db, &scope).await?;
        took.push(("people's lists", ms_since(t)));
        let t = Instant::now();
        answers::not_found(db, &scope).await?;
        took.push(("404s", ms_since(t)));
        let t = Instant::now();
        answers::ai_crawlers(db, &scope, &top).await?;
        took.push(("AI crawlers", ms_since(t)));
        let t = Instant::now();
        goals::events(db, &scope).await?;
        goals::goals(db, &scope).await?;
        took.push(("events and goals", ms_since(t)));
        let took: Vec<String> = took
            .iter()
            .map(|(part, ms)| format!("{part} {ms:.1} ms"))
            .collect();
        println!(
            "{}: {:<12} parts, one after another: {}",
            self.label,
            self.name,
            took.join(", ")
        );
        Ok(())
    }

    /// The same figures from the minute rows, timed, and checked equal to the rollups'.
    async fn against_minute_rows(&self) -> anyhow::Result<()> {
        let timer = Instant::now();
        let from_rows = traffic::stats_from_rows(self.db, &self.query).await?;
        let rows_ms = ms_since(timer);
        let same = from_rows == traffic::stats(self.db, &self.query).await?;
        println!(
            "{}: {:<12} the same figures from the minute rows {rows_ms:>9.1} ms (one range, no comparison or chart); identical: {}",
            self.label,
            self.name,
            if same { "yes" } else { "NO" }
        );
        anyhow::ensure!(same, "rollups and minute rows disagree for {}", self.name);
        Ok(())
    }
}
