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
//!
//! So is a plan that a later statement reports done: "The Slack connector shipped on 30
//! October" closes "We ship the Slack connector by 1 November" ([`reports_done`]: a word of
//! completion, not negated or in the future, and the plan's own content words). Such plans are
//! not listed as late but under `reported_done`, each with the statement that closed it, so an
//! analyst can check the reading: a reviewer's verdict on `IMPLEMENTS` from the report to the
//! plan ([`Readings`]) confirms it, or rejects it and the plan is late again (unless another
//! statement closes it), whether the reading came from an `IMPLEMENTS` edge or from the words.

use std::collections::{BTreeSet, HashMap};

use serde::{Deserialize, Serialize};
use utoipa::{IntoParams, ToSchema};

use epigraph_schemas::calendar::{DAY_MS, MONTH_NAMES, WEEKDAY_NAMES, iso_day, period};
use epigraph_schemas::memory::{EpistemicType, Standing};

use crate::graph::{MemoryCard, PlanWords};
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

/// Words that report work done (a past tense, or a state: "is live").
const DONE_WORDS: [&str; 15] = [
    "shipped",
    "launched",
    "released",
    "delivered",
    "completed",
    "finished",
    "done",
    "merged",
    "deployed",
    "landed",
    "published",
    "signed",
    "closed",
    "live",
    "migrated",
];

/// Words that keep a report from saying the work is done: a negation, the future, a wish or a
/// condition ("has not shipped", "will be released", "once it is merged").
const NOT_DONE_WORDS: [&str; 23] = [
    "not", "no", "never", "yet", "will", "would", "should", "could", "might", "must", "shall",
    "going", "plan", "plans", "planned", "expect", "expected", "hope", "if", "once", "unless",
    "until", "till",
];

/// Verbs of a plan that promise a delivery: any word of completion reports such work done
/// ("ship the beta" → "the beta is live", "launched"). A plan with none of them ("take over the
/// audit log", "draft the proposal") is closed only by a word of completion for any work
/// ([`GENERIC_DONE_WORDS`]) or its own verb in the past ("drafted"): "since we launched the
/// audit log" does not say that someone took it over.
const DELIVERY_VERBS: [&str; 25] = [
    "ship",
    "ships",
    "shipping",
    "launch",
    "launches",
    "launching",
    "release",
    "releases",
    "releasing",
    "deliver",
    "delivers",
    "delivering",
    "finish",
    "finishes",
    "complete",
    "completes",
    "merge",
    "deploy",
    "land",
    "publish",
    "sign",
    "close",
    "roll",
    "live",
    "migrate",
];

/// Words of completion that fit any work.
const GENERIC_DONE_WORDS: [&str; 3] = ["done", "finished", "completed"];

/// Whether `said` is `verb` in the past: `drafted`, `hired`, `dropped`, `carried`.
fn past_of(verb: &str, said: &str) -> bool {
    let Some(rest) = said.strip_prefix(verb) else {
        return verb
            .strip_suffix('y')
            .is_some_and(|stem| said.strip_prefix(stem) == Some("ied"));
    };
    let doubled = verb.chars().next_back().map(|c| format!("{c}ed"));
    verb.chars().count() >= 3
        && (rest == "ed"
            || (rest == "d" && verb.ends_with('e'))
            || doubled.as_deref() == Some(rest))
}

/// Words of a plan that say when work is to be done, not what: with the [`DELIVERY_VERBS`]
/// (that it is to be done), they do not identify the work a report is about.
const SCHEDULE_WORDS: [&str; 24] = [
    "out", "due", "deadline", "target", "goal", "aim", "week", "weeks", "month", "quarter", "day",
    "days", "today", "tomorrow", "end", "start", "begin", "next", "plan", "planned", "team", "we",
    "our", "latest",
];

