//! Time, supersession, contradiction and answered questions, incrementally.
//!
//! [`relate`] takes the extracted graph (memory objects, claims, mentions, entities and the
//! `SAME_AS` overlay of [`crate::resolve`]) and returns it with:
//! - **claims judged per (canonical subject, attribute, unit)** ([`judge::timeline`]): a dynamic
//!   claim replaced by a newer one gets `t_invalid` and stands `superseded`; two current claims of
//!   different sources that disagree become a `CONTRADICTS` pair between their statements, both
//!   kept and each pointing to the other (the edge's `t_invalid` is when one side stopped being
//!   current);
//! - **decisions and plans on the same matter** ([`judge::supersessions`]): a later one gets a
//!   `SUPERSEDES` edge to the latest earlier one of its type; so does a statement whose claim
//!   replaced another statement's claim;
//! - **answered questions** ([`judge::answers`]): the first later statement that answers an open
//!   question gets an `ANSWERS` edge to it, and the question stands `answered` from then on;
//! - **blocked statements** ([`judge::blockers`]): a statement that says it is held up
//!   ("blocked until", "on hold pending") gets a `BLOCKS` edge from the latest open question on
//!   its matter; the edge ends (`t_invalid`) when the question is answered.
//!
//! [`tenure`] ends entity relations that a later statement replaces ("now reports to", "left
//! the team"): they get `t_invalid`.
//!
//! [`citations`] draws the edges of statements that cite another document ("builds on
//! KEP-753") to that document's statements; the dataflow in `graph` runs it beside [`relate`].
//!
//! Statements are grouped by the canonical entities they name (so `SAME_AS` merges count, and a
//! `distinct` verdict separates again) and claims by their canonical subject. Nothing is deleted:
//! superseded and answered statements keep their nodes, demoted by their standing and their
//! `t_invalid`. Every derived edge carries valid time (when the later side was written) and
//! recorded time (when the later side was recorded), so the graph can be read as of any date.
//!
//! Reviewers have the last word ([`review`]): a judgement a reviewer rejected is retracted before
//! anything follows from it (a rejected supersession leaves the older statement current), and a
//! confirmed one carries `review: "confirmed"`.
//!
//! Every edge drawn here says why, in words ([`why`]): the attribute and the two values of the
//! claims compared, or the entity and the topic words two statements share, with the matter they
//! met on; `Relation::evidence` carries it to Neo4j and the query service.
//!
//! Everything here is a function of the current inputs: an edit or a delete retracts exactly
//! what it caused, and the incremental result equals a recomputation from scratch (tested).

pub mod amend;
pub mod boilerplate;
pub mod citations;
pub mod code;
pub mod earlier;
pub mod extensions;
pub mod judge;
pub mod lifecycle;
pub mod matters;
pub mod replaced;
pub mod restated;
pub mod review;
pub mod revisions;
mod rules;
pub mod tenure;
pub mod why;

use std::sync::Arc;

use differential_dataflow::VecCollection;
use differential_dataflow::lattice::Lattice;
use serde::{Deserialize, Serialize};
use timely::progress::Timestamp;

use crate::extract::claims::title_subject;
use crate::extract::edge;
pub use crate::extract::mentions::owner_rank;
use crate::model::{Claim, EpistemicType, GraphElement, MemoryObject, Relation, Standing};
use crate::resolve::SAME_AS;
use judge::{ClaimPoint, Link, LinkKind};
use matters::MatterPoint;
use review::Review;
pub use rules::{Facts, Rules, asks};

/// One input of the per-memory reduce.
#[derive(Clone, Debug, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
enum Part {
    Memory(Box<MemoryObject>),
    /// An entity it names: span start, entity id, kind.
    Mention(u32, String, String),
    Claim(Box<Claim>),
}

/// One input of the per-entity reduce.
#[derive(Clone, Debug, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
enum Member {
    /// Topic words of one of the entity's names, and that name.
    Names(Vec<String>, String),
    /// A statement naming the entity.
    Statement(Box<Facts>),
}

/// A later judgement on one memory object or claim: its standing and since when.
type Judged = (String, (Standing, Option<i64>));

