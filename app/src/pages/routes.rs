//! The pages as routes loaded on demand. In the browser each group of pages below is a wasm
//! chunk of its own, which `make site` cuts out of the module (wasm-split-cli) and the browser
//! fetches the first time one of its pages is shown; a first page load downloads the shell and
//! one group instead of every page. On the server the views are called directly.
//!
//! Pages are grouped, not split one by one: the splitter gives every set of split points that
//! shares some code a chunk of its own, so sixteen split points made 470 files and a page's
//! first load 60–230 requests, and nine groups still 200 files and ~100 requests a page; five
//! groups make 33 files and at most 19 requests. The group is the first argument of
//! `wasm_split` (`docs/ARCHITECTURE.md`, "Page chunks").

use leptos::prelude::*;
use leptos::wasm_split::wasm_split;
use leptos_router::LazyRoute;

use super::{
    account, api_docs, audit, failed, home, job_edit, jobs, login, maintenance, notifications,
    run_detail, runs, settings, share, traffic, traffic_hits, traffic_sites,
};

/// On the server: notes that this render used `group`, so the page can ask the browser to
/// fetch that group's chunks early (Leptos's `prefetch_lazy_fn_on_server`).
fn used(group: &'static str) {
    #[cfg(feature = "ssr")]
    leptos::prefetch_lazy_fn_on_server(group);
    #[cfg(not(feature = "ssr"))]
    let _ = group;
}

// Signing in: the first page of every session, so it stays small.

#[wasm_split(sign_in, wasm_split_path = ::leptos::wasm_split)]
fn login_view() -> AnyView {
    view! { <login::LoginPage /> }.into_any()
}

pub struct LoginRoute;

impl LazyRoute for LoginRoute {
    fn data() -> Self {
        Self
    }

    async fn view(_this: Self) -> AnyView {
        used("sign_in");
        login_view().await
    }

    async fn preload() {
        __wasm_split_preload_login_view().await
    }
}

// Operations: what on-call engineers open: jobs, runs and the failed queue.

#[wasm_split(operations, wasm_split_path = ::leptos::wasm_split)]
fn jobs_view() -> AnyView {
    view! { <jobs::JobsPage /> }.into_any()
}

pub struct JobsRoute;

impl LazyRoute for JobsRoute {
    fn data() -> Self {
        Self
    }

    async fn view(_this: Self) -> AnyView {
        used("operations");
        jobs_view().await
    }

    async fn preload() {
        __wasm_split_preload_jobs_view().await
    }
}

#[wasm_split(operations, wasm_split_path = ::leptos::wasm_split)]
fn runs_view() -> AnyView {
    view! { <runs::RunsPage /> }.into_any()
}

pub struct RunsRoute;

impl LazyRoute for RunsRoute {
    fn data() -> Self {
        Self
    }

    async fn view(_this: Self) -> AnyView {
        used("operations");
        runs_view().await
    }

    async fn preload() {
        __wasm_split_preload_runs_view().await
    }
}

#[wasm_split(operations, wasm_split_path = ::leptos::wasm_split)]
fn run_detail_view() -> AnyView {
    view! { <run_detail::RunDetailPage /> }.into_any()
}

pub struct RunDetailRoute;

impl LazyRoute for RunDetailRoute {
    fn data() -> Self {
        Self
    }

    async fn view(_this: Self) -> AnyView {
        used("operations");
        run_detail_view().await
    }

    async fn preload() {
        __wasm_split_preload_run_detail_view().await
    }
}

#[wasm_split(operations, wasm_split_path = ::leptos::wasm_split)]
fn failed_view() -> AnyView {
    view! { <failed::FailedPage /> }.into_any()
}

pub struct FailedRoute;

impl LazyRoute for FailedRoute {
    fn data() -> Self {
        Self
    }

    async fn view(_this: Self) -> AnyView {
        used("operations");
        failed_view().await
    }

    async fn preload() {
        __wasm_split_preload_failed_view().await
    }
}

// The job editor alone: the retry curve, the cron preview and the time zones make it large.

#[wasm_split(job_editor, wasm_split_path = ::leptos::wasm_split)]
fn job_edit_view() -> AnyView {
    view! { <job_edit::JobEditPage /> }.into_any()
}

pub struct JobEditRoute;

impl LazyRoute for JobEditRoute {
    fn data() -> Self {
        Self
    }

    async fn view(_this: Self) -> AnyView {
        used("job_editor");
        job_edit_view().await
    }

    async fn preload() {
        __wasm_split_preload_job_edit_view().await
    }
}

// Dashboards: the Overview, the traffic dashboard and its two lists. These are the pages that
// draw charts, so charming (about 70 KB Brotli) is in this group and the editor's, not in
// what the Jobs, Runs and failed-queue pages download.

#[wasm_split(dashboards, wasm_split_path = ::leptos::wasm_split)]
fn home_view() -> AnyView {
    view! { <home::HomePage /> }.into_any()
}

pub struct HomeRoute;

impl LazyRoute for HomeRoute {
    fn data() -> Self {
        Self
    }

    async fn view(_this: Self) -> AnyView {
        used("dashboards");
        home_view().await
    }

    async fn preload() {
        __wasm_split_preload_home_view().await
    }
}

