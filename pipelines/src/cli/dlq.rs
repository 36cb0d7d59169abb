//! `epigraph dlq list|show|replay`: the dead-letter topic from the command line.
//!
//! - `list` prints the letters (oldest first) with their reasons, filtered by `--since`,
//!   `--source` and `--tenant`; `show <id>` prints one with its raw bytes (UTF-8 and hex).
//! - `replay` re-submits letters after a fix, through the validation of the path that refused
//!   them: a webhook body (`webhook`, `events`) is parsed again with
//!   [`parse_event`](crate::serve::webhook::parse_event) and published to its kind's topic; a
//!   letter of `epigraph run` (an event or feedback record read from a topic) is decoded and
//!   checked again as the run checks it and republished to its topic, under the key its record
//!   names. A letter refused again is dead-lettered again with the new reason (`replay_of`
//!   points at the letter it replays). Connector letters (a file, a mail, a Slack day, …) are
//!   not replayable from the letter: the fix is to ingest the fixed input again.
//!
//! Nothing is duplicated: every replayed letter gets a mark on the compacted
//! `<prefix>.dlq.replays` topic (key: the letter's `<partition>@<offset>`), and a marked letter
//! is not replayed again; before publishing, the current record of the item's key is read from
//! its topic, and an item recorded with the same event id (or the same feedback record) is not
//! published again, nor one that a newer record of the same item replaced since it was refused.
//! Downstream, a re-sent identical version is a no-op of the dataflow anyway.

use std::collections::{BTreeSet, HashMap};
use std::fmt;
use std::str::FromStr;
use std::time::Duration;

use anyhow::{Context, Result};
use clap::{Args, Subcommand};
use epigraph_schemas::decode_event;
use epigraph_schemas::feedback::Feedback;
use epigraph_sources::SourceError;
use epigraph_sources::kafka::{
    DeadLetter, EventConsumer, EventDecoder, EventProducer, KafkaConfig, RawMessage, ensure_topics,
};
use serde::{Deserialize, Serialize};

use crate::config::EpigraphConfig;
use crate::publish::progress_bar;
use crate::serve::dead_letters::DeadLetterView;
use crate::serve::webhook::parse_event;

/// How long a read of a topic to its end may wait for the next message.
const READ_IDLE: Duration = Duration::from_secs(15);

/// Bytes of a raw item shown in hex by `show` without `--full`.
const HEX_BYTES: usize = 1024;

/// `epigraph dlq …`.
#[derive(Debug, Subcommand)]
pub enum DlqAction {
    /// List the dead letters, oldest first: id, time, stage, tenant, size, replay state and
    /// reason.
    List {
        /// Which letters.
        #[command(flatten)]
        filter: LetterFilter,
        /// One JSON object per line instead of a table.
        #[arg(long)]
        json: bool,
    },
    /// One letter with everything it holds and its raw bytes (UTF-8 preview and hex).
    Show {
        /// The letter's id as `list` prints it: `<partition>@<offset>` (or an offset of
        /// partition 0).
        id: LetterId,
        /// As JSON (raw bytes in base64 and as a UTF-8 preview).
        #[arg(long)]
        json: bool,
        /// The whole raw item in hex (default: its first KiB).
        #[arg(long)]
        full: bool,
    },
    /// Re-submit letters through the validation of the path that refused them; prints a JSON
    /// report. A letter is replayed once; what is refused again is dead-lettered again.
    Replay {
        /// Which letters.
        #[command(flatten)]
        filter: LetterFilter,
        /// Only these letters (ids as `list` prints them, comma-separated).
        #[arg(long, value_delimiter = ',')]
        id: Vec<LetterId>,
        /// Say what would happen; publish nothing.
        #[arg(long)]
        dry_run: bool,
    },
}

