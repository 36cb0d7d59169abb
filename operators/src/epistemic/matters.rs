//! Claims judged by the matter they are about, not only by a named subject.
//!
//! In real writing the subject of a disagreement is usually a *matter* — "the seed round", "the
//! launch date" — that each author names differently: "Investment: €320K SAFE with a €2.2M
//! valuation cap." in a document titled "Term sheet summary (Fjord Ventures)" names no entity,
//! so its claims have the title as subject and never meet "The seed round is €200K on a SAFE at
//! a €2.3M valuation cap, led by Fjord Ventures." of an internal memo.
//!
//! Here such claims are compared across sources in three steps:
//! 1. **context**: each claim gets the topic words of its statement, and of its document's
//!    title when no entity is named as its subject, less the words of every attribute's cues
//!    ([`Rules::context`]);
//! 2. **blocking**: the dataflow groups claims by (tenant, attribute, unit, context word), so
//!    only claims sharing a word are ever compared, each with at most `max_lookback` earlier
//!    ones of its group;
//! 3. **judgement** ([`judge_pair`]): two claims of different sources, not both naming an
//!    entity (two different named subjects are two matters; the same one is judged by subject
//!    already), whose contexts share at least `min_shared` words, are read as a two-point
//!    [`timeline`]: disagreeing values within the window contradict, a later claim replaces
//!    an earlier one only when it says it is an update, and agreeing values support.
//!
//! A pair found through several shared words yields the same links; the dataflow keeps them
//! once. Everything is a function of the group's current members, so an edit or a delete
//! retracts exactly what it caused.

use serde::{Deserialize, Serialize};

use super::judge::{ClaimPoint, Link, LinkKind, timeline};
use super::rules::Rules;
use super::why;

/// One claim as matter judgement sees it.
#[derive(Clone, Debug, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
pub struct MatterPoint {
    /// The claim.
    pub point: ClaimPoint,
    /// Its subject key (an entity id, or `title:` when none is named; claims on a recurring
    /// topic, `source:`, never take part).
    pub subject: String,
    /// Whether the subject is a named entity.
    pub named: bool,
    /// Context words ([`Rules::context`]), sorted and unique.
    pub context: Vec<String>,
    /// Its statement says it updates something ("moved to", "instead of"): only then does it
    /// replace an earlier claim on a matter.
    pub says_update: bool,
}

/// The links between the claims of one blocking group (one attribute, unit and context word),
/// each claim compared with at most `max_lookback` earlier ones.
///
/// ```
/// use epigraph_operators::epistemic::{Rules, judge::{ClaimPoint, LinkKind}, matters::{MatterPoint, links}};
/// use epigraph_operators::TemporalType;
/// let day = 86_400_000;
/// let rules = Rules::bundled();
/// let point = |id: &str, value: &str, day_n: i64, subject: &str, named: bool, text: &str, title: Option<&str>| MatterPoint {
///     point: ClaimPoint { id: id.into(), memory_id: id.into(), source_id: id.into(), value: value.into(),
///         unit: "EUR".into(), qualifier: None, temporal_type: TemporalType::Dynamic,
///         t_valid: Some(day_n * day), recorded_at: None, update: false },
///     subject: subject.into(), named, context: rules.context(text, title), says_update: false };
/// let memo = point("memo", "200000", 1, "fjord-ventures", true,
///     "The seed round is €200K on a SAFE at a €2.3M valuation cap, led by Fjord Ventures.", None);
/// let sheet = point("sheet", "320000", 6, "title:term sheet summary (fjord ventures)", false,
///     "Investment: €320K SAFE with a €2.2M valuation cap.", Some("Term sheet summary (Fjord Ventures)"));
/// let other = point("other", "320000", 7, "title:acme pitch", false,
///     "Investment: €320K SAFE.", Some("Acme pitch"));
/// let found = links("t", "ask_amount", &[memo, sheet, other], &rules);
/// let kinds: Vec<_> = found.iter().map(|l| (l.kind, l.from.as_str(), l.to.as_str())).collect();
/// // The memo and the sheet share "fjord venture": they contradict (both ways); the Acme pitch
/// // shares nothing but cue words with either.
/// assert_eq!(kinds, [(LinkKind::Contradicts, "memo", "sheet"), (LinkKind::Contradicts, "sheet", "memo")]);
/// // Each edge says on what matter they met, and the two values.
/// assert!(found[0].evidence[0].starts_with("ask_amount on the matter \""), "{:?}", found[0].evidence);
/// assert!(found[0].evidence[0].ends_with(": 200000 EUR here, 320000 EUR there, both current"));
/// ```
pub fn links(tenant: &str, attribute: &str, points: &[MatterPoint], rules: &Rules) -> Vec<Link> {
    let spec = &rules.spec().matters;
    let mut order: Vec<&MatterPoint> = points.iter().collect();
    order.sort_by(|a, b| {
        let key = |m: &MatterPoint| (m.point.t_valid, m.point.recorded_at, m.point.id.clone());
        key(a).cmp(&key(b))
    });
    let mut out = Vec::new();
    for (i, newer) in order.iter().enumerate() {
        for older in order[..i].iter().rev().take(spec.max_lookback) {
            out.extend(judge_pair(tenant, attribute, older, newer, rules));
        }
    }
    out.sort();
    out.dedup();
    out
}

