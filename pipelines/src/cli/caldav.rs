//! `epigraph ingest caldav <url> [--follow]`: sync a calendar collection, publish what changed,
//! save the sync state once Kafka acknowledged it.

use std::sync::Arc;
use std::time::Duration;

use anyhow::Result;
use epigraph_sources::caldav::{CaldavState, DavClient, sync_calendar};
use epigraph_sources::ics::IcsConfig;

use super::follower_metrics::FollowerMetrics;
use crate::config::EpigraphConfig;
use crate::publish::publish;

/// One sync, or (`follow`) a sync every `caldav.poll_interval_ms` until Ctrl-C. While
/// following, a server or broker that cannot be reached is retried after 1 s, doubling up to
/// `caldav.max_backoff_ms`, and logged each time (never with the credentials); errors that a
/// retry cannot fix (refused credentials, a URL that is not a calendar) stop the command.
/// With `metrics_listen`, `GET /metrics` there says whether the server answers
/// (`epigraph_source_up`), the syncs by outcome, what was published and the current backoff;
/// the same status is reported on `<prefix>.connectors` for the health page.
pub async fn follow_calendar(
    config: &EpigraphConfig,
    ics: &IcsConfig,
    url: &str,
    tenant: &str,
    follow: bool,
    metrics_listen: Option<&str>,
) -> Result<()> {
    let client = DavClient::new(url, &config.caldav)?;
    let metrics = Arc::new(FollowerMetrics::new(
        "caldav",
        client.collection().as_str(),
        tenant,
        follow,
        config.sources.report_every(),
    ));
    if let Some(listen) = metrics_listen {
        super::follower_metrics::serve(listen, metrics.clone()).await?;
    }
    let reporter = metrics.report_to(&config.kafka)?;
    let result = sync_until_stopped(config, ics, &client, tenant, follow, &metrics).await;
    reporter.stop(result.as_ref().err()).await;
    result
}

/// Sync, and while `follow`ing sync again every poll interval, retrying what waiting may fix.
async fn sync_until_stopped(
    config: &EpigraphConfig,
    ics: &IcsConfig,
    client: &DavClient,
    tenant: &str,
    follow: bool,
    metrics: &FollowerMetrics,
) -> Result<()> {
    let collection = client.collection().to_string();
    let mut backoff = Duration::from_secs(1);
    let mut first = true;
    loop {
        let wait = match sync_once(config, ics, client, &collection, tenant, first).await {
            Ok((published, tombstoned, dead)) => {
                metrics.success(published, tombstoned, dead);
                first = false;
                backoff = Duration::from_secs(1);
                Duration::from_millis(config.caldav.poll_interval_ms)
            }
            Err(error) if follow && retryable(&error) => {
                tracing::warn!(collection = %collection, retry_in_ms = backoff.as_millis() as u64, "calendar sync failed: {error:#}");
                let wait = backoff;
                metrics.failure(wait, &error);
                backoff = (backoff * 2).min(Duration::from_millis(
                    config.caldav.max_backoff_ms.max(1000),
                ));
                wait
            }
            Err(error) => return Err(error),
        };
        if !follow {
            return Ok(());
        }
        tokio::select! {
            _ = tokio::time::sleep(wait) => {}
            _ = tokio::signal::ctrl_c() => return Ok(()),
        }
    }
}

async fn sync_once(
    config: &EpigraphConfig,
    ics: &IcsConfig,
    client: &DavClient,
    collection: &str,
    tenant: &str,
    first_of_run: bool,
) -> Result<(usize, usize, usize)> {
    let always_report = first_of_run;
    let state_dir = config.state_dir();
    let saved = CaldavState::load(&state_dir, tenant, collection)?;
    let mut state = saved.clone();
    // What the producer refused in an earlier run (too large for the topic, …) is fetched again
    // once per run: the operator may have raised the limit since.
    let retried = if first_of_run {
        state.retry_refused()
    } else {
        0
    };
    let now = epigraph_schemas::now_millis();
    let mut sync =
        sync_calendar(client, &state, ics, config.kafka.dead_letter_max_bytes, now).await?;
    let tombstones = sync
        .scan
        .events
        .iter()
        .filter(|e| e.op == epigraph_schemas::Op::Delete)
        .count();
    let dead = sync.scan.dead_letters.len();
    let changed = !sync.scan.events.is_empty() || dead > 0;
    let report = if changed {
        Some(publish(config, sync.scan).await?)
    } else {
        None
    };
    // What the producer dead-lettered was not published: undone in the state, marked, and
    // fetched again next run.
    let refused = report
        .as_ref()
        .map_or(0, |r| sync.next.mark_refused(&r.refused, &saved));
    // Saved only after every event was acknowledged: a failed publish fetches again.
    if sync.next != saved {
        sync.next.save(&state_dir)?;
    }
    let published = report.as_ref().map_or(0, |r| r.published);
    let dead_lettered = dead + report.as_ref().map_or(0, |r| r.dead_lettered);
    if always_report || changed {
        let summary = serde_json::json!({
            "source": "caldav",
            "tenant": tenant,
            "collection": collection,
            "full_sync": sync.full,
            "fetched": sync.fetched,
            "removed": sync.removed,
            "published": published - tombstones.min(published),
            "tombstoned": tombstones,
            "dead_lettered": dead_lettered,
            "refused": refused,
            "retried": retried,
        });
        println!("{summary}");
    }
    Ok((
        published - tombstones.min(published),
        tombstones,
        dead_lettered,
    ))
}

/// Whether waiting may help: the calendar server or Kafka is down, not a refused password.
fn retryable(error: &anyhow::Error) -> bool {
    match error.downcast_ref::<epigraph_sources::SourceError>() {
        Some(source) => source.retryable(),
        // Publishing failures (the broker) come wrapped in context.
        None => true,
    }
}