/// The words of `text`, lower-cased, split at anything that is not a letter, a digit or an
/// apostrophe.
fn words(text: &str) -> impl Iterator<Item = String> + '_ {
    text.split(|c: char| !(c.is_alphanumeric() || c == '\'' || c == '’'))
        .filter(|w| !w.is_empty())
        .map(|w| w.to_lowercase().replace('’', "'"))
}

/// The content words of a plan or a report, singular: no stop word, date, number or word of
/// schedule or completion.
fn content_words(text: &str) -> std::collections::BTreeSet<String> {
    let stop = stop_words::get("en");
    words(text)
        .map(|w| w.trim_matches('\'').to_string())
        .filter(|w| w.chars().count() >= 3 && !w.chars().all(|c| c.is_ascii_digit()))
        .filter(|w| !w.starts_with('q') || w.len() != 2)
        .filter(|w| {
            !stop.contains(&w.as_str())
                && !SCHEDULE_WORDS.contains(&w.as_str())
                && !DELIVERY_VERBS.contains(&w.as_str())
                && !DONE_WORDS.contains(&w.as_str())
                && !MONTH_NAMES.contains(&w.as_str())
                && !WEEKDAY_NAMES.contains(&w.as_str())
        })
        .map(|w| match w.strip_suffix('s') {
            Some(stem) if stem.len() >= 3 && !stem.ends_with('s') => stem.to_string(),
            _ => w,
        })
        .collect()
}

/// Whether `report` (a statement written after the plan) says that the work `plan` promised
/// was done: it has a word of completion ("shipped", "launched", "is live", "merged", …) that
/// fits the plan's work (any one for a delivery — ship, launch, release, …; otherwise "done",
/// "finished", "completed" or the plan's own verb in the past), no negation, future or
/// condition ("not yet", "will", "once", "until"), is not a question, and names the plan's
/// work — at least two of the plan's content words, or its only one. The plan's own words of
/// completion ("drafted" for "draft", "is removed" for "will be removed", not after "be") are
/// words of completion too, but a report in them alone must share three content words.
/// Conservative by design: a plan wrongly closed would hide a real delay.
///
/// ```
/// use epigraph_query::plans::reports_done;
/// let plan = "We ship the Slack connector by 1 November 2026.";
/// assert!(reports_done(plan, "The Slack connector shipped on 30 October."));
/// assert!(reports_done(plan, "Shipped the Slack connectors to every tenant today."));
/// // Another connector, not done yet, in the future, asked.
/// assert!(!reports_done(plan, "The Teams connector shipped on 30 October."));
/// assert!(!reports_done(plan, "The Slack connector has not shipped yet."));
/// assert!(!reports_done(plan, "The Slack connector hasn't shipped."));
/// assert!(!reports_done(plan, "The Slack connector will be released next week."));
/// assert!(!reports_done(plan, "Has the Slack connector shipped?"));
/// // No word of completion.
/// assert!(!reports_done(plan, "The Slack connector needs another review."));
/// // A plan with one content word.
/// assert!(reports_done("Launch the beta by Friday.", "The beta is live."));
/// // A plan that names no work cannot be matched.
/// assert!(!reports_done("Ship it by 3 November.", "We shipped it."));
/// // A condition, not a report.
/// let freeze = "Next quarter we plan to freeze hiring until the audit is done.";
/// assert!(!reports_done(freeze, "We freeze hiring until the audit is done, from December 10."));
/// // The work was to take the dashboard over, not to launch it.
/// let handover = "Priya is going to take over the usage dashboard by May 11.";
/// assert!(!reports_done(handover, "The error rate looks flat since we launched the usage dashboard."));
/// assert!(reports_done(handover, "Priya's handover of the usage dashboard is done."));
/// assert!(reports_done("Omar to draft the SunGate proposal by March 1.", "Omar drafted the SunGate proposal; it was published today."));
/// assert!(reports_done("Omar to draft the SunGate proposal by March 1.", "Omar drafted the SunGate proposal."));
/// // The plan's own participle: "will be removed" is reported by "is removed" (Django's notes).
/// let removal = "Automatic loading of initial_data fixtures will be removed in Django 1.9.";
/// assert!(reports_done(removal, "Support for automatic loading of initial_data fixtures is removed."));
/// assert!(!reports_done(removal, "Automatic loading of initial_data fixtures will be removed soon."));
/// assert!(!reports_done(removal, "The ssi template tag is removed."));
/// assert!(!reports_done(removal, "Fixtures of Django 1.9 are removed."));
/// assert!(!reports_done(removal, "initial_data fixtures are deprecated, to be removed."));
/// ```
pub fn reports_done(plan: &str, report: &str) -> bool {
    if report.trim_end().ends_with('?') {
        return false;
    }
    let said: Vec<String> = words(report).collect();
    let promised: Vec<String> = words(plan).collect();
    let participles = participles(&promised);
    // The same words the graph's first filter of reports takes.
    let own_words = own_completion_words(plan);
    let own = |w: &str| own_words.contains(w);
    let by_done_word = said.iter().any(|w| DONE_WORDS.contains(&w.as_str()));
    // Not "to be replaced", "will be removed": the participle after "be" is still to come.
    let by_own_word = said
        .iter()
        .enumerate()
        .any(|(i, w)| own(w) && (i == 0 || said[i - 1] != "be"));
    let done = by_done_word || by_own_word;
    let hedged = said
        .iter()
        .any(|w| NOT_DONE_WORDS.contains(&w.as_str()) || w.ends_with("n't"));
    if !done || hedged {
        return false;
    }
    let fits = promised
        .iter()
        .any(|w| DELIVERY_VERBS.contains(&w.as_str()))
        || said
            .iter()
            .any(|w| GENERIC_DONE_WORDS.contains(&w.as_str()) || own(w));
    // What the work is about, not what is to happen to it.
    let mut wanted = content_words(plan);
    wanted.retain(|w| !participles.contains(w));
    let named = content_words(report);
    let shared = wanted.intersection(&named).count();
    // A report in the plan's own words only ("is removed") names the work more fully: on
    // Django's release notes two shared words ("django", "code") closed plans by reports of
    // other removals.
    let needed = if by_done_word { 2 } else { 3 };
    fits && !wanted.is_empty() && shared >= wanted.len().min(needed)
}

