//! Traffic → Sites: the goals of every site. Everyone reads; admins add and remove them.

use leptos::prelude::*;

use crate::api::traffic::{AddGoal, RemoveGoal};
use crate::components::form::{field_error, other_error};
use crate::t;
use crate::views::traffic::{GoalInfo, SiteInfo};

/// The goals, each with its remove button for admins.
#[component]
pub(super) fn GoalList(
    goals: Vec<GoalInfo>,
    admin: bool,
    remove: ServerAction<RemoveGoal>,
) -> impl IntoView {
    let rows = goals
            .into_iter()
            .map(|g| {
                let target = crate::i18n::words::goal_target(&g.kind, &g.target);
                let (site, name, key) = (g.site.clone(), g.name.clone(), g.name.clone());
                view! {
                    <tr data-name=key>
                        <td>{g.site}</td>
                        <td><b>{g.name}</b></td>
                        <td><code>{target}</code></td>
                        <td>{admin.then(|| view! {
                            <ActionForm action=remove>
                                <input type="hidden" name="site" value=site />
                                <input type="hidden" name="name" value=name />
                                <button type="submit" class="link danger">{t!("sites-goal-remove")}</button>
                            </ActionForm>
                        })}</td>
                    </tr>
                }
                .into_any()
            })
            .collect();
    let headers = vec![
        t!("sites-host"),
        t!("traffic-goal"),
        t!("sites-goal-target"),
    ];
    let body = super::card_table(t!("sites-goals-none"), headers, rows);
    view! {
        <section class="card" data-testid="goals">
            <h2>{t!("sites-goals-heading")}</h2>
            <p class="muted small">{t!("sites-goals-explained")}</p>
            {body}
            <p class="error" role="alert">{other_error(remove.value())}</p>
        </section>
    }
}

/// The form adding a goal to one of the sites.
#[component]
pub(super) fn AddGoalForm(sites: Vec<SiteInfo>, add: ServerAction<AddGoal>) -> impl IntoView {
    let options = sites
        .into_iter()
        .map(|s| {
            let host = s.host.clone();
            view! { <option value=host>{s.host}</option> }
        })
        .collect_view();
    view! {
        <section class="card">
            <h2>{t!("sites-goal-add-heading")}</h2>
            <ActionForm action=add attr:class="form" attr:data-testid="add-goal">
                <label for="goal-site">{t!("sites-host")}</label>
                <select id="goal-site" name="site">{options}</select>
                <label for="goal-name">{t!("sites-goal-name")}</label>
                <input id="goal-name" name="name" type="text" autocomplete="off" placeholder=t!("sites-goal-name-example") />
                <p class="field-error">{field_error(add.value(), "name")}</p>
                <label for="goal-kind">{t!("sites-goal-kind")}</label>
                <select id="goal-kind" name="kind">
                    <option value="page">{t!("sites-goal-kind-page")}</option>
                    <option value="event">{t!("sites-goal-kind-event")}</option>
                </select>
                <label for="goal-target">{t!("sites-goal-target")}</label>
                <input id="goal-target" name="target" type="text" autocomplete="off" placeholder="/signup/done" />
                <p class="muted small">{t!("sites-goal-target-help")}</p>
                <p class="field-error">{field_error(add.value(), "target")}</p>
                <p class="field-error">{field_error(add.value(), "goal")}</p>
                <button type="submit">{t!("sites-goal-add")}</button>
            </ActionForm>
            <p class="error" role="alert">{other_error(add.value())}</p>
        </section>
    }
}
