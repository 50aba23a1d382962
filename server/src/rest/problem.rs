//! Errors as `application/problem+json` (RFC 9457): `type`, `title`, `status`, `detail`, and for
//! invalid input the fields at fault, each with its message.

use app::api::AppError;
use axum::http::{StatusCode, header};
use axum::response::{IntoResponse, Response};
use serde::Serialize;
use utoipa::ToSchema;

/// An error answer.
#[derive(Debug, Clone, Serialize, ToSchema)]
pub struct Problem {
    /// A URI naming the kind of problem (`about:blank` when the status says it all).
    #[serde(rename = "type")]
    pub kind: String,
    pub title: String,
    pub status: u16,
    pub detail: String,
    /// For invalid input: each field at fault.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub errors: Vec<FieldProblem>,
}

#[derive(Debug, Clone, Serialize, ToSchema)]
pub struct FieldProblem {
    pub field: String,
    pub message: String,
}

impl Problem {
    pub fn new(status: StatusCode, detail: impl Into<String>) -> Self {
        Problem {
            kind: "about:blank".into(),
            title: status.canonical_reason().unwrap_or("Error").to_string(),
            status: status.as_u16(),
            detail: detail.into(),
            errors: Vec::new(),
        }
    }

    pub fn unauthorized(detail: impl Into<String>) -> Self {
        Problem::new(StatusCode::UNAUTHORIZED, detail)
    }

    pub fn invalid(field: &str, message: impl Into<String>) -> Self {
        AppError::invalid(field, message).into()
    }

    /// `what` as the catalogue names it (`app::t!("noun-run", id = 7)`).
    pub fn not_found(what: impl Into<String>) -> Self {
        AppError::NotFound(what.into()).into()
    }
}

impl From<AppError> for Problem {
    fn from(e: AppError) -> Self {
        let status = StatusCode::from_u16(e.status()).unwrap_or(StatusCode::INTERNAL_SERVER_ERROR);
        // The detail in the caller's language (`Accept-Language`), the status and the field
        // names as stable as ever.
        let mut problem = Problem::new(
            status,
            app::i18n::errors::Explain::explain(&e, app::i18n::current()),
        );
        match e {
            AppError::Invalid { field, message } => {
                problem.errors.push(FieldProblem { field, message });
            }
            AppError::Fields(errors) => {
                problem.detail = errors
                    .iter()
                    .map(|e| format!("{}: {}", e.field, e.message))
                    .collect::<Vec<_>>()
                    .join("; ");
                problem.errors = errors
                    .into_iter()
                    .map(|e| FieldProblem {
                        field: e.field,
                        message: e.message,
                    })
                    .collect();
            }
            _ => {}
        }
        problem
    }
}

impl From<sea_orm::DbErr> for Problem {
    fn from(e: sea_orm::DbErr) -> Self {
        AppError::internal(&e).into()
    }
}

impl IntoResponse for Problem {
    fn into_response(self) -> Response {
        let status = StatusCode::from_u16(self.status).unwrap_or(StatusCode::INTERNAL_SERVER_ERROR);
        let mut response = (status, axum::Json(&self)).into_response();
        response.headers_mut().insert(
            header::CONTENT_TYPE,
            header::HeaderValue::from_static("application/problem+json"),
        );
        if status == StatusCode::UNAUTHORIZED {
            response.headers_mut().insert(
                header::WWW_AUTHENTICATE,
                header::HeaderValue::from_static("Bearer"),
            );
        }
        response
    }
}