/// Why a `dlq` command could not do what it was asked.
#[derive(Debug, thiserror::Error)]
pub enum DlqError {
    /// A letter id that is not `<partition>@<offset>`.
    #[error("{0:?} is not a letter id (<partition>@<offset>, e.g. 0@12)")]
    BadId(String),
    /// `--since` that is neither ms, a date nor an RFC 3339 time.
    #[error("--since {0:?}: give ms since the Unix epoch, a date (2026-03-01) or an RFC 3339 time")]
    BadSince(String),
    /// No letter has this id.
    #[error("no dead letter {id} on {topic}")]
    NoSuchLetter {
        /// The id asked for.
        id: LetterId,
        /// The dead-letter topic.
        topic: String,
    },
    /// Kafka failed.
    #[error(transparent)]
    Kafka(#[from] SourceError),
}

/// Where a letter is on the dead-letter topic: `<partition>@<offset>`.
///
/// ```
/// use epigraph::cli::dlq::LetterId;
/// let id: LetterId = "0@12".parse().unwrap();
/// assert_eq!((id.partition, id.offset, id.to_string()), (0, 12, "0@12".to_string()));
/// assert_eq!("7".parse::<LetterId>().unwrap().to_string(), "0@7");
/// assert!("x@1".parse::<LetterId>().is_err());
/// ```
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct LetterId {
    /// Partition of the dead-letter topic.
    pub partition: i32,
    /// Offset in it.
    pub offset: i64,
}

impl fmt::Display for LetterId {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}@{}", self.partition, self.offset)
    }
}

impl FromStr for LetterId {
    type Err = DlqError;

    fn from_str(text: &str) -> Result<Self, DlqError> {
        let bad = || DlqError::BadId(text.to_string());
        let (partition, offset) = match text.trim().split_once('@') {
            Some((p, o)) => (p.parse().map_err(|_| bad())?, o.parse().map_err(|_| bad())?),
            None => (0, text.trim().parse().map_err(|_| bad())?),
        };
        if partition < 0 || offset < 0 {
            return Err(bad());
        }
        Ok(LetterId { partition, offset })
    }
}

/// Parse `--since`: ms since the Unix epoch, a date (midnight UTC) or an RFC 3339 time.
///
/// ```
/// use epigraph::cli::dlq::parse_since;
/// assert_eq!(parse_since("1767225600000").unwrap(), 1_767_225_600_000);
/// assert_eq!(parse_since("2026-01-01").unwrap(), 1_767_225_600_000);
/// assert_eq!(parse_since("2026-01-01T01:00:00+01:00").unwrap(), 1_767_225_600_000);
/// assert!(parse_since("last tuesday").is_err());
/// ```
pub fn parse_since(text: &str) -> Result<i64, DlqError> {
    let text = text.trim();
    if let Ok(ms) = text.parse::<i64>() {
        return Ok(ms);
    }
    if let Ok(time) = chrono::DateTime::parse_from_rfc3339(text) {
        return Ok(time.timestamp_millis());
    }
    chrono::NaiveDate::parse_from_str(text, "%Y-%m-%d")
        .ok()
        .and_then(|date| date.and_hms_opt(0, 0, 0))
        .map(|time| time.and_utc().timestamp_millis())
        .ok_or_else(|| DlqError::BadSince(text.to_string()))
}

/// Which letters a command looks at.
#[derive(Clone, Debug, Default, Args)]
pub struct LetterFilter {
    /// Only letters refused at or after this time: ms since the Unix epoch, a date
    /// (`2026-03-01`, UTC) or an RFC 3339 time.
    #[arg(long, value_parser = parse_since)]
    pub since: Option<i64>,
    /// Only letters of this stage (`webhook`, `events`, `run`, `docs`, `mail`, …) or source: a
    /// topic (`epigraph.events.chat`), the last part of one (`chat`, `feedback`) or the start of
    /// a location (a file path).
    #[arg(long)]
    pub source: Option<String>,
    /// Only this tenant's letters.
    #[arg(long)]
    pub tenant: Option<String>,
}

