//! Reads of the graph view for the query service: memory cards with their epistemic edges,
//! nodes and neighbourhoods, alias-aware entity lookup, contradictions, open questions,
//! priorities, timelines and typed multi-hop traversal. Every read is scoped to one tenant and
//! every value is a parameter; "no instant" is a null parameter, never a value such as `-1`.
//! What else shapes the text of a query comes from closed lists (the judgements' types), is a
//! clamped number, or is a traversal's relationship type checked to be a plain identifier
//! ([`traversal`]).

use std::collections::{BTreeMap, HashMap};
use std::sync::LazyLock;

use epigraph_schemas::feedback::Judged;
use epigraph_schemas::graph::retired_status_pattern;

use neo4rs::{BoltType, Graph, Query, query};
use serde::Deserialize;
use serde::de::DeserializeOwned;

use epigraph_sinks::neo4j::safe_identifier;

use crate::QueryError;

mod cards;
mod replacements;
mod walk;
pub use cards::{
    AnsweredQuestion, ClaimRef, ContradictionPair, EdgeRef, EdgeView, EntityCard, EntityRelation,
    IdentityLink, MemoryCard, MemoryState, NodeView, PriorityTerms, Restatement, Subgraph,
};
pub use replacements::SubjectReplacement;

/// The columns of a [`MemoryCard`], read from a memory node `m` (`{RETIRED}` is
/// [`retired_status_pattern`]). A document's status is read from the fields of its header
/// block only (`header`; a graph written before that property existed reads every line, as
/// it did).
const CARD_TEMPLATE: &str = "m.id AS id, m.type AS memory_type, coalesce(m.text, '') AS text, \
     m.title AS title, coalesce(m.source_id, '') AS source_id, \
     head([(m)-[:DERIVED_FROM]->(s) | s.kind]) AS source_kind, \
     head([(m)-[:DERIVED_FROM]->(s) | s.occurred_at]) AS occurred_at, \
     coalesce(m.standing, 'current') AS standing, m.k AS k, \
     CASE WHEN m.k IS NULL THEN null ELSE {s: m.k_s, h: m.k_h, u: m.k_u, e: m.k_e, g: m.k_g, c: m.k_c, decay: m.k_decay, dt: m.k_dt, unclamped: m.k_unclamped} END AS k_terms, \
     m.t_valid AS t_valid, \
     m.t_invalid AS t_invalid, m.recorded_at AS recorded_at, m.section AS section, \
     [(m)-[r:CONTRADICTS]->(o) | {id: o.id, t_valid: r.t_valid, t_invalid: r.t_invalid, recorded_at: r.recorded_at, evidence: coalesce(r.evidence, [])}] AS contradicts, \
     [(o)-[r:SUPERSEDES]->(m) | {id: o.id, t_valid: r.t_valid, t_invalid: r.t_invalid, recorded_at: r.recorded_at, evidence: coalesce(r.evidence, [])}] AS superseded_by, \
     [(m)-[r:SUPERSEDES]->(o) | {id: o.id, t_valid: r.t_valid, t_invalid: r.t_invalid, recorded_at: r.recorded_at, evidence: coalesce(r.evidence, [])}] AS supersedes, \
     [(o)-[r:IMPLEMENTS]->(m) | {id: o.id, t_valid: r.t_valid, t_invalid: r.t_invalid, recorded_at: r.recorded_at, evidence: coalesce(r.evidence, [])}] AS implemented_by, \
     [(o)-[r:ANSWERS]->(m) | {id: o.id, t_valid: r.t_valid, t_invalid: r.t_invalid, recorded_at: r.recorded_at, evidence: coalesce(r.evidence, [])}] AS answered_by, \
     [(m)-[r:ANSWERS]->(o) | {id: o.id, t_valid: r.t_valid, t_invalid: r.t_invalid, recorded_at: r.recorded_at, evidence: coalesce(r.evidence, [])}] AS answers, \
     [(m)-[r:BLOCKS]->(o) | {id: o.id, t_valid: r.t_valid, t_invalid: r.t_invalid, recorded_at: r.recorded_at, evidence: coalesce(r.evidence, [])}] AS blocks, \
     [(o)-[r:BLOCKS]->(m) | {id: o.id, t_valid: r.t_valid, t_invalid: r.t_invalid, recorded_at: r.recorded_at, evidence: coalesce(r.evidence, [])}] AS blocked_by, \
     size([(o)-[:SUPPORTS]->(m) | 1]) AS supported, \
     [(m)-[:ASSERTS]->(c:Claim) | {subject: c.subject_name, attribute: c.attribute, value: c.value, unit: c.unit, qualifier: c.qualifier}] AS claims, \
     head([(m)-[:DERIVED_FROM]->(s)<-[:DERIVED_FROM]-(h) WHERE coalesce(h.header, true) AND h.text =~ '{RETIRED}' | h.text]) AS source_status, \
     [(m)-[:DERIVED_FROM]->(s)<-[r:SUPERSEDES]-(n) | {id: n.source_id, t_valid: r.t_valid, t_invalid: r.t_invalid, recorded_at: r.recorded_at, evidence: coalesce(r.evidence, [])}] AS source_superseded_by, \
     head([(m)-[:SAME_STATEMENT]->(o) | o.id]) AS restates, \
     [(m)-[:SAME_STATEMENT*0..1]->(g)<-[:SAME_STATEMENT*0..1]-(o) WHERE o.id <> m.id | {id: o.id, source_id: o.source_id, title: o.title}] AS restated";

