//! The shared page's server functions (`/share/{token}`): public, because the link's token is
//! the credential; the server limits how often one address may call them
//! (`server/src/web/share.rs`).

use leptos::prelude::*;
use serde::{Deserialize, Serialize};

use super::AppError;
use super::codec::Json;
use crate::views::traffic::SharedDashboard;

/// What a link shows: its figures, or (protected, no password given yet) only whose they are.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub enum SharedAnswer {
    Locked { site: String },
    Open(Box<SharedDashboard>),
}

/// The link's live share, or a 404 that says nothing of why (unknown, revoked, expired).
#[cfg(feature = "ssr")]
async fn open_share(
    state: &crate::state::AppState,
    token: &str,
) -> Result<crate::entities::traffic_share::Model, AppError> {
    crate::services::traffic::shares::find(&state.db, token, crate::clock::now())
        .await
        .map_err(|e| AppError::internal(&e))?
        .ok_or_else(|| AppError::NotFound(crate::t!("noun-share")))
}

/// Whether this browser gave the link's password (or the link has none).
#[cfg(feature = "ssr")]
fn unlocked(share: &crate::entities::traffic_share::Model, token: &str) -> bool {
    use crate::services::traffic::shares::{unlock_cookie_name, unlock_key};
    let Some(phc) = &share.password_hash else {
        return true;
    };
    let Some(parts) = use_context::<http::request::Parts>() else {
        return false;
    };
    let (name, key) = (unlock_cookie_name(share.id), unlock_key(token, phc));
    parts
        .headers
        .get_all(http::header::COOKIE)
        .iter()
        .filter_map(|v| v.to_str().ok())
        .flat_map(cookie::Cookie::split_parse)
        .filter_map(Result::ok)
        .any(|c| c.name() == name && c.value() == key)
}

/// A shared site's people's figures for a preset range (`today`, `7d`, `30d`, `90d`; 7 days
/// when none is given).
#[server(endpoint = "share/view", output = Json)]
pub async fn shared_view(token: String, range: Option<String>) -> Result<SharedAnswer, AppError> {
    use crate::domain::filters::TrafficFilter;
    use crate::domain::traffic_range;
    use crate::services::traffic::{StatsQuery, shares};
    super::respond(
        async {
            let state = super::state()?;
            let share = open_share(&state, &token).await?;
            if !unlocked(&share, &token) {
                return Ok(SharedAnswer::Locked { site: share.site });
            }
            if let Some(response) = use_context::<leptos_axum::ResponseOptions>() {
                response.insert_header(
                    http::header::HeaderName::from_static("x-robots-tag"),
                    http::HeaderValue::from_static("noindex, nofollow"),
                );
            }
            let range = range.filter(|r| !r.trim().is_empty());
            let range = range.as_deref().unwrap_or("7d");
            let filter = TrafficFilter::parse(Some(range), None, None, Some("human"), None, None)?
                .with_site(Some(&share.site))?;
            let zone = state.timezone;
            let resolved = filter.resolve(crate::clock::now(), zone)?;
            let before = traffic_range::previous(&resolved, zone);
            let figures = shares::figures(
                &state.db,
                &share,
                &StatsQuery::new(&filter, &resolved, zone),
                &StatsQuery::new(&filter, &before, zone),
                resolved.bucket,
            )
            .await
            .map_err(|e| AppError::internal(&e))?;
            Ok(SharedAnswer::Open(Box::new(figures)))
        }
        .await,
    )
}

/// Checks a protected link's password; on a match, this browser keeps the link's key in a
/// cookie until the link expires (or 30 days).
#[server(endpoint = "share/unlock", output = Json)]
pub async fn unlock_share(token: String, password: String) -> Result<(), AppError> {
    use crate::services::traffic::shares::{password_matches, unlock_cookie_name, unlock_key};
    super::respond(
        async {
            let state = super::state()?;
            let share = open_share(&state, &token).await?;
            let Some(phc) = share.password_hash.clone() else {
                return Ok(());
            };
            let right = password_matches(&share, &password)
                .await
                .map_err(|e| AppError::internal(&e))?;
            if !right {
                return Err(AppError::invalid(
                    "password",
                    crate::t!("share-wrong-password"),
                ));
            }
            let now = crate::clock::now();
            let days = share
                .expires_at
                .map_or(30, |end| (end - now).num_days().clamp(1, 30));
            let cookie =
                cookie::Cookie::build((unlock_cookie_name(share.id), unlock_key(&token, &phc)))
                    .path("/")
                    .http_only(true)
                    .same_site(cookie::SameSite::Lax)
                    .secure(state.auth.secure_cookies)
                    .max_age(cookie::time::Duration::days(days))
                    .build()
                    .to_string();
            let value = http::HeaderValue::from_str(&cookie).map_err(|e| AppError::internal(&e))?;
            expect_context::<leptos_axum::ResponseOptions>()
                .append_header(http::header::SET_COOKIE, value);
            Ok(())
        }
        .await,
    )
}
