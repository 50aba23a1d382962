//! A healthy node under an ordinary load never interrupts, repeats or loses its own work.
//!
//! One `bulwark serve`, no fault injected, forty command jobs a second for thirty seconds on a
//! lease long enough that this machine's own load cannot starve a renewal — one job failing its
//! first attempt, one printing a NUL byte and invalid UTF-8 — measured by `bulwark bench soak`
//! (`server/src/bench/soak.rs`) on SQLite and, when `BULWARK_TEST_POSTGRES_URL` is
//! set, PostgreSQL. A test binary of its own, so nothing else runs beside it.

use std::process::Command;

#[test]
fn a_quiet_node_never_interrupts_repeats_or_loses_its_own_work() {
    let mut soak = Command::new(env!("CARGO_BIN_EXE_bulwark"));
    soak.args([
        "bench",
        "soak",
        "--minutes",
        "0.5",
        "--lease-seconds",
        "10",
        "--jobs-per-second",
        "40",
        "--json",
    ]);
    let out = soak.output().expect("run bulwark bench soak");
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "bench soak failed: {stderr}");
    let report: serde_json::Value =
        serde_json::from_slice(&out.stdout).expect("bench soak prints JSON");
    let mut databases = vec!["sqlite"];
    if std::env::var("BULWARK_TEST_POSTGRES_URL").is_ok() {
        databases.push("postgres");
    }
    for database in databases {
        let soak = &report[database];
        let count = |key: &str| {
            soak[key]
                .as_u64()
                .unwrap_or_else(|| panic!("{database}: no {key} in {soak}"))
        };
        assert_eq!(count("interrupted"), 0, "{database}: {soak}");
        assert_eq!(count("duplicated"), 0, "{database}: {soak}");
        assert_eq!(count("lost"), 0, "{database}: {soak}");
        assert_eq!(count("dead"), 0, "{database}: {soak}");
        assert_eq!(count("skipped"), 0, "{database}: {soak}");
        assert_eq!(
            count("settled"),
            count("succeeded"),
            "{database}: every settled run succeeded: {soak}"
        );
        // Thirty seconds of forty a second, less the first second and any tick still due
        // when the load stopped.
        assert!(
            count("succeeded") >= 40 * 28,
            "{database}: too few runs: {soak}"
        );
        assert_eq!(soak["odd_output_kept"], true, "{database}: {soak}");
    }
}
