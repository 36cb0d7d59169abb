//! The answer's JSON schema, generated from the ontology: the nine memory types, the entity
//! kinds, the relations between entities (with their signatures) and the edges between memory
//! objects a proposal can assert. The same vocabulary is described in the prompt and checked by
//! [`super::validate`].

use std::collections::BTreeMap;

use epigraph_operators::{EpistemicType, Ontology};
use epigraph_schemas::feedback::Judged;
use serde_json::{Value, json};

/// The most entities an answer lists.
pub const MAX_ENTITIES: usize = 8;
/// The most relations an answer lists.
pub const MAX_RELATIONS: usize = 4;
/// The most edges an answer lists.
pub const MAX_EDGES: usize = 3;
/// The longest name (or edge target) in an answer, in characters.
pub const MAX_NAME_CHARS: usize = 60;

/// A relation's signature: the kinds allowed at each end.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Signature {
    /// Kinds allowed at the start.
    pub from: Vec<String>,
    /// Kinds allowed at the end.
    pub to: Vec<String>,
}

/// The vocabulary an answer may use, read from the ontology.
#[derive(Clone, Debug)]
pub struct Vocabulary {
    /// The nine types (`DECISION`, …) with their roles.
    pub types: Vec<(String, String)>,
    /// Entity kinds (`Person`, …).
    pub kinds: Vec<String>,
    /// Relations between entities (`works_on`, …) with their signatures.
    pub relations: BTreeMap<String, Signature>,
    /// Edges between memory objects a proposal can assert (`SUPPORTS`, …) with their meaning:
    /// the ontology's edges that are judged edges.
    pub edges: BTreeMap<String, String>,
}

impl Vocabulary {
    /// The vocabulary of `ontology`.
    ///
    /// ```
    /// let ontology = epigraph_operators::Ontology::bundled();
    /// let vocabulary = epigraph::llm::schema::Vocabulary::of(&ontology);
    /// assert_eq!(vocabulary.types.len(), 9);
    /// assert!(vocabulary.kinds.contains(&"Person".to_string()));
    /// assert_eq!(vocabulary.relations["reports_to"].to, vec!["Person".to_string()]);
    /// assert!(vocabulary.edges.contains_key("CONTRADICTS"));
    /// assert!(!vocabulary.edges.contains_key("BASED_ON"), "no proposal asserts it");
    /// ```
    pub fn of(ontology: &Ontology) -> Self {
        let types = EpistemicType::ALL
            .iter()
            .map(|t| (t.name(), ontology.type_spec(*t).role.clone()))
            .collect();
        let kinds = ontology.kinds.iter().map(|k| k.name.clone()).collect();
        let relations = ontology
            .relations
            .iter()
            .map(|r| {
                (
                    r.name.clone(),
                    Signature {
                        from: r.from.clone(),
                        to: r.to.clone(),
                    },
                )
            })
            .collect();
        let edges = ontology
            .edges
            .iter()
            .filter(|e| Judged::parse(&e.name).is_some())
            .map(|e| (e.name.clone(), e.semantics.clone()))
            .collect();
        Vocabulary {
            types,
            kinds,
            relations,
            edges,
        }
    }

    /// The JSON schema of an answer (for `response_format`). Lists and names are bounded
    /// ([`MAX_ENTITIES`], [`MAX_RELATIONS`], [`MAX_EDGES`], [`MAX_NAME_CHARS`]): a grammar
    /// without bounds lets a small model list entities until it runs out of tokens.
    pub fn json_schema(&self) -> Value {
        let names = |it: Vec<&String>| json!(it);
        let name = json!({"type": "string", "maxLength": MAX_NAME_CHARS});
        json!({
            "type": "object",
            "properties": {
                "memory_type": {"type": "string", "enum": names(self.types.iter().map(|(n, _)| n).collect())},
                "entities": {"type": "array", "maxItems": MAX_ENTITIES, "items": {
                    "type": "object",
                    "properties": {
                        "name": name,
                        "kind": {"type": "string", "enum": names(self.kinds.iter().collect())}
                    },
                    "required": ["name", "kind"]
                }},
                "relations": {"type": "array", "maxItems": MAX_RELATIONS, "items": {
                    "type": "object",
                    "properties": {
                        "relation": {"type": "string", "enum": names(self.relations.keys().collect())},
                        "from": name,
                        "to": name
                    },
                    "required": ["relation", "from", "to"]
                }},
                "edges": {"type": "array", "maxItems": MAX_EDGES, "items": {
                    "type": "object",
                    "properties": {
                        "edge": {"type": "string", "enum": names(self.edges.keys().collect())},
                        "to": name
                    },
                    "required": ["edge", "to"]
                }}
            },
            "required": ["memory_type", "entities", "relations", "edges"]
        })
    }

    /// The vocabulary described for the prompt: the answer's shape, every type with its role,
    /// every kind, every relation with its signature, every edge with its meaning.
    pub fn describe(&self) -> String {
        let mut text = String::from(
            "Answer with one JSON object: {\"memory_type\": TYPE, \"entities\": [{\"name\": NAME, \
             \"kind\": KIND}], \"relations\": [{\"relation\": RELATION, \"from\": NAME, \"to\": \
             NAME}], \"edges\": [{\"edge\": EDGE, \"to\": ID}]}.\nTYPE, one of:\n",
        );
        for (name, role) in &self.types {
            text.push_str(&format!("- {name}: {role}\n"));
        }
        text.push_str(&format!("KIND, one of: {}.\n", self.kinds.join(", ")));
        text.push_str("RELATION between entities, one of (FROM kinds -> TO kinds):\n");
        for (name, sig) in &self.relations {
            text.push_str(&format!(
                "- {name}: {} -> {}\n",
                sig.from.join("|"),
                sig.to.join("|")
            ));
        }
        text.push_str("EDGE from this unit to another memory object ID shown, one of:\n");
        for (name, meaning) in &self.edges {
            text.push_str(&format!("- {name}: {meaning}\n"));
        }
        text.push_str(
            "A relation's NAME must be an entity of your \"entities\" or a known entity. Use \
             empty lists when there is nothing.",
        );
        text
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_schema_names_the_whole_vocabulary() {
        let ontology = Ontology::bundled();
        let vocabulary = Vocabulary::of(&ontology);
        let schema = vocabulary.json_schema();
        let types = schema["properties"]["memory_type"]["enum"]
            .as_array()
            .unwrap();
        assert_eq!(types.len(), 9);
        assert_eq!(
            schema["properties"]["relations"]["items"]["properties"]["relation"]["enum"]
                .as_array()
                .unwrap()
                .len(),
            ontology.relations.len()
        );
        let described = vocabulary.describe();
        for needle in ["DECISION", "works_on: Person -> Project|Product", "ANSWERS"] {
            assert!(described.contains(needle), "{needle}: {described}");
        }
    }
}
