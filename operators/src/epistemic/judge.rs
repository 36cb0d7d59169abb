//! The judgements, as plain functions over one group: the claims on one subject and attribute
//! (supersession and contradiction), and the statements naming one entity (decisions and plans
//! that replace earlier ones, answers to open questions). The dataflow in the parent module
//! groups, these decide.

use serde::{Deserialize, Serialize};

use super::rules::{Facts, Rules, replaceable};
use crate::model::{EpistemicType, TemporalType};
use crate::ontology::AnswerKind;

/// One claim as the timeline sees it.
#[derive(Clone, Debug, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
pub struct ClaimPoint {
    /// Claim id.
    pub id: String,
    /// Memory object asserting it.
    pub memory_id: String,
    /// Its source.
    pub source_id: String,
    /// Normalised value.
    pub value: String,
    /// Unit of the value (`EUR`, `date`, `count`, …).
    pub unit: String,
    /// Qualifier (`not`, `about`, …).
    pub qualifier: Option<String>,
    /// Whether newer claims may replace it.
    pub temporal_type: TemporalType,
    /// When it was written.
    pub t_valid: Option<i64>,
    /// When it was recorded.
    pub recorded_at: Option<i64>,
    /// Its statement says it updates something.
    pub update: bool,
}

/// How two statements relate.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
pub enum LinkKind {
    /// `from` replaces `to`.
    Supersedes,
    /// `from` and `to` disagree (emitted in both directions).
    Contradicts,
    /// `from` answers the question `to`.
    Answers,
    /// The open question `from` holds up `to`, until it is answered.
    Blocks,
    /// `from` (another source, later) states the same value as `to`: evidence for it.
    Supports,
    /// `from` (another source, later) is `to` in the same words: a copy.
    SameStatement,
    /// `from` (later) carries out the change `to` announced ([`super::lifecycle`]).
    Implements,
}

impl LinkKind {
    /// Every kind.
    pub const ALL: [LinkKind; 7] = [
        LinkKind::Supersedes,
        LinkKind::Contradicts,
        LinkKind::Answers,
        LinkKind::Blocks,
        LinkKind::Supports,
        LinkKind::SameStatement,
        LinkKind::Implements,
    ];

    /// The relationship type in the graph.
    pub fn rel_type(self) -> &'static str {
        match self {
            LinkKind::Supersedes => "SUPERSEDES",
            LinkKind::Contradicts => "CONTRADICTS",
            LinkKind::Answers => "ANSWERS",
            LinkKind::Blocks => "BLOCKS",
            LinkKind::Supports => "SUPPORTS",
            LinkKind::SameStatement => "SAME_STATEMENT",
            LinkKind::Implements => "IMPLEMENTS",
        }
    }
}

/// A judged relation between two memory objects, with its valid and recorded time.
#[derive(Clone, Debug, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
pub struct Link {
    /// What relation.
    pub kind: LinkKind,
    /// Tenant.
    pub tenant: String,
    /// Start memory object.
    pub from: String,
    /// End memory object.
    pub to: String,
    /// Valid from: when the later of the two was written.
    pub t_valid: Option<i64>,
    /// Valid until (contradictions: when one side stopped being current).
    pub t_invalid: Option<i64>,
    /// Recorded: the later recorded time of the two.
    pub recorded_at: Option<i64>,
    /// Why it was drawn, in words ([`super::why`]); the reasons of every rule that drew it.
    pub evidence: Vec<String>,
}

/// What the timeline of one (subject, attribute) decided.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Timeline {
    /// `(older claim, newer claim)`: the older one is invalid from the newer one's valid time.
    pub superseded: Vec<(usize, usize)>,
    /// `(earlier, later)` claims of different sources that disagree while both are current.
    pub contradictions: Vec<(usize, usize)>,
    /// `(earlier, later)` claims of different sources that agree while the earlier is current:
    /// the later one restates the earlier (evidence for it).
    pub supports: Vec<(usize, usize)>,
}

