//! The run loop. See `docs/runtime.md` for the durability model.

use std::collections::{BTreeMap, HashMap};
use std::sync::Arc;
use std::time::{Duration, Instant};

use anyhow::{Context, Result, bail};
use epigraph_operators::epistemic::amend::Amendment;
use epigraph_operators::epistemic::review::Review;
use epigraph_operators::ontology::parse_type;
use epigraph_operators::priority::{Now, Usage};
use epigraph_operators::resolve::Verdict;
use epigraph_operators::{Extractor, GraphElement, SourceVersion, net_changes};
use epigraph_schemas::SourceEvent;
use epigraph_schemas::changes::{ChangeNotice, PrioritySample};
use epigraph_schemas::feedback::{Feedback, FeedbackError, IdentityVerdict};
use epigraph_schemas::topics::{event_key, valid_tenant};
use epigraph_sinks::embed::Embedder;
use epigraph_sinks::lance::{LanceSink, VectorFiller};
use epigraph_sinks::neo4j::Neo4jSink;
use epigraph_sources::kafka::{
    DeadLetter, EventConsumer, EventDecodeError, EventDecoder, EventProducer, Polled, RawMessage,
    ensure_topics,
};
use tracing::{info, warn};

use super::dataflow::{Dataflow, EpochInput};
use super::metrics::{RunMetrics, serve_metrics};
use super::outage::{Dependency, RetryPolicy, retry};
use super::upsert::UpsertState;
use super::usage::UsageWindow;
use super::views::{SinkWrites, claim_tenants, live_elements, reconcile, reconcile_chunks};
use crate::config::EpigraphConfig;

/// Options of one `epigraph run`.
#[derive(Clone, Copy, Debug, Default)]
pub struct RunOptions {
    /// Exit once every partition is read to its end and everything is written.
    pub until_idle: bool,
}

/// What a run did.
#[derive(Clone, Debug, Default, PartialEq, Eq, serde::Serialize)]
pub struct RunReport {
    /// Messages read (restore and live).
    pub messages: usize,
    /// Messages dead-lettered.
    pub dead_lettered: usize,
    /// Live epochs sealed after the restore.
    pub epochs: u64,
    /// Source items live at the end.
    pub live_sources: usize,
    /// Elements written by the reconciliation after the restore (0 when the sinks were current).
    pub reconciled_writes: usize,
    /// Elements written by live epochs.
    pub live_writes: usize,
    /// Identity verdicts in force at the end (from the feedback topic).
    pub verdicts: usize,
    /// Reviews of judgements in force at the end (from the feedback topic).
    pub reviews: usize,
    /// Amendments of memory objects in force at the end (from the feedback topic).
    pub amendments: usize,
    /// Usage records read from the feedback topic.
    pub usage_records: usize,
    /// Distinct texts the embedding model ran on (rows waiting for a vector are embedded in
    /// the background; `--until-idle` waits for them).
    pub vectors_embedded: u64,
    /// Rows that got their vector from the cache (an earlier row or text with the same hash).
    pub vectors_reused: u64,
    /// Compactions of the LanceDB table.
    pub compactions: u64,
}

/// What the messages of one epoch change.
#[derive(Debug, Default)]
struct Batch {
    updates: Vec<(SourceVersion, isize)>,
    verdicts: Vec<(Verdict, isize)>,
    reviews: Vec<(Review, isize)>,
    amendments: Vec<(Amendment, isize)>,
    usages: Vec<Usage>,
}

type Offsets = BTreeMap<(String, i32), i64>;

struct Runner {
    config: EpigraphConfig,
    consumer: EventConsumer,
    producer: EventProducer,
    /// Both encodings of events; shares the producer's registry codec (one schema cache).
    decoder: EventDecoder,
    neo4j: Neo4jSink,
    lance: LanceSink,
    dataflow: Arc<Dataflow>,
    state: UpsertState,
    usage: UsageWindow,
    metrics: Arc<RunMetrics>,
    /// Fills the vectors behind the rows (none without an embedder).
    filler: Option<VectorFiller>,
    /// Epochs applied since the last compaction, when it ran, and the filler's count then.
    compaction: (u64, Instant, u64),
    /// When LanceDB's indexes last took in the rows written since.
    indexed: Instant,
    /// The verdict in force per feedback key.
    verdicts: HashMap<String, Verdict>,
    /// The review in force per feedback key.
    reviews: HashMap<String, Review>,
    /// The amendment in force per feedback key.
    amendments: HashMap<String, Amendment>,
    next_offsets: Offsets,
    /// Offsets committed by earlier runs: bad messages below them were dead-lettered already.
    acknowledged: Offsets,
    /// Tenants checked to be held by no other view in Neo4j ([`claim_tenants`]).
    owned: std::collections::HashSet<String>,
    report: RunReport,
    /// How operations failed by an outage are retried.
    policy: RetryPolicy,
    /// The filler's passes seen, and whether its last pass failed by an outage.
    filler_seen: (u64, bool),
    /// When Neo4j was last probed while idle.
    probed: Instant,
}