/// The graph with supersession, contradiction and answers judged (see the module docs).
///
/// ```
/// use differential_dataflow::input::Input;
/// use epigraph_operators::{GraphElement, SourceVersion, Standing, extract::Extractor, extract_graph};
/// use epigraph_schemas::SourceKind;
/// use std::sync::Arc;
/// use timely::dataflow::operators::capture::{Capture, Extract};
///
/// let day = 86_400_000;
/// let mut early = SourceVersion::new("t", "a", SourceKind::Chat, "Project Atlas launch is planned for May 13, 2027.");
/// early.occurred_at = Some(day);
/// let mut late = SourceVersion::new("t", "b", SourceKind::Chat, "Heads up, the Project Atlas launch slips to June 3, 2027.");
/// late.occurred_at = Some(9 * day);
/// let captured = timely::example(move |scope| {
///     let sources = scope.new_collection_from(vec![early, late]).1;
///     extract_graph(sources, Arc::new(Extractor::bundled())).inner.capture()
/// });
/// let elements: Vec<GraphElement> = captured.extract().into_iter()
///     .flat_map(|(_, v)| v).map(|(e, _, _)| e).collect();
/// let superseded: Vec<_> = elements.iter().filter_map(|e| match e {
///     GraphElement::Memory(m) if m.standing == Standing::Superseded => Some(m.text.as_str()),
///     _ => None,
/// }).collect();
/// assert_eq!(superseded, ["Project Atlas launch is planned for May 13, 2027."]);
/// assert!(elements.iter().any(|e| matches!(e, GraphElement::Relation(r) if r.rel_type == "SUPERSEDES")));
/// ```
pub fn relate<'s, T>(
    elements: VecCollection<'s, T, GraphElement>,
    rules: Arc<Rules>,
) -> VecCollection<'s, T, GraphElement>
where
    T: Timestamp + Lattice,
{
    let reviews = elements.clone().flat_map(|_| None::<Review>);
    let numbered = elements.clone().flat_map(|_| None);
    relate_reviewed(elements, rules, reviews, numbered)
}

