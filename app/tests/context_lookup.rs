//! Leptos context lookups that cannot hang a thread (the patched `reactive_graph` in
//! `vendor/reactive_graph`, why in `vendor/README.md`).
//!
//! On the server a page's owners are dropped on one thread (the response is done, or its client
//! went away) while resources and server functions still look context up on others. When a
//! lookup upgrades a parent just as its last other handle goes, the lookup's own reference is
//! the last one, and dropping it cleans the parent's children up. reactive_graph 0.2.16 as
//! published still held the lock of the owner the lookup started from at that moment: the
//! cleanup waited on it forever, and so did the request (one hung page in CI, in
//! `server/tests/api/routes.rs`). Here the lookup's callback drops the parent's only other
//! handle, which makes that interleaving certain instead of rare.

use std::sync::{Arc, Mutex, mpsc};
use std::time::Duration;

use leptos::prelude::{Owner, provide_context, update_context, use_context, with_context};

#[derive(Clone, Debug, PartialEq)]
struct Marker(u32);

/// Runs `lookup` on a thread of its own and says whether it came back within five seconds (a
/// hung thread is left behind; the test fails instead of hanging with it). A failed assertion
/// in `lookup` fails the test as itself.
fn returns(lookup: impl FnOnce() + Send + 'static) -> bool {
    let (done, finished) = mpsc::channel();
    let thread = std::thread::spawn(move || {
        lookup();
        let _ = done.send(());
    });
    match finished.recv_timeout(Duration::from_secs(5)) {
        Ok(()) => true,
        Err(mpsc::RecvTimeoutError::Timeout) => false,
        Err(mpsc::RecvTimeoutError::Disconnected) => match thread.join() {
            Err(panic) => std::panic::resume_unwind(panic),
            Ok(()) => unreachable!("the thread sends before it ends"),
        },
    }
}

/// A child owner under a parent that provides [`Marker`], and the slot holding that parent's
/// only strong handle (children hold their parents weakly, as a page's owners do).
fn child_of_droppable_parent() -> (Owner, Arc<Mutex<Option<Owner>>>) {
    let parent = Owner::new();
    parent.with(|| provide_context(Marker(7)));
    let child = parent.child();
    (child, Arc::new(Mutex::new(Some(parent))))
}

fn drop_parent(slot: &Mutex<Option<Owner>>) {
    let parent = slot.lock().map(|mut held| held.take());
    drop(parent);
}

#[test]
fn a_lookup_that_holds_the_last_reference_to_a_parent_returns() {
    let (child, slot) = child_of_droppable_parent();
    assert!(
        returns(move || {
            let found = child.with(|| with_context::<Marker, _>(|_| drop_parent(&slot)));
            assert!(found.is_some(), "the parent's value was found");
        }),
        "with_context hung when its own reference to the parent was the last one"
    );
}

#[test]
fn an_update_that_holds_the_last_reference_to_a_parent_returns() {
    let (child, slot) = child_of_droppable_parent();
    assert!(
        returns(move || {
            let found = child.with(|| update_context::<Marker, _>(|_| drop_parent(&slot)));
            assert!(found.is_some(), "the parent's value was found");
        }),
        "update_context hung when its own reference to the parent was the last one"
    );
}

#[test]
fn lookups_race_the_parent_being_dropped_on_another_thread() {
    // The interleaving as it happens on a server: many lookups on one thread, the parent's
    // handle dropped on another at a moment neither chooses.
    assert!(
        returns(|| {
            for _ in 0..2_000 {
                let (child, slot) = child_of_droppable_parent();
                let dropper = std::thread::spawn(move || drop_parent(&slot));
                child.with(|| {
                    for _ in 0..20 {
                        match use_context::<Marker>() {
                            Some(found) => assert_eq!(found, Marker(7)),
                            // Once the parent is gone its value is gone with it.
                            None => break,
                        }
                    }
                });
                let _ = dropper.join();
            }
        }),
        "a lookup hung while the parent was dropped on another thread"
    );
}

#[test]
fn lookups_find_the_nearest_value_and_nothing_else() {
    let root = Owner::new();
    root.with(|| provide_context(Marker(1)));
    let middle = root.child();
    middle.with(|| provide_context(Marker(2)));
    let leaf = middle.child();
    leaf.with(|| {
        assert_eq!(use_context::<Marker>(), Some(Marker(2)));
        assert_eq!(use_context::<String>(), None);
    });
    drop(middle);
    drop(root);
    // Both ancestors are gone: the lookup neither hangs nor reaches them through a dangling
    // parent.
    leaf.with(|| assert_eq!(use_context::<Marker>(), None));
}