/// Run the pipeline.
pub async fn run(config: EpigraphConfig, options: RunOptions) -> Result<RunReport> {
    let metrics = Arc::new(RunMetrics::default());
    if !config.run.metrics_listen.is_empty() {
        serve_metrics(&config.run.metrics_listen, metrics.clone()).await;
    }
    let policy = RetryPolicy::of(&config.run);
    // Kafka and Neo4j started alongside the run (a fresh machine, a pod, a restarted host) may
    // not answer yet: the run waits for them as for an outage, reported on `/readyz`.
    retry(&metrics, policy, "creating the topics", || {
        ensure_topics(&config.kafka)
    })
    .await
    .context("creating topics (is Kafka up? deploy/local/services.sh up)")?;
    let embedder = if config.lancedb.embed {
        let model = config.model.clone();
        let embedder = tokio::task::spawn_blocking(move || Embedder::load(&model)).await??;
        Some(Arc::new(embedder))
    } else {
        None
    };
    let view = config.kafka.topic_prefix.clone();
    let neo4j = retry(&metrics, policy, "connecting to Neo4j", || {
        Neo4jSink::connect(&config.neo4j)
    })
    .await
    .context("connecting to Neo4j (is it up? deploy/local/services.sh up)")?
    .with_view(&view);
    let lance = LanceSink::open(&config.lancedb, embedder)
        .await?
        .with_view(&view)
        .with_observer(metrics.clone());
    // Rows left without a vector by an earlier run are found by its first pass.
    let filler = lance.spawn_vector_filler();
    let mut topics = config.kafka.all_event_topics();
    topics.push(config.kafka.feedback_topic());
    let consumer = EventConsumer::from_beginning(&config.kafka, &topics)?;
    let producer = EventProducer::new(&config.kafka)?;
    let acknowledged = consumer.committed()?;
    let (dataflow, usage_half_life_ms) = start_dataflow(&config)?;
    // Ten half-lives: an older retrieval weighs less than 0.1 % of a fresh one.
    let usage = UsageWindow::new(usage_half_life_ms.saturating_mul(10));
    let dataflow = Arc::new(dataflow);
    let decoder = EventDecoder::with_codec(producer.registry().cloned());
    info!(view = %view, "started: Kafka and Neo4j reached; restoring the views");
    let mut runner = Runner {
        policy,
        filler_seen: (0, false),
        probed: Instant::now(),
        decoder,
        usage,
        metrics,
        filler,
        compaction: (0, Instant::now(), 0),
        indexed: Instant::now(),
        config,
        consumer,
        producer,
        neo4j,
        lance,
        dataflow,
        state: UpsertState::default(),
        verdicts: HashMap::new(),
        reviews: HashMap::new(),
        amendments: HashMap::new(),
        next_offsets: Offsets::new(),
        acknowledged,
        owned: std::collections::HashSet::new(),
        report: RunReport::default(),
    };
    runner.restore().await?;
    runner.live(options).await?;
    let Runner {
        dataflow,
        mut report,
        state,
        verdicts,
        reviews,
        amendments,
        metrics,
        ..
    } = runner;
    report.vectors_embedded = metrics.vectors_embedded.get();
    report.vectors_reused = metrics.vectors_reused.get();
    report.live_sources = state.len();
    report.verdicts = verdicts.len();
    report.reviews = reviews.len();
    report.amendments = amendments.len();
    match Arc::try_unwrap(dataflow) {
        Ok(dataflow) => dataflow.shutdown()?,
        Err(_) => bail!("the dataflow is still in use"),
    }
    Ok(report)
}

