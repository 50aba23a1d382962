//! What `bulwark --version`, `/readyz` and the Nodes page say this build is: the crate's
//! version and the git commit it was built from (`server/build.rs`).

use std::sync::LazyLock;

/// The commit, or `unknown` for a build outside a git checkout (a source tarball).
pub fn commit() -> &'static str {
    // vergen writes this placeholder when git could not answer.
    match env!("VERGEN_GIT_SHA") {
        "VERGEN_IDEMPOTENT_OUTPUT" | "" => "unknown",
        sha => sha,
    }
}

/// `0.2.0 (commit 1a2b3c4)`.
pub static LONG: LazyLock<String> =
    LazyLock::new(|| format!("{} (commit {})", env!("CARGO_PKG_VERSION"), commit()));
