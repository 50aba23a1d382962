//! The signed-in person's second factor (`crate::services::second_factor`): its state,
//! enrolment with a QR code, and turning it off. Reachable while a required one is missing.

use leptos::prelude::*;

use super::AppError;
use super::codec::Json;
use crate::views::users::{Enrolling, SecondFactorState};

/// The person's own account row.
#[cfg(feature = "ssr")]
async fn my_account(
    state: &crate::state::AppState,
) -> Result<
    (
        crate::domain::account::CurrentUser,
        crate::entities::user::Model,
    ),
    AppError,
> {
    let me = super::auth::require_signed_in()?;
    let account = crate::services::users::find_by_username(&state.db, &me.username)
        .await?
        .ok_or(AppError::Unauthenticated)?;
    Ok((me, account))
}

#[cfg(feature = "ssr")]
impl From<crate::services::second_factor::SecondFactorError> for AppError {
    fn from(e: crate::services::second_factor::SecondFactorError) -> Self {
        use crate::services::second_factor::SecondFactorError as E;
        match e {
            E::WrongCode => AppError::invalid("code", crate::t!("error-login-code-wrong")),
            E::AlreadyOn => AppError::Conflict(crate::t!("error-second-factor-on")),
            E::NotStarted => AppError::Conflict(crate::t!("error-second-factor-not-started")),
            E::NotLocal => AppError::Conflict(crate::t!("error-second-factor-not-local")),
            other => AppError::internal(&other),
        }
    }
}

/// Everyone: whether their second factor is on, and whether it is required of them.
#[server(endpoint = "account/second-factor", output = Json)]
pub async fn my_second_factor() -> Result<SecondFactorState, AppError> {
    super::respond(
        async {
            let state = super::state()?;
            let (me, account) = my_account(&state).await?;
            Ok(SecondFactorState {
                on: account.totp_enabled_at.is_some(),
                local: account.sign_in == "password",
                required: me.must_add_second_factor,
            })
        }
        .await,
    )
}

/// Everyone with a password: a new seed to enrol, as a QR code and as text.
#[server(endpoint = "account/second-factor/begin", output = Json)]
pub async fn begin_second_factor() -> Result<Enrolling, AppError> {
    super::respond(
        async {
            let state = super::state()?;
            let (_, account) = my_account(&state).await?;
            let enrolment =
                crate::services::second_factor::begin(&state.db, &state.secret_key, &account)
                    .await?;
            let qr = qrcode::QrCode::new(enrolment.link.as_bytes())
                .map_err(|e| AppError::internal(&e))?;
            let qr_svg = qr
                .render::<qrcode::render::svg::Color>()
                .min_dimensions(200, 200)
                .build();
            Ok(Enrolling {
                secret: enrolment.secret,
                link: enrolment.link,
                qr_svg,
            })
        }
        .await,
    )
}

/// Everyone enrolling: the first code turns the second factor on; the answer is the recovery
/// codes, shown this once.
#[server(endpoint = "account/second-factor/confirm", output = Json)]
pub async fn confirm_second_factor(code: String) -> Result<Vec<String>, AppError> {
    super::respond(
        async {
            let state = super::state()?;
            let (me, account) = my_account(&state).await?;
            let who = super::actor(&me);
            let now = crate::clock::now();
            let codes = crate::services::second_factor::confirm(
                &state.db,
                &state.secret_key,
                &account,
                &code,
                &who,
                now,
            )
            .await?;
            Ok(codes)
        }
        .await,
    )
}

/// Everyone: turns their second factor off, their password required (counted like a
/// sign-in). Refused while it is required of them.
#[server(endpoint = "account/second-factor/off", output = Json)]
pub async fn second_factor_off(password: String) -> Result<(), AppError> {
    super::respond(
        async {
            let state = super::state()?;
            let (me, account) = my_account(&state).await?;
            if state.auth.require_totp_for_admins && me.is_admin() {
                return Err(AppError::Conflict(crate::t!("error-second-factor-kept")));
            }
            super::auth::confirm_own_password(&state, &me, &password, "password").await?;
            let now = crate::clock::now();
            let who = super::actor(&me);
            crate::services::second_factor::turn_off(&state.db, &account, &who, now).await?;
            Ok(())
        }
        .await,
    )
}
