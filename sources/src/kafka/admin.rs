use std::time::Duration;

use rdkafka::ClientConfig;
use rdkafka::admin::{
    AdminClient, AdminOptions, AlterConfig, ConfigSource, NewTopic, ResourceSpecifier,
    TopicReplication,
};
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
    // Connector status: the latest report per connector is all a reader needs.
    let connectors = config.connectors_topic();
    topics.push(NewTopic::new(&connectors, 1, replication()).set("cleanup.policy", "compact"));
    // Bounded on the client too (librdkafka's default is a minute): a broker that is not up
    // yet fails this attempt in 20 s, and `epigraph run` says so and retries.
    let options = AdminOptions::new()
        .operation_timeout(Some(Duration::from_secs(15)))
        .request_timeout(Some(Duration::from_secs(20)));
    let results = admin
        .create_topics(topics.iter(), &options)
        .await
        .map_err(SourceError::kafka("creating topics"))?;
    let mut existing = Vec::new();
    for result in results {
        match result {
            Ok(name) => info!(topic = %name, "created topic"),
            Err((name, RDKafkaErrorCode::TopicAlreadyExists)) => existing.push(name),
            Err((name, code)) => {
                return Err(SourceError::Kafka {
                    context: format!("creating topic {name}"),
                    source: rdkafka::error::KafkaError::AdminOp(code),
                });
            }
        }
    }
    let existing_event_topics: Vec<&str> = event_topics
        .iter()
        .map(String::as_str)
        .filter(|topic| existing.iter().any(|name| name == topic))
        .collect();
    if !config.raise_topic_limits {
        return Ok(());
    }
    let limit = u64::try_from(config.max_message_bytes).unwrap_or(u64::MAX);
    raise_max_message_bytes(&admin, &existing_event_topics, limit).await
}

/// Raise `max.message.bytes` of event topics created before (by an older version, by hand, or
/// with a smaller `kafka.max_message_bytes`) to `limit`, so that what the producer may send is
/// not refused; a topic already at or above it is left alone (never lowered). Kafka's
/// `AlterConfigs` replaces a topic's whole dynamic configuration, so every other setting made
/// on the topic (`cleanup.policy=compact`, retention, …) is sent back unchanged with it.
async fn raise_max_message_bytes(
    admin: &AdminClient<DefaultClientContext>,
    topics: &[&str],
    limit: u64,
) -> Result<(), SourceError> {
    if topics.is_empty() {
        return Ok(());
    }
    // Bounded on the client too (librdkafka's default is a minute): a broker that is not up
    // yet fails this attempt in 20 s, and `epigraph run` says so and retries.
    let options = AdminOptions::new()
        .operation_timeout(Some(Duration::from_secs(15)))
        .request_timeout(Some(Duration::from_secs(20)));
    let specifiers: Vec<ResourceSpecifier<'_>> =
        topics.iter().map(|t| ResourceSpecifier::Topic(t)).collect();
    let described = admin
        .describe_configs(specifiers.iter(), &options)
        .await
        .map_err(SourceError::kafka("reading the topics' configuration"))?;
    let limit_text = limit.to_string();
    for (topic, resource) in topics.iter().zip(described) {
        let resource = resource.map_err(|code| SourceError::Kafka {
            context: format!("reading the configuration of topic {topic}"),
            source: rdkafka::error::KafkaError::AdminOp(code),
        })?;
        let current = resource
            .get("max.message.bytes")
            .and_then(|entry| entry.value.as_deref())
            .and_then(|value| value.parse::<u64>().ok());
        if current.is_some_and(|bytes| bytes >= limit) {
            continue;
        }
        let mut alter = AlterConfig::new(ResourceSpecifier::Topic(topic));
        for entry in &resource.entries {
            if entry.source == ConfigSource::DynamicTopic
                && entry.name != "max.message.bytes"
                && let Some(value) = &entry.value
            {
                alter = alter.set(&entry.name, value);
            }
        }
        alter = alter.set("max.message.bytes", &limit_text);
        let results = admin
            .alter_configs([&alter], &options)
            .await
            .map_err(SourceError::kafka("raising a topic's max.message.bytes"))?;
        for result in results {
            result.map_err(|(_, code)| SourceError::Kafka {
                context: format!("raising max.message.bytes of topic {topic} to {limit}"),
                source: rdkafka::error::KafkaError::AdminOp(code),
            })?;
        }
        info!(
            topic = %topic,
            from = ?current,
            to = limit,
            "raised the topic's max.message.bytes to kafka.max_message_bytes"
        );
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
    topics.push(config.connectors_topic());
    let names: Vec<&str> = topics.iter().map(String::as_str).collect();
    // Bounded on the client too (librdkafka's default is a minute): a broker that is not up
    // yet fails this attempt in 20 s, and `epigraph run` says so and retries.
    let options = AdminOptions::new()
        .operation_timeout(Some(Duration::from_secs(15)))
        .request_timeout(Some(Duration::from_secs(20)));
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
