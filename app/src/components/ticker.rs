//! Live pages: a clock that ticks in the browser.

use leptos::prelude::*;

/// A clock that ticks every `ms` in the browser (and never on the server), for live pages.
pub fn use_ticker(ms: u64) -> ReadSignal<u64> {
    let (tick, set_tick) = signal(0u64);
    #[cfg(feature = "hydrate")]
    {
        if let Ok(handle) = set_interval_with_handle(
            move || set_tick.update(|t| *t += 1),
            std::time::Duration::from_millis(ms),
        ) {
            on_cleanup(move || handle.clear());
        }
    }
    #[cfg(not(feature = "hydrate"))]
    let _ = (set_tick, ms);
    tick
}