#[wasm_split(dashboards, wasm_split_path = ::leptos::wasm_split)]
fn traffic_view() -> AnyView {
    view! { <traffic::TrafficPage /> }.into_any()
}

pub struct TrafficRoute;

impl LazyRoute for TrafficRoute {
    fn data() -> Self {
        Self
    }

    async fn view(_this: Self) -> AnyView {
        used("dashboards");
        traffic_view().await
    }

    async fn preload() {
        __wasm_split_preload_traffic_view().await
    }
}

#[wasm_split(dashboards, wasm_split_path = ::leptos::wasm_split)]
fn traffic_hits_view() -> AnyView {
    view! { <traffic_hits::TrafficHitsPage /> }.into_any()
}

pub struct TrafficHitsRoute;

impl LazyRoute for TrafficHitsRoute {
    fn data() -> Self {
        Self
    }

    async fn view(_this: Self) -> AnyView {
        used("dashboards");
        traffic_hits_view().await
    }

    async fn preload() {
        __wasm_split_preload_traffic_hits_view().await
    }
}

/// A site's shared figures (`/share/{token}`): public, with the dashboards' charts.
#[wasm_split(dashboards, wasm_split_path = ::leptos::wasm_split)]
fn share_view() -> AnyView {
    view! { <share::SharePage /> }.into_any()
}

pub struct ShareRoute;

impl LazyRoute for ShareRoute {
    fn data() -> Self {
        Self
    }

    async fn view(_this: Self) -> AnyView {
        used("dashboards");
        share_view().await
    }

    async fn preload() {
        __wasm_split_preload_share_view().await
    }
}

#[wasm_split(dashboards, wasm_split_path = ::leptos::wasm_split)]
fn traffic_sites_view() -> AnyView {
    view! { <traffic_sites::TrafficSitesPage /> }.into_any()
}

pub struct TrafficSitesRoute;

impl LazyRoute for TrafficSitesRoute {
    fn data() -> Self {
        Self
    }

    async fn view(_this: Self) -> AnyView {
        used("dashboards");
        traffic_sites_view().await
    }

    async fn preload() {
        __wasm_split_preload_traffic_sites_view().await
    }
}

// Administration: settings, channels, maintenance, the account, the audit log, the API
// reference.

#[wasm_split(administration, wasm_split_path = ::leptos::wasm_split)]
fn notifications_view() -> AnyView {
    view! { <notifications::NotificationsPage /> }.into_any()
}

pub struct NotificationsRoute;

impl LazyRoute for NotificationsRoute {
    fn data() -> Self {
        Self
    }

    async fn view(_this: Self) -> AnyView {
        used("administration");
        notifications_view().await
    }

    async fn preload() {
        __wasm_split_preload_notifications_view().await
    }
}

#[wasm_split(administration, wasm_split_path = ::leptos::wasm_split)]
fn settings_view() -> AnyView {
    view! { <settings::SettingsPage /> }.into_any()
}

pub struct SettingsRoute;

impl LazyRoute for SettingsRoute {
    fn data() -> Self {
        Self
    }

    async fn view(_this: Self) -> AnyView {
        used("administration");
        settings_view().await
    }

    async fn preload() {
        __wasm_split_preload_settings_view().await
    }
}

#[wasm_split(administration, wasm_split_path = ::leptos::wasm_split)]
fn maintenance_view() -> AnyView {
    view! { <maintenance::MaintenancePage /> }.into_any()
}

pub struct MaintenanceRoute;

impl LazyRoute for MaintenanceRoute {
    fn data() -> Self {
        Self
    }

    async fn view(_this: Self) -> AnyView {
        used("administration");
        maintenance_view().await
    }

    async fn preload() {
        __wasm_split_preload_maintenance_view().await
    }
}

#[wasm_split(administration, wasm_split_path = ::leptos::wasm_split)]
fn account_view() -> AnyView {
    view! { <account::AccountPage /> }.into_any()
}

pub struct AccountRoute;

impl LazyRoute for AccountRoute {
    fn data() -> Self {
        Self
    }

    async fn view(_this: Self) -> AnyView {
        used("administration");
        account_view().await
    }

    async fn preload() {
        __wasm_split_preload_account_view().await
    }
}

#[wasm_split(administration, wasm_split_path = ::leptos::wasm_split)]
fn audit_view() -> AnyView {
    view! { <audit::AuditPage /> }.into_any()
}

pub struct AuditRoute;

impl LazyRoute for AuditRoute {
    fn data() -> Self {
        Self
    }

    async fn view(_this: Self) -> AnyView {
        used("administration");
        audit_view().await
    }

    async fn preload() {
        __wasm_split_preload_audit_view().await
    }
}

#[wasm_split(administration, wasm_split_path = ::leptos::wasm_split)]
fn api_docs_view() -> AnyView {
    view! { <api_docs::ApiDocsPage /> }.into_any()
}

pub struct ApiDocsRoute;

impl LazyRoute for ApiDocsRoute {
    fn data() -> Self {
        Self
    }

    async fn view(_this: Self) -> AnyView {
        used("administration");
        api_docs_view().await
    }

    async fn preload() {
        __wasm_split_preload_api_docs_view().await
    }
}