/// The columns of a [`MemoryCard`], with the retired statuses of the graph schema.
static CARD: LazyLock<String> =
    LazyLock::new(|| CARD_TEMPLATE.replace("{RETIRED}", &retired_status_pattern()));

/// Cypher tail turning rows of `(e, hits)` into [`EntityCard`]s: each entity replaced by the
/// canonical one of its identity component, with the whole component's names, addresses and
/// vocabulary relations (only those valid at `$at`, all of them when `$at` is null).
const ENTITY_TAIL: &str = " \
             WITH coalesce(head([(e)-[:SAME_AS]->(c) | c]), e) AS canon, hits \
             WITH canon, sum(hits) AS hits \
             WITH canon, hits, [canon] + [(o)-[:SAME_AS]->(canon) | o] AS members \
             WITH canon, hits, members, \
               reduce(acc = [], x IN members | acc + [x.name] + coalesce(x.aliases, [])) AS names, \
               reduce(acc = [], x IN members | acc + coalesce(x.addresses, [])) AS addresses \
             RETURN canon.id AS id, canon.kind AS kind, canon.name AS name, \
               [n IN names WHERE n <> canon.name] AS aliases, addresses, canon.mentions AS mentions, \
               [x IN members WHERE x <> canon | x.id] AS merged, \
               [(o)-[s:SAME_AS]->(canon) | {id: o.id, name: o.name, evidence: coalesce(s.evidence, [])}] AS identity_links, \
               reduce(acc = [], x IN members | acc + \
                 [(x)-[r]->(y:Entity) WHERE type(r) <> 'SAME_AS' AND ($at IS NULL OR ((r.t_valid IS NULL OR r.t_valid <= $at) AND (r.t_invalid IS NULL OR r.t_invalid > $at))) | {type: type(r), direction: 'out', id: y.id, name: y.name, t_valid: r.t_valid, t_invalid: r.t_invalid, support: r.support}] + \
                 [(y:Entity)-[r]->(x) WHERE type(r) <> 'SAME_AS' AND ($at IS NULL OR ((r.t_valid IS NULL OR r.t_valid <= $at) AND (r.t_invalid IS NULL OR r.t_invalid > $at))) | {type: type(r), direction: 'in', id: y.id, name: y.name, t_valid: r.t_valid, t_invalid: r.t_invalid, support: r.support}]) AS relations \
             ORDER BY hits DESC, coalesce(canon.mentions, 0) DESC, canon.id LIMIT $limit";

/// One step of a typed traversal: a relationship type and its direction.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Hop {
    /// Relationship type, e.g. `GOVERNED_BY`.
    pub rel_type: String,
    /// Follow the relationship against its direction.
    pub reverse: bool,
}

impl Hop {
    /// Parse `GOVERNED_BY`, `governed_by` or `<APPROVED_BY` (reverse).
    ///
    /// ```
    /// use epigraph_query::graph::Hop;
    /// let hop = Hop::parse("<approved_by").unwrap();
    /// assert_eq!((hop.rel_type.as_str(), hop.reverse), ("APPROVED_BY", true));
    /// assert!(Hop::parse("x]-() DETACH DELETE n //").is_err());
    /// ```
    pub fn parse(step: &str) -> Result<Hop, QueryError> {
        let step = step.trim();
        let (reverse, name) = match step.strip_prefix('<') {
            Some(rest) => (true, rest),
            None => (false, step.strip_prefix('>').unwrap_or(step)),
        };
        let rel_type = name.trim().to_ascii_uppercase();
        if !safe_identifier(&rel_type) {
            return Err(QueryError::Invalid(format!(
                "{step:?} is not a relationship type"
            )));
        }
        Ok(Hop { rel_type, reverse })
    }
}

/// Read access to the graph view.
#[derive(Clone)]
pub struct GraphReader {
    graph: Graph,
}

impl std::fmt::Debug for GraphReader {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("GraphReader").finish()
    }
}

/// Upper bound on rows any read returns.
pub const MAX_ROWS: usize = 1000;

/// Most statements [`GraphReader::completion_reports`] reads for one plan.
pub const REPORTS_PER_PLAN: usize = 100;

/// A plan whose reports of completion are looked for: its id, when it was written (ms since
/// the epoch) and its content words, lower-cased (a report must contain one).
#[derive(Clone, Debug)]
pub struct PlanWords {
    /// The plan's memory id.
    pub id: String,
    /// Its valid time: only statements written after it can report it done.
    pub since: i64,
    /// Words a report of it contains (any one of them).
    pub words: Vec<String>,
}

/// A statement that may report a plan done.
#[derive(Clone, Debug, Deserialize)]
pub struct PlanReport {
    /// The plan's memory id.
    pub plan: String,
    /// The statement.
    pub report: MemoryCard,
}

impl GraphReader {
    /// A reader over a connected client.
    pub fn new(graph: Graph) -> Self {
        GraphReader { graph }
    }

    /// Whether Neo4j answers a trivial query (a health probe; the caller bounds its time: the
    /// driver retries a refused connection by itself for up to a minute).
    pub async fn ping(&self) -> Result<(), QueryError> {
        self.graph
            .run("RETURN 1")
            .await
            .map_err(|source| QueryError::Graph {
                context: "probing the server".into(),
                source,
            })
    }

