//! Checking a model's answer: JSON, the schema's shape, the ontology's names, and every
//! relation's signature. A refused answer carries its reason, which is fed back to the model on
//! the next try and counted in the metrics by its [`Rejection::code`].

use std::collections::{BTreeMap, BTreeSet};

use serde::{Deserialize, Serialize};

use super::schema::{MAX_EDGES, MAX_ENTITIES, MAX_NAME_CHARS, MAX_RELATIONS, Vocabulary};

/// An answer as the schema shapes it.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Answer {
    /// One of the nine types.
    pub memory_type: String,
    /// Entities the unit names.
    pub entities: Vec<AnswerEntity>,
    /// Relations between entities.
    pub relations: Vec<AnswerRelation>,
    /// Edges from the unit to other memory objects shown.
    pub edges: Vec<AnswerEdge>,
}

/// An entity of an answer.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct AnswerEntity {
    /// Its name.
    pub name: String,
    /// Its kind.
    pub kind: String,
}

/// A relation of an answer.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct AnswerRelation {
    /// The relation's name (`works_on`).
    pub relation: String,
    /// The entity at its start (a name).
    pub from: String,
    /// The entity at its end.
    pub to: String,
}

/// An edge of an answer.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct AnswerEdge {
    /// The edge (`SUPPORTS`).
    pub edge: String,
    /// The id of a memory object shown with the unit (`m1`).
    pub to: String,
}

/// What the model was shown: the tenant's known entities and the memory objects an edge may
/// point to.
#[derive(Clone, Debug, Default)]
pub struct Shown {
    /// Known entities: lower-case name → kind.
    pub entities: BTreeMap<String, String>,
    /// Ids of the other memory objects shown (`m1`, …).
    pub targets: BTreeSet<String>,
}

/// Why an answer is refused.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum Rejection {
    /// The answer is not JSON.
    #[error("the answer is not JSON: {0}")]
    NotJson(String),
    /// JSON, but not of the schema's shape.
    #[error("the answer does not fit the schema: {0}")]
    Schema(String),
    /// A type outside the nine.
    #[error("unknown memory_type {0:?}")]
    UnknownType(String),
    /// A kind outside the ontology.
    #[error("entity {name:?} has unknown kind {kind:?}")]
    UnknownKind {
        /// The entity.
        name: String,
        /// Its kind.
        kind: String,
    },
    /// A relation outside the ontology.
    #[error("unknown relation {0:?}")]
    UnknownRelation(String),
    /// A relation end that names no entity.
    #[error("relation {relation}: {name:?} is neither one of your entities nor a known entity")]
    UnknownEndpoint {
        /// The relation.
        relation: String,
        /// The name.
        name: String,
    },
    /// A relation whose ends violate its signature.
    #[error(
        "relation {relation}: its {side} {name:?} is a {kind}, but the signature wants {allowed}"
    )]
    Signature {
        /// The relation.
        relation: String,
        /// `from` or `to`.
        side: &'static str,
        /// The entity.
        name: String,
        /// Its kind.
        kind: String,
        /// The kinds the signature allows there.
        allowed: String,
    },
    /// An edge outside the ontology's judged edges.
    #[error("unknown edge {0:?}")]
    UnknownEdge(String),
    /// An edge to a memory object that was not shown.
    #[error("edge {edge} points to {to:?}, which is not one of the memory objects shown")]
    UnknownTarget {
        /// The edge.
        edge: String,
        /// Where it points.
        to: String,
    },
}

impl Rejection {
    /// A short label for the metrics.
    pub fn code(&self) -> &'static str {
        match self {
            Rejection::NotJson(_) => "not_json",
            Rejection::Schema(_) => "schema",
            Rejection::UnknownType(_) => "unknown_type",
            Rejection::UnknownKind { .. } => "unknown_kind",
            Rejection::UnknownRelation(_) => "unknown_relation",
            Rejection::UnknownEndpoint { .. } => "unknown_endpoint",
            Rejection::Signature { .. } => "signature",
            Rejection::UnknownEdge(_) => "unknown_edge",
            Rejection::UnknownTarget { .. } => "unknown_target",
        }
    }
}

/// The JSON inside an answer: the text itself, or the inside of a Markdown code fence.
fn json_text(content: &str) -> &str {
    let trimmed = content.trim();
    let Some(rest) = trimmed.strip_prefix("```") else {
        return trimmed;
    };
    let rest = rest.strip_prefix("json").unwrap_or(rest);
    rest.strip_suffix("```").unwrap_or(rest).trim()
}

