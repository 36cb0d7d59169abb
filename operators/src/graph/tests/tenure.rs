//! Entity relations that end (`epistemic::tenure`), through the whole dataflow.

use std::collections::BTreeMap;

use epigraph_schemas::SourceKind;

use super::extraction::run;
use crate::model::{GraphElement, Relation, SourceVersion};

const DAY: i64 = 86_400_000;

fn doc(id: &str, day: i64, body: &str) -> SourceVersion {
    let mut source = SourceVersion::new("acme", id, SourceKind::Document, body);
    source.occurred_at = Some(day * DAY);
    source
}

/// The relations in force after each round: `(type, from name, to name) → t_invalid in days`.
fn relations_after(
    rounds: Vec<Vec<(SourceVersion, isize)>>,
) -> Vec<BTreeMap<(String, String, String), Option<i64>>> {
    let mut state: BTreeMap<GraphElement, isize> = BTreeMap::new();
    let mut out = Vec::new();
    for updates in run(rounds) {
        for (element, diff) in updates {
            *state.entry(element).or_default() += diff;
        }
        state.retain(|_, diff| *diff != 0);
        let names: BTreeMap<&str, &str> = state
            .keys()
            .filter_map(|e| match e {
                GraphElement::Entity(n) => Some((n.id.as_str(), n.name.as_str())),
                _ => None,
            })
            .collect();
        let name = |id: &str| names.get(id).copied().unwrap_or("?").to_string();
        out.push(
            state
                .keys()
                .filter_map(|e| match e {
                    GraphElement::Relation(Relation {
                        rel_type,
                        from,
                        to,
                        t_invalid,
                        temporal_type: Some(_),
                        ..
                    }) => Some((
                        (rel_type.clone(), name(from), name(to)),
                        t_invalid.map(|t| t / DAY),
                    )),
                    _ => None,
                })
                .collect(),
        );
    }
    out
}

fn key(rel_type: &str, from: &str, to: &str) -> (String, String, String) {
    (rel_type.into(), from.into(), to.into())
}

#[test]
fn a_new_manager_ends_the_old_reporting_line_and_retracting_it_reopens_it() {
    let first = doc("org.md", 1, "Maya Chen reports to Tom Baker.");
    let later = doc("reorg.md", 5, "Maya Chen now reports to Ana Silva.");
    let rounds = relations_after(vec![
        vec![(first, 1)],
        vec![(later.clone(), 1)],
        vec![(later, -1)],
    ]);
    let tom = key("REPORTS_TO", "Maya Chen", "Tom Baker");
    let ana = key("REPORTS_TO", "Maya Chen", "Ana Silva");
    assert_eq!(rounds[0].get(&tom), Some(&None));
    assert_eq!(rounds[1].get(&tom), Some(&Some(5)), "{:?}", rounds[1]);
    assert_eq!(rounds[1].get(&ana), Some(&None));
    assert_eq!(rounds[2].get(&tom), Some(&None), "retracted: current again");
    assert_eq!(rounds[2].get(&ana), None);
}

#[test]
fn an_older_statement_arriving_late_is_ended_by_the_newer_one() {
    // Sources arrive out of order: the reorg (day 5) first, the old org chart (day 1) after.
    let later = doc("reorg.md", 5, "Maya Chen now reports to Ana Silva.");
    let first = doc("org.md", 1, "Maya Chen reports to Tom Baker.");
    let rounds = relations_after(vec![vec![(later, 1)], vec![(first, 1)]]);
    assert_eq!(
        rounds[1].get(&key("REPORTS_TO", "Maya Chen", "Tom Baker")),
        Some(&Some(5))
    );
    assert_eq!(
        rounds[1].get(&key("REPORTS_TO", "Maya Chen", "Ana Silva")),
        Some(&None)
    );
}

#[test]
fn leaving_a_project_ends_working_on_it_and_is_recorded_itself() {
    let joined = doc("kickoff.md", 1, "Maya Chen works on the Atlas project.");
    let left = doc(
        "update.md",
        4,
        "Maya Chen left the Atlas project last week.",
    );
    let rounds = relations_after(vec![vec![(joined, 1)], vec![(left, 1)]]);
    let works = key("WORKS_ON", "Maya Chen", "Atlas");
    assert_eq!(rounds[0].get(&works), Some(&None));
    assert_eq!(rounds[1].get(&works), Some(&Some(4)), "{:?}", rounds[1]);
    assert_eq!(
        rounds[1].get(&key("LEFT", "Maya Chen", "Atlas")),
        Some(&None),
        "{:?}",
        rounds[1]
    );
}

#[test]
fn a_promotion_ends_the_previous_role_but_not_another_persons() {
    let before = doc(
        "team.md",
        1,
        "Maya Chen is the head of engineering. Tom Baker is the CFO.",
    );
    let after = doc("news.md", 6, "Maya Chen was promoted to CTO.");
    let rounds = relations_after(vec![vec![(before, 1)], vec![(after, 1)]]);
    let last = &rounds[1];
    assert_eq!(
        last.get(&key("HOLDS_ROLE", "Maya Chen", "head of engineering")),
        Some(&Some(6)),
        "{last:?}"
    );
    assert_eq!(
        last.get(&key("HOLDS_ROLE", "Maya Chen", "CTO")),
        Some(&None)
    );
    assert_eq!(
        last.get(&key("HOLDS_ROLE", "Tom Baker", "CFO")),
        Some(&None)
    );
}

#[test]
fn a_project_has_one_manager_at_a_time() {
    let first = doc("plan.md", 2, "The Atlas project is managed by Maya Chen.");
    let handover = doc("handover.md", 8, "Tom Baker took over the Atlas project.");
    let rounds = relations_after(vec![vec![(first, 1), (handover, 1)]]);
    assert_eq!(
        rounds[0].get(&key("MANAGES", "Maya Chen", "Atlas")),
        Some(&Some(8)),
        "{:?}",
        rounds[0]
    );
    assert_eq!(
        rounds[0].get(&key("MANAGES", "Tom Baker", "Atlas")),
        Some(&None)
    );
}
