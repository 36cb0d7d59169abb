//! `GET /v1/dashboard/stream`: the dashboard's live feed, as server-sent events.
//!
//! A feed is what the dashboard shows for one tenant and one view (how many priorities, which
//! types, how many contradictions and questions): a [`Snapshot`]. One task per feed reads it
//! from Neo4j when the pipeline says the tenant changed (a notice on the changes topic, which
//! `epigraph run` publishes after each epoch it wrote; [`LiveHub::listen`]), and at the latest
//! every `serve.live_poll_ms` (the safety net when notices cannot be read), and publishes it
//! only when it changed. Any number of analysts watching the same view cost one read per
//! change, and an unchanged graph costs them nothing but a keep-alive comment. The task ends when the last viewer leaves, and every
//! stream ends when the server shuts down (graceful shutdown would otherwise wait for them).
//!
//! Events: `snapshot` (data: the [`Snapshot`] as JSON, `id`: its sequence number) and `error`
//! (data: `{"message": …, "status": …}`, when a read failed; the feed keeps trying). While Neo4j
//! or LanceDB is unreachable the stream stays open: its feed does not read, it sends one
//! `error` with the reason and `"status": 503` (as the query routes' `503`), and it reads again
//! the moment the store answers, so the next `snapshot` follows on the same connection.

use std::collections::HashMap;
use std::convert::Infallible;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use axum::Extension;
use axum::extract::State;
use axum::response::sse::{Event, KeepAlive, Sse};
use epigraph_query::graph::{ContradictionPair, MemoryCard};
use epigraph_schemas::changes::ChangeNotice;
use epigraph_sources::kafka::{EventConsumer, KafkaConfig, Polled, ensure_topics};
use futures::Stream;
use serde::{Deserialize, Serialize};
use tokio::sync::{broadcast, watch};
use utoipa::{IntoParams, ToSchema};

use super::auth::Tenant;
use super::extract::ApiQuery;
use super::{ApiError, AppState};
use epigraph_query::QueryError;
use epigraph_query::reads::ListParams;
use epigraph_query::search::parse_types;

/// Parameters of the live feed (the dashboard's view).
#[derive(Debug, Deserialize, IntoParams)]
#[serde(deny_unknown_fields)]
#[into_params(parameter_in = Query)]
pub struct LiveParams {
    /// Memory objects of highest priority to show (default 25, at most 200).
    pub top: Option<usize>,
    /// Only these epistemic types among the priorities, comma-separated.
    pub types: Option<String>,
    /// Standing contradictions and open questions to show, each (default 20, at most 200).
    pub limit: Option<usize>,
    /// Tenant (development mode only).
    pub tenant: Option<String>,
}

/// What the dashboard shows, at one read.
#[derive(Clone, Debug, PartialEq, Serialize, ToSchema)]
pub struct Snapshot {
    /// Increases by one with every published change of this feed.
    pub seq: u64,
    /// When it was read (ms since the Unix epoch).
    pub read_at: i64,
    /// Highest K first.
    pub priorities: Vec<MemoryCard>,
    /// Standing contradictions, newest first.
    pub contradictions: Vec<ContradictionPair>,
    /// Open questions, most urgent first.
    pub questions: Vec<MemoryCard>,
}

/// A feed: one tenant and one view.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
struct FeedKey {
    tenant: String,
    top: usize,
    types: Vec<String>,
    limit: usize,
}

/// What a feed publishes.
#[derive(Clone, Debug)]
enum Update {
    Snapshot(Arc<Snapshot>),
    /// A read failed: why, and the HTTP status a query route would have answered.
    Error(String, u16),
}

/// The live feeds of a server, shared by its handlers.
#[derive(Clone, Debug)]
pub struct LiveHub {
    feeds: Arc<Mutex<HashMap<FeedKey, watch::Sender<Option<Update>>>>>,
    shutdown: watch::Sender<bool>,
    /// Tenants whose graph changed, as the pipeline announces them.
    notices: broadcast::Sender<String>,
}

impl Default for LiveHub {
    fn default() -> Self {
        LiveHub {
            feeds: Arc::default(),
            shutdown: watch::Sender::new(false),
            notices: broadcast::Sender::new(256),
        }
    }
}

impl LiveHub {
    /// Ends every stream (and so every feed task): called when the server shuts down.
    pub fn shut(&self) {
        self.shutdown.send_replace(true);
    }