/// [`relate`] with reviewers' verdicts on its judgements (see [`review`]): rejected edges are
/// retracted with what followed from them, confirmed ones are marked.
///
/// `numbered` are the `(tenant, source id)` of numbered documents (a KEP, a PEP, an ADR: their
/// header names their key). Such documents replace each other through their headers
/// (`Replaces:`, `Superseded-By:`) and citations, drawn before this function; so no statement of
/// one supersedes a statement of another here: a plan or figure of one that differs from
/// another's is a different design, not the revision of that document's decision.
pub fn relate_reviewed<'s, T>(
    elements: VecCollection<'s, T, GraphElement>,
    rules: Arc<Rules>,
    reviews: VecCollection<'s, T, Review>,
    numbered: VecCollection<'s, T, (String, String)>,
) -> VecCollection<'s, T, GraphElement>
where
    T: Timestamp + Lattice,
{
    let memories = elements.clone().flat_map(|e| match e {
        GraphElement::Memory(m) => Some(m),
        _ => None,
    });
    let claims = elements.clone().flat_map(|e| match e {
        GraphElement::Claim(c) => Some(c),
        _ => None,
    });
    let same_as = elements
        .clone()
        .flat_map(|e| match e {
            GraphElement::Relation(r) if r.rel_type == SAME_AS => Some((r.from, r.to)),
            _ => None,
        })
        .distinct();
    // (entity, (memory, span start)) for every statement naming an entity.
    let mention_spans = elements
        .clone()
        .flat_map(|e| match e {
            GraphElement::Relation(r) if r.rel_type == edge::MENTIONS => {
                let start = r.provenance.as_ref().map_or(0, |p| p.span.0);
                Some((r.to, (r.from, start)))
            }
            _ => None,
        })
        .distinct();
    let mentions = mention_spans
        .clone()
        .map(|(entity, (memory, _))| (entity, memory))
        .distinct();
    let entities = elements.clone().flat_map(|e| match e {
        GraphElement::Entity(n) => Some((n.id.clone(), n)),
        _ => None,
    });
    // Edges drawn before this module (document supersessions, citations) can be rejected too.
    let rest = elements.filter(|e| !matches!(e, GraphElement::Memory(_) | GraphElement::Claim(_)));
    let reviewable = |e: &GraphElement| matches!(e, GraphElement::Relation(r) if review::reviewable(&r.rel_type));
    let judged_before = rest.clone().flat_map(move |e| match e {
        GraphElement::Relation(r) if review::reviewable(&r.rel_type) => Some(r),
        _ => None,
    });
    let rest = review::without_rejected(judged_before, reviews.clone(), review::edge_key)
        .map(GraphElement::Relation)
        .concat(rest.filter(move |e| !reviewable(e)));

    // What the rules know of each memory object.
    let kinds = entities.clone().map(|(id, n)| (id, n.kind));
    let named = mention_spans
        .join_map(kinds, |entity, (memory, start), kind| {
            (
                memory.clone(),
                Part::Mention(*start, entity.clone(), kind.clone()),
            )
        })
        .distinct();
    // Boilerplate takes part in no judgement: it has no facts, so none of its claims or
    // statements is ever grouped.
    let boilerplate_spec = rules.spec().boilerplate;
    let boilerplate = if boilerplate_spec.enabled {
        boilerplate::ids(memories.clone(), boilerplate_spec)
    } else {
        memories.clone().flat_map(|_| None)
    };
    let judged_memories = memories
        .clone()
        .map(|m| (m.id.clone(), m))
        .antijoin(boilerplate)
        .map(|(_, m)| m);
    // Statements retiring an identifier, against the earlier ones naming it (see `lifecycle`).
    let lifecycle_links = lifecycle::links(judged_memories.clone(), rules.clone());
    // Statements revising a value stated earlier (supported versions, "from A to B").
    let revision_links = revisions::links(judged_memories.clone(), rules.clone());
    let facts_rules = rules.clone();
    let facts = judged_memories
        .map(|m| (m.id.clone(), Part::Memory(Box::new(m))))
        .concat(named)
        .concat(
            claims
                .clone()
                .map(|c| (c.memory_id.clone(), Part::Claim(Box::new(c)))),
        )
        .reduce(move |_id, parts, out| {
            let mut memory = None;
            let mut mentions = Vec::new();
            let mut claims = Vec::new();
            for (part, _) in parts {
                match part {
                    Part::Memory(m) => memory = Some(m),
                    Part::Mention(start, entity, kind) => {
                        mentions.push((*start, entity.clone(), kind.clone()))
                    }
                    Part::Claim(c) => claims.push(&**c),
                }
            }
            if let Some(memory) = memory {
                out.push((facts_rules.facts(memory, &mentions, &claims), 1));
            }
        })
        .map(|(_, facts)| facts);
    let facts_by_id = facts.clone().map(|f| (f.id.clone(), f));

    // Claims, per canonical subject, attribute and unit.
    let judged = rules.clone();
    let context_rules = rules.clone();
    let points = claims
        .clone()
        .filter(move |c| judged.judged(&c.attribute))
        .map(|c| (c.memory_id.clone(), c))
        .join_map(facts_by_id.clone(), move |_, c, f| {
            // The subject, with every name the tenant knows. A topic (a recurring phrase such as
            // "Load test results") names what kind of statement it is, not what it is about:
            // such claims are judged only within their own source.
            // A choice's owner is the entity named where the phrasing puts it (the claim's
            // span: "… for Vesper", "the Vesper primary database"), with every name the tenant
            // knows and a project preferred where one name also fits a team; else what the
            // extractor read.
            let subject = if c.unit == "choice" {
                f.owner_within(c.provenance.span)
                    .unwrap_or_else(|| c.subject.clone())
            } else {
                f.subject_at(c.provenance.span.0)
                    .unwrap_or_else(|| c.subject.clone())
            };
            let subject = if f.kind_of(&subject) == Some("Topic") {
                format!("source:{}", c.provenance.source_id)
            } else {
                subject
            };
            // A claim without a named subject has its document's title as subject (never a
            // chat channel's name): the title's words are part of what it is about.
            let named = !subject.starts_with("title:") && !subject.starts_with("source:");
            let titled = subject == title_subject(f.title.as_deref(), &f.source_id).0;
            let title = if titled { f.title.as_deref() } else { None };
            let context = context_rules.context_of(&f.topic, title);
            (
                subject,
                (
                    (
                        // A constraint's value is a limit ("capped at 14"), not the value: limits
                        // are compared with limits only.
                        if f.memory_type == EpistemicType::Constraint {
                            format!("{}:limit", c.attribute)
                        } else {
                            c.attribute.clone()
                        },
                        c.unit.trim_end_matches(":not").to_string(),
                    ),
                    ClaimPoint {
                        id: c.id.clone(),
                        memory_id: c.memory_id.clone(),
                        source_id: c.provenance.source_id.clone(),
                        value: c.value.clone(),
                        // `status:not` is the status, negated.
                        unit: c.unit.trim_end_matches(":not").to_string(),
                        qualifier: if c.unit.ends_with(":not") {
                            Some("not".into())
                        } else {
                            c.qualifier.clone()
                        },
                        temporal_type: c.temporal_type,
                        t_valid: c.t_valid,
                        recorded_at: c.recorded_at,
                        // A later decision or plan on the same matter replaces the earlier
                        // one, whether or not it says so ("We are aiming to launch on June 3").
                        update: f.update
                            || matches!(
                                f.memory_type,
                                EpistemicType::Decision | EpistemicType::Plan
                            ),
                    },
                    (f.tenant.clone(), f.memory_type),
                    (named, context, f.update),
                ),
            )
        })
        .filter(|(_, (_, _, (_, memory_type), _))| *memory_type != EpistemicType::Question);
    // Claims, per matter (see `matters`): blocked by (tenant, attribute, unit, context word).
    let matter_rules = rules.clone();
    let enabled = rules.spec().matters.enabled;
    // A recurring topic's claims (`source:` subjects) stay within their own source, here too.
    let by_matter = points
        .clone()
        .filter(move |(subject, _)| enabled && !subject.starts_with("source:"))
        .flat_map(
            |(subject, (key, point, (tenant, _), (named, context, says_update)))| {
                let matter = MatterPoint {
                    point,
                    subject,
                    named,
                    context: context.clone(),
                    says_update,
                };
                context
                    .into_iter()
                    .map(move |word| ((tenant.clone(), key.clone(), word), matter.clone()))
            },
        )
        .reduce(move |(tenant, (attribute, _), _), input, out| {
            let points: Vec<MatterPoint> = input.iter().map(|(p, _)| (*p).clone()).collect();
            for link in matters::links(tenant, attribute, &points, &matter_rules) {
                out.push((link, 1));
            }
        })
        .map(|(_, link)| link);
    let points = points.map(|(subject, (key, point, meta, _))| (subject, (key, point, meta)));
    let timeline_rules = rules.clone();
    let judged_claims = canonical(points, same_as.clone())
        .map(|(subject, ((attribute, unit), point, (tenant, _)))| {
            ((tenant, subject, attribute, unit), point)
        })
        .reduce(move |(tenant, _, attribute, _), input, out| {
            let points: Vec<ClaimPoint> = input.iter().map(|(p, _)| (*p).clone()).collect();
            for judged in judge_timeline(tenant, attribute, &points, &timeline_rules) {
                out.push((judged, 1));
            }
        })
        .map(|(_, judged)| judged);
    let claim_states = judged_claims.clone().flat_map(|j| match j {
        TimelineOut::Claim(id, state) => Some((id, state)),
        TimelineOut::Link(_) => None,
    });
    let claim_links = judged_claims.flat_map(|j| match j {
        TimelineOut::Link(link) => Some(link),
        TimelineOut::Claim(..) => None,
    });

    // Statements, per canonical entity they name.
    let named = canonical(mentions, same_as.clone())
        .map(|(entity, memory)| (memory, entity))
        .distinct()
        .join_map(facts_by_id, |_, entity, f| {
            (
                (f.tenant.clone(), entity.clone()),
                Member::Statement(Box::new(f.clone())),
            )
        });
    let names_rules = rules.clone();
    let names = canonical(
        entities.map(|(id, n)| (id, (n.tenant, n.aliases, n.name))),
        same_as,
    )
    .map(move |(entity, (tenant, aliases, name))| {
        let words: Vec<String> = aliases.iter().flat_map(|a| names_rules.topic(a)).collect();
        ((tenant, entity), Member::Names(words, name))
    });
    let restated_spec = rules.spec().restated;
    let block_rules = rules.clone();
    let picks = named
        .concat(names)
        .reduce(move |_, input, out| {
            let mut besides = Vec::new();
            let mut members = Vec::new();
            // The entity's name as the reasons say it: the first of its component's names.
            let mut name: Option<&str> = None;
            for (member, _) in input {
                match member {
                    Member::Names(words, n) => {
                        besides.extend(words.iter().cloned());
                        name = Some(name.map_or(n.as_str(), |m| m.min(n.as_str())));
                    }
                    Member::Statement(f) => members.push(&**f),
                }
            }
            besides.sort();
            besides.dedup();
            let name = name.unwrap_or("the same entity");
            let mut draw = |kind, from: &Facts, to: &Facts, confidence: Option<f64>| {
                let shared = block_rules.shared_topic(&from.topic, &to.topic, &besides);
                let need = if kind == LinkKind::Answers {
                    to.need
                } else {
                    None
                };
                let mut why = why::statements(kind, name, &shared, from.update, need);
                if let Some(confidence) = confidence {
                    why.push_str(&format!(" (confidence {confidence:.2})"));
                }
                out.push((pick(kind, from, to, why), 1));
            };
            for (newer, older) in judge::supersessions(&members, &besides, &block_rules) {
                draw(LinkKind::Supersedes, members[newer], members[older], None);
            }
            for (answer, question, sure) in judge::answers(&members, &besides, &block_rules) {
                draw(
                    LinkKind::Answers,
                    members[answer],
                    members[question],
                    Some(sure),
                );
            }
            for (question, held) in judge::blockers(&members, &besides, &block_rules) {
                draw(LinkKind::Blocks, members[question], members[held], None);
            }
        })
        .map(|(_, pick)| pick);
    // One per newer statement (the latest earlier one), one per question (the first answer),
    // one per blocked statement (the latest question holding it up).
    let matter_links = picks
        .map(|p| ((p.kind, p.keyed.clone()), p))
        .reduce(|(kind, _), input, out| {
            let best = match kind {
                LinkKind::Answers => input.iter().map(|(p, _)| *p).min_by_key(|p| p.rank()),
                _ => input.iter().map(|(p, _)| *p).max_by_key(|p| p.rank()),
            };
            if let Some(p) = best {
                out.push((p.link.clone(), 1));
            }
        })
        .map(|(_, link)| link);
    let restatements = restated::links(memories.clone(), restated_spec);
    let links = with_all_reasons(
        claim_links
            .concat(matter_links)
            .concat(by_matter)
            .concat(restatements)
            .concat(lifecycle_links)
            .concat(revision_links),
    );
    // No supersession between the statements of two numbered documents (see above).
    let in_numbered = memories
        .clone()
        .map(|m| ((m.tenant.clone(), m.source_id.clone()), m.id.clone()))
        .semijoin(numbered.distinct())
        .map(|((_, source), id)| (id, source));
    let across_numbered = links
        .clone()
        .filter(|l| l.kind == LinkKind::Supersedes)
        .map(|l| (l.from.clone(), l))
        .join_map(in_numbered.clone(), |_, l, from| {
            (l.to.clone(), (l.clone(), from.clone()))
        })
        .join_map(in_numbered, |_, (l, from), to| (l.clone(), from != to))
        .filter(|(_, across)| *across)
        .map(|(l, _)| l);
    let links = links.concat(across_numbered.negate());
    // The statements of a document that a later one's header replaces (see `replaced`).
    let replaced_spec = rules.spec().replaced;
    let links = if replaced_spec.enabled {
        let documents_replaced = rest.clone().flat_map(|e| match e {
            GraphElement::Relation(r) if r.rel_type == "SUPERSEDES" => Some(r),
            _ => None,
        });
        links.concat(replaced::links(
            memories.clone(),
            documents_replaced,
            rules.clone(),
            replaced_spec.min_shared,
        ))
    } else {
        links
    };
    let link_key = |l: &Link| {
        (
            l.tenant.clone(),
            l.kind.rel_type().to_string(),
            l.from.clone(),
            l.to.clone(),
        )
    };
    let links = review::without_rejected(links, reviews.clone(), link_key);
    // Asserted links the rules did not draw themselves.
    let drawn = links.clone().map(move |l| link_key(&l)).distinct();
    let asserted = review::asserted_links(reviews.clone(), memories.clone())
        .map(move |l| (link_key(&l), l))
        .antijoin(drawn)
        .map(|(_, l)| l);
    let links = links.concat(asserted);
    let blocks = links.clone().filter(|l| l.kind == LinkKind::Blocks);
    let links = links.filter(|l| l.kind != LinkKind::Blocks);

    // Standing of memory objects: superseded or answered since the earliest such link.
    let memory_states = links
        .clone()
        .flat_map(|l| match l.kind {
            LinkKind::Supersedes => Some((l.to, (Standing::Superseded, l.t_valid))),
            LinkKind::Answers => Some((l.to, (Standing::Answered, l.t_valid))),
            LinkKind::Contradicts
            | LinkKind::Blocks
            | LinkKind::Supports
            | LinkKind::SameStatement
            | LinkKind::Implements => None,
        })
        .reduce(|_, input, out| {
            let first = input
                .iter()
                .map(|(s, _)| *s)
                .min_by_key(|(standing, t)| (t.unwrap_or(i64::MAX), *standing));
            if let Some(state) = first {
                out.push((*state, 1));
            }
        });
    // A question holds a statement up until it is answered; one answered before the statement
    // was written never held it up.
    let answered = memory_states
        .clone()
        .filter(|(_, (standing, _))| *standing == Standing::Answered)
        .map(|(question, (_, at))| (question, at));
    let blocks = restate(
        blocks.map(|l| (l.from.clone(), l)),
        answered.map(|(question, at)| (question, (Standing::Answered, at))),
        |l, (_, at)| l.t_invalid = at,
    )
    .filter(|l| !matches!((l.t_invalid, l.t_valid), (Some(end), Some(start)) if end <= start));
    let links = links.concat(blocks);
    let memories = restate(
        memories.map(|m| (m.id.clone(), m)),
        memory_states,
        |m, (standing, t)| {
            m.standing = standing;
            m.t_invalid = t;
        },
    );
    let claims = restate(
        claims.map(|c| (c.id.clone(), c)),
        claim_states,
        |c, (standing, t)| {
            c.standing = standing;
            c.t_invalid = t;
        },
    );
    let edges = links.map(|l| {
        let mut r = Relation::structural(&l.tenant, l.kind.rel_type(), &l.from, &l.to, None);
        r.t_valid = l.t_valid;
        r.t_invalid = l.t_invalid;
        r.recorded_at = l.recorded_at;
        r.evidence = l.evidence;
        r
    });
    let edges = review::marked(edges, reviews).map(GraphElement::Relation);
    rest.concat(memories.map(GraphElement::Memory))
        .concat(claims.map(GraphElement::Claim))
        .concat(edges)
}