impl LetterFilter {
    /// Whether `letter` passes.
    ///
    /// ```
    /// use epigraph::cli::dlq::LetterFilter;
    /// use epigraph_sources::kafka::DeadLetter;
    /// let mut letter = DeadLetter::new("bad", "run", Some("acme"), "epigraph.events.chat/0@4", b"x", 10);
    /// letter.at = 1_000;
    /// let by_source = |s: &str| LetterFilter { source: Some(s.into()), ..Default::default() };
    /// assert!(by_source("run").matches(&letter));
    /// assert!(by_source("chat").matches(&letter));
    /// assert!(by_source("epigraph.events.chat").matches(&letter));
    /// assert!(!by_source("email").matches(&letter));
    /// assert!(!LetterFilter { since: Some(1_001), ..Default::default() }.matches(&letter));
    /// assert!(!LetterFilter { tenant: Some("other".into()), ..Default::default() }.matches(&letter));
    /// ```
    pub fn matches(&self, letter: &DeadLetter) -> bool {
        self.since.is_none_or(|since| letter.at >= since)
            && self
                .tenant
                .as_deref()
                .is_none_or(|t| letter.tenant.as_deref() == Some(t))
            && self.source.as_deref().is_none_or(|source| {
                letter.stage == source
                    || letter.location.starts_with(source)
                    || topic_of(&letter.location).is_some_and(|(topic, _, _)| {
                        topic
                            .rsplit_once('.')
                            .is_some_and(|(_, last)| last == source)
                    })
            })
    }
}

/// The `topic/partition@offset` of a location, when it is one.
///
/// ```
/// use epigraph::cli::dlq::topic_of;
/// assert_eq!(topic_of("epigraph.events.chat/1@40"), Some(("epigraph.events.chat", 1, 40)));
/// assert_eq!(topic_of("notes/a.md:3"), None);
/// ```
pub fn topic_of(location: &str) -> Option<(&str, i32, i64)> {
    let (topic, at) = location.rsplit_once('/')?;
    let (partition, offset) = at.split_once('@')?;
    Some((topic, partition.parse().ok()?, offset.parse().ok()?))
}

/// A letter as read from the topic.
#[derive(Clone, Debug)]
pub struct Letter {
    /// Where it is.
    pub id: LetterId,
    /// What it says.
    pub letter: DeadLetter,
}

/// How a replay of a letter went: the value of its mark on `<prefix>.dlq.replays`.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "outcome", rename_all = "snake_case")]
pub enum Outcome {
    /// Published again, at `to` (`topic/partition@offset`).
    Published {
        /// Where the item now is.
        to: String,
    },
    /// The item's topic already holds this very record (same event id, or the same feedback
    /// record) as its current one: nothing published.
    AlreadyRecorded {
        /// The record holding it.
        at: String,
    },
    /// A newer record of the same item replaced it after it was refused: nothing published
    /// (the replay would have brought the older version back).
    Superseded {
        /// The newer record.
        by: String,
    },
    /// Refused again, with `reason`: dead-lettered again as `new_letter`.
    RefusedAgain {
        /// Why.
        reason: String,
        /// The new letter's id.
        new_letter: String,
    },
}

impl fmt::Display for Outcome {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Outcome::Published { to } => write!(f, "published to {to}"),
            Outcome::AlreadyRecorded { at } => write!(f, "already recorded at {at}"),
            Outcome::Superseded { by } => write!(f, "superseded by {by}"),
            Outcome::RefusedAgain { new_letter, .. } => {
                write!(f, "refused again as {new_letter}")
            }
        }
    }
}

/// The mark of a replayed letter, as JSON on `<prefix>.dlq.replays`.
///
/// ```
/// use epigraph::cli::dlq::{Outcome, ReplayMark};
/// let outcome = Outcome::RefusedAgain { reason: "bad".into(), new_letter: "0@9".into() };
/// let mark = ReplayMark { letter: "0@3".into(), replayed_at: 1, outcome };
/// let json = serde_json::to_string(&mark).unwrap();
/// assert!(json.contains(r#""outcome":"refused_again""#));
/// assert_eq!(serde_json::from_str::<ReplayMark>(&json).unwrap(), mark);
/// ```
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct ReplayMark {
    /// The letter (`<partition>@<offset>`), also the mark's key.
    pub letter: String,
    /// When it was replayed (ms since the Unix epoch).
    pub replayed_at: i64,
    /// How it went.
    #[serde(flatten)]
    pub outcome: Outcome,
}

/// What replaying a letter publishes.
#[derive(Clone, Debug, PartialEq, Eq)]
struct Resubmission {
    topic: String,
    key: String,
    payload: Vec<u8>,
    identity: Identity,
}

/// What makes two records of an item the same record.
#[derive(Clone, Debug, PartialEq, Eq)]
enum Identity {
    /// A source event: its event id (tenant, source id, version and op).
    Event(String),
    /// A feedback record: its bytes.
    Payload(Vec<u8>),
}