    /// Tell the feeds of `tenant` that its graph changed: they read it again now.
    pub fn notify(&self, tenant: &str) {
        // Without feeds there is no receiver, and nothing to do.
        let _ = self.notices.send(tenant.to_string());
    }

    /// Read the pipeline's change notices (`<prefix>.changes`, from their end) and notify the
    /// feeds of each changed tenant, until the server shuts down. When Kafka cannot be reached
    /// the feeds keep polling, and the listener tries again every 10 s.
    pub fn listen(&self, kafka: KafkaConfig) {
        let hub = self.clone();
        tokio::spawn(async move {
            let mut shutdown = hub.shutdown.subscribe();
            let topics = [kafka.changes_topic()];
            let config = KafkaConfig {
                group_id: format!("{}-serve-live", kafka.group_id),
                ..kafka.clone()
            };
            while !*shutdown.borrow() {
                let consumer = match ensure_topics(&kafka).await {
                    // Off the runtime's workers: connecting reads metadata synchronously.
                    Ok(()) => {
                        let (config, topics) = (config.clone(), topics.clone());
                        tokio::task::spawn_blocking(move || {
                            EventConsumer::from_end(&config, &topics)
                        })
                        .await
                        .expect("connecting to the change notices does not panic")
                    }
                    Err(error) => Err(error),
                };
                match consumer {
                    Ok(consumer) => {
                        tracing::info!(topic = %topics[0], "live feeds follow the change notices");
                        hub.follow(&consumer, &mut shutdown).await;
                    }
                    Err(error) => {
                        tracing::warn!(%error, "cannot read change notices; live feeds poll")
                    }
                }
                tokio::select! {
                    _ = tokio::time::sleep(Duration::from_secs(10)) => {}
                    _ = shutdown.changed() => {}
                }
            }
        });
    }

    /// Notify from `consumer` until shutdown or a read error.
    async fn follow(&self, consumer: &EventConsumer, shutdown: &mut watch::Receiver<bool>) {
        loop {
            let polled = tokio::select! {
                polled = consumer.poll(Duration::from_secs(1)) => polled,
                _ = shutdown.changed() => return,
            };
            match polled {
                Ok(Polled::Message(message)) => {
                    let notice = message
                        .payload
                        .as_deref()
                        .and_then(|p| serde_json::from_slice::<ChangeNotice>(p).ok());
                    match notice {
                        Some(notice) => self.notify(&notice.tenant),
                        None => tracing::warn!(at = %message.location(), "not a change notice"),
                    }
                }
                Ok(Polled::Idle) => {}
                Err(error) => {
                    tracing::warn!(%error, "reading change notices");
                    return;
                }
            }
        }
    }

    /// How many feeds are being read now.
    pub fn feeds(&self) -> usize {
        self.feeds.lock().expect("live feeds").len()
    }

    /// A receiver of the feed `key`, starting its task if nobody watches it yet.
    fn subscribe(&self, key: FeedKey, state: &AppState) -> watch::Receiver<Option<Update>> {
        let mut feeds = self.feeds.lock().expect("live feeds");
        if let Some(sender) = feeds.get(&key) {
            return sender.subscribe();
        }
        let (sender, receiver) = watch::channel(None);
        feeds.insert(key.clone(), sender.clone());
        tokio::spawn(feed(self.clone(), state.clone(), key, sender));
        receiver
    }
}

