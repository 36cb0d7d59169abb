//! Tests of the vector filler, the embedding cache and the vector index upkeep.

use std::sync::atomic::{AtomicUsize, Ordering};

use super::*;
use crate::embed::EmbedConfig;
use crate::lance::vector_cache::VectorCache;
use crate::lance::{LanceConfig, MemoryRow, SearchMode, SearchRequest};

#[test]
fn the_cache_evicts_the_least_recently_used_tenth() {
    let mut cache = VectorCache::new(10);
    for i in 0..10 {
        cache.put(format!("h{i}"), Arc::new(vec![i as f32]));
    }
    assert!(
        cache.get("h0").is_some(),
        "h0 is used again: h1 is now the oldest"
    );
    cache.put("h10".into(), Arc::new(vec![10.0]));
    assert_eq!(cache.len(), 10);
    assert!(cache.get("h1").is_none());
    assert!(cache.get("h0").is_some() && cache.get("h10").is_some());
    let mut none = VectorCache::new(0);
    none.put("h".into(), Arc::new(vec![1.0]));
    assert!(none.get("h").is_none());
}

/// Counts what the sink reports.
#[derive(Debug, Default)]
struct Counts {
    embedded: AtomicUsize,
    batches: AtomicUsize,
    reused: AtomicUsize,
    backlog: AtomicUsize,
}

impl VectorObserver for Counts {
    fn backlog(&self, rows: usize, _oldest: Duration) {
        self.backlog.store(rows, Ordering::SeqCst);
    }
    fn embedded(&self, texts: usize, _took: Duration) {
        self.embedded.fetch_add(texts, Ordering::SeqCst);
        self.batches.fetch_add(1, Ordering::SeqCst);
    }
    fn reused(&self, rows: usize) {
        self.reused.fetch_add(rows, Ordering::SeqCst);
    }
}

pub(crate) fn row(id: &str, source_version: &str, text: &str) -> MemoryRow {
    MemoryRow {
        id: id.into(),
        tenant: "acme".into(),
        memory_type: "DECISION".into(),
        title: Some("Atlas".into()),
        text: text.into(),
        source_id: "atlas.md".into(),
        source_version: source_version.into(),
        span_start: 0,
        span_end: text.len() as i64,
        t_valid: None,
        t_invalid: None,
        content_hash: format!("{id}-{source_version}"),
    }
}

pub(crate) async fn sink(dir: &std::path::Path, config: LanceConfig) -> LanceSink {
    let embedder = Embedder::load(&EmbedConfig::default())
        .expect("model files (deploy/local/services.sh model)");
    LanceSink::open(
        &LanceConfig {
            dir: dir.display().to_string(),
            read_consistency_ms: 0,
            ..config
        },
        Some(Arc::new(embedder)),
    )
    .await
    .unwrap()
}

async fn hits(sink: &LanceSink, mode: SearchMode, query: &str) -> usize {
    sink.search(&SearchRequest {
        query: query.into(),
        k: 10,
        tenant: "acme".into(),
        mode,
        types: Vec::new(),
        candidates: None,
    })
    .await
    .unwrap()
    .len()
}