/// Reads the claims on one subject and attribute in the order they were written.
///
/// A claim that disagrees with a current one replaces it when both are dynamic, it is later,
/// and it either says it is an update or comes more than the contradiction window later;
/// otherwise, from another source, they contradict each other and both stay current. A claim
/// of another source that agrees with a current one supports it. Claims of the same statement
/// are never compared.
///
/// ```
/// use epigraph_operators::epistemic::{Rules, judge::{ClaimPoint, timeline}};
/// use epigraph_operators::TemporalType;
/// let day = 86_400_000;
/// let point = |id: &str, source: &str, value: &str, day_n: i64, update: bool| ClaimPoint {
///     id: id.into(), memory_id: id.into(), source_id: source.into(), value: value.into(),
///     unit: "date".into(), qualifier: None, temporal_type: TemporalType::Dynamic, t_valid: Some(day_n * day),
///     recorded_at: None, update };
/// let rules = Rules::bundled();
/// // The term sheet and the memo disagree within days: a contradiction.
/// let t = timeline(&[point("sheet", "a", "320000", 1, false), point("memo", "b", "200000", 3, false)], &rules);
/// assert_eq!((t.superseded.len(), t.contradictions.len()), (0, 1));
/// // "moved to" a week later: the earlier date is replaced.
/// let t = timeline(&[point("plan", "a", "2026-05-13", 1, false), point("slip", "b", "2026-06-03", 8, true)], &rules);
/// assert_eq!(t.superseded, [(0, 1)]);
/// // Another source restating the same date supports it; a restatement in the same source
/// // supports only what other sources said.
/// let t = timeline(&[point("plan", "a", "2026-05-13", 1, false), point("mail", "b", "2026-05-13", 2, false),
///                    point("plan2", "a", "2026-05-13", 3, false)], &rules);
/// assert_eq!((t.supports, t.contradictions.len()), (vec![(0, 1), (1, 2)], 0));
/// ```
pub fn timeline(points: &[ClaimPoint], rules: &Rules) -> Timeline {
    let mut order: Vec<usize> = (0..points.len()).collect();
    order.sort_by(|a, b| {
        let key = |p: &ClaimPoint| (p.t_valid.unwrap_or(i64::MIN), p.recorded_at, p.id.clone());
        key(&points[*a]).cmp(&key(&points[*b]))
    });
    let mut out = Timeline::default();
    let mut current: Vec<usize> = Vec::new();
    for i in order {
        let c = &points[i];
        let mut kept = Vec::with_capacity(current.len() + 1);
        for x in current {
            let p = &points[x];
            if p.memory_id == c.memory_id {
                kept.push(x);
                continue;
            }
            if rules.agree(
                &c.unit,
                (&p.value, p.qualifier.as_deref()),
                (&c.value, c.qualifier.as_deref()),
            ) {
                if p.source_id != c.source_id {
                    out.supports.push((x, i));
                }
                kept.push(x);
                continue;
            }
            let gap = match (c.t_valid, p.t_valid) {
                (Some(newer), Some(older)) if newer > older => Some(newer - older),
                _ => None,
            };
            let replaces = replaceable(c.temporal_type)
                && replaceable(p.temporal_type)
                && gap.is_some_and(|gap| {
                    c.update || gap > rules.window_ms() || rules.latest_wins(&c.unit)
                });
            if replaces {
                out.superseded.push((x, i));
                continue;
            }
            if p.source_id != c.source_id {
                out.contradictions.push((x, i));
            }
            kept.push(x);
        }
        kept.push(i);
        current = kept;
    }
    out
}

