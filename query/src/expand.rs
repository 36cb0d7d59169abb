//! Graph-aware expansion: a personalised PageRank over the query's neighbourhood in the graph.
//!
//! The seeds are the best memory objects a search found (their personalisation is their
//! score). From them the walk follows, for a bounded number of hops:
//!
//! - the **typed, positive** edges between memory objects (`SUPPORTS`, `BASED_ON`,
//!   `IMPLEMENTS`, `REFINES`, `SUPERSEDES`, …), weighted by their OIDA coefficient (the
//!   ontology's `edges.toml`); negative edges (`CONTRADICTS`, `BLOCKS`) are never followed;
//! - **entities**: a memory object to the entities it mentions and back to the other memory
//!   objects mentioning them — an entity's mass is spread over *all* its mentions (Mind Graph's
//!   hub discount: a name every document mentions carries almost nothing), and an entity
//!   mentioned more than `hub_degree` times is not followed at all;
//! - **documents**: a memory object to its source, and between sources the `SUPERSEDES` links
//!   of their headers.
//!
//! What the walk adds to a document is the mass that *arrived* at its memory objects and its
//! source by walking (the restart share of the seeds themselves is the memory signal's, not
//! the graph's), so a document that no retriever found can be brought in by its neighbours, and
//! one the retrievers found is lifted when the graph around the query leads to it.
//! [`best_paths`] gives, for explain, the strongest path from a seed to each reached node.

use std::collections::{BTreeMap, HashMap};

use serde::{Deserialize, Serialize};
use utoipa::ToSchema;

/// The walk's settings (`[serve.rank.walk]`).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct WalkConfig {
    /// Seeds: the best this many memory candidates.
    pub seeds: usize,
    /// Restart probability of the personalised PageRank (HippoRAG and EngramRAG use 0.5).
    pub restart: f64,
    /// Power iterations.
    pub iterations: usize,
    /// Hops followed from the seeds (1 or 2).
    pub hops: usize,
    /// An entity mentioned more often than this is a hub and is not followed.
    pub hub_degree: usize,
    /// Weight of a `MENTIONS` step (memory object ↔ entity).
    pub mention_weight: f64,
    /// Weight of a memory object ↔ its source step.
    pub source_weight: f64,
    /// Weight of a `SUPERSEDES` step between two sources (header links).
    pub source_link_weight: f64,
    /// Most links read from the graph per search.
    pub max_links: usize,
    /// Edge types between memory objects and their weights; empty means the ontology's
    /// positive signed edges with their coefficients (filled in by `epigraph serve`).
    pub edges: BTreeMap<String, f64>,
}

impl Default for WalkConfig {
    fn default() -> Self {
        WalkConfig {
            seeds: 20,
            restart: 0.5,
            iterations: 20,
            hops: 2,
            hub_degree: 300,
            mention_weight: 0.5,
            source_weight: 0.5,
            source_link_weight: 0.6,
            max_links: 5_000,
            edges: BTreeMap::new(),
        }
    }
}

/// What a node of the walk is.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize, ToSchema)]
#[serde(rename_all = "snake_case")]
pub enum NodeKind {
    /// A memory object.
    Memory,
    /// An entity.
    Entity,
    /// A source document.
    Source,
}

/// A node of the neighbourhood.
#[derive(Clone, Debug, PartialEq)]
pub struct WalkNode {
    /// Node id (a source's node id is `source:<source_id>`).
    pub id: String,
    /// Memory object, entity or source.
    pub kind: NodeKind,
    /// The document it belongs to (memory objects and sources).
    pub source_id: Option<String>,
    /// A short label for explain: an entity's name, a statement's first words, a title.
    pub label: String,
    /// Its title (memory objects and sources), to show a document the walk brought in.
    pub title: Option<String>,
    /// Its text (memory objects), for the same.
    pub text: Option<String>,
    /// For an entity, how many memory objects mention it in the whole graph (the hub
    /// discount: its mass is spread over all of them, not only those read).
    pub degree: Option<usize>,
}

/// An undirected step of the walk: `from` and `to` are node ids, `rel` the relationship
/// type it follows, `weight` its weight.
#[derive(Clone, Debug, PartialEq)]
pub struct WalkLink {
    /// One end.
    pub from: String,
    /// The other end.
    pub to: String,
    /// Relationship type (`MENTIONS`, `BASED_ON`, `DERIVED_FROM`, …).
    pub rel: String,
    /// Step weight.
    pub weight: f64,
}

