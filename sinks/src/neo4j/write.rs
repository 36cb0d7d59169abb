use std::collections::{BTreeMap, HashMap};

use neo4rs::BoltType;

/// A property value written to Neo4j.
#[derive(Clone, Debug, PartialEq)]
pub enum PropValue {
    /// Absent: the property is removed.
    Null,
    /// A boolean.
    Bool(bool),
    /// A 64-bit integer.
    Int(i64),
    /// A 64-bit float.
    Float(f64),
    /// A string.
    Text(String),
    /// A list of strings.
    TextList(Vec<String>),
}

impl From<&PropValue> for BoltType {
    fn from(value: &PropValue) -> Self {
        match value {
            PropValue::Null => BoltType::Null(neo4rs::BoltNull),
            PropValue::Bool(b) => (*b).into(),
            PropValue::Int(i) => (*i).into(),
            PropValue::Float(f) => (*f).into(),
            PropValue::Text(s) => s.clone().into(),
            PropValue::TextList(list) => list.clone().into(),
        }
    }
}

impl From<Option<String>> for PropValue {
    fn from(value: Option<String>) -> Self {
        value.map(PropValue::Text).unwrap_or(PropValue::Null)
    }
}

impl From<Option<i64>> for PropValue {
    fn from(value: Option<i64>) -> Self {
        value.map(PropValue::Int).unwrap_or(PropValue::Null)
    }
}

/// A node to create or replace.
#[derive(Clone, Debug, PartialEq)]
pub struct NodeWrite {
    /// Stable id.
    pub id: String,
    /// Kind labels besides the base `Node` label, e.g. `["Memory", "Decision"]`.
    pub labels: Vec<String>,
    /// Properties; `id` and `content_hash` are added by the sink.
    pub props: BTreeMap<String, PropValue>,
    /// Hash of the content, used to skip unchanged nodes when reconciling.
    pub content_hash: String,
}

/// A relationship to create or replace.
#[derive(Clone, Debug, PartialEq)]
pub struct RelationWrite {
    /// Endpoints and id.
    pub key: RelationKey,
    /// Relationship type, e.g. `DERIVED_FROM`.
    pub rel_type: String,
    /// Properties; `id` and `content_hash` are added by the sink.
    pub props: BTreeMap<String, PropValue>,
    /// Hash of the content.
    pub content_hash: String,
}

/// Properties set on an existing node without touching the others (a memory node's priority):
/// `hash_property` holds the hash, for reconciliation.
#[derive(Clone, Debug, PartialEq)]
pub struct PropertyWrite {
    /// Id of the node.
    pub id: String,
    /// The properties to set.
    pub props: BTreeMap<String, PropValue>,
    /// Hash of the values.
    pub content_hash: String,
}

/// What identifies a relationship: its id and both endpoint node ids.
#[derive(Clone, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct RelationKey {
    /// Stable id.
    pub id: String,
    /// Start node id.
    pub from: String,
    /// End node id.
    pub to: String,
}

/// The net graph writes of one epoch.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct GraphBatch {
    /// Nodes to create or replace.
    pub upsert_nodes: Vec<NodeWrite>,
    /// Relationships to create or replace (their endpoints exist or are in `upsert_nodes`).
    pub upsert_relations: Vec<RelationWrite>,
    /// Ids of nodes to delete, with their relationships.
    pub delete_nodes: Vec<String>,
    /// Relationships to delete.
    pub delete_relations: Vec<RelationKey>,
    /// Properties to set on existing nodes (after the node upserts).
    pub set_properties: Vec<PropertyWrite>,
}

impl GraphBatch {
    /// Whether there is nothing to write.
    pub fn is_empty(&self) -> bool {
        self.upsert_nodes.is_empty()
            && self.upsert_relations.is_empty()
            && self.delete_nodes.is_empty()
            && self.delete_relations.is_empty()
            && self.set_properties.is_empty()
    }
}

pub(crate) fn props_map(
    id: &str,
    content_hash: &str,
    view: &str,
    props: &BTreeMap<String, PropValue>,
) -> BoltType {
    let mut map: HashMap<String, BoltType> = props
        .iter()
        .map(|(k, v)| (k.clone(), BoltType::from(v)))
        .collect();
    map.insert("id".into(), id.into());
    map.insert("content_hash".into(), content_hash.into());
    map.insert("view".into(), view.into());
    map.into()
}

/// Whether a label or relationship type may be spliced into Cypher.
pub fn safe_identifier(name: &str) -> bool {
    name.len() <= 64
        && name.chars().next().is_some_and(|c| c.is_ascii_uppercase())
        && name.chars().all(|c| c.is_ascii_alphanumeric() || c == '_')
}

#[cfg(test)]
mod tests {
    use super::safe_identifier;

    #[test]
    fn only_plain_identifiers_reach_cypher() {
        assert!(safe_identifier("DERIVED_FROM") && safe_identifier("Memory"));
        assert!(
            !safe_identifier("x`) DETACH DELETE n //")
                && !safe_identifier("lower")
                && !safe_identifier("")
        );
    }
}