/// Decisions (plans) that replace earlier decisions (plans) on the same matter, among the
/// statements naming one entity whose own words are `besides`: each statement replaces the
/// latest earlier one of its type whose topic is the same matter, unless it only restates it
/// (the same topic words). Returns `(newer, older)` indexes into `members`.
///
/// ```
/// use epigraph_operators::epistemic::{Rules, judge::supersessions};
/// use epigraph_operators::{EpistemicType, MemoryObject, Standing, StatementType, TemporalType};
/// let rules = Rules::bundled();
/// let decision = |id: &str, day: i64, text: &str| rules.facts(&MemoryObject {
///     id: id.into(), tenant: "t".into(), memory_type: EpistemicType::Decision,
///     statement_type: StatementType::Fact, temporal_type: TemporalType::Dynamic, text: text.into(),
///     title: None, section: None, outline: vec![], source_id: id.into(), source_version: "v".into(), span: (0, 1),
///     extractor: "x".into(), confidence: 900, t_valid: Some(day * 86_400_000), t_invalid: None,
///     standing: Standing::Current, recorded_at: None, header: false }, &[], &[]);
/// let members = [
///     decision("db", 1, "Decision: Tidewater goes with MySQL for the primary database."),
///     decision("region", 2, "Decision: Tidewater goes with eu-west-1 for the hosting region."),
///     decision("db2", 9, "We are reversing the earlier call on the Tidewater primary database: Postgres instead of MySQL."),
///     decision("db3", 12, "Decision: Tidewater goes with Postgres for the primary database, instead of MySQL."),
/// ];
/// let refs: Vec<_> = members.iter().collect();
/// // db3 restates db2 (same topic words): no second edge.
/// assert_eq!(supersessions(&refs, &["tidewater".to_string()], &rules), [(2, 0)]);
/// ```
pub fn supersessions(members: &[&Facts], besides: &[String], rules: &Rules) -> Vec<(usize, usize)> {
    let mut order: Vec<usize> = (0..members.len())
        .filter(|i| {
            let m = members[*i];
            m.t_valid.is_some()
                && matches!(m.memory_type, EpistemicType::Decision | EpistemicType::Plan)
        })
        .collect();
    order.sort_by(|a, b| rank(members[*a]).cmp(&rank(members[*b])));
    let lookback = rules.spec().matter.max_lookback;
    let mut out = Vec::new();
    let need_cue = rules.spec().matter.require_update_cue;
    for (pos, &i) in order.iter().enumerate() {
        let newer = members[i];
        // A decision that states its choice on a matter is judged by the claim timeline.
        if (need_cue && !newer.update) || newer.chooses {
            continue;
        }
        let earlier = order[..pos]
            .iter()
            .rev()
            .filter(|j| {
                let older = members[**j];
                older.memory_type == newer.memory_type && older.t_valid < newer.t_valid
            })
            .take(lookback)
            .find(|j| {
                let older = members[**j];
                !different_subjects(newer, older)
                    && rules.same_matter(&newer.topic, &older.topic, besides)
            });
        // A restatement (the same topic words) reaffirms the earlier statement, it does not
        // replace it.
        if let Some(&j) = earlier
            && !rules.restates(&newer.topic, &members[j].topic, besides)
        {
            out.push((i, j));
        }
    }
    out
}

/// Answers to the questions among the statements naming one entity: for each question, the
/// first later statement that shares a topic word with it (besides the entity's own), carries
/// what it asks for and is sure enough ([`answer_confidence`] at least `[epistemics.answers]
/// min_confidence`; below it the question stays open). Returns `(answer, question, confidence)`,
/// the first two indexes into `members`.
///
/// ```
/// use epigraph_operators::epistemic::{Rules, judge::answers};
/// use epigraph_operators::{EpistemicType, MemoryObject, Standing, StatementType, TemporalType};
/// let rules = Rules::bundled();
/// let unit = |id: &str, day: i64, t: EpistemicType, text: &str, person: bool| rules.facts(&MemoryObject {
///     id: id.into(), tenant: "t".into(), memory_type: t,
///     statement_type: StatementType::Fact, temporal_type: TemporalType::Dynamic, text: text.into(),
///     title: None, section: None, outline: vec![], source_id: id.into(), source_version: "v".into(), span: (0, 1),
///     extractor: "x".into(), confidence: 900, t_valid: Some(day * 86_400_000), t_invalid: None,
///     standing: Standing::Open, recorded_at: None, header: false },
///     &if person { vec![(0, "p".to_string(), "Person".to_string())] } else { vec![] }, &[]);
/// let members = [
///     unit("q", 1, EpistemicType::Question, "Who owns the BlueWave renewal?", false),
///     unit("noise", 2, EpistemicType::Observation, "The BlueWave renewal call went long.", false),
///     unit("a", 5, EpistemicType::Plan, "Mateo will own the BlueWave renewal.", true),
/// ];
/// let refs: Vec<_> = members.iter().collect();
/// let found = answers(&refs, &["bluewave".to_string()], &rules);
/// assert_eq!(found.iter().map(|(a, q, _)| (*a, *q)).collect::<Vec<_>>(), [(2, 0)]);
/// assert!(found[0].2 >= 0.5);
/// ```
pub fn answers(members: &[&Facts], besides: &[String], rules: &Rules) -> Vec<(usize, usize, f64)> {
    let mut order: Vec<usize> = (0..members.len())
        .filter(|i| members[*i].t_valid.is_some())
        .collect();
    order.sort_by(|a, b| rank(members[*a]).cmp(&rank(members[*b])));
    let spec = &rules.spec().answers;
    let mut out = Vec::new();
    for (pos, &q) in order.iter().enumerate() {
        let question = members[q];
        let Some(need) = question.need else {
            continue;
        };
        let answer = order[pos + 1..]
            .iter()
            .filter(|a| {
                let candidate = members[**a];
                candidate.memory_type != EpistemicType::Question
                    && candidate.t_valid > question.t_valid
            })
            .take(spec.max_candidates)
            .filter_map(|a| {
                let candidate = members[*a];
                let min_shared = if candidate.source_id == question.source_id {
                    spec.min_shared
                } else {
                    spec.min_shared_across_sources.unwrap_or(spec.min_shared)
                };
                let fitting = fits(candidate, need)
                    && rules.shared_words(&question.topic, &candidate.topic, besides) >= min_shared;
                if !fitting {
                    return None;
                }
                let confidence = answer_confidence(question, candidate, besides, rules);
                (confidence >= spec.min_confidence).then_some((*a, confidence))
            })
            .next();
        if let Some((a, confidence)) = answer {
            out.push((a, q, confidence));
        }
    }
    out
}