/// A candidate link from one entity's group, with what ranks it among the other groups' picks.
#[derive(Clone, Debug, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
struct Pick {
    kind: LinkKind,
    /// The newer statement (supersession) or the question (answers).
    keyed: String,
    /// The other side's time and id.
    other: (Option<i64>, String),
    link: Link,
}

impl Pick {
    fn rank(&self) -> (Option<i64>, &str) {
        (self.other.0, self.other.1.as_str())
    }
}

fn pick(kind: LinkKind, from: &Facts, to: &Facts, why: String) -> Pick {
    let link = Link {
        kind,
        tenant: from.tenant.clone(),
        from: from.id.clone(),
        to: to.id.clone(),
        t_valid: from.t_valid,
        t_invalid: None,
        recorded_at: later(from.recorded_at, to.recorded_at),
        evidence: vec![why],
    };
    match kind {
        LinkKind::Answers => Pick {
            kind,
            keyed: to.id.clone(),
            other: (from.t_valid, from.id.clone()),
            link,
        },
        // Valid from when the blocked statement was written; keyed by it, the latest question
        // wins.
        LinkKind::Blocks => Pick {
            kind,
            keyed: to.id.clone(),
            other: (from.t_valid, from.id.clone()),
            link: Link {
                t_valid: later(from.t_valid, to.t_valid),
                ..link
            },
        },
        _ => Pick {
            kind,
            keyed: from.id.clone(),
            other: (to.t_valid, to.id.clone()),
            link,
        },
    }
}

