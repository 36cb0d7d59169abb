//! Loading the ontology: the bundled files or a deployment's folders, parsed, merged in order
//! (a later kind or relation with an existing name replaces it) and validated.

use std::collections::BTreeSet;
use std::path::PathBuf;

use serde::Deserialize;

use super::*;
use crate::model::TemporalType;

/// Every section one ontology file may hold.
#[derive(Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
struct OntologyFile {
    #[serde(default)]
    kind: Vec<EntityKind>,
    #[serde(default)]
    recurring: Option<Recurring>,
    #[serde(default)]
    max_gap: Option<usize>,
    #[serde(default)]
    relation: Vec<RelationFile>,
    #[serde(default)]
    scoring: Option<Scoring>,
    #[serde(default, rename = "type")]
    types: Vec<TypeFile>,
    #[serde(default)]
    edge: Vec<EdgeSpec>,
    #[serde(default)]
    authority: Option<Authority>,
    #[serde(default)]
    statement: Option<StatementCues>,
    #[serde(default)]
    attribute: Vec<AttributeSpec>,
    #[serde(default)]
    statuses: Option<Statuses>,
    #[serde(default)]
    epistemics: Option<EpistemicsSpec>,
    #[serde(default)]
    alias: Vec<AliasSpec>,
    #[serde(default)]
    typer: Option<typer::TyperFile>,
    /// `[priority]`: read by the priority operator's own loader, skipped here.
    #[serde(default, rename = "priority")]
    _priority: Option<toml::Value>,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct RelationFile {
    name: String,
    group: String,
    signature: String,
    #[serde(default)]
    cues: Vec<String>,
    #[serde(default)]
    passive_cues: Vec<String>,
    temporal: TemporalType,
    #[serde(default)]
    exclusive: Option<Exclusive>,
    #[serde(default)]
    ends: Vec<String>,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct TypeFile {
    name: String,
    priority: f64,
    lambda: f64,
    #[serde(default)]
    behaviour: String,
    #[serde(default)]
    role: String,
    temporal_type: TemporalType,
    #[serde(default)]
    strong: Vec<String>,
    #[serde(default)]
    weak: Vec<String>,
    #[serde(default)]
    sections: Vec<String>,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct Statuses {
    values: Vec<String>,
}

/// The files shipped in `ontology/`, in load order.
const BUNDLED: [(&str, &str); 6] = [
    ("edges.toml", include_str!("../../../ontology/edges.toml")),
    (
        "epistemics.toml",
        include_str!("../../../ontology/epistemics.toml"),
    ),
    ("kinds.toml", include_str!("../../../ontology/kinds.toml")),
    (
        "relations.toml",
        include_str!("../../../ontology/relations.toml"),
    ),
    (
        "sources.toml",
        include_str!("../../../ontology/sources.toml"),
    ),
    ("typer.toml", include_str!("../../../ontology/typer.toml")),
];
const BUNDLED_TYPES: (&str, &str) = ("types.toml", include_str!("../../../ontology/types.toml"));

impl Ontology {
    /// The ontology shipped with the project (`ontology/*.toml`).
    ///
    /// ```
    /// let ontology = epigraph_operators::Ontology::bundled();
    /// assert_eq!(ontology.types.len(), 9);
    /// assert!(ontology.kind("Person").is_some());
    /// ```
    pub fn bundled() -> Self {
        Self::from_sources(Self::bundled_sources()).expect("the bundled ontology is valid (tested)")
    }

    /// The bundled `(path, text)` files, to extend in tests with [`Ontology::from_sources`].
    pub fn bundled_sources_for_tests() -> Vec<(PathBuf, String)> {
        Self::bundled_sources()
    }

    /// The bundled ontology files as `(path, toml text)` pairs, the input of [`Self::from_sources`].
    pub fn bundled_sources() -> Vec<(PathBuf, String)> {
        BUNDLED
            .iter()
            .chain(std::iter::once(&BUNDLED_TYPES))
            .map(|(name, text)| (PathBuf::from("ontology").join(name), text.to_string()))
            .collect()
    }

    /// Builds an ontology from `(path, toml text)` pairs, later files extending or replacing
    /// earlier ones.
    pub fn from_sources(sources: Vec<(PathBuf, String)>) -> Result<Self, OntologyError> {
        let mut merged = Merged::default();
        for (path, text) in sources {
            let file: OntologyFile = toml::from_str(&text).map_err(|e| OntologyError::Parse {
                path: path.clone(),
                message: e.to_string(),
            })?;
            merged.add(file)?;
        }
        merged.finish()
    }
}

#[derive(Default)]
struct Merged {
    kinds: Vec<EntityKind>,
    recurring: Option<Recurring>,
    relations: Vec<RelationSpec>,
    max_gap: Option<usize>,
    types: Vec<TypeSpec>,
    scoring: Option<Scoring>,
    edges: Vec<EdgeSpec>,
    authority: Option<Authority>,
    statement: Option<StatementCues>,
    attributes: Vec<AttributeSpec>,
    statuses: Option<Vec<String>>,
    epistemics: Option<EpistemicsSpec>,
    aliases: Vec<AliasSpec>,
    typer: Option<typer::TyperFile>,
}

fn upsert_by<T>(list: &mut Vec<T>, item: T, same: impl Fn(&T, &T) -> bool) {
    match list.iter_mut().find(|existing| same(existing, &item)) {
        Some(existing) => *existing = item,
        None => list.push(item),
    }
}

impl Merged {
    fn add(&mut self, file: OntologyFile) -> Result<(), OntologyError> {
        for kind in file.kind {
            upsert_by(&mut self.kinds, kind, |a, b| a.name == b.name);
        }
        for relation in file.relation {
            let spec = parse_relation(relation)?;
            upsert_by(&mut self.relations, spec, |a, b| a.name == b.name);
        }
        for t in file.types {
            let memory_type = parse_type(&t.name).ok_or_else(|| {
                OntologyError::Invalid(format!(
                    "unknown epistemic type {:?} (the nine are {})",
                    t.name,
                    EpistemicType::ALL.map(|t| t.name()).join(", ")
                ))
            })?;
            let spec = TypeSpec {
                memory_type,
                priority: t.priority,
                lambda: t.lambda,
                behaviour: t.behaviour,
                role: t.role,
                temporal_type: t.temporal_type,
                strong: t.strong,
                weak: t.weak,
                sections: t.sections.iter().map(|s| s.to_lowercase()).collect(),
            };
            upsert_by(&mut self.types, spec, |a, b| a.memory_type == b.memory_type);
        }
        for edge in file.edge {
            upsert_by(&mut self.edges, edge, |a, b| a.name == b.name);
        }
        if let Some(epistemics) = file.epistemics {
            self.epistemics = Some(epistemics);
        }
        self.aliases.extend(file.alias);
        for attribute in file.attribute {
            upsert_by(&mut self.attributes, attribute, |a, b| a.name == b.name);
        }
        self.max_gap = file.max_gap.or(self.max_gap);
        self.recurring = file.recurring.or(self.recurring.take());
        self.scoring = file.scoring.or(self.scoring.take());
        self.authority = file.authority.or(self.authority.take());
        self.statement = file.statement.or(self.statement.take());
        self.statuses = file.statuses.map(|s| s.values).or(self.statuses.take());
        self.typer = file.typer.or(self.typer.take());
        Ok(())
    }

    fn finish(self) -> Result<Ontology, OntologyError> {
        let invalid = |m: String| Err(OntologyError::Invalid(m));
        let kinds: BTreeSet<&str> = self.kinds.iter().map(|k| k.name.as_str()).collect();
        for relation in &self.relations {
            for kind in relation.from.iter().chain(&relation.to) {
                if !kinds.contains(kind.as_str()) {
                    return invalid(format!(
                        "relation {} names kind {kind:?}, which is not declared",
                        relation.name
                    ));
                }
            }
            if relation.cues.is_empty() && relation.passive_cues.is_empty() {
                return invalid(format!("relation {} has no cues", relation.name));
            }
            if relation.exclusive.is_some() && relation.temporal != TemporalType::Dynamic {
                return invalid(format!(
                    "relation {} is exclusive but not dynamic: only dynamic facts end",
                    relation.name
                ));
            }
            for ended in &relation.ends {
                match self.relations.iter().find(|r| &r.rel_type() == ended) {
                    Some(r) if r.temporal == TemporalType::Dynamic => {}
                    Some(_) => {
                        return invalid(format!(
                            "relation {} ends {ended}, which is not dynamic: only dynamic facts end",
                            relation.name
                        ));
                    }
                    None => {
                        return invalid(format!(
                            "relation {} ends {ended}, which is not declared",
                            relation.name
                        ));
                    }
                }
            }
        }
        if let Some(recurring) = &self.recurring
            && !kinds.contains(recurring.kind.as_str())
        {
            return invalid(format!(
                "[recurring] kind {:?} is not declared",
                recurring.kind
            ));
        }
        for alias in &self.aliases {
            if !kinds.contains(alias.kind.as_str()) || alias.names.len() < 2 {
                return invalid(format!(
                    "[[alias]] {:?}: the kind must be declared and at least two names given",
                    alias.names
                ));
            }
        }
        for kind in &self.kinds {
            if !is_label(&kind.name) {
                return invalid(format!("kind name {:?} is not a valid label", kind.name));
            }
        }
        if let Some(missing) = EpistemicType::ALL
            .into_iter()
            .find(|t| !self.types.iter().any(|s| s.memory_type == *t))
        {
            return invalid(format!(
                "epistemic type {} is not configured",
                missing.name()
            ));
        }
        for edge in &self.edges {
            if !is_label(&edge.name) || !(-1.0..=1.0).contains(&edge.coefficient) {
                return invalid(format!(
                    "edge {:?}: the name must be a label and the coefficient within [-1, 1]",
                    edge.name
                ));
            }
        }
        let scoring = self
            .scoring
            .ok_or_else(|| OntologyError::Invalid("no [scoring] section".into()))?;
        for name in scoring.default_type.values() {
            if parse_type(name).is_none() {
                return invalid(format!("default_type {name:?} is not an epistemic type"));
            }
        }
        let authority = self
            .authority
            .ok_or_else(|| OntologyError::Invalid("no [authority] section".into()))?;
        let levels = [
            authority.document,
            authority.email,
            authority.calendar,
            authority.chat,
        ];
        if levels
            .iter()
            .chain(authority.levels.values())
            .any(|v| !(0.0..=1.0).contains(v))
        {
            return invalid("authority levels must lie within [0, 1]".into());
        }
        Ok(Ontology {
            kinds: self.kinds,
            recurring: self.recurring,
            relations: self.relations,
            max_gap: self.max_gap.unwrap_or(48),
            types: EpistemicType::ALL
                .into_iter()
                .filter_map(|t| self.types.iter().find(|s| s.memory_type == t).cloned())
                .collect(),
            scoring,
            edges: self.edges,
            authority,
            statement: self.statement.unwrap_or_default(),
            attributes: self.attributes,
            aliases: self.aliases,
            epistemics: self
                .epistemics
                .ok_or_else(|| OntologyError::Invalid("[epistemics] is not configured".into()))?,
            statuses: self.statuses.unwrap_or_default(),
            typer: match self.typer {
                Some(file) if file.enabled => Some(
                    typer::Typer::from_spec(file)
                        .map_err(|e| OntologyError::Invalid(e.to_string()))?,
                ),
                _ => None,
            },
        })
    }
}

fn is_label(name: &str) -> bool {
    let mut chars = name.chars();
    chars.next().is_some_and(|c| c.is_ascii_alphabetic())
        && chars.all(|c| c.is_ascii_alphanumeric() || c == '_')
}

/// Parses `Person --works_on--> Project|Product`.
fn parse_relation(file: RelationFile) -> Result<RelationSpec, OntologyError> {
    let bad = || {
        OntologyError::Invalid(format!(
            "relation {}: signature {:?} is not of the form `Kind|Kind --{}--> Kind|Kind`",
            file.name, file.signature, file.name
        ))
    };
    let (from, rest) = file.signature.split_once("--").ok_or_else(bad)?;
    let (name, to) = rest.split_once("-->").ok_or_else(bad)?;
    if name.trim() != file.name || !is_label(&file.name) {
        return Err(bad());
    }
    let kinds = |s: &str| -> Vec<String> {
        s.split('|')
            .map(|k| k.trim().to_string())
            .filter(|k| !k.is_empty())
            .collect()
    };
    let (from, to) = (kinds(from), kinds(to));
    if from.is_empty() || to.is_empty() {
        return Err(bad());
    }
    Ok(RelationSpec {
        name: file.name,
        group: file.group,
        from,
        to,
        cues: file.cues,
        passive_cues: file.passive_cues,
        temporal: file.temporal,
        exclusive: file.exclusive,
        ends: file.ends.iter().map(|e| e.to_ascii_uppercase()).collect(),
    })
}