/// The first of `reports` (in order) that closes `plan` by `at`: written after the plan and by
/// then, still standing then, and saying the work was done ([`reports_done`]).
pub fn closing_report<'r>(
    plan: &MemoryCard,
    reports: &'r [MemoryCard],
    at: i64,
) -> Option<&'r MemoryCard> {
    reports
        .iter()
        .find(|report| stands_after(plan, report, at) && reports_done(&plan.text, &report.text))
}

/// Whether `report` can close `plan` by `at`: another statement, written after the plan and by
/// `at`, visible then and not superseded.
fn stands_after(plan: &MemoryCard, report: &MemoryCard, at: i64) -> bool {
    let view = AsOf {
        card: report,
        at: Some(at),
    };
    report.id != plan.id
        && plan
            .t_valid
            .zip(report.t_valid)
            .is_some_and(|(written, t)| t > written && t <= at)
        && view.visible()
        && view.superseded_by().is_empty()
}

/// The first statement among `implementing` (statements with an `IMPLEMENTS` edge into the
/// plan) that carries it out by `at`: written after the plan, visible then and not superseded.
pub fn carrying_out<'r>(
    plan: &MemoryCard,
    implementing: &'r [MemoryCard],
    at: i64,
) -> Option<&'r MemoryCard> {
    implementing
        .iter()
        .find(|report| stands_after(plan, report, at))
}

