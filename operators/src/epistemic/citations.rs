//! Statements that cite another document and say how they relate to it: "This KEP builds on
//! KEP-753", "as described in PEP 8", "implements ADR 004", "extends
//! keps/sig-scheduling/895-pod-topology-spread".
//!
//! A memory object whose text names a document key (`kep 753`, `pep 8`, `adr 4`: a family of
//! `[epistemics.citations] families` and a number, written `KEP-753`, `PEP 8`, `ADR 004`, or as a
//! link into `keps/<sig>/753-…` or `pep-0008`) next to a cue of one of the configured edges
//! (`BASED_ON`: "builds on", "based on", "as described in"; `REFINES`: "extends", "follow-up";
//! `IMPLEMENTS`: "implements", "graduates") gets that edge to the statement of the cited
//! document it shares most topic words with (at least `min_shared`; the earliest on a tie).
//! The cited document is the tenant's source whose header names the key (`KEP: 753`, `PEP: 8`,
//! see [`crate::extract::doclinks`]). Each edge one of the statement's cues names is drawn ("extends the
//! API defined in KEP-5307": `REFINES` and `BASED_ON`); a key without a cue draws nothing.
//!
//! Incremental like the rest: a citation is a join of the citing statement, the cited
//! document's header and its statements, so an edit of any of the three retracts exactly what
//! it caused.

use std::sync::{Arc, LazyLock};

use differential_dataflow::VecCollection;
use differential_dataflow::lattice::Lattice;
use regex::Regex;
use serde::{Deserialize, Serialize};
use timely::progress::Timestamp;

use super::rules::Rules;
use crate::extract::cues::CueSet;
use crate::extract::doclinks::{DocLink, DocRole};
use crate::model::{GraphElement, MemoryObject, Relation};
use crate::ontology::{CitationsSpec, OntologyError};

/// `[epistemics.citations]`, compiled.
#[derive(Clone, Debug)]
pub struct CitationRules {
    families: Vec<String>,
    edges: Vec<(String, CueSet)>,
    min_shared: usize,
}

/// `KEP-753`, `PEP 8`, `ADR 004`, `RFC2616`.
static KEY: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(r"(?i)\b([a-z]{3})[- ]?0*(\d{1,5})\b").expect("the key pattern compiles")
});
/// A link into a KEP folder or a PEP file: `keps/sig-node/753-sidecar-containers`, `pep-0008`.
static LINK: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(r"(?i)\b(kep|pep)s/(?:[a-z0-9-]+/)?0*(\d{1,5})-|\b(pep)-0*(\d{1,5})\b")
        .expect("the link pattern compiles")
});

/// A number that names a document without its family: an issue-style `#4381` or
/// `enhancements#4603`, a tracking issue `…/enhancements/issues/753` (a KEP's issue number is its
/// key), or a relative link to a sibling folder `../3063-dynamic-resource-…`.
/// It resolves in every family; only a document of the tenant with that key is ever cited.
static BARE: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(
        r"(?i)(?:(?:^|[\s(\[])|enhancements)#(\d{3,5})\b|\.\./0*(\d{1,5})-[a-z0-9]|enhancements/issues/0*(\d{1,5})\b",
    )
        .expect("the bare number pattern compiles")
});

impl CitationRules {
    /// Compiles the spec.
    pub fn new(spec: &CitationsSpec) -> Result<Self, OntologyError> {
        let edges = spec
            .edge
            .iter()
            .map(|e| {
                // An edge drawn from the cited statement is named as a traversal step back.
                let name = if e.cited_first {
                    format!("<{}", e.name)
                } else {
                    e.name.clone()
                };
                CueSet::new(&e.cues)
                    .map(|cues| (name, cues))
                    .map_err(|err| OntologyError::Invalid(format!("[epistemics.citations] {err}")))
            })
            .collect::<Result<_, _>>()?;
        Ok(CitationRules {
            families: spec.families.iter().map(|f| f.to_lowercase()).collect(),
            edges,
            min_shared: spec.min_shared,
        })
    }