/// Loads the ontology and the priority constants and starts the dataflow's workers where
/// `run.workers` and `run.cluster` say; returns it with the usage half-life.
fn start_dataflow(config: &EpigraphConfig) -> Result<(Dataflow, i64)> {
    let ontology = config
        .ontology
        .load()
        .context("loading the ontology (see [ontology] in the config)")?;
    let priority = config
        .ontology
        .priority(&ontology)
        .context("loading the priority constants (priority.toml)")?;
    for warning in &priority.warnings {
        warn!(%warning, "priority constants");
    }
    let fingerprint = config
        .ontology
        .fingerprint()
        .context("reading the ontology files")?;
    let extractor = Arc::new(Extractor::new(ontology).context("compiling the ontology's cues")?);
    let half_life = priority.usage_half_life_ms;
    let topology = crate::runtime::dataflow::Topology::of(&config.run);
    if let crate::runtime::dataflow::Topology::Cluster {
        workers,
        process,
        addresses,
    } = &topology
    {
        info!(
            process,
            processes = addresses.len(),
            workers_per_process = workers,
            "joining the cluster (waits for every process)"
        );
    }
    let dataflow = Dataflow::start(topology, fingerprint, extractor, Arc::new(priority));
    Ok((dataflow, half_life))
}

/// A compute peer of a cluster (`run.cluster.process` ≠ 0): runs this process's share of the
/// dataflow's workers until the driver, process 0, closes the inputs. It reads no topic and
/// writes no store. Blocking.
pub fn run_peer(config: &EpigraphConfig) -> Result<()> {
    if crate::runtime::dataflow::Topology::of(&config.run).is_driver() {
        bail!("run_peer is for processes other than 0 of a [run.cluster]");
    }
    let (dataflow, _) = start_dataflow(config)?;
    dataflow
        .join()
        .map_err(|error| anyhow::anyhow!("the cluster stopped: {error}"))?;
    info!("the driver closed the dataflow; peer done");
    Ok(())
}

/// Empties both views (of one tenant) for `epigraph rebuild`; returns the nodes deleted.
pub async fn clear_views(config: &EpigraphConfig, tenant: Option<&str>) -> Result<u64> {
    let view = config.kafka.topic_prefix.clone();
    let neo4j = Neo4jSink::connect(&config.neo4j)
        .await
        .context("connecting to Neo4j (is it up? deploy/local/services.sh up)")?
        .with_view(&view);
    let lance = LanceSink::open(&config.lancedb, None)
        .await?
        .with_view(&view);
    let nodes = neo4j.clear(tenant).await?;
    lance.clear(tenant).await?;
    info!(
        nodes,
        ?tenant,
        "views cleared; restoring them from the compacted topics"
    );
    Ok(nodes)
}

impl Runner {
    /// Replay the compacted topics up to their current ends into the dataflow as epoch 0, then
    /// make both sinks equal to the result (this also removes what was deleted while down).
    async fn restore(&mut self) -> Result<()> {
        let started = Instant::now();
        let marks = self.consumer.high_watermarks()?;
        let mut batch = Batch::default();
        let mut silent: Option<Instant> = None;
        while !caught_up(&self.next_offsets, &marks) {
            match self
                .poll(Duration::from_millis(self.config.run.idle_ms.max(100) * 10))
                .await?
            {
                Polled::Message(message) => {
                    silent = None;
                    self.absorb(message, &mut batch).await?
                }
                // Nothing while records are known to be there: Kafka is away (or restarting).
                Polled::Idle => {
                    let since = *silent.get_or_insert_with(Instant::now);
                    let reason = format!(
                        "Kafka returned nothing while restoring (positions {:?}, ends {marks:?})",
                        self.next_offsets
                    );
                    if since.elapsed() >= self.policy.give_up {
                        bail!(reason);
                    }
                    self.metrics
                        .unreachable(Dependency::Kafka, "restoring", &reason);
                }
            }
        }
        let output = self.seal(0, batch).await?;
        let desired = live_elements(output);
        // Before anything is written: no tenant of the record may be another view's.
        self.claim(desired.iter().map(GraphElement::tenant)).await?;
        let mut writes = retry(&self.metrics, self.policy, "reading both views", || {
            reconcile(&desired, &self.neo4j, &self.lance)
        })
        .await?;
        self.report.reconciled_writes = count_writes(&writes);
        let chunking = self.config.lancedb.chunking();
        let chunks = retry(&self.metrics, self.policy, "reading the chunks", || async {
            let mut chunks = SinkWrites::default();
            reconcile_chunks(self.state.versions(), chunking, &self.lance, &mut chunks)
                .await
                .map(|()| chunks)
        })
        .await?;
        writes.chunk_upserts = chunks.chunk_upserts;
        writes.chunk_deletes = chunks.chunk_deletes;
        self.apply(&writes).await?;
        // The priorities the reconciliation wrote are samples of K's history.
        let written: std::collections::HashSet<&str> = writes
            .graph
            .set_properties
            .iter()
            .map(|p| p.id.as_str())
            .collect();
        self.record_priorities(desired.iter().filter(|e| match e {
            GraphElement::Priority(p) => written.contains(p.node.as_str()),
            _ => false,
        }))
        .await;
        if self.report.reconciled_writes > 0 {
            // What changed while nobody ran is not told per tenant: every tenant held is
            // announced, with its live elements.
            let mut tenants: BTreeMap<String, u64> = BTreeMap::new();
            for element in &desired {
                *tenants.entry(element.tenant().to_string()).or_default() += 1;
            }
            self.announce(0, tenants).await;
        }
        self.commit().await?;
        self.metrics.health.restored();
        self.record_lag();
        info!(
            sources = self.state.len(),
            elements = desired.len(),
            reconciled_writes = self.report.reconciled_writes,
            seconds = started.elapsed().as_secs_f64(),
            "restored state from the compacted topics"
        );
        Ok(())
    }

