use std::collections::BTreeMap;
use std::time::{Duration, Instant};

use rdkafka::consumer::{CommitMode, Consumer, StreamConsumer};
use rdkafka::error::{KafkaError, RDKafkaErrorCode};
use rdkafka::message::Message;
use rdkafka::{ClientConfig, Offset, TopicPartitionList};

use super::KafkaConfig;
use crate::SourceError;

const METADATA_TIMEOUT: Duration = Duration::from_secs(10);
/// How long a group's coordinator may take to come up on a broker that has just started (its
/// offsets topic is created on the first group request).
const COORDINATOR_WAIT: Duration = Duration::from_secs(30);

/// How long to wait before asking a coordinator that was not ready again.
const COORDINATOR_PAUSE: Duration = Duration::from_millis(250);

/// Asks `ask` until it answers anything `not_yet` does not accept ("the group's coordinator is
/// not ready yet": [`coordinator_not_ready`], or also silent: [`coordinator_silent`]), or `wait`
/// has passed (then that last answer is returned): every other error is returned at once.
fn until_answered<T>(
    wait: Duration,
    pause: Duration,
    not_yet: fn(&KafkaError) -> bool,
    mut ask: impl FnMut() -> Result<T, KafkaError>,
) -> Result<T, KafkaError> {
    let deadline = Instant::now() + wait;
    loop {
        match ask() {
            Err(error) if not_yet(&error) && Instant::now() < deadline => {
                std::thread::sleep(pause);
            }
            answer => return answer,
        }
    }
}

/// Whether `error` says the group's coordinator is not ready yet: worth asking again.
fn coordinator_not_ready(error: &KafkaError) -> bool {
    matches!(
        error.rdkafka_error_code(),
        Some(
            RDKafkaErrorCode::NotCoordinator
                | RDKafkaErrorCode::CoordinatorLoadInProgress
                | RDKafkaErrorCode::CoordinatorNotAvailable
        )
    )
}

/// Whether `error` says the group's coordinator is not ready, or did not answer at all in
/// time: librdkafka waits for a coordinator by itself and reports a timeout when none came.
/// Asked right after the topic's metadata was read (so the broker itself answers), that is the
/// coordinator's silence, not the broker's.
fn coordinator_silent(error: &KafkaError) -> bool {
    coordinator_not_ready(error)
        || error.rdkafka_error_code() == Some(RDKafkaErrorCode::OperationTimedOut)
}

/// The error of reading a group's committed offsets, saying so when its coordinator was
/// silent to the end of the wait.
fn unanswered_offsets(group: &str, error: KafkaError) -> SourceError {
    let context = if coordinator_silent(&error) {
        format!(
            "reading the committed offsets of group {group}: the broker answers but no group \
             coordinator did within {} s (can the broker create its __consumer_offsets topic? \
             it cannot with fewer live brokers than offsets.topic.replication.factor)",
            COORDINATOR_WAIT.as_secs()
        )
    } else {
        "reading committed offsets".to_string()
    };
    SourceError::kafka(context)(error)
}

/// A run of "the group's coordinator is not ready yet" answers from [`EventConsumer::poll`],
/// with no message between them and no gap longer than the wait: a broker that has just
/// started ends such a run within seconds, while one whose coordinator never comes up keeps it
/// going, and after `wait` the refusal is returned as an error (the pipeline's retry counts
/// and logs it, the live feeds reconnect) instead of looking like silence for ever. Refusals
/// 10 s apart under a 25 s wait: the first three are waited through, the fourth (30 s after
/// the first) is returned (test `a_coordinator_that_never_comes_up_is_given_up_on`).
#[derive(Debug)]
struct RefusalStreak {
    wait: Duration,
    /// The first and the latest refusal of the current run.
    run: std::sync::Mutex<Option<(Instant, Instant)>>,
}

impl RefusalStreak {
    fn new(wait: Duration) -> Self {
        RefusalStreak {
            wait,
            run: std::sync::Mutex::new(None),
        }
    }