/// Rows are written without vectors (BM25 finds them, vector search does not), the
/// filler embeds each distinct text once, and an edit that keeps two of three sentences
/// under new row ids embeds only the changed one.
#[tokio::test(flavor = "multi_thread")]
async fn vectors_follow_the_rows_and_unchanged_text_is_never_embedded_again() {
    let dir = tempfile::tempdir().unwrap();
    let counts = Arc::new(Counts::default());
    let sink = sink(dir.path(), LanceConfig::default())
        .await
        .with_observer(counts.clone());
    let first = [
        row("m1", "v1", "We decided to ship Project Atlas in June."),
        row("m2", "v1", "The budget is capped at 40K per month."),
        row("m3", "v1", "Who owns the onboarding flow?"),
        // The same text as m2 in another row: embedded once.
        row("m4", "v1", "The budget is capped at 40K per month."),
    ];
    assert_eq!(
        sink.apply(&first, &[]).await.unwrap(),
        4,
        "written at once, without vectors"
    );
    sink.optimize().await.unwrap();
    assert_eq!(hits(&sink, SearchMode::Text, "Atlas June").await, 1);
    assert_eq!(hits(&sink, SearchMode::Vector, "Atlas June").await, 0);
    assert_eq!(sink.count(Some("vector IS NULL".into())).await.unwrap(), 4);

    let mut filler = sink.spawn_vector_filler().unwrap();
    filler.drained().await.unwrap();
    assert_eq!(sink.count(Some("vector IS NULL".into())).await.unwrap(), 0);
    assert_eq!(
        counts.embedded.load(Ordering::SeqCst),
        3,
        "three distinct texts"
    );
    assert_eq!(
        counts.reused.load(Ordering::SeqCst),
        1,
        "m4 shares m2's text"
    );
    assert_eq!(counts.backlog.load(Ordering::SeqCst), 0);
    assert_eq!(filler.status().filled, 4);
    assert_eq!(
        hits(&sink, SearchMode::Vector, "when does Atlas ship").await,
        4
    );

    // The source is edited: a new version, new row ids, one sentence changed.
    let second = [
        row("n1", "v2", "We decided to ship Project Atlas in June."),
        row("n2", "v2", "The budget is capped at 40K per month."),
        row("n3", "v2", "Dana owns the onboarding flow."),
    ];
    let old: Vec<String> = ["m1", "m2", "m3", "m4"].map(String::from).to_vec();
    assert_eq!(
        sink.apply(&second, &old).await.unwrap(),
        1,
        "only the edited row waits"
    );
    assert_eq!(counts.reused.load(Ordering::SeqCst), 3);
    filler.drained().await.unwrap();
    assert_eq!(
        counts.embedded.load(Ordering::SeqCst),
        4,
        "one more text embedded"
    );
    assert_eq!(sink.count(None).await.unwrap(), 3);
    assert_eq!(sink.count(Some("vector IS NULL".into())).await.unwrap(), 0);

    // Deleted and written again: the in-memory cache still has the vector.
    sink.apply(&[], &["n3".to_string()]).await.unwrap();
    let again = [row("n3", "v3", "Dana owns the onboarding flow.")];
    assert_eq!(sink.apply(&again, &[]).await.unwrap(), 0);
    assert_eq!(counts.embedded.load(Ordering::SeqCst), 4);
}

/// A restart finds the rows an earlier run left without vectors.
#[tokio::test(flavor = "multi_thread")]
async fn rows_left_without_vectors_are_embedded_after_a_restart() {
    let dir = tempfile::tempdir().unwrap();
    {
        let sink = sink(dir.path(), LanceConfig::default()).await;
        let rows = [
            row("a", "v1", "Project Nimbus moves to Frankfurt."),
            row("b", "v1", "The launch slipped to September."),
        ];
        sink.apply(&rows, &[]).await.unwrap();
        // No filler: the process "stops" with both rows waiting.
    }
    let counts = Arc::new(Counts::default());
    let sink = sink(dir.path(), LanceConfig::default())
        .await
        .with_observer(counts.clone());
    assert_eq!(sink.count(Some("vector IS NULL".into())).await.unwrap(), 2);
    let mut filler = sink.spawn_vector_filler().unwrap();
    filler.drained().await.unwrap();
    assert_eq!(sink.count(Some("vector IS NULL".into())).await.unwrap(), 0);
    assert_eq!(counts.embedded.load(Ordering::SeqCst), 2);
}

