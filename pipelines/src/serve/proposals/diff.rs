//! The server's side of a proposal: check the change, read the state it changes, and compute
//! the field-level diff `{field: [before, after]}`. The same reading at apply time gives the
//! `before`s a stale-write check compares.

use std::collections::BTreeMap;

use epigraph_query::QueryError;
use epigraph_schemas::feedback::{Feedback, IdentityVerdict, Judged, ReviewVerdict};
use epigraph_schemas::memory::EpistemicType;
use epigraph_schemas::proposals::{Change, FieldChange};
use serde_json::{Value, json};

use super::super::{ApiError, AppState};

/// The relationship type of identity links.
const SAME_AS: &str = "SAME_AS";

/// What a judged edge is now: `absent`, `drawn` (by the rules, unreviewed), `confirmed`,
/// `asserted` or `rejected`.
async fn edge_state(
    state: &AppState,
    tenant: &str,
    relation: &str,
    from: &str,
    to: &str,
) -> Result<String, ApiError> {
    if let Some(desk) = state.reviews.as_ref()
        && let Some(review) = feedback_keys(tenant, relation, from, to)?
            .iter()
            .find_map(|key| desk.review(key))
        && review.verdict == "reject"
    {
        return Ok("rejected".into());
    }
    let edge = state
        .query()
        .graph()
        .edge_review(tenant, relation, from, to)
        .await?;
    Ok(match edge {
        None => "absent".into(),
        Some(None) => "drawn".into(),
        Some(Some(mark)) => mark,
    })
}

/// The feedback keys a verdict on this edge may be under: the one it is published under, and
/// its key of before session 27 where that differs ([`Feedback::legacy_key`]).
fn feedback_keys(
    tenant: &str,
    relation: &str,
    from: &str,
    to: &str,
) -> Result<Vec<String>, ApiError> {
    let record = if relation.eq_ignore_ascii_case(SAME_AS) {
        Feedback::Identity {
            tenant: tenant.into(),
            a: from.into(),
            b: to.into(),
            verdict: IdentityVerdict::Same,
        }
    } else {
        Feedback::Review {
            tenant: tenant.into(),
            relation: judged(relation)?,
            from: from.into(),
            to: to.into(),
            verdict: ReviewVerdict::Confirm,
            reason: None,
            by: None,
            at: None,
        }
    };
    Ok(std::iter::once(record.key())
        .chain(record.legacy_key())
        .collect())
}

fn judged(relation: &str) -> Result<Judged, ApiError> {
    Judged::parse(relation).ok_or_else(|| {
        ApiError::bad_request(format!(
            "unknown relation {relation:?}: {} or SAME_AS",
            Judged::names()
        ))
    })
}

/// The name of a judgement's diff field: `SUPERSEDES <from> -> <to>`.
fn edge_field(relation: &str, from: &str, to: &str) -> String {
    format!("{} {from} -> {to}", relation.to_ascii_uppercase())
}

fn check_type(memory_type: &str) -> Result<String, ApiError> {
    memory_type
        .parse::<EpistemicType>()
        .map(EpistemicType::name)
        .map_err(|e| ApiError::bad_request(e.to_string()))
}

fn check_text(what: &str, text: &str, max: usize) -> Result<(), ApiError> {
    if text.trim().is_empty() || text.len() > max {
        return Err(ApiError::bad_request(format!(
            "{what} must be 1 to {max} bytes"
        )));
    }
    Ok(())
}

fn missing(tenant: &str, id: &str) -> ApiError {
    QueryError::NotFound(format!("no memory object {id:?} in tenant {tenant:?}")).into()
}