/// Whether a statement typed a plan says itself that its work was done: a word of completion
/// and no negation, future or condition ("as planned" aside). The extractor types "The Slack
/// connector shipped on 31 October, three days before the launch" a plan for its date and its
/// word "launch"; it is a report, not work still to do.
///
/// ```
/// use epigraph_query::plans::says_done;
/// assert!(says_done("The Slack and Gmail connectors shipped on 31 October, three days before the launch."));
/// assert!(says_done("The beta launched on 3 November as planned."));
/// assert!(!says_done("We plan to ship the Slack connector by 31 October."));
/// assert!(!says_done("Next quarter we freeze hiring until the audit is done."));
/// assert!(!says_done("The migration will be completed by Friday."));
/// ```
pub fn says_done(text: &str) -> bool {
    let lower = text.to_lowercase();
    let lower = lower.replace("as planned", "").replace("as scheduled", "");
    let said: Vec<String> = words(&lower).collect();
    said.iter().any(|w| DONE_WORDS.contains(&w.as_str()))
        && !said
            .iter()
            .any(|w| NOT_DONE_WORDS.contains(&w.as_str()) || w.ends_with("n't"))
}

/// Whether a plan was past its date at `at` (ms since the epoch): it is a plan, it had been
/// written by then, it stood (nothing had superseded it, nor its document), and the last day
/// of its latest date was before the day of `at`, and its text does not mark it done
/// ([`marked_done`]) nor say that it was ([`says_done`]). `Some(days past due)` if so.
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
        && !marked_done(&card.text)
        && !says_done(&card.text);
    let today = at.div_euclid(DAY_MS);
    let due = due_day(card)?;
    (stands && due < today).then_some(today - due)
}

/// Reviewers' verdicts on which statement closes which plan: reviews of `IMPLEMENTS` from a
/// report to a plan, in force. A rejected pair closes nothing; a confirmed one is marked.
///
/// ```
/// use epigraph_query::plans::Readings;
/// let mut readings = Readings::default();
/// readings.reject("report", "plan");
/// readings.confirm("other", "plan");
/// assert!(readings.rejects("report", "plan") && !readings.rejects("plan", "report"));
/// assert_eq!(readings.review("other", "plan"), Some("confirmed"));
/// assert_eq!(readings.review("report", "plan"), Some("rejected"));
/// assert_eq!(readings.review("third", "plan"), None);
/// assert_eq!(readings.rejected_for("plan").collect::<Vec<_>>(), ["report"]);
/// ```
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Readings {
    rejected: BTreeSet<(String, String)>,
    confirmed: BTreeSet<(String, String)>,
}

impl Readings {
    /// A reviewer said `report` does not close `plan`.
    pub fn reject(&mut self, report: &str, plan: &str) {
        self.rejected.insert((report.to_string(), plan.to_string()));
    }

    /// A reviewer said `report` does close `plan`.
    pub fn confirm(&mut self, report: &str, plan: &str) {
        self.confirmed
            .insert((report.to_string(), plan.to_string()));
    }

    /// Whether the reading "`report` closes `plan`" was rejected.
    pub fn rejects(&self, report: &str, plan: &str) -> bool {
        self.rejected
            .contains(&(report.to_string(), plan.to_string()))
    }

    /// The statements whose reading as closing `plan` was rejected.
    pub fn rejected_for<'a>(&'a self, plan: &'a str) -> impl Iterator<Item = &'a str> + 'a {
        self.rejected
            .iter()
            .filter(move |(_, p)| p == plan)
            .map(|(report, _)| report.as_str())
    }

    /// `confirmed`, `rejected`, or nothing when no one reviewed the reading.
    pub fn review(&self, report: &str, plan: &str) -> Option<&'static str> {
        let pair = (report.to_string(), plan.to_string());
        if self.rejected.contains(&pair) {
            Some("rejected")
        } else if self.confirmed.contains(&pair) {
            Some("confirmed")
        } else {
            None
        }
    }
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
    /// Statements that would close it but whose reading a reviewer rejected.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub not_closed_by: Vec<MemoryCard>,
}