    /// The document keys a text names, with the byte offset of each.
    ///
    /// ```
    /// let rules = epigraph_operators::epistemic::Rules::bundled();
    /// let cites = rules.citations().unwrap();
    /// assert_eq!(
    ///     cites.keys("See KEP-753, PEP 8 and https://git.k8s.io/enhancements/keps/sig-node/2238-liveness-probe-grace-period."),
    ///     [(4, "kep 753".to_string()), (13, "pep 8".to_string()), (55, "kep 2238".to_string())]
    /// );
    /// // A word that only looks like a family ("the 3 pep talks") is no key.
    /// assert!(cites.keys("uses 100 CPUs at 3 pep talks").is_empty());
    /// // A bare issue number or a sibling folder names the document in every family.
    /// let families = |keys: Vec<(usize, String)>| keys.into_iter().map(|(_, k)| k).collect::<Vec<_>>();
    /// assert!(families(cites.keys("Now #4381 defines the base.")).contains(&"kep 4381".to_string()));
    /// assert!(families(cites.keys("see [DRA](../3063-dynamic-resource-allocation/README.md)")).contains(&"kep 3063".to_string()));
    /// // A list number or a year is no key.
    /// assert!(cites.keys("Step #2 runs in 2024.").is_empty());
    /// ```
    pub fn keys(&self, text: &str) -> Vec<(usize, String)> {
        let mut out: Vec<(usize, String)> = Vec::new();
        for c in KEY.captures_iter(text) {
            let family = c[1].to_lowercase();
            if self.families.contains(&family)
                && let Ok(n) = c[2].parse::<u64>()
            {
                out.push((c.get(0).map_or(0, |m| m.start()), format!("{family} {n}")));
            }
        }
        for c in LINK.captures_iter(text) {
            let (family, number) = match (c.get(1), c.get(2), c.get(3), c.get(4)) {
                (Some(f), Some(n), ..) | (_, _, Some(f), Some(n)) => (f, n),
                _ => continue,
            };
            let family = family.as_str().to_lowercase();
            if self.families.contains(&family)
                && let Ok(n) = number.as_str().parse::<u64>()
            {
                out.push((c.get(0).map_or(0, |m| m.start()), format!("{family} {n}")));
            }
        }
        for c in BARE.captures_iter(text) {
            let Some(number) = c.get(1).or_else(|| c.get(2)).or_else(|| c.get(3)) else {
                continue;
            };
            if let Ok(n) = number.as_str().parse::<u64>() {
                for family in &self.families {
                    out.push((c.get(0).map_or(0, |m| m.start()), format!("{family} {n}")));
                }
            }
        }
        out.sort();
        let mut seen = std::collections::BTreeSet::new();
        out.retain(|(_, key)| seen.insert(key.clone()));
        out
    }

    /// The documents a statement cites with an edge: `(key, edge)`, each edge a cue of the
    /// statement names; an edge written `<PRECEDES` runs from the cited document to the
    /// statement.
    ///
    /// ```
    /// let rules = epigraph_operators::epistemic::Rules::bundled();
    /// let cites = rules.citations().unwrap();
    /// assert_eq!(
    ///     cites.cited("This KEP builds on the sidecar containers of KEP-753."),
    ///     [("kep 753".to_string(), "BASED_ON".to_string())]
    /// );
    /// assert_eq!(
    ///     cites.cited("KEP-3022 extends KEP-895 with a minDomains field."),
    ///     [("kep 895".to_string(), "REFINES".to_string())]
    /// );
    /// assert_eq!(
    ///     cites.cited("This proposal extends the API defined in KEP-5307 with a new action."),
    ///     [("kep 5307".to_string(), "BASED_ON".to_string()), ("kep 5307".to_string(), "REFINES".to_string())]
    /// );
    /// assert!(cites.cited("KEP-753 was discussed at length.").is_empty());
    /// assert_eq!(
    ///     cites.cited("Once KEP-4381 has landed, the classic API is removed."),
    ///     [("kep 4381".to_string(), "<PRECEDES".to_string())]
    /// );
    /// assert_eq!(
    ///     cites.cited("The label format is adapted from KEP-2214."),
    ///     [("kep 2214".to_string(), "DERIVES_FROM".to_string())]
    /// );
    /// ```
    pub fn cited(&self, text: &str) -> Vec<(String, String)> {
        let keys = self.keys(text);
        if keys.is_empty() {
            return Vec::new();
        }
        let cues: Vec<(usize, usize, &str)> = self
            .edges
            .iter()
            .flat_map(|(name, set)| {
                set.find_all(text)
                    .into_iter()
                    .map(move |m| (m.start, m.end, name.as_str()))
            })
            .collect();
        // A cue inside a longer cue of another edge is part of it: "a prerequisite for" says
        // ENABLES, not the BASED_ON of "prerequisite".
        let cues: Vec<(usize, usize, &str)> = cues
            .iter()
            .filter(|(start, end, _)| {
                !cues
                    .iter()
                    .any(|(s, e, _)| s <= start && end <= e && e - s > end - start)
            })
            .copied()
            .collect();
        let mut out = Vec::new();
        for (i, (at, key)) in keys.iter().enumerate() {
            // The key that opens the statement is its subject ("KEP-3022 extends KEP-895"),
            // not what it cites.
            if i == 0 && keys.len() > 1 && cues.iter().all(|(start, ..)| start > at) {
                continue;
            }
            // Every edge a cue of the statement names: "extends the API defined in KEP-5307"
            // refines it and is based on it.
            for (.., name) in &cues {
                out.push((key.clone(), name.to_string()));
            }
        }
        out.sort();
        out.dedup();
        out
    }
}