/// The schema's bounds on lists and names.
fn check_bounds(answer: &Answer) -> Result<(), Rejection> {
    for (what, len, max) in [
        ("entities", answer.entities.len(), MAX_ENTITIES),
        ("relations", answer.relations.len(), MAX_RELATIONS),
        ("edges", answer.edges.len(), MAX_EDGES),
    ] {
        if len > max {
            return Err(Rejection::Schema(format!(
                "{len} {what}, the schema allows at most {max}"
            )));
        }
    }
    let names = answer
        .entities
        .iter()
        .map(|e| &e.name)
        .chain(answer.relations.iter().flat_map(|r| [&r.from, &r.to]))
        .chain(answer.edges.iter().map(|e| &e.to));
    for name in names {
        if name.chars().count() > MAX_NAME_CHARS {
            return Err(Rejection::Schema(format!(
                "the name {name:?} is longer than {MAX_NAME_CHARS} characters"
            )));
        }
    }
    Ok(())
}

/// Check an answer against the vocabulary and what was shown.
///
/// ```
/// use epigraph::llm::schema::Vocabulary;
/// use epigraph::llm::validate::{Shown, validate};
/// let vocabulary = Vocabulary::of(&epigraph_operators::Ontology::bundled());
/// let shown = Shown::default();
/// let ok = r#"{"memory_type": "DECISION", "entities": [{"name": "Maya", "kind": "Person"},
///   {"name": "Atlas", "kind": "Project"}], "relations": [{"relation": "works_on",
///   "from": "Maya", "to": "Atlas"}], "edges": []}"#;
/// assert_eq!(validate(ok, &vocabulary, &shown).unwrap().memory_type, "DECISION");
/// let backwards = ok.replace(r#""from": "Maya", "to": "Atlas""#, r#""from": "Atlas", "to": "Maya""#);
/// let reason = validate(&backwards, &vocabulary, &shown).unwrap_err().to_string();
/// assert!(reason.contains("signature wants Person"), "{reason}");
/// ```
pub fn validate(
    content: &str,
    vocabulary: &Vocabulary,
    shown: &Shown,
) -> Result<Answer, Rejection> {
    let (answer, mut dropped) = salvage(content, vocabulary, shown)?;
    match dropped.is_empty() {
        true => Ok(answer),
        false => Err(dropped.remove(0)),
    }
}

/// [`validate`], but an answer whose only faults are relations or edges is kept without them:
/// the answer and what was dropped, each with its reason. What the last try of a unit gets
/// (a small model's type and entities are often right where a relation between two names it
/// made up is not); an answer that is not JSON, not of the schema, or of an unknown type or
/// kind is still refused.
///
/// ```
/// use epigraph::llm::schema::Vocabulary;
/// use epigraph::llm::validate::{Shown, salvage};
/// let vocabulary = Vocabulary::of(&epigraph_operators::Ontology::bundled());
/// let answer = r#"{"memory_type": "PLAN", "entities": [{"name": "Maya", "kind": "Person"},
///   {"name": "Atlas", "kind": "Project"}], "relations": [{"relation": "works_on",
///   "from": "Maya", "to": "Atlas"}, {"relation": "works_on", "from": "Heads up", "to": "Atlas"}],
///   "edges": [{"edge": "SUPPORTS", "to": "m9"}]}"#;
/// let (kept, dropped) = salvage(answer, &vocabulary, &Shown::default()).unwrap();
/// assert_eq!((kept.memory_type.as_str(), kept.relations.len(), kept.edges.len()), ("PLAN", 1, 0));
/// assert_eq!(dropped.len(), 2);
/// assert!(dropped[0].to_string().contains("\"Heads up\" is neither"), "{}", dropped[0]);
/// assert!(salvage(r#"{"memory_type": "RUMOUR", "entities": [], "relations": [], "edges": []}"#,
///     &vocabulary, &Shown::default()).is_err());
/// ```
pub fn salvage(
    content: &str,
    vocabulary: &Vocabulary,
    shown: &Shown,
) -> Result<(Answer, Vec<Rejection>), Rejection> {
    let text = escape_raw_controls(json_text(content));
    let value: serde_json::Value =
        serde_json::from_str(&text).map_err(|e| Rejection::NotJson(e.to_string()))?;
    let mut answer: Answer =
        serde_json::from_value(value).map_err(|e| Rejection::Schema(e.to_string()))?;
    check_bounds(&answer)?;
    if !vocabulary
        .types
        .iter()
        .any(|(t, _)| *t == answer.memory_type)
    {
        return Err(Rejection::UnknownType(answer.memory_type));
    }
    let mut kinds: BTreeMap<String, String> = shown.entities.clone();
    for entity in &answer.entities {
        if !vocabulary.kinds.contains(&entity.kind) {
            return Err(Rejection::UnknownKind {
                name: entity.name.clone(),
                kind: entity.kind.clone(),
            });
        }
        kinds.insert(entity.name.trim().to_lowercase(), entity.kind.clone());
    }
    let mut dropped = Vec::new();
    answer.relations.retain(
        |relation| match relation_fault(relation, vocabulary, &kinds) {
            None => true,
            Some(rejection) => {
                dropped.push(rejection);
                false
            }
        },
    );
    answer.edges.retain(|edge| {
        let fault = if !vocabulary.edges.contains_key(&edge.edge) {
            Some(Rejection::UnknownEdge(edge.edge.clone()))
        } else if !shown.targets.contains(&edge.to) {
            Some(Rejection::UnknownTarget {
                edge: edge.edge.clone(),
                to: edge.to.clone(),
            })
        } else {
            None
        };
        match fault {
            None => true,
            Some(rejection) => {
                dropped.push(rejection);
                false
            }
        }
    });
    Ok((answer, dropped))
}