    /// Notes a refusal at `now`; whether it is still worth waiting: false once the run it
    /// belongs to has lasted `wait` (the run then starts anew, so a caller that goes on
    /// reading waits again before its next error).
    fn wait_more(&self, now: Instant) -> bool {
        let mut run = self
            .run
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner);
        let first = match *run {
            Some((first, latest)) if now.saturating_duration_since(latest) <= self.wait => first,
            _ => now,
        };
        if now.saturating_duration_since(first) >= self.wait {
            *run = None;
            false
        } else {
            *run = Some((first, now));
            true
        }
    }

    /// A message arrived: the coordinator is up, the run is over. How long the run lasted, if
    /// there was one.
    fn answered(&self, now: Instant) -> Option<Duration> {
        let run = self
            .run
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
            .take();
        run.map(|(first, _)| now.saturating_duration_since(first))
    }

    /// Whether a run of refusals is going on at `now` (its latest refusal within the wait): a
    /// reader that got nothing meanwhile is waiting for the coordinator, not at the end.
    fn waiting(&self, now: Instant) -> bool {
        self.run
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
            .is_some_and(|(_, latest)| now.saturating_duration_since(latest) <= self.wait)
    }
}

/// A message copied out of the consumer.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct RawMessage {
    /// Topic it was read from.
    pub topic: String,
    /// Partition.
    pub partition: i32,
    /// Offset inside the partition.
    pub offset: i64,
    /// Key bytes (`<tenant>/<source_id>` for events).
    pub key: Option<Vec<u8>>,
    /// Payload bytes; `None` is a Kafka tombstone.
    pub payload: Option<Vec<u8>>,
    /// The record's timestamp (ms since the Unix epoch), when the broker gave one.
    pub timestamp: Option<i64>,
}

impl RawMessage {
    /// `topic/partition@offset`, for dead letters and logs.
    pub fn location(&self) -> String {
        format!("{}/{}@{}", self.topic, self.partition, self.offset)
    }
}

/// The outcome of one poll.
#[derive(Debug)]
pub enum Polled {
    /// A message arrived.
    Message(RawMessage),
    /// Nothing arrived within the timeout.
    Idle,
}

/// Reads every partition of the given topics from the beginning (the compacted topics are the
/// durable record the dataflow state is rebuilt from) and commits the offsets of acknowledged
/// epochs to the consumer group.
pub struct EventConsumer {
    consumer: StreamConsumer,
    partitions: Vec<(String, i32)>,
    refusals: RefusalStreak,
    /// The consumer group whose offsets it reads and commits.
    group: String,
}

impl std::fmt::Debug for EventConsumer {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("EventConsumer")
            .field("partitions", &self.partitions)
            .finish()
    }
}

impl EventConsumer {
    /// Connect and assign all partitions of `topics` at their beginning.
    pub fn from_beginning(config: &KafkaConfig, topics: &[String]) -> Result<Self, SourceError> {
        Self::assigned(config, topics, Offset::Beginning, "earliest")
    }

    /// Connect and assign all partitions of `topics` at their end: only what is published from
    /// now on is read (live notices, not the record).
    pub fn from_end(config: &KafkaConfig, topics: &[String]) -> Result<Self, SourceError> {
        Self::assigned(config, topics, Offset::End, "latest")
    }

    /// Connect and assign all partitions of `topics` at the consumer group's committed offsets
    /// (the beginning where the group never committed): a follower that resumes where it left.
    /// The offsets are read first, waiting up to 30 s for a coordinator that is not ready.
    pub fn from_committed(config: &KafkaConfig, topics: &[String]) -> Result<Self, SourceError> {
        Self::assigned(config, topics, Offset::Stored, "earliest")
    }

