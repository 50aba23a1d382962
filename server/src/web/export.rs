//! `GET /traffic/hits.csv`: the hits list's rows for the same filters, streamed as CSV in
//! keyset pages, so a 90-day export never sits in memory whole.

use app::domain::account::CurrentUser;
use app::services::traffic::HitsQuery;
use app::state::AppState;
use app::views::traffic::HitsFilter;
use axum::body::{Body, Bytes};
use axum::extract::{Query, Request, State};
use axum::http::{StatusCode, header};
use axum::response::{IntoResponse, Response};

/// Rows fetched per query while streaming.
const BATCH: u64 = 5000;

pub async fn hits_csv(
    State(state): State<AppState>,
    Query(filter): Query<HitsFilter>,
    request: Request,
) -> Response {
    if request.extensions().get::<CurrentUser>().is_none() {
        return (StatusCode::UNAUTHORIZED, "please sign in").into_response();
    }
    let query =
        match HitsQuery::from_filter(&filter, state.timezone, None, BATCH, crate::clock::now()) {
            Ok(query) => query,
            Err(e) => {
                let refused = app::api::AppError::from(e);
                return (StatusCode::UNPROCESSABLE_ENTITY, refused.to_string()).into_response();
            }
        };
    let name = format!("bulwark-hits-{}.csv", query.stats.from.format("%Y%m%d"));
    let db = state.db.clone();
    let header_row = csv_line(&[
        "minute",
        "path",
        "method",
        "ip",
        "user_agent",
        "referer",
        "locale",
        "is_bot",
        "source",
        "count",
        "site",
        "country",
        "status",
    ]);
    let first =
        futures_util::stream::once(async move { Ok::<_, std::io::Error>(Bytes::from(header_row)) });
    let rows = futures_util::stream::unfold(Some(query), move |next| {
        let db = db.clone();
        async move {
            let mut query = next?;
            match app::services::traffic::hits(&db, &query).await {
                Ok((rows, cursor)) => {
                    let mut out = Vec::with_capacity(rows.len() * 200);
                    for r in rows {
                        out.extend_from_slice(&csv_line(&[
                            &r.stat_date.to_rfc3339(),
                            &r.path,
                            &r.method,
                            &r.ip,
                            &r.user_agent,
                            &r.referer,
                            &r.locale,
                            if r.is_bot { "true" } else { "false" },
                            r.spider_source.as_deref().unwrap_or(""),
                            &r.count.to_string(),
                            &r.site,
                            &r.country,
                            &r.status.to_string(),
                        ]));
                    }
                    let rest = cursor.map(|cursor| {
                        query.after = Some(cursor);
                        query
                    });
                    Some((Ok(Bytes::from(out)), rest))
                }
                Err(e) => {
                    // The status line has gone out already: end the body with an error so the
                    // client sees a broken download rather than a silently short file.
                    tracing::error!(error = %e, "CSV export failed mid-stream");
                    Some((Err(std::io::Error::other(e.to_string())), None))
                }
            }
        }
    });
    // Fused: the compression layer polls once more after the end, which `unfold` forbids.
    let body = Body::from_stream(futures_util::StreamExt::fuse(
        futures_util::StreamExt::chain(first, rows),
    ));
    (
        [
            (header::CONTENT_TYPE, "text/csv; charset=utf-8".to_string()),
            (
                header::CONTENT_DISPOSITION,
                format!("attachment; filename=\"{name}\""),
            ),
        ],
        body,
    )
        .into_response()
}

/// One CSV record (RFC 4180): fields quoted when they hold a comma, quote or line break. A
/// field starting with `=`, `+`, `-`, `@`, a tab or a carriage return gets a leading `'` so a
/// spreadsheet does not run a visitor's User-Agent as a formula (OWASP's list: a tab or CR
/// before the `=` is skipped by some spreadsheets).
fn csv_line(fields: &[&str]) -> Vec<u8> {
    let mut writer = csv::WriterBuilder::new()
        .has_headers(false)
        .from_writer(Vec::new());
    let safe: Vec<String> = fields
        .iter()
        .map(|f| {
            if f.starts_with(['=', '+', '-', '@', '\t', '\r']) {
                format!("'{f}")
            } else {
                f.to_string()
            }
        })
        .collect();
    if writer.write_record(&safe).is_err() {
        return Vec::new();
    }
    writer.into_inner().unwrap_or_default()
}

#[cfg(test)]
mod tests {
    use super::csv_line;

    #[test]
    fn fields_are_quoted_and_formulas_defused() {
        assert_eq!(
            csv_line(&["a", "b,c", "say \"hi\""]),
            b"a,\"b,c\",\"say \"\"hi\"\"\"\n"
        );
        assert_eq!(csv_line(&["=cmd()", "-1"]), b"'=cmd(),'-1\n");
        assert_eq!(csv_line(&["\t=cmd()"]), b"'\t=cmd()\n");
        assert_eq!(
            csv_line(&["\r=cmd()"]),
            b"\"'\r=cmd()\"\n",
            "quoted, as it holds a line break"
        );
    }
}
