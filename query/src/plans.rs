//! Plans past their date: a plan (`PLAN`) that still stands, whose latest date has passed and
//! that no later statement has superseded — "the evaluation is due 1 December", read on the
//! 5th. epigraph does not know whether the work was done, only that nothing it has read since
//! says so or moved the date; an analyst reads the list as "to check", most recently due first.
//!
//! The date of a plan is the last day its latest date claim covers (`2026-12-01`, the 31st for
//! `2026-12`, the 31st of March for `2027-Q1`, the 31st of December for `2027`); a plan with no
//! dated claim is never past due.
//!
//! A plan its own text marks done — a ticked box (`[x] Ship the connector by 1 November`), struck
//! through (`~~…~~`), a leading ✅, ✔ or ☑, `DONE:` / `Completed:` in front or `(done)` at the
//! end — is closed, not late ([`marked_done`]).

use serde::{Deserialize, Serialize};
use utoipa::{IntoParams, ToSchema};

use epigraph_schemas::calendar::{DAY_MS, iso_day, period};
use epigraph_schemas::memory::{EpistemicType, Standing};

use crate::graph::MemoryCard;
use crate::rank::AsOf;
use crate::search::as_of;
use crate::{QueryError, QueryService};

/// The last day (days since the Unix epoch) the card's latest date claim covers.
///
/// ```
/// use epigraph_query::graph::{ClaimRef, MemoryCard};
/// use epigraph_query::plans::due_day;
/// use epigraph_schemas::calendar::days_from_civil;
/// let date = |v: &str| ClaimRef { value: Some(v.into()), unit: Some("date".into()), ..Default::default() };
/// let money = ClaimRef { value: Some("320000".into()), unit: Some("EUR".into()), ..Default::default() };
/// // "Start in November, finish by 2027-Q1": the latest date wins.
/// let plan = MemoryCard { claims: vec![date("2026-11"), date("2027-Q1"), money], ..Default::default() };
/// assert_eq!(due_day(&plan), Some(days_from_civil(2027, 3, 31)));
/// // A date without a year says no day.
/// let vague = MemoryCard { claims: vec![date("--12-01")], ..Default::default() };
/// assert_eq!(due_day(&vague), None);
/// ```
pub fn due_day(card: &MemoryCard) -> Option<i64> {
    card.claims
        .iter()
        .filter(|c| c.unit.as_deref() == Some("date"))
        .filter_map(|c| period(c.value.as_deref()?))
        .map(|(_, last)| last)
        .max()
}

/// Whether a plan's own text marks it done: a ticked box, struck through, a check mark in
/// front, `Done:` / `Completed:` / `Shipped:` in front, or `(done)` / `(completed)` /
/// `(shipped)` / `– done` at the end (case does not matter).
///
/// ```
/// use epigraph_query::plans::marked_done;
/// assert!(marked_done("[x] Ship the Slack connector by 1 November 2026."));
/// assert!(marked_done("~~Ship the Teams connector by 20 November 2026.~~"));
/// assert!(marked_done("✅ Ship the CalDAV connector by 26 November."));
/// assert!(marked_done("DONE: ship the S3 connector by 27 November."));
/// assert!(marked_done("Ship the IMAP connector by 25 November (done)."));
/// // Still to do.
/// assert!(!marked_done("[ ] Ship the Gmail connector by 15 November 2026."));
/// assert!(!marked_done("Ship the connectors before the launch on 3 November."));
/// assert!(!marked_done("Done criteria: the evaluation is due 1 December."));
/// assert!(!marked_done("We are done with planning; the launch is on 3 November."));
/// assert!(!marked_done("~~~."));
/// assert!(!marked_done("~~Teams~~ Slack connector by 20 November."));
/// ```
pub fn marked_done(text: &str) -> bool {
    let text = text.trim();
    let lower = text.to_lowercase();
    let ticked = [
        "[x]",
        "✅",
        "✔",
        "☑",
        "done:",
        "completed:",
        "shipped:",
        "done -",
        "done –",
    ]
    .iter()
    .any(|mark| lower.starts_with(mark));
    let inner = text.trim_end_matches(['.', ' ']);
    let struck = inner.len() > 4
        && inner.starts_with("~~")
        && inner.ends_with("~~")
        && !inner[2..inner.len() - 2].contains("~~");
    let tail = lower.trim_end_matches(['.', ' ', '!']);
    let noted = [
        "(done)",
        "(completed)",
        "(shipped)",
        "(finished)",
        "– done",
        "- done",
        "— done",
    ]
    .iter()
    .any(|mark| tail.ends_with(mark));
    ticked || struck || noted
}