    async fn rows<T: DeserializeOwned>(
        &self,
        q: Query,
        context: &str,
    ) -> Result<Vec<T>, QueryError> {
        let mut stream = self
            .graph
            .execute(q)
            .await
            .map_err(QueryError::graph(context))?;
        let mut out = Vec::new();
        while let Some(row) = stream.next().await.map_err(QueryError::graph(context))? {
            out.push(row.to::<T>().map_err(|e| QueryError::BadRow {
                context: context.to_string(),
                message: e.to_string(),
            })?);
        }
        Ok(out)
    }

    /// Whether `tenant`'s graph holds the judged edge `from -[relation]-> to` now (for
    /// `CONTRADICTS`, in either direction).
    pub async fn has_judgement(
        &self,
        tenant: &str,
        relation: Judged,
        from: &str,
        to: &str,
    ) -> Result<bool, QueryError> {
        // The type comes from a closed list, never from the request's text.
        let arrow = if relation.symmetric() { "" } else { ">" };
        let text = format!(
            "MATCH (a:Node {{id: $from}})-[r:{}]-{arrow}(b:Node {{id: $to}}) \
             WHERE r.tenant = $tenant RETURN count(r) AS n",
            relation.rel_type()
        );
        let q = query(&text)
            .param("from", from)
            .param("to", to)
            .param("tenant", tenant);
        #[derive(Deserialize)]
        struct Count {
            n: i64,
        }
        let counts: Vec<Count> = self.rows(q, "looking up a judgement").await?;
        Ok(counts.first().is_some_and(|c| c.n > 0))
    }

    /// The fields of one memory object of `tenant` a proposal can change, and its version (the
    /// graph's content hash): what a proposal's diff is computed against.
    pub async fn memory_state(
        &self,
        tenant: &str,
        id: &str,
    ) -> Result<Option<MemoryState>, QueryError> {
        let q = query(
            "MATCH (m:Memory {id: $id}) WHERE m.tenant = $tenant \
             RETURN m.id AS id, m.type AS memory_type, m.text AS text, m.t_valid AS t_valid, \
             m.t_invalid AS t_invalid, m.standing AS standing, m.content_hash AS version",
        )
        .param("id", id)
        .param("tenant", tenant);
        let mut states: Vec<MemoryState> = self.rows(q, "reading a memory object's state").await?;
        Ok(states.pop())
    }

    /// The versions (content hashes) of the given nodes of `tenant`; unknown ids are left out.
    pub async fn versions(
        &self,
        tenant: &str,
        ids: &[String],
    ) -> Result<HashMap<String, String>, QueryError> {
        if ids.is_empty() {
            return Ok(HashMap::new());
        }
        let q = query(
            "UNWIND $ids AS nid MATCH (n:Node {id: nid}) WHERE n.tenant = $tenant \
             RETURN n.id AS id, n.content_hash AS version",
        )
        .param("ids", ids.to_vec())
        .param("tenant", tenant);
        #[derive(Deserialize)]
        struct Row {
            id: String,
            version: Option<String>,
        }
        let rows: Vec<Row> = self.rows(q, "reading node versions").await?;
        Ok(rows
            .into_iter()
            .filter_map(|r| Some((r.id, r.version?)))
            .collect())
    }

    /// The judged edge `from -[relation]-> to` of `tenant` as the graph holds it now (for
    /// `CONTRADICTS` and `SAME_AS`, in either direction): `None` if absent, else its `review`
    /// mark (`None` when unreviewed). `relation` must be a judgement's type or `SAME_AS`.
    pub async fn edge_review(
        &self,
        tenant: &str,
        relation: &str,
        from: &str,
        to: &str,
    ) -> Result<Option<Option<String>>, QueryError> {
        // The type comes from a closed list, never from the request's text.
        let (rel_type, symmetric) = match Judged::parse(relation) {
            Some(judged) => (judged.rel_type(), judged.symmetric()),
            None if relation == "SAME_AS" => ("SAME_AS", true),
            None => {
                return Err(QueryError::Invalid(format!(
                    "{relation:?} is not a judgement ({}, SAME_AS)",
                    Judged::names()
                )));
            }
        };
        let arrow = if symmetric { "" } else { ">" };
        let text = format!(
            "MATCH (a:Node {{id: $from}})-[r:{rel_type}]-{arrow}(b:Node {{id: $to}}) \
             WHERE r.tenant = $tenant RETURN r.review AS review LIMIT 1"
        );
        let q = query(&text)
            .param("from", from)
            .param("to", to)
            .param("tenant", tenant);
        #[derive(Deserialize)]
        struct Row {
            review: Option<String>,
        }
        let mut rows: Vec<Row> = self.rows(q, "reading a judged edge").await?;
        Ok(rows.pop().map(|r| r.review))
    }

    /// The version of source item `source_id` of `tenant` the graph holds, if any.
    pub async fn source_version(
        &self,
        tenant: &str,
        source_id: &str,
    ) -> Result<Option<String>, QueryError> {
        let q = query(
            "MATCH (s:Source) WHERE s.tenant = $tenant AND s.source_id = $source_id \
             RETURN s.version AS version LIMIT 1",
        )
        .param("source_id", source_id)
        .param("tenant", tenant);
        #[derive(Deserialize)]
        struct Row {
            version: Option<String>,
        }
        let mut rows: Vec<Row> = self.rows(q, "reading a source's version").await?;
        Ok(rows.pop().and_then(|r| r.version))
    }

