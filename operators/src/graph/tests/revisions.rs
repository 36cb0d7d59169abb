//! Statements revising a stated value through the whole dataflow (see `epistemic::revisions`):
//! release notes of two products in one tenant, stating supported Python versions and a value
//! changed from one figure to another.

use epigraph_schemas::SourceKind;

use super::epistemics::{memories, relation, rounds, source};
use crate::model::{GraphElement, Standing};

const DJANGO_21: &str = "Django 2.1 supports Python 3.5, 3.6, and 3.7.";
const DJANGO_30: &str = "Django 3.0 supports Python 3.6, 3.7, 3.8, and 3.9.";
const NUMPY_120: &str = "This release supports Python 3.7-3.9.";
const HASHER_41: &str = "The default iteration count for the PBKDF2 password hasher is increased from 320,000 to 390,000.";
const HASHER_42: &str = "The default iteration count for the PBKDF2 password hasher is increased from 390,000 to 600,000.";

fn notes(
    product: &str,
    version: &str,
    day: i64,
    body: &str,
) -> (crate::model::SourceVersion, isize) {
    let text = format!("# {product} {version} release notes\n\n{body}\n");
    (
        source(
            &format!("{}-{version}", product.to_lowercase()),
            SourceKind::Document,
            day,
            &text,
        ),
        1,
    )
}

/// `(from text, to text)` of the SUPERSEDES edges.
fn superseding(elements: &[GraphElement]) -> Vec<(String, String)> {
    let text: std::collections::BTreeMap<String, String> = memories(elements)
        .into_values()
        .map(|m| (m.id, m.text))
        .collect();
    let mut out: Vec<_> = relation(elements, "SUPERSEDES")
        .into_iter()
        .filter_map(|r| Some((text.get(&r.from)?.clone(), text.get(&r.to)?.clone())))
        .collect();
    out.sort();
    out
}

#[test]
fn a_later_support_range_and_a_changed_value_supersede_the_earlier_ones_of_their_product() {
    let later = notes("Django", "3.0", 500, &format!("{DJANGO_30}\n\n{HASHER_42}"));
    let result = rounds(vec![
        (
            vec![
                notes("Django", "2.1", 100, &format!("{DJANGO_21}\n\n{HASHER_41}")),
                notes("NumPy", "1.20", 300, NUMPY_120),
            ],
            vec![],
        ),
        (vec![later.clone()], vec![]),
        (vec![(later.0, -1)], vec![]),
    ]);
    let s = |x: &str| x.to_string();
    assert_eq!(
        superseding(&result[0]),
        [],
        "NumPy's Python support is another matter than Django's"
    );
    assert_eq!(
        superseding(&result[1]),
        [(s(DJANGO_30), s(DJANGO_21)), (s(HASHER_42), s(HASHER_41))]
    );
    let all = memories(&result[1]);
    assert_eq!(all[DJANGO_21].standing, Standing::Superseded);
    assert_eq!(all[HASHER_41].standing, Standing::Superseded);
    assert_eq!(all[NUMPY_120].standing, Standing::Current);
    let evidence = &relation(&result[1], "SUPERSEDES")
        .into_iter()
        .find(|r| r.to == all[DJANGO_21].id)
        .expect("the support edge")
        .evidence;
    assert_eq!(
        evidence,
        &["support django python: 3.5, 3.6, 3.7 here, later 3.6, 3.7, 3.8, 3.9"]
    );
    assert_eq!(
        result[2], result[0],
        "deleting the later notes retracts exactly what they drew"
    );
}

#[test]
fn one_version_stated_alone_adds_it_and_supersedes_nothing() {
    // Pillow's style: each release names the one version it adds, never the whole list.
    const PILLOW_40: &str = "Pillow 4.0 supports Python 3.6.";
    const PILLOW_52: &str = "Pillow 5.2 supports Python 3.7.";
    const PILLOW_60: &str = "Pillow 6.0 supports Python 2.7, 3.5, 3.6 and 3.7.";
    const PILLOW_70: &str = "Pillow 7.0 supports Python 3.5, 3.6, 3.7 and 3.8.";
    let result = rounds(vec![(
        vec![
            notes("Pillow", "4.0", 100, PILLOW_40),
            notes("Pillow", "5.2", 200, PILLOW_52),
            notes("Pillow", "6.0", 300, PILLOW_60),
            notes("Pillow", "7.0", 400, PILLOW_70),
        ],
        vec![],
    )]);
    let s = |x: &str| x.to_string();
    // 5.2 leaves 3.6 out but only adds 3.7; 7.0's whole list leaves 2.7 out of 6.0's.
    assert_eq!(superseding(&result[0]), [(s(PILLOW_70), s(PILLOW_60))]);
    let all = memories(&result[0]);
    assert_eq!(all[PILLOW_40].standing, Standing::Current);
    assert_eq!(all[PILLOW_52].standing, Standing::Current);
}