/// Sentences different enough to have distinct vectors.
fn sentences(n: usize, offset: usize) -> Vec<String> {
    let subjects = ["Atlas", "Nimbus", "Orion", "Vega", "Lyra", "Draco"];
    let facts = [
        "ships in June",
        "moved its servers to Frankfurt",
        "is owned by the platform team",
        "has a budget of 40K per month",
        "was paused after the security review",
    ];
    (offset..offset + n)
        .map(|i| {
            format!(
                "Project {} {} (note {i}).",
                subjects[i % subjects.len()],
                facts[(i / subjects.len()) % facts.len()]
            )
        })
        .collect()
}

/// The vector index is created once enough rows have vectors and retrained when they
/// doubled; compaction merges the small fragments every epoch and vector batch leaves.
#[tokio::test(flavor = "multi_thread")]
async fn the_vector_index_follows_the_threshold_and_compaction_merges_fragments() {
    let dir = tempfile::tempdir().unwrap();
    let config = LanceConfig {
        vector_index_min_rows: 12,
        embed_batch_rows: 4,
        ..LanceConfig::default()
    };
    let sink = sink(dir.path(), config).await;
    let mut filler = sink.spawn_vector_filler().unwrap();
    // Eight epochs of one row each: below the threshold, no index.
    for (i, text) in sentences(8, 0).iter().enumerate() {
        sink.apply(&[row(&format!("r{i}"), "v1", text)], &[])
            .await
            .unwrap();
    }
    filler.drained().await.unwrap();
    sink.optimize().await.unwrap();
    assert_eq!(sink.vector_index_rows().await.unwrap(), None);
    // Eight more: 16 rows with vectors, at least 12, so the index is trained on all.
    let more: Vec<MemoryRow> = sentences(8, 8)
        .iter()
        .enumerate()
        .map(|(i, text)| row(&format!("r{}", i + 8), "v1", text))
        .collect();
    sink.apply(&more, &[]).await.unwrap();
    filler.drained().await.unwrap();
    sink.optimize().await.unwrap();
    assert_eq!(sink.vector_index_rows().await.unwrap(), Some((16, 0)));
    // Vector search through the index still finds the closest text first.
    let found = sink
        .search(&SearchRequest {
            query: "Project Orion moved its servers to Frankfurt".into(),
            k: 3,
            tenant: "acme".into(),
            mode: SearchMode::Vector,
            types: Vec::new(),
            candidates: Some(3),
        })
        .await
        .unwrap();
    assert_eq!(found.len(), 3);
    assert!(
        found[0]
            .text
            .starts_with("Project Orion moved its servers to Frankfurt"),
        "{found:?}"
    );

    // Eight more rows (24 < 2 × 16): folded into the index, not retrained.
    let more: Vec<MemoryRow> = sentences(8, 16)
        .iter()
        .enumerate()
        .map(|(i, text)| row(&format!("r{}", i + 16), "v1", text))
        .collect();
    sink.apply(&more, &[]).await.unwrap();
    filler.drained().await.unwrap();
    sink.optimize().await.unwrap();
    assert_eq!(sink.vector_index_rows().await.unwrap(), Some((24, 0)));
    assert_eq!(
        sink.shared.trained_on[0].load(std::sync::atomic::Ordering::Relaxed),
        16
    );
    // Eight more (32 ≥ 2 × 16): retrained on all 32.
    let more: Vec<MemoryRow> = sentences(8, 24)
        .iter()
        .enumerate()
        .map(|(i, text)| row(&format!("r{}", i + 24), "v1", text))
        .collect();
    sink.apply(&more, &[]).await.unwrap();
    filler.drained().await.unwrap();
    sink.optimize().await.unwrap();
    assert_eq!(sink.vector_index_rows().await.unwrap(), Some((32, 0)));
    assert_eq!(
        sink.shared.trained_on[0].load(std::sync::atomic::Ordering::Relaxed),
        32
    );

    let before = sink.fragments().await.unwrap();
    // Epochs and vector batches write fragments (those whose rows were all rewritten are
    // dropped; how many are left depends on how the filler's batches fell).
    assert!(before > 1, "{before} fragments");
    let compaction = sink.compact().await.unwrap();
    let after = sink.fragments().await.unwrap();
    eprintln!("{before} fragments before, {after} after: {compaction:?}");
    assert!(after < before, "{before} → {after}");
    assert_eq!(
        before - after,
        compaction.fragments_removed - compaction.fragments_added
    );
    assert_eq!(sink.count(None).await.unwrap(), 32);
    assert_eq!(sink.count(Some("vector IS NULL".into())).await.unwrap(), 0);
    assert_eq!(sink.vector_index_rows().await.unwrap(), Some((32, 0)));
}