    /// Cards of the given memory objects of `tenant` (unknown ids are left out).
    pub async fn memory_cards(
        &self,
        tenant: &str,
        ids: &[String],
    ) -> Result<HashMap<String, MemoryCard>, QueryError> {
        if ids.is_empty() {
            return Ok(HashMap::new());
        }
        let text = format!(
            "UNWIND $ids AS id MATCH (m:Node {{id: id}}) WHERE m:Memory AND m.tenant = $tenant \
             RETURN {card}",
            card = CARD.as_str()
        );
        let q = query(&text)
            .param("ids", ids.to_vec())
            .param("tenant", tenant);
        let cards: Vec<MemoryCard> = self.rows(q, "reading memory cards").await?;
        Ok(cards.into_iter().map(|c| (c.id.clone(), c)).collect())
    }

    /// Memory objects by descending K, optionally of some types only (`DECISION`, …) and only
    /// those valid at `valid_at` (ms since the Unix epoch).
    pub async fn priorities(
        &self,
        tenant: &str,
        types: &[String],
        top: usize,
        valid_at: Option<i64>,
    ) -> Result<Vec<MemoryCard>, QueryError> {
        let text = format!(
            "MATCH (m:Memory) WHERE m.tenant = $tenant AND (size($types) = 0 OR m.type IN $types) \
             AND ($at IS NULL OR ((m.t_valid IS NULL OR m.t_valid <= $at) AND \
                              (m.t_invalid IS NULL OR m.t_invalid > $at))) \
             WITH m ORDER BY coalesce(m.k, -1.0) DESC, coalesce(m.k_unclamped, m.k, -1.0) DESC, m.id LIMIT $top RETURN {card}",
            card = CARD.as_str()
        );
        let q = query(&text)
            .param("tenant", tenant)
            .param("types", types.to_vec())
            .param("at", valid_at)
            .param("top", top.min(MAX_ROWS) as i64);
        self.rows(q, "reading priorities").await
    }

    /// Questions that are open now, or that were open at `as_of` (answered later), by
    /// descending K then age.
    pub async fn open_questions(
        &self,
        tenant: &str,
        as_of: Option<i64>,
        limit: usize,
    ) -> Result<Vec<MemoryCard>, QueryError> {
        let text = format!(
            "MATCH (m:Question) WHERE m.tenant = $tenant AND (m.standing = 'open' OR \
             ($as_of IS NOT NULL AND m.t_invalid > $as_of)) \
             WITH m ORDER BY coalesce(m.k, 0.0) DESC, coalesce(m.k_unclamped, m.k, 0.0) DESC, coalesce(m.t_valid, 0) ASC, m.id \
             LIMIT $limit RETURN {card}",
            card = CARD.as_str()
        );
        let q = query(&text)
            .param("tenant", tenant)
            .param("as_of", as_of)
            .param("limit", limit.min(MAX_ROWS) as i64);
        self.rows(q, "reading open questions").await
    }

    /// Plans written by `at` that assert a date, for [`crate::plans`] to tell which are past
    /// it (at most [`MAX_ROWS`], the highest K first).
    pub async fn dated_plans(&self, tenant: &str, at: i64) -> Result<Vec<MemoryCard>, QueryError> {
        let text = format!(
            "MATCH (m:Plan) WHERE m.tenant = $tenant AND (m.t_valid IS NULL OR m.t_valid <= $at) \
             AND size([(m)-[:ASSERTS]->(c:Claim) WHERE c.unit = 'date' | 1]) > 0 \
             WITH m ORDER BY coalesce(m.k, 0.0) DESC, coalesce(m.k_unclamped, m.k, 0.0) DESC, m.id LIMIT $limit RETURN {card}",
            card = CARD.as_str()
        );
        let q = query(&text)
            .param("tenant", tenant)
            .param("at", at)
            .param("limit", MAX_ROWS as i64);
        self.rows(q, "reading dated plans").await
    }

    /// Statements that may report the work of each of `plans` done: for every plan, the
    /// memory objects but plans and questions written after it and by `at` whose lower-cased
    /// text matches `pattern` and contains one of its content words, oldest first (at most
    /// [`REPORTS_PER_PLAN`] a plan). One pass over the tenant's statements, so the newest
    /// reports of a tenant with many are not cut off by a global limit.
    pub async fn completion_reports(
        &self,
        tenant: &str,
        plans: &[PlanWords],
        at: i64,
        pattern: &str,
    ) -> Result<Vec<PlanReport>, QueryError> {
        let Some(since) = plans.iter().map(|p| p.since).min() else {
            return Ok(Vec::new());
        };
        // `p` is a parameter map, not a node: its keys are read by subscript, so that the
        // schema test below does not take them for graph properties.
        let text = format!(
            "MATCH (m:Memory) WHERE m.tenant = $tenant AND NOT m:Plan AND NOT m:Question \
             AND m.t_valid > $since AND m.t_valid <= $at AND toLower(m.text) =~ $pattern \
             WITH m, toLower(m.text) AS said \
             UNWIND $plans AS p \
             WITH p, m, said WHERE m.t_valid > p['since'] \
             AND any(w IN p['words'] WHERE said CONTAINS w) \
             WITH p, m ORDER BY m.t_valid, m.id \
             WITH p, collect(m)[..$per_plan] AS found \
             UNWIND found AS m \
             CALL (m) {{ RETURN {{{card}}} AS report }} \
             RETURN p['id'] AS plan, report",
            card = as_map(&CARD)
        );
        let listed: Vec<BoltType> = plans
            .iter()
            .map(|p| {
                let mut map: HashMap<String, BoltType> = HashMap::new();
                map.insert("id".into(), p.id.clone().into());
                map.insert("since".into(), p.since.into());
                map.insert("words".into(), p.words.clone().into());
                map.into()
            })
            .collect();
        let q = query(&text)
            .param("tenant", tenant)
            .param("since", since)
            .param("at", at)
            .param("pattern", pattern)
            .param("plans", listed)
            .param("per_plan", REPORTS_PER_PLAN as i64);
        self.rows(q, "reading reports of work done").await
    }

