//! The judge on claim timelines. The judgements of whole graphs (extraction, resolution and
//! judgement together) are tested with the dataflow that composes them, in `graph`.

use super::Rules;
use super::judge::{ClaimPoint, timeline};
use crate::model::TemporalType;

const DAY: i64 = 86_400_000;

fn point(id: &str, memory: &str, source: &str, value: &str, day: i64) -> ClaimPoint {
    ClaimPoint {
        id: id.into(),
        memory_id: memory.into(),
        source_id: source.into(),
        value: value.into(),
        unit: "count".into(),
        qualifier: None,
        temporal_type: TemporalType::Dynamic,
        t_valid: Some(day * DAY),
        recorded_at: None,
        update: false,
    }
}

#[test]
fn static_claims_are_never_replaced_only_contradicted() {
    let rules = Rules::bundled();
    let mut founded = point("a", "m1", "s1", "2019", 1);
    let mut refounded = point("b", "m2", "s2", "2020", 400);
    founded.temporal_type = TemporalType::Static;
    founded.unit = "date".into();
    refounded.unit = "date".into();
    refounded.temporal_type = TemporalType::Static;
    refounded.update = true;
    let t = timeline(&[founded, refounded], &rules);
    assert!(t.superseded.is_empty());
    assert_eq!(t.contradictions, [(0, 1)]);
}

#[test]
fn negation_tolerance_and_one_statement() {
    let rules = Rules::bundled();
    let mut not_shipped = point("b", "m2", "s2", "shipped", 2);
    not_shipped.unit = "status".into();
    not_shipped.qualifier = Some("not".into());
    let mut shipped = point("a", "m1", "s1", "shipped", 1);
    shipped.unit = "status".into();
    let t = timeline(&[shipped, not_shipped], &rules);
    assert_eq!(t.contradictions, [(0, 1)], "negation disagrees");
    let t = timeline(
        &[
            point("a", "m1", "s1", "1000", 1),
            point("b", "m2", "s2", "1010", 2),
        ],
        &rules,
    );
    assert_eq!(
        (t.superseded.len(), t.contradictions.len(), t.supports),
        (0, 0, vec![(0, 1)]),
        "within 2 % agrees (and another source agreeing supports)"
    );
    let t = timeline(
        &[
            point("a", "m1", "s1", "1000", 1),
            point("b", "m1", "s1", "3000", 1),
        ],
        &rules,
    );
    assert_eq!(
        t,
        Default::default(),
        "claims of one statement are not compared"
    );
    let t = timeline(
        &[
            point("a", "m1", "s1", "10", 1),
            point("b", "m2", "s2", "12", 3),
            point("c", "m3", "s3", "10", 5),
        ],
        &rules,
    );
    assert_eq!(
        t.contradictions,
        [(0, 1), (1, 2)],
        "a third source agreeing with the first still contradicts the second"
    );
}
