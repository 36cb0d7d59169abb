//! Citations between numbered documents through the whole dataflow: the documents' headers and
//! paths name them, and a statement of one names another.

use epigraph_schemas::SourceKind;

use super::epistemics::{graph, memories, relation, source};
use crate::model::GraphElement;

/// `(rel_type, from source, to source)` of the edges of `rel_type` between memory objects.
fn between(elements: &[GraphElement], rel_type: &str) -> Vec<(String, String, String)> {
    let by_id: std::collections::BTreeMap<String, String> = memories(elements)
        .into_values()
        .map(|m| (m.id, m.source_id))
        .collect();
    let mut out: Vec<_> = relation(elements, rel_type)
        .into_iter()
        .filter_map(|r| {
            Some((
                r.rel_type.clone(),
                by_id.get(&r.from)?.clone(),
                by_id.get(&r.to)?.clone(),
            ))
        })
        .collect();
    out.sort();
    out.dedup();
    out
}

const SUSPEND: &str = "KEP: 2232\nTitle: Suspend Jobs\nStatus: implemented\n\n\
# Suspend Jobs\n\n## Summary\n\nThis KEP adds a suspend field to the Job spec so that a \
controller can pause and resume Jobs.\n\n### Related to KEP-2926\n\nAs part of \
[KEP-2926](https://github.com/kubernetes/enhancements/issues/2926) the scheduling directives \
of a suspended Job can be changed.\n";

const MUTABLE: &str = "KEP: 2926\nTitle: Mutable scheduling directives\nStatus: implemented\n\n\
# Mutable scheduling directives\n\n## Summary\n\nIn \
[#2232](https://github.com/kubernetes/enhancements/issues/2232) a suspend field was added so \
that a controller can pause Jobs before they start.\n";

#[test]
fn an_uncued_reference_grounds_a_later_document_on_an_earlier_one_only() {
    let elements = graph(
        vec![
            source(
                "sig-apps/2232-suspend-jobs",
                SourceKind::Document,
                1,
                SUSPEND,
            ),
            source(
                "sig-scheduling/2926-mutable",
                SourceKind::Document,
                9,
                MUTABLE,
            ),
        ],
        vec![],
    );
    // 2926 cites 2232 without saying how: grounded on it. 2232 points forward to 2926 the
    // same way: no edge back.
    assert_eq!(
        between(&elements, "BASED_ON"),
        [(
            "BASED_ON".to_string(),
            "sig-scheduling/2926-mutable".to_string(),
            "sig-apps/2232-suspend-jobs".to_string()
        )]
    );
    // The edge says why it was drawn.
    for edge in relation(&elements, "BASED_ON") {
        assert_eq!(
            edge.evidence,
            ["a reference to kep 2232 without a cue (an earlier document)"]
        );
    }
}

#[test]
fn a_cued_citation_keeps_its_cue_as_evidence() {
    let builds = "KEP: 3000\nTitle: Suspend with a reason\nStatus: provisional\n\n\
# Suspend with a reason\n\n## Summary\n\nThis KEP builds on KEP-2232 so that a controller \
can say why it paused Jobs with the suspend field.\n";
    let elements = graph(
        vec![
            source(
                "sig-apps/2232-suspend-jobs",
                SourceKind::Document,
                1,
                SUSPEND,
            ),
            source(
                "sig-apps/3000-suspend-reason",
                SourceKind::Document,
                9,
                builds,
            ),
        ],
        vec![],
    );
    let edges = relation(&elements, "BASED_ON");
    assert_eq!(edges.len(), 1, "{edges:?}");
    assert_eq!(edges[0].evidence, ["cue \"builds on\" naming kep 2232"]);
}

#[test]
fn a_reference_under_non_goals_or_a_questionnaire_question_is_no_ground() {
    let aside = |heading: &str| {
        format!(
            "KEP: 3000\nTitle: Suspend with a reason\nStatus: provisional\n\n\
# Suspend with a reason\n\n## {heading}\n\nIn \
[#2232](https://github.com/kubernetes/enhancements/issues/2232) a suspend field was added so \
that a controller can pause Jobs before they start.\n"
        )
    };
    let grounds = |heading: &str| {
        between(
            &graph(
                vec![
                    source(
                        "sig-apps/2232-suspend-jobs",
                        SourceKind::Document,
                        1,
                        SUSPEND,
                    ),
                    source(
                        "sig-apps/3000-suspend-reason",
                        SourceKind::Document,
                        9,
                        &aside(heading),
                    ),
                ],
                vec![],
            ),
            "BASED_ON",
        )
    };
    // The same statement grounds the KEP under its motivation …
    assert_eq!(grounds("Motivation").len(), 1);
    // … and not where it says what it leaves out or answers a form's question.
    assert!(grounds("Non-Goals").is_empty());
    assert!(grounds("How can this feature be enabled / disabled in a live cluster?").is_empty());
}