    /// Seal epochs on a size/time budget, apply their net changes to both sinks, then commit.
    async fn live(&mut self, options: RunOptions) -> Result<()> {
        let budget = Duration::from_millis(self.config.run.epoch_max_ms);
        let idle = Duration::from_millis(self.config.run.idle_ms);
        let mut epoch = 0u64;
        // The first idle pass always optimizes: it creates the full-text index after a restore.
        let mut optimized = false;
        loop {
            let mut batch = Batch::default();
            let mut consumed = 0usize;
            let opened = Instant::now();
            while consumed < self.config.run.epoch_max_events
                && (consumed == 0 || opened.elapsed() < budget)
            {
                let wait = if consumed == 0 {
                    idle
                } else {
                    budget.saturating_sub(opened.elapsed())
                };
                match self.poll(wait).await? {
                    Polled::Message(message) => {
                        consumed += 1;
                        self.absorb(message, &mut batch).await?;
                    }
                    Polled::Idle => break,
                }
            }
            if consumed > 0 {
                epoch += 1;
                let chunking = self.config.lancedb.chunking();
                let mut chunks = SinkWrites::default();
                chunks.set_chunks(&batch.updates, chunking);
                let output = self.seal(epoch, batch).await?;
                let changes = net_changes(output);
                let mut tenants: BTreeMap<String, u64> = BTreeMap::new();
                for element in changes.upserts.iter().chain(&changes.deletes) {
                    *tenants.entry(element.tenant().to_string()).or_default() += 1;
                }
                self.claim(changes.upserts.iter().map(GraphElement::tenant))
                    .await?;
                let mut writes = SinkWrites::from_changes(&changes);
                writes.chunk_upserts = chunks.chunk_upserts;
                writes.chunk_deletes = chunks.chunk_deletes;
                self.report.live_writes += count_writes(&writes);
                self.apply(&writes).await?;
                self.record_priorities(changes.upserts.iter()).await;
                self.announce(epoch, tenants).await;
                self.commit().await?;
                self.record_lag();
                self.report.epochs = epoch;
                optimized = false;
                self.compaction.0 += 1;
                let every = self.config.lancedb.compact_every_epochs;
                if every > 0 && self.compaction.0 >= every {
                    self.compact().await?;
                } else {
                    // A pipeline that is never idle still folds its new rows into the indexes:
                    // rows past them are searched exhaustively, and readers slow down as they
                    // pile up.
                    let every = Duration::from_secs(self.config.lancedb.index_every_secs);
                    if !every.is_zero() && self.indexed.elapsed() >= every {
                        self.optimize("busy").await?;
                    }
                }
                continue;
            }
            self.watch_filler();
            self.probe().await;
            if !optimized {
                self.optimize("idle").await?;
                optimized = true;
            }
            let every = Duration::from_secs(self.config.lancedb.compact_every_secs);
            let filled = self.filler.as_ref().map_or(0, |f| f.status().filled);
            if !every.is_zero()
                && self.compaction.1.elapsed() >= every
                && (self.compaction.0 > 0 || filled > self.compaction.2)
            {
                self.compact().await?;
            }
            if options.until_idle {
                let marks = retry(
                    &self.metrics,
                    self.policy,
                    "reading the topics' ends",
                    || std::future::ready(self.consumer.high_watermarks()),
                )
                .await?;
                if !caught_up(&self.next_offsets, &marks) {
                    continue;
                }
                // Everything written has its vector, and the indexes (the vector index too,
                // once large enough) cover it.
                if let Some(filler) = self.filler.as_mut() {
                    // The filler retries by itself; a pass failed by an outage is waited out.
                    let (started, mut delays) = (Instant::now(), self.policy.delays());
                    while let Err(error) = filler.drained().await {
                        if !error.retryable() || started.elapsed() >= self.policy.give_up {
                            return Err(error.into());
                        }
                        self.metrics
                            .unreachable(Dependency::Lancedb, "filling vectors", &error);
                        tokio::time::sleep(delays.next().unwrap_or(self.policy.max)).await;
                    }
                    retry(&self.metrics, self.policy, "optimizing LanceDB", || {
                        self.lance.optimize()
                    })
                    .await?;
                }
                return Ok(());
            }
        }
    }