    /// The statements that carry out what the given plans announced (`IMPLEMENTS` edges into
    /// them, drawn by the judge's identifier rule), written by `at`, the earliest first, at most
    /// [`REPORTS_PER_PLAN`] a plan.
    pub async fn implementations(
        &self,
        tenant: &str,
        plans: &[String],
        at: i64,
    ) -> Result<Vec<PlanReport>, QueryError> {
        if plans.is_empty() {
            return Ok(Vec::new());
        }
        let text = format!(
            "MATCH (m:Memory)-[e:IMPLEMENTS]->(p:Memory) WHERE p.tenant = $tenant \
             AND p.id IN $plans AND m.id <> p.id AND coalesce(e.t_valid, m.t_valid) <= $at \
             WITH p, m ORDER BY m.t_valid, m.id \
             WITH p, collect(m)[..$per_plan] AS found \
             UNWIND found AS m \
             CALL (m) {{ RETURN {{{card}}} AS report }} \
             RETURN p.id AS plan, report",
            card = as_map(&CARD)
        );
        let q = query(&text)
            .param("tenant", tenant)
            .param("plans", plans.to_vec())
            .param("at", at)
            .param("per_plan", REPORTS_PER_PLAN as i64);
        self.rows(q, "reading what carried plans out").await
    }

    /// Questions that an answer closed (now, or by `as_of`), the most recently answered first,
    /// each with the statement that answers it.
    pub async fn answered_questions(
        &self,
        tenant: &str,
        as_of: Option<i64>,
        limit: usize,
    ) -> Result<Vec<AnsweredQuestion>, QueryError> {
        let q_card = CARD.replace("m.", "q.").replace("(m)", "(q)");
        let a_card = CARD.replace("m.", "a.").replace("(m)", "(a)");
        let text = format!(
            "MATCH (a:Memory)-[r:ANSWERS]->(q:Question) WHERE q.tenant = $tenant AND a.id <> q.id \
             AND (($as_of IS NULL AND q.standing = 'answered') OR ($as_of IS NOT NULL \
               AND coalesce(r.t_valid, 0) <= $as_of AND (r.t_invalid IS NULL OR r.t_invalid > $as_of))) \
             WITH a, q, r ORDER BY coalesce(r.t_valid, 0) DESC, q.id, a.id LIMIT $limit \
             CALL (q) {{ RETURN {{{}}} AS q_card }} \
             CALL (a) {{ RETURN {{{}}} AS a_card }} \
             RETURN q_card AS question, a_card AS answer, r.t_valid AS answered_at, \
             r.review AS review",
            as_map(&q_card),
            as_map(&a_card)
        );
        let q = query(&text)
            .param("tenant", tenant)
            .param("as_of", as_of)
            .param("limit", limit.min(MAX_ROWS) as i64);
        self.rows(q, "reading answered questions").await
    }

    /// Contradiction pairs, newest first; only the ones still standing unless
    /// `include_resolved`.
    pub async fn contradictions(
        &self,
        tenant: &str,
        include_resolved: bool,
        limit: usize,
    ) -> Result<Vec<ContradictionPair>, QueryError> {
        let a_card = CARD.replace("m.", "a.").replace("(m)", "(a)");
        let b_card = CARD.replace("m.", "b.").replace("(m)", "(b)");
        let text = format!(
            "MATCH (a:Memory)-[r:CONTRADICTS]->(b:Memory) WHERE a.tenant = $tenant AND a.id < b.id \
             AND ($resolved OR r.t_invalid IS NULL) \
             WITH a, b, r ORDER BY coalesce(r.t_valid, 0) DESC, a.id, b.id LIMIT $limit \
             CALL (a) {{ RETURN {{{}}} AS a_card }} \
             CALL (b) {{ RETURN {{{}}} AS b_card }} \
             RETURN a_card AS a, b_card AS b, r.t_valid AS t_valid, r.t_invalid AS t_invalid, \
             r.recorded_at AS recorded_at, coalesce(r.evidence, []) AS why",
            as_map(&a_card),
            as_map(&b_card)
        );
        let q = query(&text)
            .param("tenant", tenant)
            .param("resolved", include_resolved)
            .param("limit", limit.min(MAX_ROWS) as i64);
        self.rows(q, "reading contradictions").await
    }

