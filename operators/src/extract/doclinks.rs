//! Documents that say which document replaced them: the header block of a numbered document
//! (`PEP: 241`, `ADR: 7`, `RFC: 2616`) names itself, and its `Superseded-By:` / `Replaces:`
//! fields name its successors and predecessors. The dataflow joins the names across the
//! tenant's sources into `SUPERSEDES` edges between their source nodes (the newer document →
//! the older one), so a reader of the graph sees which document is current, and the query
//! service can rank a superseded document below the one that replaced it.

use differential_dataflow::VecCollection;
use differential_dataflow::lattice::Lattice;
use serde::{Deserialize, Serialize};
use timely::progress::Timestamp;

use super::segment::header_fields;
use crate::model::{GraphElement, Relation};

/// Header fields that give a document its number; the field's name is the family of the key.
const IDENTITY_FIELDS: [&str; 6] = ["pep", "adr", "rfc", "bip", "kep", "number"];
/// Fields naming the documents that replaced this one.
const SUCCESSOR_FIELDS: [&str; 4] = [
    "superseded-by",
    "superseded by",
    "replaced-by",
    "obsoleted-by",
];
/// Fields naming the documents this one replaces.
const PREDECESSOR_FIELDS: [&str; 4] = ["replaces", "supersedes", "obsoletes", "replaced"];
/// Fields naming the documents this one builds on (a PEP's `Requires: 256, 257`).
const REQUIRED_FIELDS: [&str; 3] = ["requires", "depends-on", "depends on"];
/// Header fields naming other documents by which one replaced which.
pub(crate) const LINK_FIELDS: [&str; 8] = [
    "superseded-by",
    "superseded by",
    "replaced-by",
    "obsoleted-by",
    "replaces",
    "supersedes",
    "obsoletes",
    "replaced",
];

/// What a document's header says about one document key.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
pub enum DocRole {
    /// The key is this document's own.
    Is,
    /// The keyed document replaced this one.
    SupersededBy,
    /// This document replaces the keyed one.
    Replaces,
    /// This document requires the keyed one (`Requires:`): it builds on it.
    Requires,
}

/// One statement of a header about a document key, e.g. (`pep 314`, [`DocRole::SupersededBy`]).
#[derive(Clone, Debug, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
pub struct DocLink {
    /// Tenant.
    pub tenant: String,
    /// The source node whose header says it.
    pub node_id: String,
    /// The id of that source.
    pub source_id: String,
    /// When that source was written.
    pub occurred_at: Option<i64>,
    /// When it was recorded.
    pub recorded_at: Option<i64>,
    /// The document key: family and number (`pep 314`).
    pub key: String,
    /// What the header says about it.
    pub role: DocRole,
    /// The title of the source whose header says it.
    pub title: Option<String>,
}

/// The document keys a body's header block names, with their roles.
///
/// ```
/// use epigraph_operators::extract::doclinks::{DocRole, header_links};
/// let body = "PEP: 314\nTitle: Metadata 1.1\nStatus: Superseded\nReplaces: 241\nSuperseded-By: 345\n\nText.";
/// assert_eq!(header_links(body), [
///     ("pep 314".to_string(), DocRole::Is),
///     ("pep 241".to_string(), DocRole::Replaces),
///     ("pep 345".to_string(), DocRole::SupersededBy),
/// ]);
/// // A document it requires is one it builds on.
/// assert_eq!(header_links("PEP: 258\nRequires: 256, 257\n\nText.")[1..], [
///     ("pep 256".to_string(), DocRole::Requires),
///     ("pep 257".to_string(), DocRole::Requires),
/// ]);
/// // KEPs name each other by their folders.
/// assert_eq!(header_links("KEP: 4671\nStatus: implementable\nReplaces: keps/sig-scheduling/583-coscheduling\n\nText."), [
///     ("kep 4671".to_string(), DocRole::Is),
///     ("kep 583".to_string(), DocRole::Replaces),
/// ]);
/// // Written-out keys with spaces, as a KEP's kep.yaml rendered into a header: the block goes
/// // on past them.
/// let kep = "KEP: 2953\nTitle: Kustomize Plugin Graduation\nOwning SIG: sig-cli\n\
///            Creation date: 2021-09-07\nReplaces: /keps/sig-cli/993-kustomize-generators/README.md\n\nText.";
/// assert_eq!(header_links(kep), [
///     ("kep 2953".to_string(), DocRole::Is),
///     ("kep 993".to_string(), DocRole::Replaces),
/// ]);
/// // A Markdown title can name the document: `# ADR 004: …` above `Supersedes: ADR 001`.
/// assert_eq!(header_links("# ADR 004: Managed Kafka\n\nStatus: Accepted\nSupersedes: ADR 001\n\nText."), [
///     ("adr 4".to_string(), DocRole::Is),
///     ("adr 1".to_string(), DocRole::Replaces),
/// ]);
/// // Without a number of its own, a document's references have no family to resolve in.
/// assert!(header_links("Title: Notes\nReplaces: 3\n\nText.").is_empty());
/// ```
pub fn header_links(body: &str) -> Vec<(String, DocRole)> {
    let fields = header_fields(body);
    let own = fields.iter().find_map(|(key, value)| {
        IDENTITY_FIELDS
            .contains(&key.as_str())
            .then(|| number(value).map(|n| (key.clone(), n)))
            .flatten()
    });
    let Some((family, own)) = own.or_else(|| titled(body)) else {
        return Vec::new();
    };
    let mut links = vec![(format!("{family} {own}"), DocRole::Is)];
    for (key, value) in &fields {
        let role = if SUCCESSOR_FIELDS.contains(&key.as_str()) {
            DocRole::SupersededBy
        } else if PREDECESSOR_FIELDS.contains(&key.as_str()) {
            DocRole::Replaces
        } else if REQUIRED_FIELDS.contains(&key.as_str()) {
            DocRole::Requires
        } else {
            continue;
        };
        for item in value.split([',', ' ']).filter(|s| !s.trim().is_empty()) {
            if let Some(n) = number(item) {
                links.push((format!("{family} {n}"), role));
            }
        }
    }
    links
}

