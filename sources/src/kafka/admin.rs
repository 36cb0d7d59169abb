use std::time::Duration;

use rdkafka::ClientConfig;
use rdkafka::admin::{AdminClient, AdminOptions, NewTopic, TopicReplication};
use rdkafka::client::DefaultClientContext;
use rdkafka::types::RDKafkaErrorCode;
use tracing::info;

use super::KafkaConfig;
use crate::SourceError;

/// Create epigraph's topics if they do not exist: the per-kind event topics and the feedback
/// topic compacted (the latest version or verdict per key is the durable record), the
/// dead-letter topic with plain retention.
pub async fn ensure_topics(config: &KafkaConfig) -> Result<(), SourceError> {
    let admin: AdminClient<DefaultClientContext> = ClientConfig::new()
        .set("bootstrap.servers", &config.bootstrap)
        .create()
        .map_err(SourceError::kafka("creating the admin client"))?;
    let event_topics = config.all_event_topics();
    let (dlq, feedback, changes) = (
        config.dlq_topic(),
        config.feedback_topic(),
        config.changes_topic(),
    );
    let replication = || TopicReplication::Fixed(config.replication);
    // Events as large as the producer may send (a whole document): the broker's default is 1 MB.
    let max_message_bytes = config.max_message_bytes.to_string();
    let mut topics: Vec<NewTopic<'_>> = event_topics
        .iter()
        .map(|name| {
            NewTopic::new(name, config.partitions, replication())
                .set("cleanup.policy", "compact")
                .set("max.message.bytes", &max_message_bytes)
        })
        .collect();
    topics.push(NewTopic::new(&dlq, 1, replication()));
    // Replay marks: the latest mark per letter is all that matters.
    let replays = config.dlq_replays_topic();
    topics.push(NewTopic::new(&replays, 1, replication()).set("cleanup.policy", "compact"));
    // Verdicts are state (a later one on a pair replaces it, a tombstone withdraws it): compacted.
    topics.push(NewTopic::new(&feedback, 1, replication()).set("cleanup.policy", "compact"));
    // Change notices matter only while they are new: kept a day.
    topics.push(NewTopic::new(&changes, 1, replication()).set("retention.ms", "86400000"));
    // K's history: kept 30 days.
    let priorities = config.priorities_topic();
    topics.push(NewTopic::new(&priorities, 1, replication()).set("retention.ms", "2592000000"));
    // Proposals are the audit trail of governed writes: every step kept, forever.
    let proposals = config.proposals_topic();
    topics.push(NewTopic::new(&proposals, 1, replication()).set("retention.ms", "-1"));
    let options = AdminOptions::new().operation_timeout(Some(Duration::from_secs(30)));
    let results = admin
        .create_topics(topics.iter(), &options)
        .await
        .map_err(SourceError::kafka("creating topics"))?;
    for result in results {
        match result {
            Ok(name) => info!(topic = %name, "created topic"),
            Err((_, RDKafkaErrorCode::TopicAlreadyExists)) => {}
            Err((name, code)) => {
                return Err(SourceError::Kafka {
                    context: format!("creating topic {name}"),
                    source: rdkafka::error::KafkaError::AdminOp(code),
                });
            }
        }
    }
    Ok(())
}

/// Delete every topic of `config` (events, dead letters, feedback, change notices); topics that do not exist are
/// skipped. For throw-away deployments such as the end-to-end tests' per-test topic prefixes.
pub async fn delete_topics(config: &KafkaConfig) -> Result<(), SourceError> {
    let admin: AdminClient<DefaultClientContext> = ClientConfig::new()
        .set("bootstrap.servers", &config.bootstrap)
        .create()
        .map_err(SourceError::kafka("creating the admin client"))?;
    let mut topics = config.all_event_topics();
    topics.push(config.dlq_topic());
    topics.push(config.dlq_replays_topic());
    topics.push(config.feedback_topic());
    topics.push(config.changes_topic());
    topics.push(config.priorities_topic());
    topics.push(config.proposals_topic());
    let names: Vec<&str> = topics.iter().map(String::as_str).collect();
    let options = AdminOptions::new().operation_timeout(Some(Duration::from_secs(30)));
    let results = admin
        .delete_topics(&names, &options)
        .await
        .map_err(SourceError::kafka("deleting topics"))?;
    for result in results {
        match result {
            Ok(_) | Err((_, RDKafkaErrorCode::UnknownTopicOrPartition)) => {}
            Err((name, code)) => {
                return Err(SourceError::Kafka {
                    context: format!("deleting topic {name}"),
                    source: rdkafka::error::KafkaError::AdminOp(code),
                });
            }
        }
    }
    Ok(())
}