/// One output of a claim timeline.
#[derive(Clone, Debug, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
enum TimelineOut {
    /// A superseded claim and since when.
    Claim(String, (Standing, Option<i64>)),
    /// A link between the statements of two claims.
    Link(Link),
}

fn judge_timeline(
    tenant: &str,
    attribute: &str,
    points: &[ClaimPoint],
    rules: &Rules,
) -> Vec<TimelineOut> {
    let t = judge::timeline(points, rules);
    let why = |kind, from: usize, to: usize| {
        vec![why::claims(
            kind,
            attribute,
            &points[from],
            &points[to],
            &[],
        )]
    };
    let mut t_invalid: Vec<Option<i64>> = vec![None; points.len()];
    let mut out = Vec::new();
    for &(older, newer) in &t.superseded {
        t_invalid[older] = points[newer].t_valid;
        out.push(TimelineOut::Claim(
            points[older].id.clone(),
            (Standing::Superseded, points[newer].t_valid),
        ));
        if points[older].memory_id != points[newer].memory_id {
            out.push(TimelineOut::Link(Link {
                kind: LinkKind::Supersedes,
                tenant: tenant.to_string(),
                from: points[newer].memory_id.clone(),
                to: points[older].memory_id.clone(),
                t_valid: points[newer].t_valid,
                t_invalid: None,
                recorded_at: later(points[newer].recorded_at, points[older].recorded_at),
                evidence: why(LinkKind::Supersedes, newer, older),
            }));
        }
    }
    for &(earlier, restating) in &t.supports {
        out.push(TimelineOut::Link(Link {
            kind: LinkKind::Supports,
            tenant: tenant.to_string(),
            from: points[restating].memory_id.clone(),
            to: points[earlier].memory_id.clone(),
            t_valid: points[restating].t_valid,
            t_invalid: t_invalid[earlier],
            recorded_at: later(points[restating].recorded_at, points[earlier].recorded_at),
            evidence: why(LinkKind::Supports, restating, earlier),
        }));
    }
    for &(a, b) in &t.contradictions {
        let until = match (t_invalid[a], t_invalid[b]) {
            (Some(x), Some(y)) => Some(x.min(y)),
            (x, y) => x.or(y),
        };
        for (from, to) in [(a, b), (b, a)] {
            out.push(TimelineOut::Link(Link {
                kind: LinkKind::Contradicts,
                tenant: tenant.to_string(),
                from: points[from].memory_id.clone(),
                to: points[to].memory_id.clone(),
                t_valid: later(points[a].t_valid, points[b].t_valid),
                t_invalid: until,
                recorded_at: later(points[a].recorded_at, points[b].recorded_at),
                evidence: why(LinkKind::Contradicts, from, to),
            }));
        }
    }
    out
}

