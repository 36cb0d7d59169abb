//! The neighbourhood a graph-aware search walks ([`crate::expand`]): read around the seed
//! memory objects in three queries, each bounded and scoped to the tenant.

use serde::Deserialize;

use epigraph_sinks::neo4j::safe_identifier;
use neo4rs::query;

use super::GraphReader;
use crate::QueryError;
use crate::expand::{Neighbourhood, NodeKind, WalkConfig, WalkNode, source_node};

/// Entities followed per search (those mentioned by the most seeds first).
const MAX_ENTITIES: i64 = 60;

#[derive(Deserialize)]
struct MemoryRow {
    id: String,
    source_id: String,
    title: Option<String>,
    text: String,
}

impl MemoryRow {
    fn node(self) -> WalkNode {
        WalkNode {
            label: crate::snippet(&self.text, 60),
            id: self.id,
            kind: NodeKind::Memory,
            source_id: Some(self.source_id),
            title: self.title,
            text: Some(self.text),
            degree: None,
        }
    }
}

/// The columns of a [`MemoryRow`] of node `{n}`.
fn memory_columns(n: &str) -> String {
    format!(
        "{{id: {n}.id, source_id: coalesce({n}.source_id, ''), title: {n}.title, \
         text: left(coalesce({n}.text, ''), 400)}}"
    )
}