/// The neighbourhood read around the seeds.
#[derive(Clone, Debug, Default)]
pub struct Neighbourhood {
    /// Nodes by id.
    pub nodes: HashMap<String, WalkNode>,
    /// Steps between them.
    pub links: Vec<WalkLink>,
    /// Documents the header links read say were replaced, and by which (older → newer source
    /// ids), so that a document only the walk reached is still kept below what replaced it.
    pub replaced_by: HashMap<String, Vec<String>>,
}

impl Neighbourhood {
    /// Add a node (the first description of an id wins).
    pub fn node(&mut self, node: WalkNode) {
        self.nodes.entry(node.id.clone()).or_insert(node);
    }

    /// Add a step.
    pub fn link(&mut self, from: &str, to: &str, rel: &str, weight: f64) {
        if from != to && weight > 0.0 {
            self.links.push(WalkLink {
                from: from.to_string(),
                to: to.to_string(),
                rel: rel.to_string(),
                weight,
            });
        }
    }
}

/// Adjacency of the neighbourhood, with each node's spread (what its outgoing mass is divided
/// by: the sum of its local step weights, or more for an entity whose mentions were not all
/// read).
struct Adjacency<'a> {
    index: HashMap<&'a str, usize>,
    out: Vec<Vec<(usize, f64, &'a str)>>,
    spread: Vec<f64>,
}