/// A plan past its date that a later statement reports done.
#[derive(Clone, Debug, Serialize, Deserialize, ToSchema)]
pub struct ReportedDone {
    /// The last day its latest date covers (`YYYY-MM-DD`, UTC).
    pub due: String,
    /// The plan.
    pub plan: MemoryCard,
    /// The statement that reports it done.
    pub report: MemoryCard,
    /// How the report closes the plan: `implements` (it carries out the change the plan
    /// announced: an `IMPLEMENTS` edge, "``syncdb`` will be removed" → "``syncdb`` is no longer
    /// available") or `words` (it says the plan's work was done, [`reports_done`]).
    #[serde(default)]
    pub via: String,
    /// `confirmed` when a reviewer confirmed the reading (`IMPLEMENTS` from the report to the
    /// plan); a rejected reading is not listed here.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub review: Option<String>,
}

/// Plans past their date.
#[derive(Clone, Debug, Serialize, Deserialize, ToSchema)]
pub struct OverdueResponse {
    /// The day they were compared with (`YYYY-MM-DD`, UTC): `as_of`, or today.
    pub as_of: String,
    /// Standing plans whose latest date has passed, the most recently due first.
    pub plans: Vec<OverduePlan>,
    /// Plans past their date that a later statement reports done (not in `plans`), with that
    /// statement, the most recently due first.
    #[serde(default)]
    pub reported_done: Vec<ReportedDone>,
}

impl QueryService {
    /// Plans still standing whose latest date had passed by `as_of` (or now), the most
    /// recently due first; a plan a later statement closes is listed apart, unless a reviewer
    /// rejected that reading (`readings`).
    pub async fn overdue_plans(
        &self,
        tenant: &str,
        params: &OverdueParams,
        readings: &Readings,
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
                    not_closed_by: Vec::new(),
                })
            })
            .filter(|p| params.within_days.is_none_or(|w| p.days_overdue <= w))
            .collect();
        let mut reported_done = Vec::new();
        let wanted: Vec<PlanWords> = plans
            .iter()
            .filter_map(|p| {
                Some(PlanWords {
                    id: p.plan.id.clone(),
                    since: p.plan.t_valid?,
                    words: content_words(&p.plan.text).into_iter().collect(),
                })
            })
            .filter(|p| !p.words.is_empty())
            .collect();
        let own: std::collections::BTreeSet<String> = plans
            .iter()
            .flat_map(|p| own_completion_words(&p.plan.text))
            .collect();
        let ids: Vec<String> = plans.iter().map(|p| p.plan.id.clone()).collect();
        let mut carried_out: HashMap<String, Vec<MemoryCard>> = HashMap::new();
        for found in self.graph.implementations(tenant, &ids, at).await? {
            carried_out
                .entry(found.plan)
                .or_default()
                .push(found.report);
        }
        let mut reports: HashMap<String, Vec<MemoryCard>> = HashMap::new();
        for found in self
            .graph
            .completion_reports(tenant, &wanted, at, &completion_pattern_with(&own))
            .await?
        {
            reports.entry(found.plan).or_default().push(found.report);
        }
        // The statements whose reading a reviewer rejected, for the analyst to see (and
        // withdraw) on the late plan: read from the reviews, since a rejected edge is gone
        // from the graph after the pipeline's next epoch. A statement made after `at` was not
        // there to be turned down in the view as of `at`.
        let turned_down: Vec<String> = plans
            .iter()
            .flat_map(|p| readings.rejected_for(&p.plan.id))
            .map(String::from)
            .collect();
        let mut turned_down = self.graph.memory_cards(tenant, &turned_down).await?;
        turned_down.retain(|_, report| report.t_valid.is_none_or(|t| t <= at));
        plans.retain_mut(|p| {
            p.not_closed_by = readings
                .rejected_for(&p.plan.id)
                .filter_map(|report| turned_down.get(report).cloned())
                .collect();
            // The statements that may close it, less the readings a reviewer rejected.
            let of = |found: &HashMap<String, Vec<MemoryCard>>| -> Vec<MemoryCard> {
                let mut found = found.get(&p.plan.id).cloned().unwrap_or_default();
                found.retain(|report| !readings.rejects(&report.id, &p.plan.id));
                found
            };
            let (implementing, reporting) = (of(&carried_out), of(&reports));
            let closed = carrying_out(&p.plan, &implementing, at)
                .map(|report| (report.clone(), "implements"))
                .or_else(|| {
                    closing_report(&p.plan, &reporting, at).map(|report| (report.clone(), "words"))
                });
            match closed {
                Some((report, via)) => {
                    reported_done.push(ReportedDone {
                        due: p.due.clone(),
                        plan: p.plan.clone(),
                        review: readings.review(&report.id, &p.plan.id).map(String::from),
                        report,
                        via: via.to_string(),
                    });
                    false
                }
                None => true,
            }
        });
        reported_done.sort_by(|a, b| b.due.cmp(&a.due).then_with(|| a.plan.id.cmp(&b.plan.id)));
        reported_done.truncate(params.limit.unwrap_or(50));
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
            reported_done,
        })
    }
}