/// Chunks are written without vectors, filled after the memory rows, get the full-text
/// index, and unchanged chunk text is not embedded again.
#[tokio::test(flavor = "multi_thread")]
async fn chunks_get_vectors_after_the_memory_rows_and_a_full_text_index() {
    let dir = tempfile::tempdir().unwrap();
    let counts = Arc::new(Counts::default());
    let sink = sink(dir.path(), LanceConfig::default())
        .await
        .with_observer(counts.clone());
    let chunking = crate::lance::Chunking {
        tokens: 10,
        overlap_tokens: 2,
    };
    let body = "Project Atlas ships in June. The budget is 40K per month. Dana owns it.";
    let chunks = chunking.chunks("acme", "a.md", "v1", Some("Atlas"), body);
    // 0..40 "Project Atlas ships in June. The budget" and 33..71 "budget is 40K …".
    assert_eq!(chunks.len(), 2, "{chunks:?}");
    assert_eq!(sink.apply_chunks(&chunks, &[]).await.unwrap(), 2);
    sink.apply(&[row("m1", "v1", "Project Atlas ships in June.")], &[])
        .await
        .unwrap();
    let mut filler = sink.spawn_vector_filler().unwrap();
    filler.drained().await.unwrap();
    assert_eq!(
        sink.count_chunks(Some("vector IS NULL".into()))
            .await
            .unwrap(),
        0
    );
    assert_eq!(filler.status().filled, 3);
    sink.optimize().await.unwrap();
    let indices = sink.chunks.list_indices().await.unwrap();
    assert!(indices.iter().any(|i| i.columns == ["text"]), "{indices:?}");
    let embedded = counts.embedded.load(Ordering::SeqCst);
    // A new version with the same text: new ids, vectors from the cache.
    let again = chunking.chunks("acme", "a.md", "v2", Some("Atlas"), body);
    let old: Vec<String> = chunks.iter().map(|c| c.id.clone()).collect();
    assert_eq!(sink.apply_chunks(&again, &old).await.unwrap(), 0);
    assert_eq!(sink.count_chunks(None).await.unwrap(), 2);
    assert_eq!(counts.embedded.load(Ordering::SeqCst), embedded);
}

