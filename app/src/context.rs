//! Reading Leptos context without the deadlock in `reactive_graph` 0.2.16's lookup.
//!
//! `use_context` walks from the current owner up through its parents. It holds a read lock on
//! the owner it started from for the whole walk, and upgrades each parent's weak reference as
//! it goes. On the server a render is cancelled when its client goes away: the response stream
//! drops the owners while spawned tasks (resources, server functions) still run on other
//! threads. If such a task's walk upgrades a parent just as the last other reference goes, the
//! walk's temporary becomes the last one; dropping it disposes of that parent's children, which
//! needs a write lock on the very owner the walk holds for reading, on the same thread. The
//! worker hangs for good. It hung the route × role test about one run in three once every
//! message looked its language up (`server/tests/api/routes.rs`).
//!
//! [`use_context`] here first takes its own strong reference to every ancestor (each step
//! through `Owner::parent`, which releases its lock before returning), then does the ordinary
//! lookup. While the chain is held no owner on it can reach zero inside the walk; the chain is
//! dropped afterwards with no lock held, which is when a cancelled render is finally cleaned
//! up. Every lookup in this crate goes through here; Leptos's own lookups (router, meta) do not,
//! so the window is narrowed, not closed, until `reactive_graph` releases the lock before it
//! walks.

use leptos::prelude::Owner;

/// The context value `T` of the current owner or its nearest ancestor that has one, as
/// `leptos::prelude::use_context` but safe against an ancestor disposed meanwhile.
pub fn use_context<T: Clone + 'static>() -> Option<T> {
    let current = Owner::current()?;
    let mut chain = Vec::new();
    let mut next = current.parent();
    while let Some(owner) = next {
        next = owner.parent();
        chain.push(owner);
    }
    // The one call of Leptos's own lookup (clippy.toml forbids it elsewhere).
    #[allow(clippy::disallowed_methods)]
    let found = leptos::prelude::use_context::<T>();
    // Released here, after the lookup and its locks: any cleanup this triggers runs unlocked.
    drop(chain);
    found
}

/// [`use_context`] for a value the app always provides above its caller; panics with the type
/// named otherwise (a programming error, like `leptos::prelude::expect_context`).
#[track_caller]
pub fn expect_context<T: Clone + 'static>() -> T {
    use_context::<T>().unwrap_or_else(|| {
        panic!(
            "{} is not provided above this component",
            std::any::type_name::<T>()
        )
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use leptos::prelude::provide_context;

    #[derive(Clone, Debug, PartialEq)]
    struct Marker(u32);

    #[test]
    fn finds_what_an_ancestor_provides_and_nothing_else() {
        let root = Owner::new();
        root.with(|| {
            provide_context(Marker(7));
            let child = Owner::current().expect("root is current").child();
            let grandchild = child.child();
            grandchild.with(|| {
                assert_eq!(use_context::<Marker>(), Some(Marker(7)));
                assert_eq!(use_context::<String>(), None);
            });
        });
    }

    #[test]
    fn a_lookup_after_the_ancestors_are_gone_finds_nothing_and_returns() {
        let grandchild = {
            let root = Owner::new();
            root.with(|| {
                provide_context(Marker(1));
                Owner::current().expect("root is current").child().child()
            })
        };
        // The root and the middle owner have been dropped; the lookup must neither hang nor
        // find the value through a dangling parent.
        grandchild.with(|| assert_eq!(use_context::<Marker>(), None));
    }
}