fn later(a: Option<i64>, b: Option<i64>) -> Option<i64> {
    a.max(b)
}

/// One link per relation and times, with the reasons of every rule that drew it: two rules
/// (a claim timeline and a matter, say) may draw the same edge, which is one edge in the graph.
fn with_all_reasons<'s, T>(links: VecCollection<'s, T, Link>) -> VecCollection<'s, T, Link>
where
    T: Timestamp + Lattice,
{
    links
        .map(|mut l| {
            let why = std::mem::take(&mut l.evidence);
            (l, why)
        })
        .reduce(|_, input, out| {
            let mut all: Vec<String> = input.iter().flat_map(|(w, _)| w.iter().cloned()).collect();
            all.sort();
            all.dedup();
            out.push((all, 1));
        })
        .map(|(mut l, why)| {
            l.evidence = why;
            l
        })
}

/// Re-keys `(entity, value)` by the entity's canonical id (itself when it has none).
fn canonical<'s, T, V>(
    keyed: VecCollection<'s, T, (String, V)>,
    same_as: VecCollection<'s, T, (String, String)>,
) -> VecCollection<'s, T, (String, V)>
where
    T: Timestamp + Lattice,
    V: differential_dataflow::ExchangeData + std::hash::Hash,
{
    let merged = keyed
        .clone()
        .join_map(same_as.clone(), |_, value, canonical| {
            (canonical.clone(), value.clone())
        });
    let alone = keyed.antijoin(same_as.map(|(member, _)| member).distinct());
    merged.concat(alone)
}

/// `records` with the judged ones rewritten by `apply`.
fn restate<'s, T, R>(
    records: VecCollection<'s, T, (String, R)>,
    judged: VecCollection<'s, T, Judged>,
    apply: impl Fn(&mut R, (Standing, Option<i64>)) + 'static,
) -> VecCollection<'s, T, R>
where
    T: Timestamp + Lattice,
    R: differential_dataflow::ExchangeData + std::hash::Hash,
{
    let rewritten = records
        .clone()
        .join_map(judged.clone(), move |_, record, state| {
            let mut record = record.clone();
            apply(&mut record, *state);
            record
        });
    let untouched = records
        .antijoin(judged.map(|(id, _)| id).distinct())
        .map(|(_, record)| record);
    rewritten.concat(untouched)
}

#[cfg(test)]
mod tests;