/// How sure it is that `candidate` answers `question`, from 0 to 1: the share of the question's
/// topic words (besides the entity's own) the candidate repeats — an answer takes up what the
/// question asks about, where a statement that merely shares two words with it does not —
/// weighed by `[epistemics.answers] unasked_weight` when the "question" is not written as one
/// (a risk or an issue the typer read as open), and 0 when the question asks for a person, a
/// date, an amount or a number the candidate does not carry.
///
/// ```
/// use epigraph_operators::epistemic::{Rules, judge::answer_confidence};
/// use epigraph_operators::{EpistemicType, MemoryObject, Standing, StatementType, TemporalType};
/// let rules = Rules::bundled();
/// let unit = |t: EpistemicType, text: &str| rules.facts(&MemoryObject {
///     id: text.into(), tenant: "t".into(), memory_type: t,
///     statement_type: StatementType::Fact, temporal_type: TemporalType::Dynamic, text: text.into(),
///     title: None, section: None, outline: vec![], source_id: "s".into(), source_version: "v".into(), span: (0, 1),
///     extractor: "x".into(), confidence: 900, t_valid: Some(0), t_invalid: None,
///     standing: Standing::Open, recorded_at: None, header: false }, &[], &[]);
/// let onyx = ["onyx".to_string()];
/// let question = unit(EpistemicType::Question, "What's the retention window for Onyx logs?");
/// let answer = unit(EpistemicType::Evaluation, "Retention for Onyx logs is 180 days, per legal.");
/// let aside = unit(EpistemicType::Observation, "Onyx logs are noisy this week.");
/// let sure = answer_confidence(&question, &answer, &onyx, &rules);
/// assert!(sure > answer_confidence(&question, &aside, &onyx, &rules));
/// ```
pub fn answer_confidence(
    question: &Facts,
    candidate: &Facts,
    besides: &[String],
    rules: &Rules,
) -> f64 {
    let spec = &rules.spec().answers;
    let asked = question
        .topic
        .iter()
        .filter(|w| !besides.contains(w))
        .count();
    let shared = rules.shared_words(&question.topic, &candidate.topic, besides);
    let coverage = if asked == 0 {
        0.0
    } else {
        shared as f64 / asked as f64
    };
    let weight = match question.need {
        _ if !question.asks => spec.unasked_weight,
        Some(need) if !fits(candidate, need) => 0.0,
        _ => 1.0,
    };
    (coverage * weight).clamp(0.0, 1.0)
}