/// Why a letter is not re-submitted.
#[derive(Clone, Debug, PartialEq, Eq)]
enum Refusal {
    /// The letter cannot be replayed whatever was fixed (left as it is, not marked).
    NotReplayable(String),
    /// The validation refuses it again, with this reason.
    Invalid(String),
}

/// What replaying `letter` would publish, validated as the path that refused it validates;
/// events are encoded and decoded as the deployment's producer and run do (the schema
/// registry's wire format when `[kafka.schema_registry]` is set).
async fn resubmission(
    letter: &DeadLetter,
    kafka: &KafkaConfig,
    producer: &EventProducer,
    decoder: &EventDecoder,
    now: i64,
) -> Result<Resubmission, Refusal> {
    let raw = letter.raw();
    if raw.len() < letter.raw_size {
        return Err(Refusal::NotReplayable(format!(
            "the letter kept {} of the item's {} bytes (kafka.dead_letter_max_bytes)",
            raw.len(),
            letter.raw_size
        )));
    }
    match letter.stage.as_str() {
        "webhook" | "events" => {
            let Some(tenant) = letter.tenant.as_deref() else {
                return Err(Refusal::NotReplayable("the letter names no tenant".into()));
            };
            let mut event = parse_event(&raw, tenant, now).map_err(|error| {
                Refusal::Invalid(if letter.stage == "events" {
                    format!("{}: {error}", letter.location)
                } else {
                    error.to_string()
                })
            })?;
            if letter.stage == "events" {
                event.extras.insert("via".into(), "events-file".into());
            }
            event.fill_record();
            let payload = producer
                .encode(&event)
                .await
                .map_err(|e| Refusal::NotReplayable(format!("{e}: try again")))?
                .map_err(|e| Refusal::Invalid(e.to_string()))?;
            Ok(Resubmission {
                topic: kafka.events_topic(event.source_kind),
                key: event.key(),
                identity: Identity::Event(event.event_id),
                payload,
            })
        }
        "run" => {
            let Some((topic, _, _)) = topic_of(&letter.location) else {
                return Err(Refusal::NotReplayable(format!(
                    "{:?} is not a topic/partition@offset",
                    letter.location
                )));
            };
            if topic == kafka.feedback_topic() {
                let feedback =
                    Feedback::parse(&raw).map_err(|e| Refusal::Invalid(e.to_string()))?;
                Ok(Resubmission {
                    topic: topic.to_string(),
                    key: feedback.key(),
                    identity: Identity::Payload(raw.clone()),
                    payload: raw,
                })
            } else if kafka.all_event_topics().iter().any(|t| t == topic) {
                let event = match decoder.decode(&raw).await {
                    Err(e) if !e.is_bad_input() => {
                        return Err(Refusal::NotReplayable(format!("{e}: try again")));
                    }
                    decoded => decoded,
                };
                let event = event
                    .map_err(crate::runtime::pipeline::InvalidMessage::Decode)
                    .and_then(|event| {
                        let key = event.key();
                        crate::runtime::pipeline::validate(&key, event)
                    })
                    .map_err(|e| Refusal::Invalid(e.to_string()))?;
                Ok(Resubmission {
                    topic: topic.to_string(),
                    key: event.key(),
                    identity: Identity::Event(event.event_id),
                    payload: raw,
                })
            } else {
                Err(Refusal::NotReplayable(format!(
                    "{topic} is not a topic of this deployment ({})",
                    kafka.topic_prefix
                )))
            }
        }
        "producer" => Err(Refusal::NotReplayable(
            "the letter keeps only the body: ingest the item again".into(),
        )),
        stage => Err(Refusal::NotReplayable(format!(
            "a {stage} letter holds the raw input, not an event: fix it and run `epigraph ingest` again"
        ))),
    }
}

/// The current record of an item's key on its topic.
#[derive(Clone, Debug)]
struct Recorded {
    /// `topic/partition@offset`.
    location: String,
    /// Partition and offset, for a record read from Kafka (`None`: replayed by this command).
    position: Option<(i32, i64)>,
    /// When it was published (or, for one replayed by this command, refused).
    at: Option<i64>,
    /// What it is; `None` for a tombstone or an undecodable record.
    identity: Option<Identity>,
}

