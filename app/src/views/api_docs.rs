//! The REST API's operations as the console's reference page lists them (built by the server
//! from the OpenAPI document it serves at `/api/v1/openapi.json`).

use serde::{Deserialize, Serialize};

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ApiOperation {
    pub tag: String,
    /// `GET`, `POST`, …
    pub method: String,
    /// Under `/api/v1`.
    pub path: String,
    pub summary: String,
    pub params: Vec<ApiParam>,
    /// The request body's schema, when it takes one.
    pub body: Option<String>,
    /// Each answer: its status and what it holds.
    pub responses: Vec<(String, String)>,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ApiParam {
    pub name: String,
    /// `path`, `query` or `header`.
    pub location: String,
    pub required: bool,
    pub description: String,
}