/// The keys a numbered document's path gives it besides its header's: a folder or file named
/// `<number>-<words>` (`keps/sig-node/2043-pod-resource-concrete-assigments/README.md`, whose
/// header says `KEP: 1884`) names the document in the family of its own key, so links to the
/// folder resolve to it. A path of a document without a key of its own names nothing, and a
/// date (`2024-01-05-notes.md`) is no number.
///
/// ```
/// use epigraph_operators::extract::doclinks::{DocRole, path_keys};
/// let own = [("kep 1884".to_string(), DocRole::Is)];
/// assert_eq!(path_keys("sig-node/2043-pod-resource-concrete-assigments", &own), ["kep 2043"]);
/// assert_eq!(path_keys("keps/sig-node/2043-pod-resources/README.md", &own), ["kep 2043"]);
/// // The same number as the header's, a date, or no key of its own: nothing more.
/// assert!(path_keys("sig-node/1884-pod-resources", &own).is_empty());
/// assert!(path_keys("notes/2024-01-05-standup.md", &own).is_empty());
/// assert!(path_keys("sig-node/2043-pod-resources", &[]).is_empty());
/// ```
pub fn path_keys(path: &str, links: &[(String, DocRole)]) -> Vec<String> {
    let Some((family, _)) = links
        .iter()
        .find(|(_, role)| *role == DocRole::Is)
        .and_then(|(key, _)| key.split_once(' '))
    else {
        return Vec::new();
    };
    let Some(number) = path.rsplit('/').find_map(|segment| {
        let digits: String = segment.chars().take_while(char::is_ascii_digit).collect();
        let rest = &segment[digits.len()..];
        let named = rest.starts_with('-') && rest[1..].starts_with(|c: char| c.is_alphabetic());
        (!digits.is_empty() && named)
            .then(|| digits.parse::<u64>().ok())
            .flatten()
    }) else {
        return Vec::new();
    };
    let key = format!("{family} {number}");
    if links
        .iter()
        .any(|(k, role)| *role == DocRole::Is && *k == key)
    {
        return Vec::new();
    }
    vec![key]
}

use epigraph_schemas::graph::RETIRED_STATUSES;

/// Whether a unit is its document's status line: `Status:` (or `Resolution:`, `State:`) and a
/// value of at most three words (`Status: Accepted`, `Status: Final`, `Status: implementable`),
/// or of at most six that starts with a retiring status (`Status: Superseded by ADR 004`).
/// The labelling guide types such a line a decision, and so do the rules; but it says what
/// became of the document, so the priority operator does not let it stand beside the decisions
/// the document records (a_m, `ontology/priority.toml`).
///
/// ```
/// use epigraph_operators::extract::doclinks::is_status_line;
/// assert!(is_status_line("Status: Accepted"));
/// assert!(is_status_line("status: superseded by ADR-12"));
/// // A retiring status may name its successor in more words.
/// assert!(is_status_line("Status: Superseded by ADR 004"));
/// assert!(!is_status_line("Status: we are moving to ADR 004 soon"));
/// assert!(!is_status_line("Status: we decided to move the brokers to a managed service this quarter"));
/// assert!(!is_status_line("Decision: managed Kafka"));
/// assert!(!is_status_line("Status:"));
/// assert!(!is_status_line("We decided to replace the self-hosted brokers."));
/// ```
pub fn is_status_line(unit_text: &str) -> bool {
    let Some((key, value)) = unit_text.split_once(':') else {
        return false;
    };
    let words = value.split_whitespace().count();
    let retiring = value
        .trim()
        .to_ascii_lowercase()
        .split(|c: char| !c.is_alphanumeric())
        .next()
        .is_some_and(|word| RETIRED_STATUSES.contains(&word));
    ["status", "resolution", "state"].contains(&key.trim().to_ascii_lowercase().as_str())
        && ((1..=3).contains(&words) || (retiring && words <= 6))
}