impl Recorded {
    /// Whether this record came after `letter` was refused: later on the same partition for a
    /// letter of that partition, else published after the letter's time.
    fn is_newer_than(&self, letter: &DeadLetter) -> bool {
        let origin = topic_of(&letter.location);
        match (self.position, origin) {
            (Some((partition, offset)), Some((topic, p, o)))
                if p == partition && self.location.starts_with(&format!("{topic}/")) =>
            {
                offset > o
            }
            _ => self.at.is_some_and(|at| at > letter.at),
        }
    }
}

fn consumer(kafka: &KafkaConfig, topics: &[String]) -> Result<EventConsumer, SourceError> {
    let config = KafkaConfig {
        group_id: format!("{}-dlq", kafka.group_id),
        ..kafka.clone()
    };
    EventConsumer::from_beginning(&config, topics)
}

/// Every letter on the dead-letter topic, oldest first (records that are no dead letter are
/// logged and skipped).
pub async fn read_letters(kafka: &KafkaConfig) -> Result<Vec<Letter>, DlqError> {
    let mut letters = Vec::new();
    consumer(kafka, &[kafka.dlq_topic()])?
        .read_to_end(READ_IDLE, |message| {
            let letter = message
                .payload
                .as_deref()
                .and_then(|p| serde_json::from_slice::<DeadLetter>(p).ok());
            match letter {
                Some(letter) => letters.push(Letter {
                    id: LetterId {
                        partition: message.partition,
                        offset: message.offset,
                    },
                    letter,
                }),
                None => tracing::warn!(at = %message.location(), "not a dead letter"),
            }
        })
        .await?;
    letters.sort_by_key(|l| (l.letter.at, l.id));
    Ok(letters)
}

/// The replay marks, by letter id.
pub async fn read_marks(kafka: &KafkaConfig) -> Result<HashMap<String, ReplayMark>, DlqError> {
    let mut marks = HashMap::new();
    consumer(kafka, &[kafka.dlq_replays_topic()])?
        .read_to_end(READ_IDLE, |message: RawMessage| {
            let key =
                String::from_utf8_lossy(message.key.as_deref().unwrap_or_default()).into_owned();
            match message
                .payload
                .as_deref()
                .map(serde_json::from_slice::<ReplayMark>)
            {
                Some(Ok(mark)) => {
                    marks.insert(key, mark);
                }
                Some(Err(_)) => tracing::warn!(at = %message.location(), "not a replay mark"),
                None => {
                    marks.remove(&key);
                }
            }
        })
        .await?;
    Ok(marks)
}

/// The current record of each wanted `(topic, key)`.
async fn current_records(
    kafka: &KafkaConfig,
    decoder: &EventDecoder,
    wanted: &BTreeSet<(String, String)>,
) -> Result<HashMap<(String, String), Recorded>, DlqError> {
    let topics: Vec<String> = wanted
        .iter()
        .map(|(topic, _)| topic.clone())
        .collect::<BTreeSet<_>>()
        .into_iter()
        .collect();
    let mut current = HashMap::new();
    if topics.is_empty() {
        return Ok(current);
    }
    let feedback = kafka.feedback_topic();
    // Registry-framed records, whose event id needs the registry (asked after the read).
    let mut framed: HashMap<(String, String), Vec<u8>> = HashMap::new();
    consumer(kafka, &topics)?
        .read_to_end(READ_IDLE, |message| {
            let key =
                String::from_utf8_lossy(message.key.as_deref().unwrap_or_default()).into_owned();
            let slot = (message.topic.clone(), key);
            if !wanted.contains(&slot) {
                return;
            }
            framed.remove(&slot);
            let identity = message.payload.as_deref().and_then(|payload| {
                if message.topic == feedback {
                    Some(Identity::Payload(payload.to_vec()))
                } else if payload.first() == Some(&epigraph_schemas::codec::REGISTRY_MAGIC) {
                    framed.insert(slot.clone(), payload.to_vec());
                    None
                } else {
                    decode_event(payload)
                        .ok()
                        .map(|e| Identity::Event(e.event_id))
                }
            });
            current.insert(
                slot,
                Recorded {
                    location: message.location(),
                    position: Some((message.partition, message.offset)),
                    at: message.timestamp,
                    identity,
                },
            );
        })
        .await?;
    for (slot, payload) in framed {
        let identity = decoder.decode(&payload).await.ok();
        if let Some(recorded) = current.get_mut(&slot) {
            recorded.identity = identity.map(|e| Identity::Event(e.event_id));
        }
    }
    Ok(current)
}

