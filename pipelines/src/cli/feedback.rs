//! `epigraph feedback …`: publish a reviewer's identity verdict to the feedback topic, or
//! withdraw one. The pipeline reads the topic like the event topics: a `distinct` verdict splits
//! an identity component, `same` joins two, and withdrawing restores the state before.

use anyhow::{Context, Result};
use clap::Subcommand;
use epigraph_schemas::feedback::{Feedback, IdentityVerdict};
use epigraph_sources::kafka::{EventProducer, ensure_topics};

use crate::config::EpigraphConfig;

/// What to say about two entities (ids of `:Entity` nodes, as `/v1/entities` shows them).
#[derive(Debug, Subcommand)]
pub enum FeedbackAction {
    /// The two entities are the same real thing.
    Same {
        /// One entity id.
        a: String,
        /// The other.
        b: String,
        /// Tenant of both.
        #[arg(long, default_value = "default")]
        tenant: String,
    },
    /// The two entities are distinct, whatever the names and addresses suggest.
    Distinct {
        /// One entity id.
        a: String,
        /// The other.
        b: String,
        /// Tenant of both.
        #[arg(long, default_value = "default")]
        tenant: String,
    },
    /// Withdraw the verdict on the two entities (either one).
    Withdraw {
        /// One entity id.
        a: String,
        /// The other.
        b: String,
        /// Tenant of both.
        #[arg(long, default_value = "default")]
        tenant: String,
    },
}

/// Publishes the verdict (or its withdrawal) and prints it as JSON.
pub async fn feedback(config: &EpigraphConfig, action: FeedbackAction) -> Result<()> {
    let (tenant, a, b, verdict) = match action {
        FeedbackAction::Same { a, b, tenant } => (tenant, a, b, Some(IdentityVerdict::Same)),
        FeedbackAction::Distinct { a, b, tenant } => {
            (tenant, a, b, Some(IdentityVerdict::Distinct))
        }
        FeedbackAction::Withdraw { a, b, tenant } => (tenant, a, b, None),
    };
    let record = Feedback::Identity {
        tenant,
        a,
        b,
        verdict: verdict.unwrap_or(IdentityVerdict::Same),
    };
    record.validate().map_err(anyhow::Error::msg)?;
    ensure_topics(&config.kafka)
        .await
        .context("creating topics (is Kafka up? deploy/local/services.sh up)")?;
    let producer = EventProducer::new(&config.kafka)?;
    let topic = config.kafka.feedback_topic();
    let key = record.key();
    match verdict {
        Some(_) => {
            let payload = serde_json::to_vec(&record)?;
            producer.publish_raw(&topic, &key, &payload).await?;
            println!("{}", serde_json::json!({"published": record, "key": key}));
        }
        None => {
            producer.publish_tombstone(&topic, &key).await?;
            println!("{}", serde_json::json!({"withdrawn": key}));
        }
    }
    producer.flush()?;
    Ok(())
}