/// Whether a header unit (`Key: value`, as the segmenter yields it) says that its document is
/// retired: a `Status:` of superseded, rejected, withdrawn, deprecated, obsolete, replaced or
/// abandoned, or a non-empty successor field (`Superseded-By: 345`). Body sentences that only
/// mention such words are not headers and do not count.
///
/// ```
/// use epigraph_operators::extract::doclinks::declares_retired;
/// assert!(declares_retired("Status: Withdrawn"));
/// assert!(declares_retired("status: superseded by ADR-12"));
/// assert!(declares_retired("Superseded-By: 345"));
/// assert!(!declares_retired("Status: Accepted"));
/// assert!(!declares_retired("Superseded-By:"));
/// assert!(!declares_retired("The old layout was withdrawn in 2019."));
/// ```
pub fn declares_retired(unit_text: &str) -> bool {
    let Some((key, value)) = unit_text.split_once(':') else {
        return false;
    };
    let key = key.trim().to_ascii_lowercase();
    let value = value.trim().to_ascii_lowercase();
    if SUCCESSOR_FIELDS.contains(&key.as_str()) {
        return !value.is_empty();
    }
    key == "status"
        && value
            .split(|c: char| !c.is_alphanumeric())
            .next()
            .is_some_and(|word| RETIRED_STATUSES.contains(&word))
}

/// The number of a document reference: `0314`, `PEP 314`, `pep-0314`, `ADR-7` → `314`, `7`.
/// A key in a Markdown title: `# ADR 004: Move to a managed Kafka service`, `# KEP-4438: …`.
fn titled(body: &str) -> Option<(String, u64)> {
    let title = body.lines().next()?.trim().strip_prefix('#')?;
    let title = title.trim_start_matches('#').trim();
    let (family, rest) = title.split_at(title.find(|c: char| !c.is_ascii_alphabetic())?);
    let family = family.to_ascii_lowercase();
    if !IDENTITY_FIELDS.contains(&family.as_str()) || family == "number" {
        return None;
    }
    let rest = rest.trim_start_matches(['-', ' ']);
    let digits: String = rest.chars().take_while(char::is_ascii_digit).collect();
    let after = rest[digits.len()..].chars().next();
    if digits.is_empty() || after.is_some_and(|c| c.is_alphanumeric()) {
        return None;
    }
    Some((family, digits.parse().ok()?))
}

fn number(value: &str) -> Option<u64> {
    // A path names a document by its last numbered segment: `keps/sig-apps/1591-daemonset-surge`.
    let value = value
        .trim()
        .trim_matches(['"', '\''])
        .trim_end_matches('/')
        .rsplit('/')
        .find(|segment| segment.starts_with(|c: char| c.is_ascii_digit()))
        .unwrap_or(value);
    let digits: String = value
        .trim()
        .trim_start_matches(|c: char| c.is_alphabetic() || c == '-' || c == ' ')
        .chars()
        .take_while(char::is_ascii_digit)
        .collect();
    digits.parse().ok()
}

/// `SUPERSEDES` edges between the source nodes of numbered documents, from what their headers
/// say: a document whose `Superseded-By:` names a key is replaced by the document with that key,
/// and a document whose `Replaces:` names a key replaces it. Valid from when the newer one was
/// written. A document whose `Requires:` names a key gets a `BASED_ON` edge to it.
pub(crate) fn document_supersessions<'s, T>(
    links: VecCollection<'s, T, DocLink>,
) -> VecCollection<'s, T, GraphElement>
where
    T: Timestamp + Lattice,
{
    let owners = links
        .clone()
        .filter(|l| l.role == DocRole::Is)
        .map(|l| ((l.tenant.clone(), l.key.clone()), l));
    let references = links
        .filter(|l| l.role != DocRole::Is)
        .map(|l| ((l.tenant.clone(), l.key.clone()), l));
    references
        .join_map(owners, |(tenant, _), reference, owner| {
            let (newer, older) = match reference.role {
                DocRole::SupersededBy => (owner, reference),
                _ => (reference, owner),
            };
            let edge = match reference.role {
                DocRole::Requires => "BASED_ON".to_string(),
                _ => "SUPERSEDES".to_string(),
            };
            (
                tenant.clone(),
                edge,
                newer.node_id.clone(),
                older.node_id.clone(),
                newer.occurred_at,
                newer.recorded_at.max(older.recorded_at),
            )
        })
        .filter(|(_, _, newer, older, ..)| newer != older)
        .distinct()
        .map(|(tenant, edge, newer, older, t_valid, recorded_at)| {
            let mut edge = Relation::structural(&tenant, &edge, &newer, &older, None);
            edge.t_valid = t_valid;
            edge.recorded_at = recorded_at;
            GraphElement::Relation(edge)
        })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn references_in_other_spellings_resolve_to_the_same_key() {
        let body = "ADR: 0007\nSupersedes: ADR-3, ADR-5\n\n# Use Postgres";
        assert_eq!(
            header_links(body),
            [
                ("adr 7".to_string(), DocRole::Is),
                ("adr 3".to_string(), DocRole::Replaces),
                ("adr 5".to_string(), DocRole::Replaces),
            ]
        );
    }

    #[test]
    fn a_body_without_a_header_block_has_no_links() {
        assert!(header_links("We decided to use Postgres.\nReplaces: 3").is_empty());
    }
}