    fn assigned(
        config: &KafkaConfig,
        topics: &[String],
        start: Offset,
        reset: &str,
    ) -> Result<Self, SourceError> {
        let consumer: StreamConsumer = ClientConfig::new()
            .set("bootstrap.servers", &config.bootstrap)
            .set("group.id", &config.group_id)
            .set("enable.auto.commit", "false")
            .set("enable.partition.eof", "false")
            .set("auto.offset.reset", reset)
            .create()
            .map_err(SourceError::kafka("creating the consumer"))?;
        let mut assignment = TopicPartitionList::new();
        let mut partitions = Vec::new();
        for topic in topics {
            let metadata = consumer
                .fetch_metadata(Some(topic), METADATA_TIMEOUT)
                .map_err(SourceError::kafka(format!("reading metadata of {topic}")))?;
            for meta in metadata.topics() {
                for partition in meta.partitions() {
                    assignment
                        .add_partition_offset(topic, partition.id(), start)
                        .map_err(SourceError::kafka("building the assignment"))?;
                    partitions.push((topic.clone(), partition.id()));
                }
            }
        }
        if matches!(start, Offset::Stored) {
            // The group's offsets asked here, waiting for its coordinator, and assigned as
            // numbers: librdkafka's own fetch on assign, refused by a coordinator not ready yet
            // (a broker that has just started), left the partitions unread for good, and
            // `ingest topic` read nothing (CI of session 62, reproduced on a fresh broker).
            // A coordinator that never answers (a broker that cannot create its
            // `__consumer_offsets` topic) is given up on after the wait, with that said.
            let committed = until_answered(
                COORDINATOR_WAIT,
                COORDINATOR_PAUSE,
                coordinator_silent,
                || consumer.committed_offsets(assignment.clone(), METADATA_TIMEOUT),
            )
            .map_err(|error| unanswered_offsets(&config.group_id, error))?;
            let mut explicit = TopicPartitionList::new();
            for element in committed.elements() {
                let offset = match element.offset() {
                    Offset::Offset(next) => Offset::Offset(next),
                    _ => Offset::Beginning,
                };
                explicit
                    .add_partition_offset(element.topic(), element.partition(), offset)
                    .map_err(SourceError::kafka("building the assignment"))?;
            }
            assignment = explicit;
        }
        consumer
            .assign(&assignment)
            .map_err(SourceError::kafka("assigning partitions"))?;
        Ok(EventConsumer {
            consumer,
            partitions,
            refusals: RefusalStreak::new(COORDINATOR_WAIT),
            group: config.group_id.clone(),
        })
    }

    /// The assigned `(topic, partition)` pairs.
    pub fn partitions(&self) -> &[(String, i32)] {
        &self.partitions
    }

    /// Whether the last reads were waited through because the group's coordinator was not
    /// ready ([`EventConsumer::poll`]): a command that ends after some idle time must not take
    /// that wait for the end of the topic (on a broker that has just started, `ingest topic`
    /// did, and read nothing).
    pub fn waiting_for_coordinator(&self) -> bool {
        self.refusals.waiting(Instant::now())
    }

    /// Wait up to `timeout` for the next message.
    ///
    /// A broker that has just started may have no coordinator for the group yet: librdkafka
    /// reports that as an error of the consumer ("Failed to fetch committed offsets …: Not
    /// coordinator") and asks again by itself, so such an error is waited through like
    /// silence ([`coordinator_not_ready`]; it failed `ingest topic` on a fresh machine's first
    /// broker) — for up to 30 s of refusals without a message between them
    /// ([`RefusalStreak`]), after which it is returned like any other error.
    pub async fn poll(&self, timeout: Duration) -> Result<Polled, SourceError> {
        let deadline = tokio::time::Instant::now() + timeout;
        loop {
            match tokio::time::timeout_at(deadline, self.consumer.recv()).await {
                Err(_) => return Ok(Polled::Idle),
                Ok(Err(error))
                    if coordinator_not_ready(&error) && self.refusals.wait_more(Instant::now()) =>
                {
                    tracing::debug!(%error, "the group's coordinator is not ready yet");
                    tokio::time::sleep_until(
                        deadline.min(tokio::time::Instant::now() + COORDINATOR_PAUSE),
                    )
                    .await;
                }
                Ok(Err(error)) => {
                    return Err(SourceError::Kafka {
                        context: "reading a message".into(),
                        source: error,
                    });
                }
                Ok(Ok(message)) => {
                    if let Some(waited) = self.refusals.answered(Instant::now()) {
                        tracing::info!(
                            seconds = waited.as_secs_f64(),
                            "the group's coordinator answered after refusals"
                        );
                    }
                    return Ok(Polled::Message(RawMessage {
                        topic: message.topic().to_string(),
                        partition: message.partition(),
                        offset: message.offset(),
                        key: message.key().map(<[u8]>::to_vec),
                        payload: message.payload().map(<[u8]>::to_vec),
                        timestamp: message.timestamp().to_millis(),
                    }));
                }
            }
        }
    }