impl<'a> Adjacency<'a> {
    fn of(hood: &'a Neighbourhood, mention_weight: f64) -> Adjacency<'a> {
        let mut index: HashMap<&str, usize> = HashMap::new();
        let mut ids: Vec<&str> = hood.nodes.keys().map(String::as_str).collect();
        for link in &hood.links {
            ids.push(&link.from);
            ids.push(&link.to);
        }
        ids.sort_unstable();
        ids.dedup();
        for (i, id) in ids.iter().enumerate() {
            index.insert(id, i);
        }
        let mut out: Vec<Vec<(usize, f64, &str)>> = vec![Vec::new(); ids.len()];
        for link in &hood.links {
            let (a, b) = (index[link.from.as_str()], index[link.to.as_str()]);
            out[a].push((b, link.weight, &link.rel));
            out[b].push((a, link.weight, &link.rel));
        }
        let spread = ids
            .iter()
            .enumerate()
            .map(|(i, id)| {
                let local: f64 = out[i].iter().map(|(_, w, _)| w).sum();
                let whole = hood
                    .nodes
                    .get(*id)
                    .and_then(|n| n.degree)
                    .map(|d| d as f64 * mention_weight)
                    .unwrap_or(0.0);
                local.max(whole)
            })
            .collect();
        Adjacency { index, out, spread }
    }
}

/// Personalised PageRank over the neighbourhood: `p = r·s + (1 − r)·Wᵀp`, where `s` is the
/// seeds' personalisation (normalised to sum 1) and `W` the steps normalised by each node's
/// spread. Mass that leaves the neighbourhood (an entity's unread mentions) is lost, mass at a
/// node with no step returns to the seeds. Returns each node's mass **minus its restart share**
/// `r·s`: what reached it by walking.
///
/// ```
/// use epigraph_query::expand::{Neighbourhood, walked_mass};
/// let mut hood = Neighbourhood::default();
/// hood.link("seed", "kep-753", "BASED_ON", 0.8);
/// hood.link("seed", "kep-9", "PRECEDES", 0.3);
/// let mass = walked_mass(&hood, &[("seed".into(), 1.0)], 0.5, 20, 0.5);
/// assert!(mass["kep-753"] > mass["kep-9"]);
/// assert!(mass["kep-9"] > 0.0);
/// // The seed keeps what walking brings back to it, not its restart share.
/// assert!(mass["seed"] < 0.5);
/// ```
pub fn walked_mass(
    hood: &Neighbourhood,
    seeds: &[(String, f64)],
    restart: f64,
    iterations: usize,
    mention_weight: f64,
) -> HashMap<String, f64> {
    let adjacency = Adjacency::of(hood, mention_weight);
    let n = adjacency.out.len();
    let mut personal = vec![0.0; n];
    let total: f64 = seeds.iter().map(|(_, w)| w.max(0.0)).sum();
    if total <= 0.0 || n == 0 {
        return HashMap::new();
    }
    for (id, w) in seeds {
        if let Some(i) = adjacency.index.get(id.as_str()) {
            personal[*i] += w.max(0.0) / total;
        }
    }
    let restart = restart.clamp(0.0, 1.0);
    let mut mass = personal.clone();
    for _ in 0..iterations {
        let mut next: Vec<f64> = personal.iter().map(|p| restart * p).collect();
        let mut returned = 0.0;
        for (i, m) in mass.iter().enumerate() {
            if *m == 0.0 {
                continue;
            }
            if adjacency.out[i].is_empty() || adjacency.spread[i] <= 0.0 {
                returned += (1.0 - restart) * m;
                continue;
            }
            for (j, w, _) in &adjacency.out[i] {
                next[*j] += (1.0 - restart) * m * w / adjacency.spread[i];
            }
        }
        for (x, p) in next.iter_mut().zip(&personal) {
            *x += returned * p;
        }
        mass = next;
    }
    let mut ids: Vec<&str> = vec![""; n];
    for (id, i) in &adjacency.index {
        ids[*i] = id;
    }
    ids.into_iter()
        .zip(mass)
        .zip(personal)
        .map(|((id, m), p)| (id.to_string(), (m - restart * p).max(0.0)))
        .collect()
}

/// One step of a path in explain.
#[derive(Clone, Debug, PartialEq, Serialize, ToSchema)]
pub struct PathStep {
    /// Node the step leaves (id).
    pub from: String,
    /// Relationship type followed.
    pub rel: String,
    /// Node the step reaches (id).
    pub to: String,
    /// What the reached node is.
    pub kind: NodeKind,
    /// Its label: an entity's name, a statement's first words, a title.
    pub label: String,
}

/// The strongest path (at most `hops` steps) from a seed to each node: the product of the
/// seed's personalisation and each step's weight over its node's spread, best kept. Seeds map
/// to an empty path.
///
/// ```
/// use epigraph_query::expand::{Neighbourhood, best_paths};
/// let mut hood = Neighbourhood::default();
/// hood.link("seed", "entity:kubelet", "MENTIONS", 0.5);
/// hood.link("entity:kubelet", "other", "MENTIONS", 0.5);
/// let paths = best_paths(&hood, &[("seed".into(), 1.0)], 2, 0.5);
/// let rels: Vec<&str> = paths["other"].iter().map(|s| s.rel.as_str()).collect();
/// assert_eq!(rels, ["MENTIONS", "MENTIONS"]);
/// assert_eq!(paths["other"][0].to, "entity:kubelet");
/// assert!(paths["seed"].is_empty());
/// ```
pub fn best_paths(
    hood: &Neighbourhood,
    seeds: &[(String, f64)],
    hops: usize,
    mention_weight: f64,
) -> HashMap<String, Vec<PathStep>> {
    let adjacency = Adjacency::of(hood, mention_weight);
    let n = adjacency.out.len();
    let mut ids: Vec<&str> = vec![""; n];
    for (id, i) in &adjacency.index {
        ids[*i] = id;
    }
    let mut strength = vec![0.0f64; n];
    let mut parent: Vec<Option<(usize, &str)>> = vec![None; n];
    let mut depth = vec![usize::MAX; n];
    for (id, w) in seeds {
        if let Some(i) = adjacency.index.get(id.as_str()) {
            strength[*i] = strength[*i].max(*w);
            depth[*i] = 0;
        }
    }
    for round in 0..hops {
        let mut next = strength.clone();
        let mut next_parent = parent.clone();
        let mut next_depth = depth.clone();
        for i in 0..n {
            if depth[i] != round || strength[i] <= 0.0 || adjacency.spread[i] <= 0.0 {
                continue;
            }
            for (j, w, rel) in &adjacency.out[i] {
                let s = strength[i] * w / adjacency.spread[i];
                if depth[*j] > round && s > next[*j] {
                    next[*j] = s;
                    next_parent[*j] = Some((i, rel));
                    next_depth[*j] = round + 1;
                }
            }
        }
        strength = next;
        parent = next_parent;
        depth = next_depth;
    }
    let label = |i: usize| -> (NodeKind, String) {
        match hood.nodes.get(ids[i]) {
            Some(node) => (node.kind.clone(), node.label.clone()),
            None => (NodeKind::Memory, ids[i].to_string()),
        }
    };
    let mut paths = HashMap::new();
    for i in 0..n {
        if depth[i] == usize::MAX {
            continue;
        }
        let mut steps = Vec::new();
        let mut at = i;
        while let Some((p, rel)) = parent[at] {
            let (kind, label) = label(at);
            steps.push(PathStep {
                from: ids[p].to_string(),
                rel: rel.to_string(),
                to: ids[at].to_string(),
                kind,
                label,
            });
            at = p;
            if steps.len() > hops {
                break;
            }
        }
        steps.reverse();
        paths.insert(ids[i].to_string(), steps);
    }
    paths
}

/// A path in words, for a context block's note: `reached through the graph from m1: BASED_ON →
/// "Readiness gates let …"`.
///
/// ```
/// use epigraph_query::expand::{NodeKind, PathStep, describe};
/// let path = [PathStep {
///     from: "m1".into(), rel: "MENTIONS".into(), to: "e1".into(),
///     kind: NodeKind::Entity, label: "kubelet".into(),
/// }];
/// assert_eq!(describe(&path), "reached through the graph from m1: MENTIONS → kubelet");
/// assert_eq!(describe(&[]), "");
/// ```
pub fn describe(path: &[PathStep]) -> String {
    let Some(first) = path.first() else {
        return String::new();
    };
    let steps: Vec<String> = path
        .iter()
        .map(|s| format!("{} → {}", s.rel, s.label))
        .collect();
    format!(
        "reached through the graph from {}: {}",
        first.from,
        steps.join(" → ")
    )
}

/// The node id of a source document in the walk.
///
/// ```
/// assert_eq!(epigraph_query::expand::source_node("kep-753"), "source:kep-753");
/// ```
pub fn source_node(source_id: &str) -> String {
    format!("source:{source_id}")
}

#[cfg(test)]
mod tests {
    use super::*;