/// Reads the feed every interval and publishes what changed, until nobody watches it.
async fn feed(hub: LiveHub, state: AppState, key: FeedKey, sender: watch::Sender<Option<Update>>) {
    let every = Duration::from_millis(state.config.live_poll_ms.max(100));
    let mut seq = 0;
    let mut shutdown = hub.shutdown.subscribe();
    let mut notices = hub.notices.subscribe();
    let mut stores = state.stores.watch();
    loop {
        {
            let mut feeds = hub.feeds.lock().expect("live feeds");
            if sender.receiver_count() == 0 || *shutdown.borrow() {
                feeds.remove(&key);
                return;
            }
        }
        match super::stores::unless_down(&state.stores, read(&state, &key)).await {
            Err(super::stores::StoreDown(reason)) => {
                let message = super::stores::retry_later(&reason);
                sender.send_if_modified(|current| {
                    let told = matches!(current, Some(Update::Error(m, _)) if *m == message);
                    if !told {
                        tracing::warn!(tenant = %key.tenant, %reason, "live feed waits for the stores");
                        *current = Some(Update::Error(message, 503));
                    }
                    !told
                });
            }
            Ok(Ok((priorities, contradictions, questions))) => {
                sender.send_if_modified(|current| {
                    let unchanged = matches!(current, Some(Update::Snapshot(s))
                        if s.priorities == priorities
                            && s.contradictions == contradictions
                            && s.questions == questions);
                    if unchanged {
                        return false;
                    }
                    seq += 1;
                    *current = Some(Update::Snapshot(Arc::new(Snapshot {
                        seq,
                        read_at: epigraph_schemas::now_millis(),
                        priorities,
                        contradictions,
                        questions,
                    })));
                    true
                });
            }
            Ok(Err(error)) => {
                tracing::warn!(tenant = %key.tenant, %error, "live feed read failed");
                sender.send_replace(Some(Update::Error(error.to_string(), 500)));
            }
        }
        tokio::select! {
            _ = tokio::time::sleep(every) => {}
            _ = shutdown.changed() => {}
            _ = changed(&mut notices, &key.tenant) => {}
            // A store went down or came back: say so, or read again, now.
            _ = stores.changed() => {}
        }
    }
}

/// Waits for a notice that `tenant` changed (missed notices count as one).
async fn changed(notices: &mut broadcast::Receiver<String>, tenant: &str) {
    loop {
        match notices.recv().await {
            Ok(changed) if changed == tenant => return,
            Ok(_) => {}
            Err(broadcast::error::RecvError::Lagged(_)) => return,
            // The hub lives as long as the feeds: never closed while one waits.
            Err(broadcast::error::RecvError::Closed) => std::future::pending::<()>().await,
        }
    }
}

type Read = (Vec<MemoryCard>, Vec<ContradictionPair>, Vec<MemoryCard>);

async fn read(state: &AppState, key: &FeedKey) -> Result<Read, QueryError> {
    let list = ListParams {
        limit: Some(key.limit),
        as_of: None,
        include_resolved: None,
        tenant: None,
    };
    let (priorities, contradictions, questions) = tokio::try_join!(
        state
            .query()
            .graph()
            .priorities(&key.tenant, &key.types, key.top, None),
        state.query().contradictions(&key.tenant, &list),
        state.query().questions(&key.tenant, &list),
    )?;
    Ok((
        priorities,
        contradictions.contradictions,
        questions.questions,
    ))
}

/// The dashboard's live feed: a `snapshot` event now and after every change.
#[utoipa::path(get, path = "/v1/dashboard/stream", tag = "graph", params(LiveParams),
    responses((status = 200, description = "`text/event-stream` of `snapshot` events (data: Snapshot) and `error` events (data: `{\"message\", \"status\"}`; status 503 while a store is unreachable: the stream stays open and the next snapshot follows when it answers)", body = Snapshot)))]
pub async fn stream(
    State(state): State<AppState>,
    Extension(Tenant(tenant)): Extension<Tenant>,
    ApiQuery(params): ApiQuery<LiveParams>,
) -> Result<Sse<impl Stream<Item = Result<Event, Infallible>>>, ApiError> {
    let key = FeedKey {
        tenant,
        top: params.top.unwrap_or(25).clamp(1, 200),
        types: parse_types(params.types.as_deref())?,
        limit: params.limit.unwrap_or(20).clamp(1, 200),
    };
    let updates = state.live.subscribe(key, &state);
    let shutdown = state.live.shutdown.subscribe();
    let events = futures::stream::unfold(
        (updates, shutdown, true),
        |(mut updates, mut shutdown, first)| async move {
            if *shutdown.borrow() {
                return None;
            }
            // The current snapshot at once; then each change.
            if !first || updates.borrow().is_none() {
                tokio::select! {
                    changed = updates.changed() => changed.ok()?,
                    _ = shutdown.changed() => return None,
                }
            }
            let event = match updates.borrow_and_update().clone()? {
                Update::Snapshot(snapshot) => Event::default()
                    .event("snapshot")
                    .id(snapshot.seq.to_string())
                    .json_data(&*snapshot)
                    .expect("a snapshot serializes"),
                Update::Error(message, status) => Event::default()
                    .event("error")
                    .json_data(serde_json::json!({ "message": message, "status": status }))
                    .expect("a message serializes"),
            };
            Some((Ok(event), (updates, shutdown, false)))
        },
    );
    Ok(Sse::new(events).keep_alive(KeepAlive::default()))
}
