//! What replaced a document's statements on an identifier a query names, read through the
//! candidate documents ([`GraphReader::subject_replacements`]).

use neo4rs::query;
use serde::Deserialize;

use super::GraphReader;
use crate::QueryError;

/// A statement of one document replaced by a statement of another on an identifier a query
/// names ([`GraphReader::subject_replacements`]).
#[derive(Clone, Debug, Deserialize, PartialEq, Eq)]
pub struct SubjectReplacement {
    /// The source id of the document whose statement was replaced.
    pub replaced: String,
    /// The source id of the document whose statement replaced it.
    pub by: String,
    /// The identifier's key.
    pub subject: String,
}

impl GraphReader {
    /// The statements of the documents of `members` (memory ids, one per document is enough)
    /// that a statement of another document replaced on one of the identifiers `keys`
    /// (lower-cased [`crate::subjects::named`] keys): an `IMPLEMENTS` edge (an announcement
    /// carried out), or a `SUPERSEDES` edge into a statement that stands superseded, whose
    /// evidence opens with the identifier in backticks, as the lifecycle rule writes it
    /// ("`use_line_collection`: announced (…) and carried out (…)"). Only edges valid by `at`
    /// (all of them when it is `None`); at most [`MAX_ROWS`](super::MAX_ROWS) pairs.
    ///
    /// The statement that carries such an edge often shares no word with the question ("... is
    /// deprecated with no replacement." under a heading naming the identifier), so it is not
    /// among the candidates: this read finds it through its document.
    pub async fn subject_replacements(
        &self,
        tenant: &str,
        members: &[String],
        keys: &[String],
        at: Option<i64>,
    ) -> Result<Vec<SubjectReplacement>, QueryError> {
        if members.is_empty() || keys.is_empty() {
            return Ok(Vec::new());
        }
        let q = query(
            "UNWIND $ids AS id MATCH (m:Node {id: id}) WHERE m:Memory AND m.tenant = $tenant \
             MATCH (m)-[:DERIVED_FROM]->(s) WITH DISTINCT s \
             MATCH (s)<-[:DERIVED_FROM]-(o:Memory)<-[r:SUPERSEDES|IMPLEMENTS]-(n:Memory) \
             WHERE n.tenant = $tenant AND n.source_id <> o.source_id \
             AND (type(r) = 'IMPLEMENTS' OR coalesce(o.standing, 'current') = 'superseded') \
             AND ($at IS NULL OR coalesce(r.t_valid, n.t_valid) IS NULL \
                  OR coalesce(r.t_valid, n.t_valid) <= $at) \
             WITH o, n, [k IN $keys WHERE any(e IN coalesce(r.evidence, []) \
                  WHERE e STARTS WITH '`' + k + '`:')] AS named \
             WHERE size(named) > 0 \
             RETURN DISTINCT o.source_id AS replaced, n.source_id AS by, head(named) AS subject \
             ORDER BY replaced, by, subject LIMIT $limit",
        )
        .param("ids", members.to_vec())
        .param("keys", keys.to_vec())
        .param("tenant", tenant)
        .param("at", at)
        .param("limit", super::MAX_ROWS as i64);
        self.rows(q, "reading replacements on the query's identifiers")
            .await
    }
}