    /// Read every assigned partition up to its high watermark as of the call, handing each
    /// message to `each`, then return: for commands that look at a topic once (`epigraph dlq`).
    /// Nothing is kept in memory. Gives up with an error when nothing arrives for `idle` while
    /// messages are still missing.
    pub async fn read_to_end(
        &self,
        idle: Duration,
        mut each: impl FnMut(RawMessage),
    ) -> Result<(), SourceError> {
        let marks = self.high_watermarks()?;
        let mut next: BTreeMap<(String, i32), i64> = BTreeMap::new();
        let done = |next: &BTreeMap<(String, i32), i64>| {
            marks
                .iter()
                .all(|(partition, end)| *end == 0 || next.get(partition).is_some_and(|n| n >= end))
        };
        while !done(&next) {
            match self.poll(idle).await? {
                Polled::Message(message) => {
                    next.insert(
                        (message.topic.clone(), message.partition),
                        message.offset + 1,
                    );
                    each(message);
                }
                Polled::Idle if self.waiting_for_coordinator() => {}
                Polled::Idle => {
                    return Err(SourceError::Config(format!(
                        "nothing arrived for {} s before the end of {:?}",
                        idle.as_secs(),
                        self.partitions
                    )));
                }
            }
        }
        Ok(())
    }

    /// The high watermark (the offset the next message will get) of every assigned partition,
    /// or 0 for a partition that holds no records.
    ///
    /// librdkafka answers this synchronously, each partition waiting up to the metadata timeout
    /// while the broker is away; on a multi-threaded runtime the call moves its worker's other
    /// tasks elsewhere first ([`tokio::task::block_in_place`]), so that `/readyz`, the metrics
    /// and the embedder keep answering meanwhile.
    pub fn high_watermarks(&self) -> Result<BTreeMap<(String, i32), i64>, SourceError> {
        blocking(|| self.fetch_high_watermarks())
    }

    fn fetch_high_watermarks(&self) -> Result<BTreeMap<(String, i32), i64>, SourceError> {
        let mut marks = BTreeMap::new();
        for (topic, partition) in &self.partitions {
            let (low, high) = self
                .consumer
                .fetch_watermarks(topic, *partition, METADATA_TIMEOUT)
                .map_err(SourceError::kafka(format!(
                    "reading watermarks of {topic}/{partition}"
                )))?;
            // A partition whose records all expired has nothing to read: report it as empty.
            marks.insert(
                (topic.clone(), *partition),
                if high > low { high } else { 0 },
            );
        }
        Ok(marks)
    }

    /// The offsets committed to the consumer group (the next offset to read), per partition;
    /// partitions without a commit are absent.
    /// A broker that has just started may not have a coordinator for the group yet: that answer
    /// is asked again for up to 30 s ([`coordinator_not_ready`]); any other error is returned.
    pub fn committed(&self) -> Result<BTreeMap<(String, i32), i64>, SourceError> {
        let committed = until_answered(
            COORDINATOR_WAIT,
            COORDINATOR_PAUSE,
            coordinator_silent,
            || blocking(|| self.consumer.committed(METADATA_TIMEOUT)),
        )
        .map_err(|error| unanswered_offsets(&self.group, error))?;
        let mut offsets = BTreeMap::new();
        for element in committed.elements() {
            if let Offset::Offset(offset) = element.offset() {
                offsets.insert((element.topic().to_string(), element.partition()), offset);
            }
        }
        Ok(offsets)
    }

    /// Commit "next offset to read" per partition, synchronously (off the runtime's other tasks,
    /// as [`Self::high_watermarks`]): called only after both sinks acknowledged the epoch that
    /// consumed those offsets.
    pub fn commit(&self, next_offsets: &BTreeMap<(String, i32), i64>) -> Result<(), SourceError> {
        if next_offsets.is_empty() {
            return Ok(());
        }
        let mut tpl = TopicPartitionList::new();
        for ((topic, partition), offset) in next_offsets {
            tpl.add_partition_offset(topic, *partition, Offset::Offset(*offset))
                .map_err(SourceError::kafka("building the commit"))?;
        }
        blocking(|| self.consumer.commit(&tpl, CommitMode::Sync))
            .map_err(SourceError::kafka("committing offsets"))
    }
}

