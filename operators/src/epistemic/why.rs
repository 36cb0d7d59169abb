//! Why a judgement was drawn, in words: the evidence every signed edge of [`super::relate`]
//! carries (`Relation::evidence`, written to Neo4j and shown by the query service and the
//! workspace), so that an analyst can check an edge without re-reading both sources.
//!
//! Each function here writes one kind of reason: two claims compared on one attribute
//! ([`claims`]), two statements naming one entity ([`statements`]), and the fixed reasons of a
//! copy ([`COPY`]) and of a reviewer's assertion ([`ASSERTED`]).

use super::judge::{ClaimPoint, LinkKind};
use crate::ontology::AnswerKind;

/// The reason of a `SAME_STATEMENT` edge.
pub const COPY: &str = "the same words (case, spacing and punctuation aside) as an earlier statement of another source";

/// The reason of an edge a reviewer asserted and the rules did not draw.
pub const ASSERTED: &str = "asserted by a reviewer";

/// A claimed value as a reader would say it: the value, then its unit where it is one (a date,
/// a name, a status or a choice is only its value), `not` before a negated one.
///
/// ```
/// use epigraph_operators::epistemic::why::value;
/// assert_eq!(value("2200000", "EUR", None), "2200000 EUR");
/// assert_eq!(value("2026-06-03", "date", None), "2026-06-03");
/// assert_eq!(value("done", "status", Some("not")), "not done");
/// ```
pub fn value(value: &str, unit: &str, qualifier: Option<&str>) -> String {
    let plain = matches!(unit, "" | "date" | "status" | "choice" | "name" | "text");
    let value = if plain {
        value.to_string()
    } else {
        format!("{value} {unit}")
    };
    match qualifier {
        Some(q) if !q.is_empty() => format!("{q} {value}"),
        _ => value,
    }
}

/// Why two claims on one attribute are linked: `from` and `to` are the edge's ends; `matter`
/// names the context words two unnamed subjects share when the claims met as one matter (see
/// [`super::matters`]), empty when they share a subject.
///
/// ```
/// use epigraph_operators::epistemic::{why::claims, judge::{ClaimPoint, LinkKind}};
/// use epigraph_operators::TemporalType;
/// let point = |value: &str, update: bool| ClaimPoint {
///     id: value.into(), memory_id: value.into(), source_id: value.into(), value: value.into(),
///     unit: "EUR".into(), qualifier: None, temporal_type: TemporalType::Dynamic, t_valid: None,
///     recorded_at: None, update };
/// let (memo, sheet) = (point("200000", false), point("320000", false));
/// assert_eq!(claims(LinkKind::Contradicts, "ask_amount", &memo, &sheet, &[]),
///     "ask_amount: 200000 EUR here, 320000 EUR there, both current");
/// assert_eq!(claims(LinkKind::Contradicts, "ask_amount", &memo, &sheet, &["fjord".into(), "seed".into()]),
///     "ask_amount on the matter \"fjord seed\": 200000 EUR here, 320000 EUR there, both current");
/// assert_eq!(claims(LinkKind::Supersedes, "ask_amount", &point("250000", true), &sheet, &[]),
///     "ask_amount: 250000 EUR replaces 320000 EUR (the later statement says it updates)");
/// let choice = |value: &str| ClaimPoint { unit: "choice".into(), ..point(value, true) };
/// assert_eq!(claims(LinkKind::Supersedes, "choice:primary database", &choice("postgres"), &choice("mysql"), &[]),
///     "the choice of primary database: postgres replaces mysql (the later statement says it updates)");
/// ```
pub fn claims(
    kind: LinkKind,
    attribute: &str,
    from: &ClaimPoint,
    to: &ClaimPoint,
    matter: &[String],
) -> String {
    let attribute = match attribute.strip_suffix(":limit") {
        Some(a) => format!("{a} (a limit)"),
        None => attribute.to_string(),
    };
    // A choice's attribute names what is chosen: `choice:primary database`.
    let attribute = match attribute.strip_prefix("choice:") {
        Some(what) => format!("the choice of {what}"),
        None => attribute,
    };
    let on = if matter.is_empty() {
        attribute
    } else {
        format!("{attribute} on the matter \"{}\"", matter.join(" "))
    };
    let said = |p: &ClaimPoint| value(&p.value, &p.unit, p.qualifier.as_deref());
    match kind {
        LinkKind::Supersedes => format!(
            "{on}: {} replaces {} ({})",
            said(from),
            said(to),
            if from.update {
                "the later statement says it updates"
            } else {
                "written later than the contradiction window"
            }
        ),
        LinkKind::Supports => format!("{on}: {} stated again by another source", said(from)),
        _ => format!(
            "{on}: {} here, {} there, both current",
            said(from),
            said(to)
        ),
    }
}

/// Why two statements naming one entity are linked: `entity` is its name, `shared` the topic
/// words they share besides the entity's own, `update` whether the later one says it updates
/// ("instead of", "moved to"), `need` what the question asks for (answers only).
///
/// ```
/// use epigraph_operators::epistemic::{why::statements, judge::LinkKind};
/// use epigraph_operators::ontology::AnswerKind;
/// let words = ["database".to_string(), "primary".to_string()];
/// assert_eq!(statements(LinkKind::Supersedes, "Tidewater", &words, true, None),
///     "a later statement naming Tidewater on the same matter (database, primary), saying it updates");
/// assert_eq!(statements(LinkKind::Answers, "BlueWave", &["renewal".into()], false, Some(AnswerKind::Person)),
///     "names BlueWave, shares renewal with the question and carries the person it asks for");
/// assert_eq!(statements(LinkKind::Blocks, "BlueWave", &["renewal".into()], false, None),
///     "the held-up statement and this open question name BlueWave and share renewal");
/// ```
pub fn statements(
    kind: LinkKind,
    entity: &str,
    shared: &[String],
    update: bool,
    need: Option<AnswerKind>,
) -> String {
    let words = if shared.is_empty() {
        "no topic word".to_string()
    } else {
        shared.join(", ")
    };
    match kind {
        LinkKind::Answers => format!(
            "names {entity}, shares {words} with the question and carries the {} it asks for",
            match need {
                Some(AnswerKind::Person) => "person",
                Some(AnswerKind::Date) => "date",
                Some(AnswerKind::Amount) => "amount",
                Some(AnswerKind::Number) => "number",
                Some(AnswerKind::Statement) | None => "statement",
            }
        ),
        LinkKind::Blocks => {
            format!("the held-up statement and this open question name {entity} and share {words}")
        }
        _ => format!(
            "a later statement naming {entity} on the same matter ({words}){}",
            if update { ", saying it updates" } else { "" }
        ),
    }
}
