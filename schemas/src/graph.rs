//! The graph schema in Neo4j: node labels, the properties each is written with, the properties
//! of relationships, and the words by which a document declares itself retired. The pipeline's
//! writer (`epigraph::runtime::views`) writes exactly these, and the query core's Cypher
//! (`epigraph_query::graph`) reads only these: a test on each side checks it against this file.

/// A node label and the properties every node of it is written with.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct NodeSchema {
    /// The label.
    pub label: &'static str,
    /// Its properties, besides `id` and the sink's hashes.
    pub properties: &'static [&'static str],
}

/// Properties of every node and relationship, written by the sink itself.
pub const COMMON_PROPERTIES: [&str; 2] = ["id", "content_hash"];

/// Where a statement, claim or relation was read from (EngramRAG's provenance), on memory
/// objects, claims and relationships.
pub const PROVENANCE_PROPERTIES: [&str; 6] = [
    "source_id",
    "source_version",
    "span_start",
    "span_end",
    "extractor",
    "confidence",
];

/// A source item (a message, a mail, an event, a document version).
pub const SOURCE: NodeSchema = NodeSchema {
    label: "Source",
    properties: &[
        "tenant",
        "source_id",
        "kind",
        "version",
        "title",
        "occurred_at",
        "recorded_at",
    ],
};

/// A typed memory object (decision, constraint, evidence, …).
pub const MEMORY: NodeSchema = NodeSchema {
    label: "Memory",
    properties: &[
        "tenant",
        "type",
        "text",
        "title",
        "source_id",
        "source_version",
        "span_start",
        "span_end",
        "extractor",
        "t_valid",
        "t_invalid",
        "standing",
        "recorded_at",
        "section",
        "statement_type",
        "temporal_type",
        "confidence",
        // A field of its document's header block (`Status: Accepted`): a fact about the
        // document; only such a field retires it. Absent on graphs written before it existed.
        "header",
    ],
};

/// An entity, aggregated across the sources that mention it.
pub const ENTITY: NodeSchema = NodeSchema {
    label: "Entity",
    properties: &[
        "tenant",
        "kind",
        "name",
        "aliases",
        "addresses",
        "mentions",
        "sources",
        "t_valid",
        "recorded_at",
    ],
};

/// A claim: a subject's attribute and value as one statement asserts it.
pub const CLAIM: NodeSchema = NodeSchema {
    label: "Claim",
    properties: &[
        "tenant",
        "memory_id",
        "subject",
        "subject_name",
        "attribute",
        "value",
        "unit",
        "qualifier",
        "temporal_type",
        "t_valid",
        "t_invalid",
        "standing",
        "recorded_at",
        "source_id",
        "source_version",
        "span_start",
        "span_end",
        "extractor",
        "confidence",
    ],
};

/// Every node label.
pub const NODES: [NodeSchema; 4] = [SOURCE, MEMORY, ENTITY, CLAIM];

/// Priority K and the terms of OIDA's Eq. 1, written on memory nodes by the priority view
/// (with their own hash, `priority_hash`).
pub const PRIORITY_PROPERTIES: [&str; 11] = [
    "k",
    "k_upper",
    "k_s",
    "k_h",
    "k_u",
    "k_e",
    "k_g",
    "k_c",
    "k_decay",
    "k_dt",
    "k_unclamped",
];

/// The hash of the priority properties of a memory node.
pub const PRIORITY_HASH: &str = "priority_hash";

/// Properties of every relationship (besides its provenance, when it has one).
pub const RELATIONSHIP_PROPERTIES: [&str; 8] = [
    "tenant",
    "support",
    "t_valid",
    "t_invalid",
    "recorded_at",
    "temporal_type",
    // `"confirmed"` on a judgement a reviewer confirmed.
    "review",
    // On `SAME_AS` only: the identity evidence in words.
    "evidence",
];

/// `Status:` values by which a document declares itself no longer in force.
pub const RETIRED_STATUSES: [&str; 7] = [
    "superseded",
    "rejected",
    "withdrawn",
    "deprecated",
    "obsolete",
    "replaced",
    "abandoned",
];

/// The Cypher regular expression matching a header unit that retires its document: a `Status:`
/// of one of [`RETIRED_STATUSES`] or a `Superseded-By:` field.
///
/// ```
/// let pattern = epigraph_schemas::graph::retired_status_pattern();
/// assert!(pattern.contains("withdrawn|") && pattern.contains("abandoned"));
/// ```
pub fn retired_status_pattern() -> String {
    format!(
        "(?i)(status: *({})|superseded[- ]by *:?).*",
        RETIRED_STATUSES.join("|")
    )
}

/// Whether a property name is written on some node or relationship.
///
/// ```
/// use epigraph_schemas::graph::is_written;
/// assert!(is_written("t_valid") && is_written("k_decay") && !is_written("colour"));
/// ```
pub fn is_written(property: &str) -> bool {
    COMMON_PROPERTIES.contains(&property)
        || PROVENANCE_PROPERTIES.contains(&property)
        || NODES.iter().any(|n| n.properties.contains(&property))
        || PRIORITY_PROPERTIES.contains(&property)
        || property == PRIORITY_HASH
        || RELATIONSHIP_PROPERTIES.contains(&property)
}