/// Open questions holding up statements, among the statements naming one entity: for each
/// statement that says it is held up ([`Facts::blocked`]), the newest question written no later
/// than it (or in the same source) that shares a topic word with it, besides the entity's own.
/// Whether the question was already answered by then is the dataflow's to judge. Returns
/// `(question, blocked)` indexes into `members`.
///
/// ```
/// use epigraph_operators::epistemic::{Rules, judge::blockers};
/// use epigraph_operators::{EpistemicType, MemoryObject, Standing, StatementType, TemporalType};
/// let rules = Rules::bundled();
/// let unit = |id: &str, day: i64, t: EpistemicType, text: &str| rules.facts(&MemoryObject {
///     id: id.into(), tenant: "t".into(), memory_type: t,
///     statement_type: StatementType::Fact, temporal_type: TemporalType::Dynamic, text: text.into(),
///     title: None, section: None, outline: vec![], source_id: id.into(), source_version: "v".into(), span: (0, 1),
///     extractor: "x".into(), confidence: 900, t_valid: Some(day * 86_400_000), t_invalid: None,
///     standing: Standing::Open, recorded_at: None, header: false }, &[], &[]);
/// let members = [
///     unit("q", 1, EpistemicType::Question, "Who owns the BlueWave renewal?"),
///     unit("other", 2, EpistemicType::Question, "When is the BlueWave offsite?"),
///     unit("held", 4, EpistemicType::Plan, "The BlueWave renewal paperwork is blocked until we know."),
///     unit("early", 0, EpistemicType::Plan, "The BlueWave renewal quote is on hold until someone decides."),
/// ];
/// let refs: Vec<_> = members.iter().collect();
/// // "renewal" is shared with the first question only; the quote was written before it.
/// assert_eq!(blockers(&refs, &["bluewave".to_string()], &rules), [(0, 2)]);
/// ```
pub fn blockers(members: &[&Facts], besides: &[String], rules: &Rules) -> Vec<(usize, usize)> {
    let mut questions: Vec<usize> = (0..members.len())
        .filter(|i| members[*i].memory_type == EpistemicType::Question)
        .collect();
    if questions.is_empty() {
        return Vec::new();
    }
    questions.sort_by(|a, b| rank(members[*b]).cmp(&rank(members[*a])));
    let spec = &rules.spec().blocks;
    let mut out = Vec::new();
    for (b, held) in members.iter().enumerate().filter(|(_, f)| f.blocked) {
        let blocker = questions
            .iter()
            .filter(|q| {
                let question = members[**q];
                question.source_id == held.source_id
                    || (question.t_valid.is_some() && question.t_valid <= held.t_valid)
            })
            .take(spec.max_candidates)
            .find(|q| {
                rules.shared_words(&members[**q].topic, &held.topic, besides) >= spec.min_shared
            });
        if let Some(&q) = blocker {
            out.push((q, b));
        }
    }
    out
}

/// Whether two statements are about different things of one kind: each names a project (an
/// organisation, a product, …) and they name none in common. "The Vortex feature flag tool"
/// and "the Onyx feature flag tool" are two matters even though both name LaunchDarkly. So are
/// two statements that each name identifiers in code spans and none in common: "``PyAccess``
/// has been deprecated and will be removed in Pillow 11" does not replace "``im.category`` is
/// deprecated and will be removed in Pillow 10".
fn different_subjects(a: &Facts, b: &Facts) -> bool {
    let (x, y) = (&a.identifiers, &b.identifiers);
    if !x.is_empty() && !y.is_empty() && !x.iter().any(|key| y.contains(key)) {
        return true;
    }
    let things = |f: &Facts, kind: &str| -> Vec<String> {
        f.mentions
            .iter()
            .filter(|(_, _, k)| k == kind)
            .map(|(_, id, _)| id.clone())
            .collect()
    };
    let kinds: std::collections::BTreeSet<&str> = a
        .mentions
        .iter()
        .map(|(_, _, k)| k.as_str())
        .filter(|k| !matches!(*k, "Person" | "Topic"))
        .collect();
    kinds.into_iter().any(|kind| {
        let (x, y) = (things(a, kind), things(b, kind));
        !x.is_empty() && !y.is_empty() && !x.iter().any(|id| y.contains(id))
    })
}

fn fits(candidate: &Facts, need: AnswerKind) -> bool {
    candidate.carries.contains(&need)
}

/// Time order of statements: valid time, recorded time, id.
fn rank(f: &Facts) -> (Option<i64>, Option<i64>, &str) {
    (f.t_valid, f.recorded_at, f.id.as_str())
}