/// Chunks get their own vector index at the threshold and answer hybrid, text and vector
/// searches, tenant-scoped (Mind Graph's naive-chunk fallback in the query service).
#[tokio::test(flavor = "multi_thread")]
async fn chunks_get_a_vector_index_and_are_searched_within_their_tenant() {
    let dir = tempfile::tempdir().unwrap();
    let config = LanceConfig {
        vector_index_min_rows: 6,
        ..LanceConfig::default()
    };
    let sink = sink(dir.path(), config).await;
    let chunking = crate::lance::Chunking {
        tokens: 12,
        overlap_tokens: 0,
    };
    let body = "The frobnicator limit is forty widgets per hour. \
                Deployments happen on Tuesdays after the review. \
                The cafeteria serves lunch from noon until two. \
                Backups are copied to the cold storage vault nightly. \
                Invoices are paid within thirty days of receipt.";
    let mine = chunking.chunks("acme", "ops.md", "v1", Some("Ops"), body);
    assert!(mine.len() >= 5, "{mine:?}");
    let theirs = chunking.chunks(
        "other",
        "x.md",
        "v1",
        None,
        "The frobnicator limit is nine widgets per hour.",
    );
    sink.apply_chunks(&mine, &[]).await.unwrap();
    sink.apply_chunks(&theirs, &[]).await.unwrap();
    let mut filler = sink.spawn_vector_filler().unwrap();
    filler.drained().await.unwrap();
    assert_eq!(sink.chunk_vector_index_rows().await.unwrap(), None);
    sink.optimize().await.unwrap();
    let total = mine.len() + theirs.len();
    assert_eq!(
        sink.chunk_vector_index_rows().await.unwrap(),
        Some((total, 0)),
        "trained on every chunk with a vector"
    );
    for mode in [SearchMode::Hybrid, SearchMode::Text, SearchMode::Vector] {
        let hits = sink
            .search_chunks(&SearchRequest {
                query: "frobnicator widgets per hour".into(),
                k: 3,
                tenant: "acme".into(),
                mode,
                types: Vec::new(),
                candidates: None,
            })
            .await
            .unwrap();
        assert!(!hits.is_empty() && hits.len() <= 3, "{mode:?}: {hits:?}");
        assert!(hits[0].text.contains("frobnicator"), "{mode:?}: {hits:?}");
        assert!(hits.iter().all(|h| h.source_id == "ops.md"), "{hits:?}");
        assert_eq!(hits[0].char_start, 0);
        assert_eq!(hits[0].title.as_deref(), Some("Ops"));
        match mode {
            SearchMode::Text => assert!(hits[0].bm25.is_some() && hits[0].cosine.is_none()),
            SearchMode::Vector => assert!(hits[0].cosine.is_some() && hits[0].bm25.is_none()),
            SearchMode::Hybrid => assert!(hits[0].bm25.is_some() && hits[0].cosine.is_some()),
        }
    }
}

/// The static table distilled from the bundled model.
fn static_embedder() -> Arc<Embedder> {
    Arc::new(
        Embedder::load(&EmbedConfig {
            kind: crate::embed::EmbedKind::Static,
            ..EmbedConfig::default()
        })
        .expect("model files (deploy/local/services.sh model)"),
    )
}

/// A bulk backfill embedded by `fast`: a budget row `m1` and a lunch row `m2`, vectors filled.
async fn static_backfill(config: &LanceConfig, fast: &Arc<Embedder>) -> LanceSink {
    let backfill = LanceSink::open(config, Some(fast.clone())).await.unwrap();
    let rows = [
        row(
            "m1",
            "v1",
            "The frobnicator budget is capped at forty thousand euros.",
        ),
        row("m2", "v1", "Lunch is served in the cafeteria at noon."),
    ];
    backfill.apply(&rows, &[]).await.unwrap();
    backfill
        .spawn_vector_filler()
        .unwrap()
        .drained()
        .await
        .unwrap();
    backfill
}

/// The vector search that should find the budget row `m1`.
fn budget_query() -> SearchRequest {
    SearchRequest {
        query: "how large is the frobnicator budget".into(),
        k: 1,
        tenant: "acme".into(),
        mode: SearchMode::Vector,
        types: Vec::new(),
        candidates: None,
    }
}

