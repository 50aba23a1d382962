//! Beside the editor's `run_on` field: the live nodes that may run the job as typed, or a
//! warning that none may now (its runs would wait as `waiting_for_node`). Asked of the server
//! as the field changes (`jobs/placement`), since only it knows which nodes are live.

use leptos::prelude::*;

use crate::api::jobs::job_placement;
use crate::domain::job::JobInput;
use crate::i18n::current;
use crate::i18n::errors::Explain;
use crate::t;

#[component]
pub fn PlacementHint(job: RwSignal<JobInput>) -> impl IntoView {
    let asked = Memo::new(move |_| job.with(|j| (j.run_on.clone(), j.kind.clone())));
    let placement = Resource::new(
        move || asked.get(),
        |(run_on, kind)| job_placement(run_on, kind),
    );
    view! {
        <Transition fallback=|| ()>
            {move || Suspend::new(async move {
                match placement.await {
                    Ok(p) if p.matching.is_empty() => view! {
                        <p class="warning" data-testid="run-on-none">
                            {t!("job-run-on-none", live = p.live)}
                        </p>
                    }
                    .into_any(),
                    Ok(p) => view! {
                        <p class="muted" data-testid="run-on-nodes">
                            {t!(
                                "job-run-on-nodes",
                                count = p.matching.len(),
                                live = p.live,
                                nodes = p.matching.join(", ")
                            )}
                        </p>
                    }
                    .into_any(),
                    Err(e) => view! { <p class="error">{e.explain(current())}</p> }.into_any(),
                }
            })}
        </Transition>
    }
}