    /// Fold the rows written since into LanceDB's indexes (creating them when missing); `when`
    /// (`idle`, `busy`) labels the count.
    async fn optimize(&mut self, when: &str) -> Result<()> {
        retry(&self.metrics, self.policy, "optimizing LanceDB", || {
            self.lance.optimize()
        })
        .await?;
        self.indexed = Instant::now();
        self.metrics
            .lance_optimizations
            .get_or_create(&vec![("when".to_string(), when.to_string())])
            .inc();
        Ok(())
    }

    /// Compact the LanceDB table (small fragments of epochs and vector batches) and restart
    /// the compaction counters.
    async fn compact(&mut self) -> Result<()> {
        retry(&self.metrics, self.policy, "compacting LanceDB", || {
            self.lance.compact()
        })
        .await?;
        self.indexed = Instant::now();
        self.report.compactions += 1;
        self.metrics.lance_compactions.inc();
        let filled = self.filler.as_ref().map_or(0, |f| f.status().filled);
        self.compaction = (0, Instant::now(), filled);
        Ok(())
    }

    /// Apply writes to both sinks, each retried through its outages (the writes are
    /// idempotent: merges and deletes by id), recording their latency and batch sizes.
    async fn apply(&self, writes: &SinkWrites) -> Result<()> {
        let metrics = &*self.metrics;
        let (graph, rows) = tokio::try_join!(
            retry(
                metrics,
                self.policy,
                "writing an epoch to Neo4j",
                || async {
                    let started = Instant::now();
                    self.neo4j
                        .apply(&writes.graph)
                        .await
                        .map(|()| started.elapsed())
                }
            ),
            retry(
                metrics,
                self.policy,
                "writing an epoch to LanceDB",
                || async {
                    let started = Instant::now();
                    self.lance
                        .apply(&writes.lance_upserts, &writes.lance_deletes)
                        .await?;
                    self.lance
                        .apply_chunks(&writes.chunk_upserts, &writes.chunk_deletes)
                        .await
                        .map(|_waiting| started.elapsed())
                }
            ),
        )?;
        metrics.reached(Dependency::Neo4j);
        metrics.reached(Dependency::Lancedb);
        self.metrics.sink("neo4j", graph, count_writes(writes));
        self.metrics.graph_writes(&self.neo4j.census());
        self.metrics.sink(
            "lancedb",
            rows,
            writes.lance_upserts.len()
                + writes.lance_deletes.len()
                + writes.chunk_upserts.len()
                + writes.chunk_deletes.len(),
        );
        Ok(())
    }