impl GraphReader {
    /// The neighbourhood of `seeds` (memory object ids) as of `now` (epoch ms): the typed
    /// positive edges between memory objects up to `config.hops` hops, the entities the seeds
    /// mention (hubs above `config.hub_degree` left out) with the other memory objects that
    /// mention them, every memory object's source, and the `SUPERSEDES` links between the
    /// seeds' sources.
    pub async fn neighbourhood(
        &self,
        tenant: &str,
        seeds: &[String],
        config: &WalkConfig,
        now: i64,
    ) -> Result<Neighbourhood, QueryError> {
        let mut hood = Neighbourhood::default();
        if seeds.is_empty() {
            return Ok(hood);
        }
        let seed_rows: Vec<MemoryRow> = self
            .rows(
                query(&format!(
                    "UNWIND $ids AS mid MATCH (m:Node {{id: mid}}) WHERE m.tenant = $tenant \
                     AND m:Memory RETURN {} AS row",
                    memory_columns("m")
                ))
                .param("ids", seeds.to_vec())
                .param("tenant", tenant),
                "reading the seeds of a walk",
            )
            .await
            .map(|rows: Vec<Row<MemoryRow>>| rows.into_iter().map(|r| r.row).collect())?;
        for row in seed_rows {
            hood.node(row.node());
        }
        let limit = config.max_links.max(1) as i64;
        // Typed edges between memory objects; their types are checked identifiers.
        let types: Vec<&String> = config
            .edges
            .iter()
            .filter(|(t, w)| **w > 0.0 && safe_identifier(t))
            .map(|(t, _)| t)
            .collect();
        if !types.is_empty() && config.hops > 0 {
            let alternatives = types
                .iter()
                .map(|t| t.as_str())
                .collect::<Vec<_>>()
                .join("|");
            let text = format!(
                "UNWIND $ids AS mid MATCH (m:Node {{id: mid}}) WHERE m.tenant = $tenant \
                 MATCH (m)-[rs:{alternatives}*1..{hops}]-(n:Memory) WHERE n.tenant = $tenant \
                   AND all(r IN rs WHERE r.t_invalid IS NULL OR r.t_invalid > $now) \
                 UNWIND rs AS r WITH DISTINCT r LIMIT $limit \
                 WITH r, startNode(r) AS a, endNode(r) AS b \
                 RETURN type(r) AS rel, {a} AS a, {b} AS b",
                hops = config.hops.clamp(1, 2),
                a = memory_columns("a"),
                b = memory_columns("b"),
            );
            #[derive(Deserialize)]
            struct Edge {
                rel: String,
                a: MemoryRow,
                b: MemoryRow,
            }
            let edges: Vec<Edge> = self
                .rows(
                    query(&text)
                        .param("ids", seeds.to_vec())
                        .param("tenant", tenant)
                        .param("now", now)
                        .param("limit", limit),
                    "reading the typed edges of a walk",
                )
                .await?;
            for edge in edges {
                let weight = config.edges.get(&edge.rel).copied().unwrap_or(0.0);
                let (a, b) = (edge.a.id.clone(), edge.b.id.clone());
                hood.node(edge.a.node());
                hood.node(edge.b.node());
                hood.link(&a, &b, &edge.rel, weight);
            }
        }
        // Entities the seeds mention, and who else mentions them.
        if config.mention_weight > 0.0 {
            let text = format!(
                "UNWIND $ids AS mid MATCH (m:Node {{id: mid}}) WHERE m.tenant = $tenant \
                 MATCH (m)-[:MENTIONS]->(e:Entity) \
                 WITH e, collect(DISTINCT m.id) AS seeds \
                 WITH e, seeds, COUNT {{ (e)<-[:MENTIONS]-(:Memory) }} AS degree \
                 WHERE degree <= $hub \
                 WITH e, seeds, degree ORDER BY size(seeds) DESC, degree ASC, e.id LIMIT $entities \
                 MATCH (e)<-[:MENTIONS]-(n:Memory) WHERE n.tenant = $tenant \
                 RETURN e.id AS id, coalesce(e.name, e.id) AS name, degree, seeds, \
                   collect({n}) AS mentioned",
                n = memory_columns("n"),
            );
            #[derive(Deserialize)]
            struct Mentioned {
                id: String,
                name: String,
                degree: i64,
                seeds: Vec<String>,
                mentioned: Vec<MemoryRow>,
            }
            let entities: Vec<Mentioned> = self
                .rows(
                    query(&text)
                        .param("ids", seeds.to_vec())
                        .param("tenant", tenant)
                        .param("hub", config.hub_degree as i64)
                        .param("entities", MAX_ENTITIES),
                    "reading the entities of a walk",
                )
                .await?;
            let mut links = 0usize;
            for entity in entities {
                hood.node(WalkNode {
                    id: entity.id.clone(),
                    kind: NodeKind::Entity,
                    source_id: None,
                    label: entity.name,
                    title: None,
                    text: None,
                    degree: Some(entity.degree.max(1) as usize),
                });
                for row in entity.mentioned {
                    if links >= config.max_links {
                        break;
                    }
                    links += 1;
                    let id = row.id.clone();
                    hood.node(row.node());
                    hood.link(&id, &entity.id, "MENTIONS", config.mention_weight);
                }
                for seed in &entity.seeds {
                    hood.link(seed, &entity.id, "MENTIONS", config.mention_weight);
                }
            }
        }
        // Every memory object to its document; the seeds' documents to those their headers
        // replace or are replaced by.
        if config.source_weight > 0.0 {
            let memories: Vec<(String, String, Option<String>)> = hood
                .nodes
                .values()
                .filter(|n| n.kind == NodeKind::Memory)
                .filter_map(|n| {
                    n.source_id
                        .clone()
                        .filter(|s| !s.is_empty())
                        .map(|s| (n.id.clone(), s, n.title.clone()))
                })
                .collect();
            for (memory, source, title) in memories {
                let node = source_node(&source);
                hood.node(WalkNode {
                    id: node.clone(),
                    kind: NodeKind::Source,
                    label: title.clone().unwrap_or_else(|| source.clone()),
                    source_id: Some(source),
                    title,
                    text: None,
                    degree: None,
                });
                hood.link(&memory, &node, "DERIVED_FROM", config.source_weight);
            }
        }
        if config.source_link_weight > 0.0 {
            let mut sources: Vec<String> = hood
                .nodes
                .values()
                .filter(|n| n.kind == NodeKind::Memory && seeds.contains(&n.id))
                .filter_map(|n| n.source_id.clone())
                .collect();
            sources.sort();
            sources.dedup();
            #[derive(Deserialize)]
            struct SourceLink {
                a: String,
                b: String,
                title: Option<String>,
                newer: String,
            }
            let links: Vec<SourceLink> = self
                .rows(
                    query(
                        "UNWIND $sources AS sid MATCH (s:Source) WHERE s.tenant = $tenant \
                         AND s.source_id = sid MATCH (s)-[r:SUPERSEDES]-(o:Source) \
                         WHERE o.tenant = $tenant \
                         AND (r.t_invalid IS NULL OR r.t_invalid > $now) \
                         RETURN DISTINCT s.source_id AS a, o.source_id AS b, o.title AS title, \
                         startNode(r).source_id AS newer \
                         LIMIT $limit",
                    )
                    .param("sources", sources)
                    .param("tenant", tenant)
                    .param("now", now)
                    .param("limit", limit),
                    "reading the document links of a walk",
                )
                .await?;
            for link in links {
                let (newer, older) = if link.newer == link.a {
                    (&link.a, &link.b)
                } else {
                    (&link.b, &link.a)
                };
                let replacing = hood.replaced_by.entry(older.clone()).or_default();
                if !replacing.contains(newer) {
                    replacing.push(newer.clone());
                }
                let node = source_node(&link.b);
                hood.node(WalkNode {
                    id: node.clone(),
                    kind: NodeKind::Source,
                    label: link.title.clone().unwrap_or_else(|| link.b.clone()),
                    source_id: Some(link.b.clone()),
                    title: link.title,
                    text: None,
                    degree: None,
                });
                hood.link(
                    &source_node(&link.a),
                    &node,
                    "SUPERSEDES",
                    config.source_link_weight,
                );
            }
        }
        Ok(hood)
    }
}

#[derive(Deserialize)]
struct Row<T> {
    row: T,
}