/// The bulk-backfill path: rows embedded by the static table are found through it (the
/// query embedded by the table, matched against those rows only) until the transformer's
/// filler upgraded them, behind any row without a vector; the static filler never
/// downgrades a transformer's vector.
#[tokio::test(flavor = "multi_thread")]
async fn static_vectors_of_a_backfill_are_searched_then_upgraded_by_the_model() {
    let dir = tempfile::tempdir().unwrap();
    let config = LanceConfig {
        dir: dir.path().display().to_string(),
        read_consistency_ms: 0,
        ..LanceConfig::default()
    };
    let fast = static_embedder();
    let backfill = static_backfill(&config, &fast).await;
    let by = |model: &str| format!("vector_model = '{model}'");
    assert_eq!(backfill.count(Some(by(fast.model_id()))).await.unwrap(), 2);

    let model = Embedder::load(&EmbedConfig::default()).unwrap();
    let model_id = model.model_id().to_string();
    let live = LanceSink::open(&config, Some(Arc::new(model)))
        .await
        .unwrap()
        .also_embedded_by(fast.clone());
    let found = live.search(&budget_query()).await.unwrap();
    assert_eq!(
        found[0].id, "m1",
        "found through the static table: {found:?}"
    );
    // A new row has no vector: it is filled before the static rows are upgraded.
    live.apply(&[row("m3", "v1", "Deployments happen on Tuesdays.")], &[])
        .await
        .unwrap();
    let order = live.waiting(Target::Memory, None).await.unwrap();
    let mut order: Vec<(i64, String)> = order;
    order.sort_unstable();
    assert_eq!(order[0].1, "m3", "{order:?}");
    assert!(order[1].0 >= UPGRADE && order[2].0 >= UPGRADE);
    live.spawn_vector_filler()
        .unwrap()
        .upgraded()
        .await
        .unwrap();
    assert_eq!(
        live.count(Some(by(&model_id))).await.unwrap(),
        3,
        "upgraded"
    );
    let hashes = live.state().await.unwrap();
    assert_eq!(hashes.len(), 3);
    let upgraded = live.search(&budget_query()).await.unwrap();
    assert_eq!(upgraded[0].id, "m1");
    // The static filler leaves the transformer's vectors alone.
    let again = LanceSink::open(&config, Some(fast)).await.unwrap();
    assert!(
        again
            .waiting(Target::Memory, None)
            .await
            .unwrap()
            .is_empty()
    );
    assert_eq!(again.count(Some(by(&model_id))).await.unwrap(), 3);
}

/// A query service opened before a bulk backfill takes the static table on afterwards
/// (every clone sees it), finds the backfill's rows through it, and searches a table with
/// a model only while that table holds the model's vectors.
#[tokio::test(flavor = "multi_thread")]
async fn a_reader_opened_before_a_backfill_takes_the_static_table_on() {
    let dir = tempfile::tempdir().unwrap();
    let config = LanceConfig {
        dir: dir.path().display().to_string(),
        read_consistency_ms: 0,
        ..LanceConfig::default()
    };
    let model = Arc::new(Embedder::load(&EmbedConfig::default()).unwrap());
    let live = LanceSink::open(&config, Some(model.clone())).await.unwrap();
    let clone_before = live.clone();
    let fast = static_embedder();
    assert!(live.embed_queries_also_with(fast.clone()));
    assert!(!live.embed_queries_also_with(fast.clone()), "taken on once");
    assert!(
        !live.embed_queries_also_with(model.clone()),
        "not its own model"
    );
    assert_eq!(clone_before.other_query_models(), vec![fast.model_id()]);
    assert!(
        !live
            .holds_vectors_of(&live.table, fast.model_id())
            .await
            .unwrap()
    );

    static_backfill(&config, &fast).await;
    assert!(
        live.holds_vectors_of(&live.table, fast.model_id())
            .await
            .unwrap(),
        "the backfill's rows are seen at once with read_consistency_ms = 0"
    );
    assert!(
        !live
            .holds_vectors_of(&live.chunks, fast.model_id())
            .await
            .unwrap(),
        "no chunk has a static vector"
    );
    assert!(
        !live
            .holds_vectors_of(&live.table, model.model_id())
            .await
            .unwrap(),
        "no row has the transformer's vector yet"
    );
    let found = clone_before.search(&budget_query()).await.unwrap();
    assert_eq!(found[0].id, "m1", "{found:?}");
    assert_eq!(found[0].vector_rank, Some(1));
}