#[test]
fn an_unnumbered_document_citing_without_a_cue_draws_nothing() {
    let notes = "Standup notes: we read #2232 again and the suspend field looks fine for the \
pause of Jobs.";
    let elements = graph(
        vec![
            source(
                "sig-apps/2232-suspend-jobs",
                SourceKind::Document,
                1,
                SUSPEND,
            ),
            source("notes/standup", SourceKind::Document, 9, notes),
        ],
        vec![],
    );
    assert!(between(&elements, "BASED_ON").is_empty());
}

#[test]
fn a_link_to_the_folder_of_a_document_numbered_otherwise_resolves_to_it() {
    // The folder says 2043, the header 1884: a link to the folder names the document.
    let assignments = "KEP: 1884\nTitle: Pod resources concrete assignments\n\n\
# Pod resources\n\n## Summary\n\nThe kubelet pod resources endpoint lists the devices \
assigned to each container.\n";
    let dra = "KEP: 3695\nTitle: Pod resources for DRA\n\n# Pod resources for DRA\n\n\
## Summary\n\nThis KEP extends the [pod resources endpoint]\
(https://github.com/kubernetes/enhancements/tree/master/keps/sig-node/2043-pod-resource-concrete-assigments) \
so that it lists the devices of resource claims.\n";
    let elements = graph(
        vec![
            source(
                "sig-node/2043-pod-resource-concrete-assigments",
                SourceKind::Document,
                1,
                assignments,
            ),
            source(
                "sig-node/3695-pod-resources-for-dra",
                SourceKind::Document,
                9,
                dra,
            ),
        ],
        vec![],
    );
    assert_eq!(
        between(&elements, "REFINES"),
        [(
            "REFINES".to_string(),
            "sig-node/3695-pod-resources-for-dra".to_string(),
            "sig-node/2043-pod-resource-concrete-assigments".to_string()
        )]
    );
}

const SPREAD: &str = "KEP: 895\nTitle: Pod Topology Spread\n\n# Pod Topology Spread\n\n\
## Summary\n\nWe introduce `TopologySpreadConstraint` in the pod spec so that pods spread \
evenly across topology domains such as zones.\n";

const MIN_DOMAINS: &str = "KEP: 3022\nTitle: minDomains in Pod Topology Spread\n\n\
# minDomains\n\n## Summary\n\nA new field `minDomains` is introduced to \
`PodSpec.TopologySpreadConstraint[*]` to limit the minimum number of topology domains.\n\n\
The `TopologySpreadConstraint` is evaluated per zone by the scheduler.\n";

#[test]
fn a_statement_extending_an_identifier_refines_the_earlier_document_whose_title_names_it() {
    use super::epistemics::rounds;
    let spread = source(
        "sig-scheduling/895-pod-topology-spread",
        SourceKind::Document,
        1,
        SPREAD,
    );
    let min_domains = source(
        "sig-scheduling/3022-min-domains",
        SourceKind::Document,
        9,
        MIN_DOMAINS,
    );
    let states = rounds(vec![
        (vec![(spread.clone(), 1), (min_domains, 1)], vec![]),
        // The document that introduced it goes away: so does the edge.
        (vec![(spread, -1)], vec![]),
    ]);
    // 3022 names neither KEP-895 nor its folder; its new field extends what 895's title names.
    // 895 introduces the same identifier, but the only other title naming it is a later one's.
    assert_eq!(
        between(&states[0], "REFINES"),
        [(
            "REFINES".to_string(),
            "sig-scheduling/3022-min-domains".to_string(),
            "sig-scheduling/895-pod-topology-spread".to_string()
        )]
    );
    assert!(between(&states[1], "REFINES").is_empty());
}