/// Whether a plan was past its date at `at` (ms since the epoch): it is a plan, it had been
/// written by then, it stood (nothing had superseded it, nor its document), and the last day
/// of its latest date was before the day of `at`, and its text does not mark it done
/// ([`marked_done`]). `Some(days past due)` if so.
///
/// ```
/// use epigraph_query::graph::{ClaimRef, EdgeRef, MemoryCard};
/// use epigraph_query::plans::past_due;
/// use epigraph_schemas::calendar::{DAY_MS, days_from_civil};
/// use epigraph_schemas::memory::EpistemicType;
/// let day = |y, m, d| days_from_civil(y, m, d) * DAY_MS;
/// let due = ClaimRef { value: Some("2026-12-01".into()), unit: Some("date".into()), ..Default::default() };
/// let plan = MemoryCard {
///     memory_type: EpistemicType::Plan,
///     claims: vec![due],
///     t_valid: Some(day(2026, 10, 1)),
///     ..Default::default()
/// };
/// assert_eq!(past_due(&plan, day(2026, 12, 5) + 3_600_000), Some(4));
/// assert_eq!(past_due(&plan, day(2026, 12, 1) + 3_600_000), None, "due today is not late");
/// // Moved since: a later statement superseded it.
/// let moved = EdgeRef { id: "m2".into(), t_valid: Some(day(2026, 11, 20)), ..Default::default() };
/// let superseded = MemoryCard { superseded_by: vec![moved], ..plan.clone() };
/// assert_eq!(past_due(&superseded, day(2026, 12, 5)), None);
/// // Ticked off in its own text: done, not late.
/// let ticked = MemoryCard { text: "[x] Evaluation due 2026-12-01".into(), ..plan.clone() };
/// assert_eq!(past_due(&ticked, day(2026, 12, 5)), None);
/// // A decision is not a plan.
/// let decision = MemoryCard { memory_type: EpistemicType::Decision, ..plan };
/// assert_eq!(past_due(&decision, day(2026, 12, 5)), None);
/// ```
pub fn past_due(card: &MemoryCard, at: i64) -> Option<i64> {
    if card.memory_type != EpistemicType::Plan {
        return None;
    }
    let view = AsOf { card, at: Some(at) };
    let stands = view.visible()
        && view.standing() == Standing::Current
        && view.superseded_by().is_empty()
        && view.source_superseded_by().is_empty()
        && card.source_status.is_none()
        && !marked_done(&card.text);
    let today = at.div_euclid(DAY_MS);
    let due = due_day(card)?;
    (stands && due < today).then_some(today - due)
}

/// Parameters of `GET /v1/plans/overdue`.
#[derive(Debug, Deserialize, IntoParams)]
#[serde(deny_unknown_fields)]
#[into_params(parameter_in = Query)]
pub struct OverdueParams {
    /// Most plans (default 50).
    pub limit: Option<usize>,
    /// Compare with this instant rather than now: ms since the epoch, RFC 3339 or
    /// `YYYY-MM-DD`.
    pub as_of: Option<String>,
    /// Only plans due at most this many days before it (default: any).
    pub within_days: Option<i64>,
    /// Tenant (development mode only).
    pub tenant: Option<String>,
}

/// One plan past its date.
#[derive(Clone, Debug, Serialize, Deserialize, ToSchema)]
pub struct OverduePlan {
    /// The last day its latest date covers (`YYYY-MM-DD`, UTC).
    pub due: String,
    /// Whole days from then to `as_of`.
    pub days_overdue: i64,
    /// The plan, with its claims and the document it came from.
    pub plan: MemoryCard,
}

/// Plans past their date.
#[derive(Clone, Debug, Serialize, Deserialize, ToSchema)]
pub struct OverdueResponse {
    /// The day they were compared with (`YYYY-MM-DD`, UTC): `as_of`, or today.
    pub as_of: String,
    /// Standing plans whose latest date has passed, the most recently due first.
    pub plans: Vec<OverduePlan>,
}

impl QueryService {
    /// Plans still standing whose latest date had passed by `as_of` (or now), the most
    /// recently due first.
    pub async fn overdue_plans(
        &self,
        tenant: &str,
        params: &OverdueParams,
    ) -> Result<OverdueResponse, QueryError> {
        let at = as_of(params.as_of.as_deref())?.unwrap_or_else(epigraph_schemas::now_millis);
        if params.within_days.is_some_and(|d| d < 1) {
            return Err(QueryError::invalid("within_days must be at least 1"));
        }
        let cards = self.graph.dated_plans(tenant, at).await?;
        let mut plans: Vec<OverduePlan> = cards
            .into_iter()
            .filter_map(|plan| {
                let days = past_due(&plan, at)?;
                let due = due_day(&plan)?;
                Some(OverduePlan {
                    due: iso_day(due),
                    days_overdue: days,
                    plan,
                })
            })
            .filter(|p| params.within_days.is_none_or(|w| p.days_overdue <= w))
            .collect();
        plans.sort_by(|a, b| {
            a.days_overdue
                .cmp(&b.days_overdue)
                .then_with(|| b.plan.k.unwrap_or(0.0).total_cmp(&a.plan.k.unwrap_or(0.0)))
                .then_with(|| a.plan.id.cmp(&b.plan.id))
        });
        plans.truncate(params.limit.unwrap_or(50));
        Ok(OverdueResponse {
            as_of: iso_day(at.div_euclid(DAY_MS)),
            plans,
        })
    }
}