/// What `replay` did, printed as JSON.
#[derive(Debug, Default, Serialize)]
pub struct ReplayReport {
    /// Letters that passed the filter and were not replayed before.
    pub candidates: usize,
    /// Published again.
    pub published: usize,
    /// Already the current record of their item: not published.
    pub already_recorded: usize,
    /// Replaced by a newer record of their item since: not published.
    pub superseded: usize,
    /// Refused again and dead-lettered again with the new reason.
    pub refused_again: usize,
    /// Not replayable from the letter (left as they are).
    pub not_replayable: usize,
    /// Passed the filter but were replayed before (left as they are).
    pub replayed_before: usize,
    /// Nothing was published (`--dry-run`).
    pub dry_run: bool,
    /// Each candidate: `{id, outcome, …}`.
    pub letters: Vec<serde_json::Value>,
}

/// Run `epigraph dlq …`.
pub async fn dlq(config: &EpigraphConfig, action: DlqAction) -> Result<()> {
    let kafka = &config.kafka;
    match action {
        DlqAction::List { filter, json } => {
            let letters = read_letters(kafka).await?;
            let marks = read_marks(kafka).await?;
            let shown: Vec<&Letter> = letters
                .iter()
                .filter(|l| filter.matches(&l.letter))
                .collect();
            if json {
                for letter in shown {
                    println!(
                        "{}",
                        letter_json(letter, marks.get(&letter.id.to_string()), false)
                    );
                }
            } else {
                println!("{}", table(&shown, &marks));
            }
            Ok(())
        }
        DlqAction::Show { id, json, full } => {
            let letters = read_letters(kafka).await?;
            let letter =
                letters
                    .iter()
                    .find(|l| l.id == id)
                    .ok_or_else(|| DlqError::NoSuchLetter {
                        id,
                        topic: kafka.dlq_topic(),
                    })?;
            let marks = read_marks(kafka).await?;
            let mark = marks.get(&id.to_string());
            if json {
                println!("{}", letter_json(letter, mark, true));
            } else {
                print!("{}", show(letter, mark, &kafka.dlq_topic(), full));
            }
            Ok(())
        }
        DlqAction::Replay {
            filter,
            id,
            dry_run,
        } => {
            let report = replay(config, &filter, &id, dry_run).await?;
            println!("{}", serde_json::to_string(&report)?);
            Ok(())
        }
    }
}