    /// Entities whose name, alias or address matches `name` (case-insensitive; `exact` or as a
    /// substring), each reported as its canonical entity with the whole component's names.
    pub async fn entities(
        &self,
        tenant: &str,
        name: &str,
        exact: bool,
        limit: usize,
        as_of: Option<i64>,
    ) -> Result<Vec<EntityCard>, QueryError> {
        let text = format!(
            "MATCH (e:Entity) WHERE e.tenant = $tenant AND ( \
               ($exact AND (toLower(e.name) = $q OR any(a IN coalesce(e.aliases, []) WHERE toLower(a) = $q))) \
               OR (NOT $exact AND (toLower(e.name) CONTAINS $q OR any(a IN coalesce(e.aliases, []) WHERE toLower(a) CONTAINS $q))) \
               OR any(a IN coalesce(e.addresses, []) WHERE toLower(a) = $q) OR e.id = $raw) \
             WITH e, 0 AS hits{ENTITY_TAIL}"
        );
        let q = query(&text)
            .param("tenant", tenant)
            .param("q", name.trim().to_lowercase())
            .param("raw", name.trim())
            .param("exact", exact)
            .param("at", as_of)
            .param("limit", limit.min(MAX_ROWS) as i64);
        let cards: Vec<EntityCard> = self.rows(q, "looking up entities").await?;
        Ok(tidy(cards))
    }

    /// The entities the given memory objects mention, as canonical entities, most mentioned
    /// by them first.
    pub async fn mentioned_entities(
        &self,
        tenant: &str,
        memory_ids: &[String],
        limit: usize,
    ) -> Result<Vec<EntityCard>, QueryError> {
        if memory_ids.is_empty() {
            return Ok(Vec::new());
        }
        let text = format!(
            "UNWIND $ids AS mid MATCH (m:Node {{id: mid}}) WHERE m.tenant = $tenant \
             MATCH (m)-[:MENTIONS]->(e:Entity) WITH e, count(*) AS hits{ENTITY_TAIL}"
        );
        let q = query(&text)
            .param("ids", memory_ids.to_vec())
            .param("tenant", tenant)
            .param("at", None::<i64>)
            .param("limit", limit.min(MAX_ROWS) as i64);
        let cards: Vec<EntityCard> = self.rows(q, "reading mentioned entities").await?;
        Ok(tidy(cards))
    }

    /// The memory objects about an entity (by name, alias or id), across its identity
    /// component: those that mention it and those asserting a claim about it, oldest first.
    pub async fn timeline(
        &self,
        tenant: &str,
        subject: &str,
        types: &[String],
        limit: usize,
    ) -> Result<(Vec<EntityCard>, Vec<MemoryCard>), QueryError> {
        let entities = self.entities(tenant, subject, true, 20, None).await?;
        let mut ids: Vec<String> = Vec::new();
        for e in &entities {
            ids.push(e.id.clone());
            ids.extend(e.merged.iter().cloned());
        }
        if ids.is_empty() {
            return Ok((entities, Vec::new()));
        }
        let text = format!(
            "UNWIND $ids AS eid MATCH (x:Node {{id: eid}}) WHERE x.tenant = $tenant \
             CALL (x) {{ \
               MATCH (m:Memory)-[:MENTIONS]->(x) RETURN m \
               UNION MATCH (m:Memory)-[:ASSERTS]->(:Claim)-[:ABOUT]->(x) RETURN m }} \
             WITH DISTINCT m WHERE size($types) = 0 OR m.type IN $types \
             WITH m ORDER BY coalesce(m.t_valid, 0) ASC, m.id LIMIT $limit RETURN {card}",
            card = CARD.as_str()
        );
        let q = query(&text)
            .param("ids", ids)
            .param("tenant", tenant)
            .param("types", types.to_vec())
            .param("limit", limit.min(MAX_ROWS) as i64);
        let cards = self.rows(q, "reading a timeline").await?;
        Ok((entities, cards))
    }

    /// One node of `tenant` with its labels and properties.
    pub async fn node(&self, tenant: &str, id: &str) -> Result<Option<NodeView>, QueryError> {
        let q = query(
            "MATCH (n:Node {id: $id}) WHERE n.tenant = $tenant \
             RETURN n.id AS id, [l IN labels(n) WHERE l <> 'Node'] AS labels, properties(n) AS properties",
        )
        .param("id", id)
        .param("tenant", tenant);
        let mut nodes: Vec<NodeView> = self.rows(q, "reading a node").await?;
        Ok(nodes.pop().map(clean_node))
    }

    /// The nodes within `hops` (1–3) of a node and the relationships between them, at most
    /// `limit` nodes (nearest first).
    pub async fn neighborhood(
        &self,
        tenant: &str,
        id: &str,
        hops: u8,
        limit: usize,
    ) -> Result<Option<Subgraph>, QueryError> {
        let hops = hops.clamp(1, 3);
        let text = format!(
            "MATCH (n:Node {{id: $id}}) WHERE n.tenant = $tenant \
             OPTIONAL MATCH p = (n)-[*1..{hops}]-(x:Node) WHERE x.tenant = $tenant \
             WITH n, x, min(length(p)) AS d ORDER BY d, x.id LIMIT $limit \
             WITH n, [y IN collect(x) WHERE y IS NOT NULL] AS xs \
             WITH [n] + xs AS ns \
             UNWIND ns AS a \
             RETURN a.id AS id, [l IN labels(a) WHERE l <> 'Node'] AS labels, properties(a) AS properties"
        );
        let q = query(&text)
            .param("id", id)
            .param("tenant", tenant)
            .param("limit", limit.min(MAX_ROWS) as i64);
        let nodes: Vec<NodeView> = self.rows(q, "reading a neighbourhood").await?;
        if nodes.is_empty() {
            return Ok(None);
        }
        let ids: Vec<String> = nodes.iter().map(|n| n.id.clone()).collect();
        let edges = self.edges_between(tenant, &ids).await?;
        Ok(Some(Subgraph {
            nodes: nodes.into_iter().map(clean_node).collect(),
            edges,
        }))
    }

