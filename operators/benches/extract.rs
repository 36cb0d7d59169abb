//! Throughput of the extraction operator on generated organisation text (MB of text per second
//! on one thread): the pure per-source extractor, with the bundled ontology.
//!
//! `cargo bench --workspace --bench extract`; the dataflow's per-worker rate is measured by
//! `cargo bench --workspace --bench extract_dataflow`.

mod common;

use common::generated_sources;
use criterion::{Criterion, Throughput, criterion_group, criterion_main};
use epigraph_operators::Extractor;

fn extract(c: &mut Criterion) {
    let sources = generated_sources(7, 2_000);
    let bytes: usize = sources.iter().map(|s| s.body.len()).sum();
    let extractor = Extractor::bundled();
    let mut group = c.benchmark_group("extract");
    group.sample_size(10);
    group.throughput(Throughput::Bytes(bytes as u64));
    group.bench_function("generated_2000_events", |b| {
        b.iter(|| {
            sources
                .iter()
                .map(|s| extractor.extract(std::hint::black_box(s)).elements.len())
                .sum::<usize>()
        })
    });
    group.finish();
}

criterion_group!(benches, extract);
criterion_main!(benches);