/// Replay the letters `filter` and `ids` select that were not replayed before.
pub async fn replay(
    config: &EpigraphConfig,
    filter: &LetterFilter,
    ids: &[LetterId],
    dry_run: bool,
) -> Result<ReplayReport> {
    let kafka = &config.kafka;
    ensure_topics(kafka)
        .await
        .context("creating topics (is Kafka up? deploy/local/services.sh up)")?;
    let letters = read_letters(kafka).await?;
    let marks = read_marks(kafka).await?;
    let mut report = ReplayReport {
        dry_run,
        ..ReplayReport::default()
    };
    let selected: Vec<&Letter> = letters
        .iter()
        .filter(|l| filter.matches(&l.letter) && (ids.is_empty() || ids.contains(&l.id)))
        .filter(|l| {
            let before = marks.contains_key(&l.id.to_string());
            report.replayed_before += usize::from(before);
            !before
        })
        .collect();
    report.candidates = selected.len();
    let now = epigraph_schemas::now_millis();
    let producer = EventProducer::new(kafka)?;
    let decoder = EventDecoder::with_codec(producer.registry().cloned());
    let mut planned: Vec<(&Letter, Result<Resubmission, Refusal>)> =
        Vec::with_capacity(selected.len());
    for letter in selected {
        let outcome = resubmission(&letter.letter, kafka, &producer, &decoder, now).await;
        planned.push((letter, outcome));
    }
    let wanted: BTreeSet<(String, String)> = planned
        .iter()
        .filter_map(|(_, r)| r.as_ref().ok().map(|r| (r.topic.clone(), r.key.clone())))
        .collect();
    let mut current = current_records(kafka, &decoder, &wanted).await?;
    let bar = progress_bar(planned.len() as u64, "replaying");
    for (letter, planned) in planned {
        bar.inc(1);
        let id = letter.id.to_string();
        let outcome = match planned {
            Err(Refusal::NotReplayable(why)) => {
                report.not_replayable += 1;
                report.letters.push(serde_json::json!({
                    "id": id, "outcome": "not_replayable", "reason": why,
                }));
                continue;
            }
            Err(Refusal::Invalid(reason)) => {
                report.refused_again += 1;
                let mut again = DeadLetter::new(
                    &reason,
                    &letter.letter.stage,
                    letter.letter.tenant.as_deref(),
                    &letter.letter.location,
                    &letter.letter.raw(),
                    kafka.dead_letter_max_bytes,
                );
                again.replay_of = Some(id.clone());
                let new_id = if dry_run {
                    "(dry run)".to_string()
                } else {
                    let (partition, offset) = producer.dead_letter(&again).await?;
                    LetterId { partition, offset }.to_string()
                };
                Outcome::RefusedAgain {
                    reason,
                    new_letter: new_id,
                }
            }
            Ok(resubmission) => {
                let slot = (resubmission.topic.clone(), resubmission.key.clone());
                match current.get(&slot) {
                    Some(recorded)
                        if recorded.identity.as_ref() == Some(&resubmission.identity) =>
                    {
                        report.already_recorded += 1;
                        Outcome::AlreadyRecorded {
                            at: recorded.location.clone(),
                        }
                    }
                    Some(recorded) if recorded.is_newer_than(&letter.letter) => {
                        report.superseded += 1;
                        Outcome::Superseded {
                            by: recorded.location.clone(),
                        }
                    }
                    _ => {
                        report.published += 1;
                        let to = if dry_run {
                            format!("{} (dry run)", resubmission.topic)
                        } else {
                            let (partition, offset) = producer
                                .publish_raw(
                                    &resubmission.topic,
                                    &resubmission.key,
                                    &resubmission.payload,
                                )
                                .await?;
                            format!("{}/{partition}@{offset}", resubmission.topic)
                        };
                        current.insert(
                            slot,
                            Recorded {
                                location: to.clone(),
                                position: None,
                                at: Some(letter.letter.at),
                                identity: Some(resubmission.identity),
                            },
                        );
                        Outcome::Published { to }
                    }
                }
            }
        };
        let mark = ReplayMark {
            letter: id.clone(),
            replayed_at: now,
            outcome,
        };
        if !dry_run {
            let value = serde_json::to_vec(&mark)?;
            producer
                .publish_raw(&kafka.dlq_replays_topic(), &id, &value)
                .await?;
        }
        let mut line = serde_json::to_value(&mark)?;
        line["id"] = serde_json::json!(id);
        report.letters.push(line);
    }
    bar.finish_and_clear();
    producer.flush()?;
    Ok(report)
}

/// A letter as one JSON object: its fields, id, state and (with `raw`) the raw item.
fn letter_json(letter: &Letter, mark: Option<&ReplayMark>, raw: bool) -> serde_json::Value {
    let view = DeadLetterView::of(&letter.letter);
    let mut value = serde_json::json!({
        "id": letter.id.to_string(),
        "at": letter.letter.at,
        "stage": letter.letter.stage,
        "tenant": letter.letter.tenant,
        "location": letter.letter.location,
        "reason": letter.letter.reason,
        "raw_size": letter.letter.raw_size,
        "replay_of": letter.letter.replay_of,
        "replayed": mark,
    });
    if raw {
        value["raw_base64"] = serde_json::json!(view.raw_base64);
        value["raw_preview"] = serde_json::json!(view.raw_preview);
    }
    value
}

/// ms since the Unix epoch as `2026-03-01 12:00:00` (UTC).
///
/// ```
/// use epigraph::cli::dlq::time_of;
/// assert_eq!(time_of(1_767_225_600_000), "2026-01-01 00:00:00");
/// ```
pub fn time_of(ms: i64) -> String {
    chrono::DateTime::from_timestamp_millis(ms)
        .map(|t| t.format("%Y-%m-%d %H:%M:%S").to_string())
        .unwrap_or_else(|| ms.to_string())
}