    async fn edges_between(
        &self,
        tenant: &str,
        ids: &[String],
    ) -> Result<Vec<EdgeView>, QueryError> {
        let q = query(
            "MATCH (a:Node)-[r]->(b:Node) WHERE a.id IN $ids AND b.id IN $ids AND a.tenant = $tenant \
             RETURN type(r) AS rel_type, a.id AS from, b.id AS to, properties(r) AS properties \
             ORDER BY from, rel_type, to",
        )
        .param("ids", ids.to_vec())
        .param("tenant", tenant);
        #[derive(Deserialize)]
        struct Row {
            rel_type: String,
            from: String,
            to: String,
            properties: BTreeMap<String, serde_json::Value>,
        }
        let rows: Vec<Row> = self.rows(q, "reading relationships").await?;
        Ok(rows
            .into_iter()
            .map(|r| EdgeView {
                rel_type: r.rel_type,
                from: r.from,
                to: r.to,
                properties: without_hashes(r.properties),
            })
            .collect())
    }

    /// Every path from the node `from` that follows `hops` in order (e.g. project
    /// `GOVERNED_BY` policy, `<EXCEPTION_TO` exception, `APPROVED_BY` person), as node lists,
    /// at most `limit` paths. Only relationships in force at `at` are followed: not ended
    /// (`t_invalid` after it) and, for [`Validity::AsOf`], already begun (`t_valid` at or
    /// before it); [`Validity::Any`] follows every relationship.
    pub async fn traverse(
        &self,
        tenant: &str,
        from: &str,
        hops: &[Hop],
        limit: usize,
        validity: Validity,
    ) -> Result<Vec<Vec<NodeView>>, QueryError> {
        if hops.is_empty() || hops.len() > 6 {
            return Err(QueryError::Invalid(
                "a traversal has between 1 and 6 hops".into(),
            ));
        }
        let text = traversal(hops)?;
        let (at, begun) = match validity {
            Validity::Now(now) => (Some(now), false),
            Validity::AsOf(at) => (Some(at), true),
            Validity::Any => (None, false),
        };
        let q = query(&text)
            .param("from", from)
            .param("tenant", tenant)
            .param("at", at)
            .param("begun", begun)
            .param("limit", limit.min(MAX_ROWS) as i64);
        #[derive(Deserialize)]
        struct Row {
            path: Vec<NodeView>,
        }
        let rows: Vec<Row> = self.rows(q, "traversing").await?;
        Ok(rows
            .into_iter()
            .map(|r| r.path.into_iter().map(clean_node).collect())
            .collect())
    }
}

/// The Cypher of a traversal along `hops`. Every value is a parameter; the relationship types
/// are written into the pattern (`-[:GOVERNED_BY]->`), because a typed expand is what keeps a
/// multi-hop traversal from walking every relationship of a hub node (`type(r) = $t` would
/// expand them all and filter after), but only a type that is a plain identifier (letters,
/// digits, `_`) is accepted: anything else is refused before a query exists.
///
/// ```
/// use epigraph_query::graph::{Hop, traversal};
/// let hops = [Hop::parse("GOVERNED_BY").unwrap(), Hop::parse("<APPROVED_BY").unwrap()];
/// let cypher = traversal(&hops).unwrap();
/// assert!(cypher.contains("-[:GOVERNED_BY]->(n1:Node)<-[:APPROVED_BY]-(n2:Node)"));
/// let sneaky = Hop { rel_type: "KNOWS]->(m) DETACH DELETE m //".into(), reverse: false };
/// assert!(traversal(&[sneaky]).is_err());
/// let spaced = Hop { rel_type: "KNOWS` RETURN 1 //".into(), reverse: false };
/// assert!(traversal(&[spaced]).is_err());
/// ```
pub fn traversal(hops: &[Hop]) -> Result<String, QueryError> {
    let mut pattern = String::from("(n0:Node {id: $from})");
    for (i, hop) in hops.iter().enumerate() {
        if !safe_identifier(&hop.rel_type) {
            return Err(QueryError::Invalid(format!(
                "{:?} is not a relationship type",
                hop.rel_type
            )));
        }
        let (left, right) = if hop.reverse {
            ("<-", "-")
        } else {
            ("-", "->")
        };
        pattern.push_str(&format!(
            "{left}[:{}]{right}(n{}:Node)",
            hop.rel_type,
            i + 1
        ));
    }
    Ok(format!(
        "MATCH p = {pattern} WHERE all(x IN nodes(p) WHERE x.tenant = $tenant) \
         AND ($at IS NULL OR all(r IN relationships(p) WHERE (r.t_invalid IS NULL OR r.t_invalid > $at) \
           AND (NOT $begun OR r.t_valid IS NULL OR r.t_valid <= $at))) \
         WITH p LIMIT $limit \
         RETURN [x IN nodes(p) | {{id: x.id, labels: [l IN labels(x) WHERE l <> 'Node'], properties: properties(x)}}] AS path",
    ))
}

/// Which relationships a traversal follows.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Validity {
    /// Those not ended at this instant (ms): the graph as it stands.
    Now(i64),
    /// Those begun and not ended at this instant: the graph as it stood then.
    AsOf(i64),
    /// Every one, ended or not.
    Any,
}