/// Check `change` (normalising what it names: types upper-cased) and compute its diff against
/// the state now, with the ids whose versions a stale-write check must also compare (the
/// memory objects the change touches).
pub(super) async fn diff(
    state: &AppState,
    tenant: &str,
    change: &mut Change,
    max_text: usize,
) -> Result<(BTreeMap<String, FieldChange>, Vec<String>), ApiError> {
    let graph = state.query().graph();
    let mut diff = BTreeMap::new();
    let mut touched = Vec::new();
    match change {
        Change::Remember {
            memory_type,
            title,
            text,
            about,
            links,
        } => {
            *memory_type = check_type(memory_type)?;
            check_text("text", text, max_text)?;
            if let Some(title) = title {
                check_text("title", title, 1_000)?;
            }
            if about.len() > 50 || about.iter().any(|a| a.trim().is_empty() || a.len() > 200) {
                return Err(ApiError::bad_request(
                    "about: at most 50 entity names of 1 to 200 bytes",
                ));
            }
            if links.len() > 20 {
                return Err(ApiError::bad_request("a note declares at most 20 links"));
            }
            diff.insert("type".into(), [Value::Null, json!(memory_type)]);
            diff.insert("text".into(), [Value::Null, json!(text)]);
            if let Some(title) = title {
                diff.insert("title".into(), [Value::Null, json!(title)]);
            }
            for link in links.iter() {
                if graph.memory_state(tenant, &link.to).await?.is_none() {
                    return Err(missing(tenant, &link.to));
                }
                touched.push(link.to.clone());
                diff.insert(
                    edge_field(link.relation.rel_type(), "(this note)", &link.to),
                    [Value::Null, json!("asserted")],
                );
            }
        }
        Change::Edit {
            node,
            memory_type,
            text,
            valid_from,
            valid_until,
        } => {
            let Some(now) = graph.memory_state(tenant, node).await? else {
                return Err(missing(tenant, node));
            };
            touched.push(node.clone());
            if let Some(t) = memory_type {
                *t = check_type(t)?;
                if *t != now.memory_type {
                    diff.insert("type".into(), [json!(now.memory_type), json!(t)]);
                }
            }
            if let Some(text) = text {
                check_text("text", text, max_text)?;
                if *text != now.text {
                    diff.insert("text".into(), [json!(now.text), json!(text)]);
                }
            }
            if let Some(from) = valid_from
                && Some(*from) != now.t_valid
            {
                diff.insert("valid_from".into(), [json!(now.t_valid), json!(from)]);
            }
            if let Some(until) = valid_until
                && Some(*until) != now.t_invalid
            {
                diff.insert("valid_until".into(), [json!(now.t_invalid), json!(until)]);
            }
            if let (Some(from), Some(until)) = (valid_from.or(now.t_valid), valid_until)
                && *until < from
            {
                return Err(ApiError::bad_request(format!(
                    "valid_until ({until}) is before valid_from ({from})"
                )));
            }
            if diff.is_empty() {
                return Err(ApiError::bad_request(
                    "the edit changes nothing: every field already has that value",
                ));
            }
        }
        Change::Judgement {
            relation,
            from,
            to,
            verdict,
        } => {
            *relation = relation.trim().to_ascii_uppercase();
            if relation != SAME_AS {
                judged(relation)?;
            } else if *verdict == ReviewVerdict::Assert {
                return Err(ApiError::bad_request(
                    "SAME_AS is confirmed (same) or rejected (distinct), not asserted",
                ));
            }
            if from.is_empty() || to.is_empty() || from == to {
                return Err(ApiError::bad_request(
                    "a judgement needs two different node ids",
                ));
            }
            let found = graph.versions(tenant, &[from.clone(), to.clone()]).await?;
            for id in [&*from, &*to] {
                if !found.contains_key(id) {
                    return Err(QueryError::NotFound(format!(
                        "no node {id:?} in tenant {tenant:?}"
                    ))
                    .into());
                }
            }
            let before = edge_state(state, tenant, relation, from, to).await?;
            let after = match verdict {
                ReviewVerdict::Confirm => "confirmed",
                ReviewVerdict::Reject => "rejected",
                ReviewVerdict::Assert => "asserted",
            };
            if before == "absent" && *verdict != ReviewVerdict::Assert {
                return Err(QueryError::NotFound(format!(
                    "no {relation} edge from {from:?} to {to:?} to {}: assert it instead",
                    verdict.as_str()
                ))
                .into());
            }
            if before == after {
                return Err(ApiError::bad_request(format!(
                    "the edge is {before} already"
                )));
            }
            diff.insert(
                edge_field(relation, from, to),
                [json!(before), json!(after)],
            );
        }
    }
    Ok((diff, touched))
}

/// The `before` of each field of `diff` now, for the stale-write check: `{field: [expected,
/// found]}` for every field whose state moved since the diff was computed.
pub(super) async fn moved(
    state: &AppState,
    tenant: &str,
    change: &Change,
    diff: &BTreeMap<String, FieldChange>,
) -> Result<BTreeMap<String, FieldChange>, ApiError> {
    let graph = state.query().graph();
    let mut now: BTreeMap<String, Value> = BTreeMap::new();
    match change {
        Change::Remember { .. } => {
            // Nothing existed before; the links' targets are compared by version.
        }
        Change::Edit { node, .. } => match graph.memory_state(tenant, node).await? {
            Some(m) => {
                now.insert("type".into(), json!(m.memory_type));
                now.insert("text".into(), json!(m.text));
                now.insert("valid_from".into(), json!(m.t_valid));
                now.insert("valid_until".into(), json!(m.t_invalid));
            }
            None => {
                for field in ["type", "text", "valid_from", "valid_until"] {
                    now.insert(field.into(), json!("(deleted)"));
                }
            }
        },
        Change::Judgement {
            relation, from, to, ..
        } => {
            now.insert(
                edge_field(relation, from, to),
                json!(edge_state(state, tenant, relation, from, to).await?),
            );
        }
    }
    Ok(diff
        .iter()
        .filter_map(|(field, [before, _])| {
            let found = now.get(field)?;
            (found != before).then(|| (field.clone(), [before.clone(), found.clone()]))
        })
        .collect())
}