/// The state column of a letter: `pending` or what its replay did.
fn state(mark: Option<&ReplayMark>) -> String {
    mark.map_or_else(
        || "pending".to_string(),
        |m| format!("replayed: {}", m.outcome),
    )
}

/// The letters as an aligned table.
fn table(letters: &[&Letter], marks: &HashMap<String, ReplayMark>) -> String {
    let header = [
        "ID",
        "TIME (UTC)",
        "STAGE",
        "TENANT",
        "SIZE",
        "STATE",
        "REASON",
    ]
    .map(String::from);
    let rows: Vec<[String; 7]> = letters
        .iter()
        .map(|l| {
            let reason: String = l.letter.reason.chars().take(120).collect();
            [
                l.id.to_string(),
                time_of(l.letter.at),
                l.letter.stage.clone(),
                l.letter.tenant.clone().unwrap_or_else(|| "-".into()),
                l.letter.raw_size.to_string(),
                state(marks.get(&l.id.to_string())),
                reason.replace('\n', " "),
            ]
        })
        .collect();
    let mut widths = header.clone().map(|h| h.chars().count());
    for row in &rows {
        for (width, cell) in widths.iter_mut().zip(row) {
            *width = (*width).max(cell.chars().count());
        }
    }
    let line = |cells: &[String; 7]| {
        let mut line = String::new();
        for (i, (cell, width)) in cells.iter().zip(widths).enumerate() {
            if i + 1 == cells.len() {
                line.push_str(cell);
            } else {
                line.push_str(&format!("{cell:<width$}  "));
            }
        }
        line
    };
    let mut out = line(&header);
    for row in &rows {
        out.push('\n');
        out.push_str(&line(row));
    }
    out.push_str(&format!("\n{} letters", rows.len()));
    out
}

/// `show`: the letter's fields, its state, then the raw bytes as text and in hex.
fn show(letter: &Letter, mark: Option<&ReplayMark>, topic: &str, full: bool) -> String {
    let l = &letter.letter;
    let raw = l.raw();
    let view = DeadLetterView::of(l);
    let mut out = String::new();
    let mut field = |name: &str, value: &str| out.push_str(&format!("{name:<10}{value}\n"));
    field("letter", &format!("{} on {topic}", letter.id));
    field("time", &format!("{} UTC ({} ms)", time_of(l.at), l.at));
    field("stage", &l.stage);
    field("tenant", l.tenant.as_deref().unwrap_or("-"));
    field("location", &l.location);
    field("reason", &l.reason);
    field(
        "size",
        &format!("{} bytes ({} kept)", l.raw_size, raw.len()),
    );
    field("state", &state(mark));
    if let Some(of) = &l.replay_of {
        field("replays", of);
    }
    out.push_str("--- raw, as UTF-8 (invalid bytes replaced) ---\n");
    out.push_str(&view.raw_preview);
    if !view.raw_preview.ends_with('\n') {
        out.push('\n');
    }
    let shown = if full {
        raw.len()
    } else {
        raw.len().min(HEX_BYTES)
    };
    out.push_str(&format!(
        "--- raw, hex ({shown} of {} bytes) ---\n",
        raw.len()
    ));
    out.push_str(&hex_dump(&raw[..shown]));
    out
}

/// Bytes as a hex dump: offset, 16 bytes in hex, the printable ones as text.
///
/// ```
/// use epigraph::cli::dlq::hex_dump;
/// let dump = hex_dump(b"hi\xff");
/// assert!(dump.starts_with("00000000  68 69 ff   ") && dump.ends_with("   |hi.|\n"));
/// assert_eq!(hex_dump(&[b'a'; 17]).lines().nth(1).unwrap().get(..12), Some("00000010  61"));
/// ```
pub fn hex_dump(bytes: &[u8]) -> String {
    let mut out = String::new();
    for (row, chunk) in bytes.chunks(16).enumerate() {
        let hex: Vec<String> = chunk.iter().map(|b| format!("{b:02x}")).collect();
        let text: String = chunk
            .iter()
            .map(|&b| {
                if b.is_ascii_graphic() || b == b' ' {
                    b as char
                } else {
                    '.'
                }
            })
            .collect();
        out.push_str(&format!(
            "{:08x}  {:<48} |{text}|\n",
            row * 16,
            hex.join(" ")
        ));
    }
    out
}
