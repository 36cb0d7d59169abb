//! `epigraph feedback …`: publish a reviewer's identity verdict or review of a judgement to the
//! feedback topic, or withdraw one. The pipeline reads the topic like the event topics: a
//! `distinct` verdict splits an identity component, `same` joins two, `reject` retracts a
//! contradiction, supersession, answer, block or support with what followed from it, `confirm`
//! marks it, and withdrawing restores the state before.

use anyhow::{Context, Result};
use clap::Subcommand;
use epigraph_schemas::feedback::{Feedback, IdentityVerdict, Judged, ReviewVerdict};
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
    /// The system judged right: keep the edge, marked `review: "confirmed"`.
    Confirm(Judgement),
    /// The system judged wrong: retract the edge and what followed from it.
    Reject(Judgement),
    /// Draw the edge whether or not the rules do (`review: "asserted"`), with what follows.
    Assert(Judgement),
    /// Withdraw the review of a judgement.
    Unreview {
        /// CONTRADICTS, SUPERSEDES, ANSWERS, BLOCKS, SUPPORTS or IMPLEMENTS.
        relation: String,
        /// The edge's start (a memory object id).
        from: String,
        /// The edge's end.
        to: String,
        /// Tenant.
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

/// A judgement to review (the ids as `/v1/contradictions` or `/v1/timeline` show them).
#[derive(Debug, clap::Args)]
pub struct Judgement {
    /// CONTRADICTS, SUPERSEDES, ANSWERS, BLOCKS, SUPPORTS or IMPLEMENTS.
    relation: String,
    /// The edge's start (a memory object id).
    from: String,
    /// The edge's end.
    to: String,
    /// Why (kept with the review).
    #[arg(long)]
    reason: Option<String>,
    /// Who reviews (kept with the review).
    #[arg(long)]
    by: Option<String>,
    /// Tenant.
    #[arg(long, default_value = "default")]
    tenant: String,
}

fn judged(relation: &str) -> Result<Judged> {
    Judged::parse(relation)
        .with_context(|| format!("unknown relation {relation:?}: {}", Judged::names()))
}

fn reviewed(judgement: Judgement, verdict: ReviewVerdict) -> Result<Feedback> {
    Ok(Feedback::Review {
        tenant: judgement.tenant,
        relation: judged(&judgement.relation)?,
        from: judgement.from,
        to: judgement.to,
        verdict,
        reason: judgement.reason,
        by: judgement.by,
        at: Some(epigraph_schemas::now_millis()),
    })
}

/// Publishes the verdict or review (or its withdrawal) and prints it as JSON.
pub async fn feedback(config: &EpigraphConfig, action: FeedbackAction) -> Result<()> {
    let identity = |tenant, a, b, verdict| Feedback::Identity {
        tenant,
        a,
        b,
        verdict,
    };
    // The record to publish, or the key to withdraw.
    let (record, withdraw) = match action {
        FeedbackAction::Same { a, b, tenant } => {
            (identity(tenant, a, b, IdentityVerdict::Same), false)
        }
        FeedbackAction::Distinct { a, b, tenant } => {
            (identity(tenant, a, b, IdentityVerdict::Distinct), false)
        }
        FeedbackAction::Withdraw { a, b, tenant } => {
            (identity(tenant, a, b, IdentityVerdict::Same), true)
        }
        FeedbackAction::Confirm(j) => (reviewed(j, ReviewVerdict::Confirm)?, false),
        FeedbackAction::Reject(j) => (reviewed(j, ReviewVerdict::Reject)?, false),
        FeedbackAction::Assert(j) => (reviewed(j, ReviewVerdict::Assert)?, false),
        FeedbackAction::Unreview {
            relation,
            from,
            to,
            tenant,
        } => {
            let relation = judged(&relation)?;
            let record = Feedback::Review {
                tenant,
                relation,
                from,
                to,
                verdict: ReviewVerdict::Reject,
                reason: None,
                by: None,
                at: None,
            };
            (record, true)
        }
    };
    record.validate().map_err(anyhow::Error::msg)?;
    ensure_topics(&config.kafka)
        .await
        .context("creating topics (is Kafka up? deploy/local/services.sh up)")?;
    let producer = EventProducer::new(&config.kafka)?;
    let topic = config.kafka.feedback_topic();
    let key = record.key();
    // A record of the same pair under its key of before session 27 goes either way: one review
    // per pair (see epigraph_schemas::feedback).
    if let Some(legacy) = record.legacy_key() {
        producer.publish_tombstone(&topic, &legacy).await?;
    }
    if withdraw {
        producer.publish_tombstone(&topic, &key).await?;
        println!("{}", serde_json::json!({"withdrawn": key}));
    } else {
        let payload = serde_json::to_vec(&record)?;
        producer.publish_raw(&topic, &key, &payload).await?;
        println!("{}", serde_json::json!({"published": record, "key": key}));
    }
    producer.flush()?;
    Ok(())
}