/// What is wrong with a relation: its name, an end that names no entity, or its signature.
fn relation_fault(
    relation: &AnswerRelation,
    vocabulary: &Vocabulary,
    kinds: &BTreeMap<String, String>,
) -> Option<Rejection> {
    let Some(signature) = vocabulary.relations.get(&relation.relation) else {
        return Some(Rejection::UnknownRelation(relation.relation.clone()));
    };
    for (side, name, allowed) in [
        ("from", &relation.from, &signature.from),
        ("to", &relation.to, &signature.to),
    ] {
        let Some(kind) = kinds.get(&name.trim().to_lowercase()) else {
            return Some(Rejection::UnknownEndpoint {
                relation: relation.relation.clone(),
                name: name.clone(),
            });
        };
        if !allowed.contains(kind) {
            return Some(Rejection::Signature {
                relation: relation.relation.clone(),
                side,
                name: name.clone(),
                kind: kind.clone(),
                allowed: allowed.join("|"),
            });
        }
    }
    None
}

/// A model's JSON with the raw control characters inside its strings escaped (`"a⏎b"` →
/// `"a\nb"`): JSON forbids them there, small models write them, and the meaning is plain.
/// Outside strings they are whitespace or an error either way, and left alone.
///
/// ```
/// use epigraph::llm::validate::escape_raw_controls;
/// assert_eq!(escape_raw_controls("{\"a\": \"one\ntwo\"}\n"), "{\"a\": \"one\\ntwo\"}\n");
/// assert_eq!(escape_raw_controls(r#"{"a": "q\"\n"}"#), r#"{"a": "q\"\n"}"#);
/// assert_eq!(escape_raw_controls("\"\u{1}\""), "\"\\u0001\"");
/// ```
pub fn escape_raw_controls(text: &str) -> std::borrow::Cow<'_, str> {
    if !text.chars().any(|c| c.is_control()) {
        return std::borrow::Cow::Borrowed(text);
    }
    let mut out = String::with_capacity(text.len() + 8);
    let (mut in_string, mut escaped) = (false, false);
    for c in text.chars() {
        if in_string && !escaped && (c as u32) < 0x20 {
            match c {
                '\n' => out.push_str("\\n"),
                '\r' => out.push_str("\\r"),
                '\t' => out.push_str("\\t"),
                _ => out.push_str(&format!("\\u{:04x}", c as u32)),
            }
            continue;
        }
        if in_string {
            if escaped {
                escaped = false;
            } else if c == '\\' {
                escaped = true;
            } else if c == '"' {
                in_string = false;
            }
        } else if c == '"' {
            in_string = true;
        }
        out.push(c);
    }
    std::borrow::Cow::Owned(out)
}

#[cfg(test)]
mod tests {
    use super::*;
    use epigraph_operators::Ontology;

    fn check(content: &str) -> Result<Answer, Rejection> {
        let vocabulary = Vocabulary::of(&Ontology::bundled());
        let shown = Shown {
            entities: BTreeMap::from([("atlas".to_string(), "Project".to_string())]),
            targets: BTreeSet::from(["m1".to_string()]),
        };
        validate(content, &vocabulary, &shown)
    }