/// Run a blocking librdkafka call from async code: through [`tokio::task::block_in_place`] on a
/// worker of a multi-threaded runtime, directly anywhere else (a current-thread runtime, which
/// cannot hand its tasks over, or no runtime at all).
fn blocking<T>(call: impl FnOnce() -> T) -> T {
    match tokio::runtime::Handle::try_current() {
        Ok(handle) if handle.runtime_flavor() == tokio::runtime::RuntimeFlavor::MultiThread => {
            tokio::task::block_in_place(call)
        }
        _ => call(),
    }
}

#[cfg(test)]
mod tests {
    use rdkafka::error::{KafkaError, RDKafkaErrorCode};

    use std::time::Duration;

    use super::{RefusalStreak, coordinator_not_ready, coordinator_silent, until_answered};

    #[test]
    fn a_coordinator_that_never_comes_up_is_given_up_on() {
        let streak = RefusalStreak::new(Duration::from_secs(25));
        let start = std::time::Instant::now();
        let at = |s: u64| start + Duration::from_secs(s);
        assert!(streak.wait_more(at(0)));
        assert!(streak.wait_more(at(10)));
        assert!(streak.wait_more(at(20)));
        assert!(!streak.wait_more(at(30)), "30 s of refusals: returned");
        // The run starts anew: a caller that goes on reading waits again.
        assert!(streak.wait_more(at(31)));
        assert!(streak.waiting(at(40)) && !streak.waiting(at(70)));
        // A message ends the run; so does a gap longer than the wait.
        assert_eq!(streak.answered(at(45)), Some(Duration::from_secs(14)));
        assert!(!streak.waiting(at(45)));
        assert_eq!(streak.answered(at(46)), None);
        assert!(streak.wait_more(at(50)));
        assert!(streak.wait_more(at(70)));
        assert!(
            streak.wait_more(at(100)),
            "30 s since the last refusal: a new run"
        );
        assert!(!streak.wait_more(at(125)));
    }

    #[test]
    fn a_coordinator_not_ready_yet_is_asked_again_and_nothing_else_is() {
        let fetch = KafkaError::MetadataFetch;
        assert!(coordinator_not_ready(&fetch(
            RDKafkaErrorCode::NotCoordinator
        )));
        assert!(coordinator_not_ready(&fetch(
            RDKafkaErrorCode::CoordinatorLoadInProgress
        )));
        assert!(!coordinator_not_ready(&fetch(
            RDKafkaErrorCode::UnknownTopic
        )));
        // Right after the topic's metadata was read, a timeout is the coordinator's silence.
        assert!(coordinator_silent(&fetch(
            RDKafkaErrorCode::OperationTimedOut
        )));
        assert!(coordinator_silent(&fetch(RDKafkaErrorCode::NotCoordinator)));
        assert!(!coordinator_silent(&fetch(RDKafkaErrorCode::UnknownTopic)));
    }

    /// The loop around `committed()`: a broker whose coordinator comes up after two refusals is
    /// answered; one that never does is given up on with its last refusal; any other error is
    /// returned at the first answer.
    #[test]
    fn reading_committed_offsets_waits_for_a_coordinator_and_for_nothing_else() {
        let refusal = || KafkaError::MetadataFetch(RDKafkaErrorCode::NotCoordinator);
        let pause = Duration::from_millis(1);

        let mut asked = 0;
        let answer = until_answered(Duration::from_secs(5), pause, coordinator_not_ready, || {
            asked += 1;
            if asked < 3 { Err(refusal()) } else { Ok(asked) }
        });
        assert_eq!(answer.ok(), Some(3));

        let mut asked = 0;
        let answer: Result<(), _> = until_answered(
            Duration::from_millis(20),
            pause,
            coordinator_not_ready,
            || {
                asked += 1;
                Err(refusal())
            },
        );
        assert!(coordinator_not_ready(&answer.expect_err("never ready")));
        assert!(asked > 1, "asked again before giving up ({asked})");

        let mut asked = 0;
        let answer: Result<(), _> =
            until_answered(Duration::from_secs(5), pause, coordinator_not_ready, || {
                asked += 1;
                Err(KafkaError::MetadataFetch(RDKafkaErrorCode::UnknownTopic))
            });
        assert!(answer.is_err());
        assert_eq!(asked, 1, "another error is not asked again");
    }
}