/// A statement citing a document key with an edge.
#[derive(Clone, Debug, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
struct Citation {
    memory_id: String,
    source_id: String,
    edge: String,
    topic: Vec<String>,
    t_valid: Option<i64>,
    recorded_at: Option<i64>,
}

/// The citation edges of `memories` to the statements of the documents whose headers name the
/// cited keys (see the module docs).
pub fn citation_edges<'s, T>(
    memories: VecCollection<'s, T, MemoryObject>,
    doc_links: VecCollection<'s, T, DocLink>,
    rules: Arc<Rules>,
) -> VecCollection<'s, T, GraphElement>
where
    T: Timestamp + Lattice,
{
    let Some(citing) = rules.citations().cloned() else {
        return memories.flat_map(|_| None);
    };
    let min_shared = citing.min_shared;
    let topic_rules = rules.clone();
    let cites = memories.clone().flat_map(move |m| {
        let found = citing.cited(&m.text);
        let topic = if found.is_empty() {
            Vec::new()
        } else {
            rules.topic(&m.text)
        };
        found
            .into_iter()
            .map(|(key, edge)| {
                (
                    (m.tenant.clone(), key),
                    Citation {
                        memory_id: m.id.clone(),
                        source_id: m.source_id.clone(),
                        edge,
                        topic: topic.clone(),
                        t_valid: m.t_valid,
                        recorded_at: m.recorded_at,
                    },
                )
            })
            .collect::<Vec<_>>()
    });
    let owners = doc_links
        .filter(|l| l.role == DocRole::Is)
        .map(|l| ((l.tenant, l.key), l.source_id))
        .distinct();
    let targeted = cites
        .join_map(owners, |(tenant, _), cite, cited| {
            ((tenant.clone(), cited.clone()), cite.clone())
        })
        .filter(|((_, cited), cite)| *cited != cite.source_id);
    let statements = memories.map(move |m| {
        (
            (m.tenant.clone(), m.source_id.clone()),
            (m.id.clone(), m.span.0, topic_rules.topic(&m.text)),
        )
    });
    targeted
        .join_map(statements, |(tenant, cited), cite, (id, start, topic)| {
            let shared = topic.iter().filter(|w| cite.topic.contains(w)).count();
            (
                (tenant.clone(), cited.clone(), cite.clone()),
                (shared, std::cmp::Reverse(*start), id.clone()),
            )
        })
        .filter(move |(_, (shared, ..))| *shared >= min_shared)
        .reduce(|_, input, out| {
            if let Some((best, _)) = input.iter().max_by_key(|(candidate, _)| *candidate) {
                out.push(((*best).clone(), 1));
            }
        })
        .map(|((tenant, _, cite), (_, _, target))| {
            let mut edge = match cite.edge.strip_prefix('<') {
                Some(rel_type) => {
                    Relation::structural(&tenant, rel_type, &target, &cite.memory_id, None)
                }
                None => Relation::structural(&tenant, &cite.edge, &cite.memory_id, &target, None),
            };
            edge.t_valid = cite.t_valid;
            edge.recorded_at = cite.recorded_at;
            GraphElement::Relation(edge)
        })
}