/// Aliases and addresses sorted and without repeats.
fn tidy(mut cards: Vec<EntityCard>) -> Vec<EntityCard> {
    for card in &mut cards {
        card.aliases.sort();
        card.aliases.dedup();
        card.addresses.sort();
        card.addresses.dedup();
    }
    cards
}

/// `a.id AS id, …` → `id: a.id, …` (a projection turned into a map literal body).
fn as_map(projection: &str) -> String {
    split_top_level(projection)
        .into_iter()
        .map(|item| {
            let (expr, name) = item
                .rsplit_once(" AS ")
                .expect("every projection item is aliased");
            format!("{}: {}", name.trim(), expr.trim())
        })
        .collect::<Vec<_>>()
        .join(", ")
}

/// Split at commas outside brackets, braces and parentheses.
fn split_top_level(text: &str) -> Vec<String> {
    let (mut depth, mut current, mut out) = (0i32, String::new(), Vec::new());
    for c in text.chars() {
        match c {
            '(' | '[' | '{' => depth += 1,
            ')' | ']' | '}' => depth -= 1,
            ',' if depth == 0 => {
                out.push(std::mem::take(&mut current));
                continue;
            }
            _ => {}
        }
        current.push(c);
    }
    if !current.trim().is_empty() {
        out.push(current);
    }
    out
}

fn without_hashes(
    mut properties: BTreeMap<String, serde_json::Value>,
) -> BTreeMap<String, serde_json::Value> {
    properties.remove("content_hash");
    properties.remove(epigraph_sinks::neo4j::PROPERTIES_HASH);
    properties
}

fn clean_node(mut node: NodeView) -> NodeView {
    node.properties = without_hashes(node.properties);
    node
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_projection_becomes_a_map_literal() {
        assert_eq!(
            as_map("a.id AS id, [(a)-[r]->(o) | {id: o.id, t: r.t}] AS xs"),
            "id: a.id, xs: [(a)-[r]->(o) | {id: o.id, t: r.t}]"
        );
    }

    #[test]
    fn the_card_projection_has_one_alias_per_field() {
        let names: Vec<String> = split_top_level(&CARD)
            .iter()
            .map(|i| i.rsplit_once(" AS ").unwrap().1.trim().to_string())
            .collect();
        assert_eq!(names.len(), 28);
        assert!(
            names.contains(&"k_terms".to_string())
                && names.contains(&"restates".to_string())
                && names.contains(&"restated".to_string())
                && names.contains(&"blocks".to_string())
                && names.contains(&"contradicts".to_string())
                && names.contains(&"claims".to_string())
                && names.contains(&"source_superseded_by".to_string())
                && names.contains(&"implemented_by".to_string())
        );
    }

    /// The string literals of this file that are Cypher (they match, return or project).
    fn cypher_literals() -> Vec<String> {
        let source = include_str!("mod.rs");
        let source = &source[..source.find("#[cfg(test)]").unwrap_or(source.len())];
        let mut out = Vec::new();
        let mut chars = source.chars().peekable();
        let mut comment = false;
        let mut previous = ' ';
        while let Some(c) = chars.next() {
            if comment {
                comment = c != '\n';
            } else if c == '/' && previous == '/' {
                comment = true;
            } else if c == '"' && previous != '\'' {
                let mut literal = String::new();
                while let Some(d) = chars.next() {
                    match d {
                        '\\' => {
                            if let Some(e) = chars.next() {
                                literal.push(if e == '\n' { ' ' } else { e });
                            }
                        }
                        '"' => break,
                        _ => literal.push(d),
                    }
                }
                if [" AS ", "MATCH", "RETURN"]
                    .iter()
                    .any(|w| literal.contains(w))
                {
                    out.push(literal);
                }
            }
            previous = c;
        }
        out
    }

    #[test]
    fn every_property_the_reads_ask_for_is_in_the_graph_schema() {
        // `x.prop` inside the Cypher of this file, including the card template.
        let property =
            regex::Regex::new(r"(?:^|[^A-Za-z0-9_$.])([a-z][a-z0-9_]*)\.([a-z_][a-z0-9_]*)")
                .expect("pattern");
        let mut asked = std::collections::BTreeSet::new();
        for literal in cypher_literals() {
            for capture in property.captures_iter(&literal) {
                asked.insert(capture[2].to_string());
            }
        }
        assert!(asked.len() > 20, "the scan found the reads: {asked:?}");
        let unwritten: Vec<&String> = asked
            .iter()
            .filter(|p| !epigraph_schemas::graph::is_written(p))
            .collect();
        assert!(
            unwritten.is_empty(),
            "read but never written: {unwritten:?}"
        );
    }

    #[test]
    fn no_instant_doubles_as_a_switch() {
        // "No instant" is a null parameter: a negative instant (before 1970) is an instant like
        // any other, not "now" (`tests/tests/injection.rs` asks for `as_of=-1`).
        let cypher = cypher_literals().join("\n") + ENTITY_TAIL;
        assert!(cypher.contains("$at IS NULL") && cypher.contains("$as_of IS NULL"));
        for sentinel in ["$at < 0", "$at >= 0", "$as_of < 0", "$as_of >= 0"] {
            assert!(!cypher.contains(sentinel), "{sentinel} in the reads");
        }
    }

    #[test]
    fn the_card_reads_every_retired_status_of_the_schema() {
        for status in epigraph_schemas::graph::RETIRED_STATUSES {
            assert!(
                CARD.contains(status),
                "{status} missing from the card's Cypher"
            );
        }
    }
}