    /// Publish the new K of every priority among `elements` to the priorities topic (K's
    /// history; best effort like the change notices: a sample that fails is logged).
    async fn record_priorities(&self, elements: impl Iterator<Item = &GraphElement>) {
        let topic = self.config.kafka.priorities_topic();
        let at_ms = epigraph_schemas::now_millis();
        let samples: Vec<(String, Vec<u8>)> = elements
            .filter_map(|element| match element {
                GraphElement::Priority(p) => Some(p),
                _ => None,
            })
            .map(|p| {
                let q = &p.priority;
                let sample = PrioritySample {
                    tenant: p.tenant.clone(),
                    node: p.node.clone(),
                    at_ms,
                    k: q.k.to_f64(),
                    s: q.s.to_f64(),
                    h: q.h.to_f64(),
                    u: q.u.to_f64(),
                    e: q.e.to_f64(),
                    g: q.g.to_f64(),
                    c: q.c.to_f64(),
                    decay: q.decay.to_f64(),
                    unclamped: Some(q.unclamped.to_f64()),
                };
                let payload = serde_json::to_vec(&sample).expect("samples serialize");
                (sample.key(), payload)
            })
            .collect();
        // Sent a thousand at a time, not one round trip each.
        for batch in samples.chunks(1000) {
            let sent = futures::future::join_all(
                batch
                    .iter()
                    .map(|(key, payload)| self.producer.publish_raw(&topic, key, payload)),
            )
            .await;
            if let Some(Err(error)) = sent.into_iter().find(Result::is_err) {
                warn!(%error, "publishing priority samples");
                return;
            }
        }
    }

    /// Tell live readers which tenants changed in an epoch just written (the changes topic;
    /// best effort: a notice that fails is logged, and readers also poll).
    async fn announce(&self, epoch: u64, tenants: BTreeMap<String, u64>) {
        let topic = self.config.kafka.changes_topic();
        let at_ms = epigraph_schemas::now_millis();
        for (tenant, elements) in tenants {
            let notice = ChangeNotice {
                tenant,
                epoch,
                elements,
                at_ms,
            };
            let payload = serde_json::to_vec(&notice).expect("notices serialize");
            if let Err(error) = self
                .producer
                .publish_raw(&topic, &notice.tenant, &payload)
                .await
            {
                warn!(%error, tenant = %notice.tenant, "publishing a change notice");
            }
        }
    }

    /// Poll once, riding out a Kafka outage (a failed poll is retried after the backoff).
    async fn poll(&self, wait: Duration) -> Result<Polled> {
        let polled = retry(&self.metrics, self.policy, "reading the topics", || {
            self.consumer.poll(wait)
        })
        .await?;
        if matches!(polled, Polled::Message(_)) {
            self.metrics.reached(Dependency::Kafka);
        }
        Ok(polled)
    }

    /// Commit the offsets read so far (called only after both sinks acknowledged them),
    /// riding out a Kafka outage.
    async fn commit(&self) -> Result<()> {
        retry(&self.metrics, self.policy, "committing offsets", || {
            std::future::ready(self.consumer.commit(&self.next_offsets))
        })
        .await?;
        self.metrics.reached(Dependency::Kafka);
        Ok(())
    }