    fn entity(id: &str, degree: usize) -> WalkNode {
        WalkNode {
            id: id.into(),
            kind: NodeKind::Entity,
            source_id: None,
            label: id.into(),
            title: None,
            text: None,
            degree: Some(degree),
        }
    }

    #[test]
    fn a_hub_entity_carries_less_than_a_rare_one() {
        let mut hood = Neighbourhood::default();
        hood.node(entity("rare", 2));
        hood.node(entity("hub", 100));
        hood.link("seed", "rare", "MENTIONS", 0.5);
        hood.link("rare", "a", "MENTIONS", 0.5);
        hood.link("seed", "hub", "MENTIONS", 0.5);
        hood.link("hub", "b", "MENTIONS", 0.5);
        let mass = walked_mass(&hood, &[("seed".into(), 1.0)], 0.5, 30, 0.5);
        assert!(mass["a"] > 10.0 * mass["b"], "{mass:?}");
    }

    #[test]
    fn mass_is_conserved_or_lost_never_created() {
        let mut hood = Neighbourhood::default();
        hood.link("s1", "x", "SUPPORTS", 1.0);
        hood.link("x", "y", "BASED_ON", 0.8);
        hood.link("s2", "y", "REFINES", 0.5);
        let seeds = [("s1".to_string(), 2.0), ("s2".to_string(), 1.0)];
        let mass = walked_mass(&hood, &seeds, 0.5, 50, 0.5);
        let walked: f64 = mass.values().sum();
        // Total mass is 1; the restart share (0.5) is removed.
        assert!((walked - 0.5).abs() < 1e-6, "{walked}");
        assert!(mass.values().all(|m| *m >= 0.0));
    }

    #[test]
    fn no_seed_in_the_neighbourhood_walks_nowhere() {
        let mut hood = Neighbourhood::default();
        hood.link("a", "b", "SUPPORTS", 1.0);
        assert!(
            walked_mass(&hood, &[("z".into(), 1.0)], 0.5, 10, 0.5)
                .values()
                .all(|m| *m == 0.0)
        );
        assert!(walked_mass(&hood, &[], 0.5, 10, 0.5).is_empty());
    }

    #[test]
    fn paths_are_bounded_by_hops() {
        let mut hood = Neighbourhood::default();
        hood.link("s", "a", "SUPPORTS", 1.0);
        hood.link("a", "b", "SUPPORTS", 1.0);
        hood.link("b", "c", "SUPPORTS", 1.0);
        let paths = best_paths(&hood, &[("s".into(), 1.0)], 2, 0.5);
        assert_eq!(paths["b"].len(), 2);
        assert!(!paths.contains_key("c"));
    }
}