/// The links between an earlier and a later claim on `attribute` on what may be one matter (see
/// the module docs); none when they are not.
pub fn judge_pair(
    tenant: &str,
    attribute: &str,
    older: &MatterPoint,
    newer: &MatterPoint,
    rules: &Rules,
) -> Vec<Link> {
    let (a, b) = (&older.point, &newer.point);
    // A choice is a decision on a named matter; two unnamed choices are two matters.
    if a.unit == "choice"
        || a.source_id == b.source_id
        || a.memory_id == b.memory_id
        || older.subject == newer.subject
        || (older.named && newer.named)
        || shared(&older.context, &newer.context) < rules.spec().matters.min_shared
    {
        return Vec::new();
    }
    let t = timeline(&[a.clone(), b.clone()], rules);
    let matter = shared_words(&older.context, &newer.context);
    let link = |kind, from: &ClaimPoint, to: &ClaimPoint| Link {
        kind,
        tenant: tenant.to_string(),
        from: from.memory_id.clone(),
        to: to.memory_id.clone(),
        t_valid: a.t_valid.max(b.t_valid),
        t_invalid: None,
        recorded_at: a.recorded_at.max(b.recorded_at),
        evidence: vec![why::claims(kind, attribute, from, to, &matter)],
    };
    let (first, second, second_says) = match (a.t_valid, b.t_valid) {
        (x, y) if x <= y => (a, b, newer.says_update),
        _ => (b, a, older.says_update),
    };
    let mut out = Vec::new();
    if !t.superseded.is_empty() && second_says {
        out.push(link(LinkKind::Supersedes, second, first));
    }
    if !t.contradictions.is_empty() {
        out.push(link(LinkKind::Contradicts, a, b));
        out.push(link(LinkKind::Contradicts, b, a));
    }
    if !t.supports.is_empty() {
        out.push(link(LinkKind::Supports, second, first));
    }
    out
}

/// The words two sorted word lists share.
fn shared_words(a: &[String], b: &[String]) -> Vec<String> {
    a.iter()
        .filter(|w| b.binary_search(w).is_ok())
        .cloned()
        .collect()
}

/// How many words two sorted word lists share.
fn shared(a: &[String], b: &[String]) -> usize {
    let (mut i, mut j, mut n) = (0, 0, 0);
    while i < a.len() && j < b.len() {
        match a[i].cmp(&b[j]) {
            std::cmp::Ordering::Less => i += 1,
            std::cmp::Ordering::Greater => j += 1,
            std::cmp::Ordering::Equal => {
                n += 1;
                i += 1;
                j += 1;
            }
        }
    }
    n
}