    /// [`claim_tenants`], riding out a Neo4j outage.
    async fn claim<'a>(&mut self, tenants: impl Iterator<Item = &'a str>) -> Result<()> {
        let tenants: Vec<&str> = tenants.collect();
        let (view, owned, neo4j) = (&self.config.kafka.topic_prefix, &self.owned, &self.neo4j);
        let claimed = retry(
            &self.metrics,
            self.policy,
            "checking the tenants' views",
            || {
                let mut claimed = owned.clone();
                let tenants = tenants.iter().copied();
                async move {
                    claim_tenants(neo4j, view, tenants, &mut claimed)
                        .await
                        .map(|()| claimed)
                }
            },
        )
        .await?;
        self.owned = claimed;
        Ok(())
    }

    /// Report the filler's failed passes as a LanceDB outage ([`super::outage::watch_filler`]).
    fn watch_filler(&mut self) {
        let filler = self.filler.as_ref();
        super::outage::watch_filler(filler, &mut self.filler_seen, &self.metrics);
    }

    /// While idle, probe the stores every few seconds ([`super::outage::probe`]).
    async fn probe(&mut self) {
        if self.probed.elapsed() >= Duration::from_secs(2) {
            self.probed = Instant::now();
            super::outage::probe(&self.neo4j, &self.consumer, &self.metrics).await;
        }
    }

    /// Consumer lag per partition (best effort: a failed metadata call leaves the old values).
    fn record_lag(&self) {
        if let Ok(marks) = self.consumer.high_watermarks() {
            for ((topic, partition), end) in marks {
                let next = self
                    .next_offsets
                    .get(&(topic.clone(), partition))
                    .copied()
                    .unwrap_or(0);
                self.metrics.set_lag(&topic, partition, (end - next).max(0));
            }
        }
    }

    async fn seal(
        &mut self,
        epoch: u64,
        batch: Batch,
    ) -> Result<Vec<(epigraph_operators::GraphElement, isize)>> {
        let sealed = Instant::now();
        let dataflow = self.dataflow.clone();
        let step = self.config.run.clock_step_ms.max(1) as i64;
        let wall = epigraph_schemas::now_millis();
        let fixed = self.config.run.clock_at_ms;
        let now = fixed.unwrap_or(wall - wall.rem_euclid(step));
        let input = EpochInput {
            epoch,
            updates: batch.updates,
            verdicts: batch.verdicts,
            reviews: batch.reviews,
            amendments: batch.amendments,
            usages: self.usage.advance(batch.usages, now),
            now: Some(Now(now)),
        };
        let output = tokio::task::spawn_blocking(move || dataflow.process(input)).await??;
        self.metrics.epochs.inc();
        self.metrics
            .epoch_seconds
            .observe(sealed.elapsed().as_secs_f64());
        self.metrics.count_elements(&output.updates);
        Ok(output.updates)
    }

    /// One feedback record: a verdict or review replaces the one in force on its key, a
    /// tombstone withdraws it; a retrieval feeds the usage term of the priorities.
    fn absorb_feedback(
        &mut self,
        key: &str,
        payload: Option<&[u8]>,
        batch: &mut Batch,
    ) -> Result<(), InvalidMessage> {
        let Some(payload) = payload else {
            if let Some(previous) = self.verdicts.remove(key) {
                batch.verdicts.push((previous, -1));
            }
            if let Some(previous) = self.reviews.remove(key) {
                batch.reviews.push((previous, -1));
            }
            if let Some(previous) = self.amendments.remove(key) {
                batch.amendments.push((previous, -1));
            }
            return Ok(());
        };
        let feedback = Feedback::parse(payload)?;
        // A record written before ids were escaped in keys keeps its old key.
        if !feedback.keyed_by(key) {
            return Err(InvalidMessage::FeedbackKey {
                key: key.to_string(),
                expected: feedback.key(),
            });
        }
        match feedback {
            Feedback::Identity {
                tenant,
                a,
                b,
                verdict,
            } => {
                let next = Verdict {
                    tenant,
                    a,
                    b,
                    same: verdict == IdentityVerdict::Same,
                };
                if self.verdicts.get(key) == Some(&next) {
                    return Ok(());
                }
                if let Some(previous) = self.verdicts.insert(key.to_string(), next.clone()) {
                    batch.verdicts.push((previous, -1));
                }
                batch.verdicts.push((next, 1));
            }
            Feedback::Review {
                tenant,
                relation,
                from,
                to,
                verdict,
                ..
            } => {
                let next = Review {
                    tenant,
                    rel_type: relation.rel_type().to_string(),
                    from,
                    to,
                    verdict,
                };
                if self.reviews.get(key) == Some(&next) {
                    return Ok(());
                }
                if let Some(previous) = self.reviews.insert(key.to_string(), next.clone()) {
                    batch.reviews.push((previous, -1));
                }
                batch.reviews.push((next, 1));
            }
            Feedback::Amend {
                tenant,
                node,
                memory_type,
                text,
                valid_from,
                valid_until,
                ..
            } => {
                let next = Amendment {
                    tenant,
                    node,
                    // Validated: one of the nine names.
                    memory_type: memory_type.as_deref().and_then(parse_type),
                    text,
                    valid_from,
                    valid_until,
                };
                if self.amendments.get(key) == Some(&next) {
                    return Ok(());
                }
                if let Some(previous) = self.amendments.insert(key.to_string(), next.clone()) {
                    batch.amendments.push((previous, -1));
                }
                batch.amendments.push((next, 1));
            }
            Feedback::Usage {
                tenant,
                node_id,
                at,
            } => {
                self.report.usage_records += 1;
                batch.usages.push(Usage {
                    tenant,
                    id: node_id,
                    at_ms: at,
                });
            }
        }
        Ok(())
    }

    /// Decode and validate one message into `batch`; bad ones go to the dead-letter topic.
    async fn absorb(&mut self, message: RawMessage, batch: &mut Batch) -> Result<()> {
        self.report.messages += 1;
        self.metrics.event(&message.topic);
        self.next_offsets.insert(
            (message.topic.clone(), message.partition),
            message.offset + 1,
        );
        let key = message
            .key
            .as_deref()
            .map(String::from_utf8_lossy)
            .unwrap_or_default()
            .into_owned();
        let outcome = if message.topic == self.config.kafka.feedback_topic() {
            self.absorb_feedback(&key, message.payload.as_deref(), batch)
        } else {
            let Some(payload) = message.payload.as_deref() else {
                batch.updates.extend(self.state.remove(&key));
                return Ok(());
            };
            // The registry away is an outage (ridden out, reported, never dead-lettered); after
            // `run.outage_max_secs` the run stops uncommitted and a restart reads it again.
            let (decoder, during) = (&self.decoder, "decoding through the schema registry");
            let decoded = retry(&self.metrics, self.policy, during, || {
                decoder.decode(payload)
            });
            let decoded = match decoded.await {
                Err(error) if !error.is_bad_input() => {
                    return Err(anyhow::Error::new(error).context(format!(
                        "decoding {} (is the schema registry up?)",
                        message.location()
                    )));
                }
                decoded => decoded,
            };
            decoded
                .map_err(InvalidMessage::Decode)
                .and_then(|event| validate(&key, event))
                .map(|event| batch.updates.extend(self.state.apply(&event)))
        };
        let Err(error) = outcome else {
            return Ok(());
        };
        let reason = error.to_string();
        let payload = message.payload.as_deref().unwrap_or_default();
        if self
            .acknowledged
            .get(&(message.topic.clone(), message.partition))
            .is_some_and(|o| message.offset < *o)
        {
            // Dead-lettered by the run that acknowledged this offset: replay skips it.
            return Ok(());
        }
        let tenant = key
            .split_once('/')
            .map(|(tenant, _)| tenant)
            .filter(|t| valid_tenant(t));
        let max = self.config.kafka.dead_letter_max_bytes;
        let letter = DeadLetter::new(&reason, "run", tenant, &message.location(), payload, max);
        warn!(location = %letter.location, %reason, "dead-lettering a bad message");
        retry(
            &self.metrics,
            self.policy,
            "publishing a dead letter",
            || self.producer.dead_letter(&letter),
        )
        .await?;
        self.report.dead_lettered += 1;
        self.metrics.dead_letters.inc();
        Ok(())
    }
}