    #[test]
    fn every_kind_of_bad_answer_is_refused_with_its_reason() {
        let cases = [
            ("{\"memory_type\": \"DECI", "not_json"),
            (r#"{"memory_type": "PLAN"}"#, "schema"),
            (
                r#"{"memory_type": "PLAN", "entities": [], "relations": [], "edges": [{"edge": "SUPPORTS", "to": "m1"}, {"edge": "SUPPORTS", "to": "m1"}, {"edge": "SUPPORTS", "to": "m1"}, {"edge": "SUPPORTS", "to": "m1"}]}"#,
                "schema",
            ),
            (
                r#"{"memory_type": "PLAN", "entities": [], "relations": [], "edges": [], "x": 1}"#,
                "schema",
            ),
            (
                r#"{"memory_type": "RUMOUR", "entities": [], "relations": [], "edges": []}"#,
                "unknown_type",
            ),
            (
                r#"{"memory_type": "PLAN", "entities": [{"name": "Maya", "kind": "Wizard"}], "relations": [], "edges": []}"#,
                "unknown_kind",
            ),
            (
                r#"{"memory_type": "PLAN", "entities": [], "relations": [{"relation": "likes", "from": "a", "to": "b"}], "edges": []}"#,
                "unknown_relation",
            ),
            (
                r#"{"memory_type": "PLAN", "entities": [], "relations": [{"relation": "works_on", "from": "Nobody", "to": "Atlas"}], "edges": []}"#,
                "unknown_endpoint",
            ),
            (
                r#"{"memory_type": "PLAN", "entities": [{"name": "Ops", "kind": "Team"}], "relations": [{"relation": "works_on", "from": "Ops", "to": "Atlas"}], "edges": []}"#,
                "signature",
            ),
            (
                r#"{"memory_type": "PLAN", "entities": [], "relations": [], "edges": [{"edge": "BASED_ON", "to": "m1"}]}"#,
                "unknown_edge",
            ),
            (
                r#"{"memory_type": "PLAN", "entities": [], "relations": [], "edges": [{"edge": "SUPPORTS", "to": "m7"}]}"#,
                "unknown_target",
            ),
        ];
        for (content, code) in cases {
            let rejection = check(content).unwrap_err();
            assert_eq!(rejection.code(), code, "{content}: {rejection}");
            assert!(!rejection.to_string().is_empty());
        }
    }

    #[test]
    fn a_fenced_answer_reusing_a_known_entity_is_accepted() {
        let answer = check(
            "```json\n{\"memory_type\": \"PLAN\", \"entities\": [{\"name\": \"Maya\", \"kind\": \"Person\"}], \
             \"relations\": [{\"relation\": \"works_on\", \"from\": \"maya\", \"to\": \"ATLAS\"}], \
             \"edges\": [{\"edge\": \"SUPPORTS\", \"to\": \"m1\"}]}\n```",
        )
        .unwrap();
        assert_eq!(answer.edges.len(), 1);
        assert_eq!(answer.relations[0].to, "ATLAS");
    }

    #[test]
    fn a_raw_newline_in_a_name_is_read_and_only_relation_or_edge_faults_are_salvaged() {
        let answer = check(
            "{\"memory_type\": \"PLAN\", \"entities\": [{\"name\": \"Maya\nLee\", \"kind\": \"Person\"}], \
             \"relations\": [], \"edges\": []}",
        )
        .unwrap();
        assert_eq!(answer.entities[0].name, "Maya\nLee");
        let vocabulary = Vocabulary::of(&Ontology::bundled());
        let shown = Shown::default();
        // Every fault that is not a relation's or an edge's still refuses the whole answer.
        for content in [
            r#"{"memory_type": "PLAN", "entities": [{"name": "Maya", "kind": "Wizard"}], "relations": [{"relation": "likes", "from": "a", "to": "b"}], "edges": []}"#,
            r#"{"memory_type": "RUMOUR", "entities": [], "relations": [], "edges": []}"#,
            r#"{"memory_type": "PLAN", "entities": []"#,
        ] {
            assert!(salvage(content, &vocabulary, &shown).is_err(), "{content}");
        }
        let (kept, dropped) = salvage(
            r#"{"memory_type": "DECISION", "entities": [{"name": "Ops", "kind": "Team"}], "relations": [{"relation": "works_on", "from": "Ops", "to": "Atlas"}, {"relation": "likes", "from": "a", "to": "b"}], "edges": [{"edge": "BASED_ON", "to": "m1"}]}"#,
            &vocabulary,
            &shown,
        )
        .unwrap();
        assert_eq!(kept.memory_type, "DECISION");
        assert_eq!(kept.entities.len(), 1);
        assert!(kept.relations.is_empty() && kept.edges.is_empty());
        let codes: Vec<&str> = dropped.iter().map(Rejection::code).collect();
        assert_eq!(codes, ["signature", "unknown_relation", "unknown_edge"]);
    }
}
