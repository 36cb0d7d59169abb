//! `epigraph ingest imap [--mailbox X]... [--follow]`: sync mailboxes on an IMAP server, publish
//! new messages and tombstones, save the UID state once Kafka acknowledged it.

use std::sync::Arc;
use std::time::Duration;

use anyhow::Result;
use epigraph_sources::imap::{ImapConfig, ImapSession, ImapState, sync_mailboxes};

use super::follower_metrics::FollowerMetrics;
use crate::config::EpigraphConfig;
use crate::publish::publish;

/// One sync, or (`follow`) a sync every `imap.poll_interval_ms` until Ctrl-C. While following,
/// a server or broker that cannot be reached is retried after 1 s, doubling up to
/// `imap.max_backoff_ms`, and logged each time (never with the credentials); errors that a
/// retry cannot fix (refused login, a mailbox that does not exist) stop the command. With
/// `metrics_listen`, `GET /metrics` there reports the follower's health (see `caldav`).
pub async fn follow_mailboxes(
    config: &EpigraphConfig,
    imap: &ImapConfig,
    tenant: &str,
    follow: bool,
    metrics_listen: Option<&str>,
) -> Result<()> {
    // The server and the mailboxes followed (never the user or the password).
    let target = format!(
        "{}:{}/{}",
        imap.host.as_deref().unwrap_or_default(),
        imap.port(),
        imap.mailboxes.join(",")
    );
    let metrics = Arc::new(FollowerMetrics::new(
        "imap",
        &target,
        tenant,
        follow,
        config.sources.report_every(),
    ));
    if let Some(listen) = metrics_listen {
        super::follower_metrics::serve(listen, metrics.clone()).await?;
    }
    let reporter = metrics.report_to(&config.kafka)?;
    let result = sync_until_stopped(config, imap, tenant, follow, &metrics).await;
    reporter.stop(result.as_ref().err()).await;
    result
}

/// Sync, and while `follow`ing sync again every poll interval, retrying what waiting may fix.
async fn sync_until_stopped(
    config: &EpigraphConfig,
    imap: &ImapConfig,
    tenant: &str,
    follow: bool,
    metrics: &FollowerMetrics,
) -> Result<()> {
    let mut backoff = Duration::from_secs(1);
    let mut first = true;
    loop {
        let wait = match sync_once(config, imap, tenant, first).await {
            Ok((published, tombstoned, dead)) => {
                metrics.success(published, tombstoned, dead);
                first = false;
                backoff = Duration::from_secs(1);
                Duration::from_millis(imap.poll_interval_ms)
            }
            Err(error) if follow && retryable(&error) => {
                tracing::warn!(
                    retry_in_ms = backoff.as_millis() as u64,
                    "mailbox sync failed: {error:#}"
                );
                let wait = backoff;
                metrics.failure(wait, &error);
                backoff = (backoff * 2).min(Duration::from_millis(imap.max_backoff_ms.max(1000)));
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
    imap: &ImapConfig,
    tenant: &str,
    first_of_run: bool,
) -> Result<(usize, usize, usize)> {
    let always_report = first_of_run;
    let mut session = ImapSession::connect(imap).await?;
    let server = session.server().to_string();
    let username = imap.username.clone().unwrap_or_default();
    let state_dir = config.state_dir();
    let mut state = ImapState::load(&state_dir, tenant, &server, &username)?;
    // What the producer refused in an earlier run (too large for the topic, …) is read again
    // once per run: the operator may have raised the limit since.
    let retried = if first_of_run {
        state.retry_refused()
    } else {
        0
    };
    let now = epigraph_schemas::now_millis();
    let sync = sync_mailboxes(
        &mut session,
        &state,
        &imap.mailboxes,
        &config.mail,
        config.kafka.dead_letter_max_bytes,
        now,
    )
    .await;
    session.logout().await;
    let mut sync = sync?;
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
    // What the producer dead-lettered was not published: remembered, and read again next run.
    let refused = report
        .as_ref()
        .map_or(0, |r| sync.next.mark_refused(&r.refused));
    // Saved only after every event was acknowledged: a failed publish reads again.
    if sync.next != state {
        sync.next.save(&state_dir)?;
    }
    let published = report.as_ref().map_or(0, |r| r.published);
    let dead_lettered = dead + report.as_ref().map_or(0, |r| r.dead_lettered);
    if always_report || changed || sync.fetched > 0 || sync.removed > 0 {
        let summary = serde_json::json!({
            "source": "imap",
            "tenant": tenant,
            "server": server,
            "mailboxes": imap.mailboxes,
            "resynced": sync.resynced,
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

/// Whether waiting may help: the mail server or Kafka is down, not a refused password.
fn retryable(error: &anyhow::Error) -> bool {
    match error.downcast_ref::<epigraph_sources::SourceError>() {
        Some(source) => source.retryable(),
        // Publishing failures (the broker) come wrapped in context.
        None => true,
    }
}