/// Why a message read by the run is dead-lettered: the text is the dead letter's reason.
#[derive(Debug, thiserror::Error)]
pub(crate) enum InvalidMessage {
    /// A feedback payload that is not a valid record.
    #[error(transparent)]
    Feedback(#[from] FeedbackError),
    /// A feedback record under another key than its own.
    #[error("key {key:?} does not match the feedback record's key {expected:?}")]
    FeedbackKey {
        /// The message's key.
        key: String,
        /// The record's key.
        expected: String,
    },
    /// An event payload that does not decode.
    #[error(transparent)]
    Decode(EventDecodeError),
    /// An event whose tenant is not a valid tenant name.
    #[error("invalid tenant {tenant:?}")]
    InvalidTenant {
        /// The tenant as written.
        tenant: String,
    },
    /// An event without a `source_id`.
    #[error("empty source_id")]
    EmptySourceId,
    /// An event under another key than its tenant/source_id.
    #[error("key {key:?} does not match the event's tenant/source_id {expected:?}")]
    EventKey {
        /// The message's key.
        key: String,
        /// The key of the event's tenant and source_id.
        expected: String,
    },
}

pub(crate) fn validate(key: &str, event: SourceEvent) -> Result<SourceEvent, InvalidMessage> {
    if !valid_tenant(&event.tenant) {
        return Err(InvalidMessage::InvalidTenant {
            tenant: event.tenant,
        });
    }
    if event.source_id.is_empty() {
        return Err(InvalidMessage::EmptySourceId);
    }
    let expected = event_key(&event.tenant, &event.source_id);
    if key != expected {
        return Err(InvalidMessage::EventKey {
            key: key.to_string(),
            expected,
        });
    }
    Ok(event)
}

fn caught_up(next: &Offsets, marks: &Offsets) -> bool {
    marks
        .iter()
        .all(|(partition, end)| *end == 0 || next.get(partition).is_some_and(|n| n >= end))
}

fn count_writes(writes: &SinkWrites) -> usize {
    let g = &writes.graph;
    g.upsert_nodes.len()
        + g.upsert_relations.len()
        + g.delete_nodes.len()
        + g.delete_relations.len()
}

#[cfg(test)]
mod tests;