/// The regular expression (Neo4j's, on the lower-cased text) a statement must match to be read
/// as a possible report of work done: one of the words of completion.
///
/// ```
/// let pattern = regex::Regex::new(&epigraph_query::plans::completion_pattern()).unwrap();
/// assert!(pattern.is_match("the slack connector shipped on 30 october."));
/// assert!(pattern.is_match("the beta is live"));
/// assert!(!pattern.is_match("the connector ships friday; delivery is slow"));
/// ```
pub fn completion_pattern() -> String {
    completion_pattern_with(&std::collections::BTreeSet::new())
}

/// [`completion_pattern`] with more words of completion: the plans' own
/// ([`own_completion_words`]).
pub fn completion_pattern_with(extra: &std::collections::BTreeSet<String>) -> String {
    let words: Vec<&str> = DONE_WORDS
        .iter()
        .copied()
        .chain(extra.iter().map(String::as_str))
        .filter(|w| w.chars().all(char::is_alphanumeric))
        .collect();
    format!("(?s).*\\b({})\\b.*", words.join("|"))
}

/// A plan's participles after "be" ("will be removed", "will be required"), which a report
/// says again once the work happened ("is removed", "is now required").
fn participles(promised: &[String]) -> std::collections::BTreeSet<String> {
    promised
        .windows(2)
        .filter(|w| w[0] == "be" && w[1].len() > 4 && w[1].ends_with("ed"))
        .map(|w| w[1].clone())
        .collect()
}

/// The words besides the [`DONE_WORDS`] that [`reports_done`] reads as reporting `plan` done:
/// its participle after "be" ("will be removed") and its verbs in the past ("draft" →
/// "drafted"). The graph's first filter of possible reports takes them too.
///
/// ```
/// use epigraph_query::plans::own_completion_words;
/// let words = own_completion_words("Omar to draft the proposal; the old form will be removed.");
/// assert!(words.contains("drafted") && words.contains("removed"));
/// ```
pub fn own_completion_words(plan: &str) -> std::collections::BTreeSet<String> {
    let stop = stop_words::get("en");
    let promised: Vec<String> = words(plan).collect();
    let mut out = participles(&promised);
    for verb in &promised {
        if verb.chars().count() < 3
            || !verb.chars().all(|c| c.is_ascii_lowercase())
            || stop.contains(&verb.as_str())
        {
            continue;
        }
        let mut pasts = vec![format!("{verb}ed")];
        if verb.ends_with('e') {
            pasts.push(format!("{verb}d"));
        }
        if let Some(stem) = verb.strip_suffix('y') {
            pasts.push(format!("{stem}ied"));
        }
        if let Some(last) = verb.chars().next_back() {
            pasts.push(format!("{verb}{last}ed"));
        }
        out.extend(pasts.into_iter().filter(|w| past_of(verb, w)));
    }
    out
}
