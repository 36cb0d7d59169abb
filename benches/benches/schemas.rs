//! Avro single-object encode/decode of source events, and the slice extractor.

use criterion::{Criterion, Throughput, criterion_group, criterion_main};
use epigraph_benches::synthetic_body;
use epigraph_operators::{SourceVersion, elements_of};
use epigraph_schemas::{SourceEvent, SourceKind, decode_event, encode_event};

fn codec(c: &mut Criterion) {
    let event = SourceEvent::upsert(
        "acme",
        SourceKind::Document,
        "notes/a.md",
        Some("A".into()),
        synthetic_body(1, 2048),
        0,
    );
    let bytes = encode_event(&event).expect("encodes");
    let mut group = c.benchmark_group("avro");
    group.throughput(Throughput::Elements(1));
    group.bench_function("encode_2KiB_event", |b| {
        b.iter(|| encode_event(std::hint::black_box(&event)).unwrap())
    });
    group.bench_function("decode_2KiB_event", |b| {
        b.iter(|| decode_event(std::hint::black_box(&bytes)).unwrap())
    });
    group.finish();
}

fn extract(c: &mut Criterion) {
    let body = synthetic_body(2, 64 * 1024);
    let version = SourceVersion {
        tenant: "acme".into(),
        source_id: "a.md".into(),
        kind: SourceKind::Document,
        version: "v".into(),
        title: None,
        body,
        occurred_at: None,
    };
    let mut group = c.benchmark_group("extract");
    group.throughput(Throughput::Bytes(version.body.len() as u64));
    group.bench_function("elements_of_64KiB", |b| {
        b.iter(|| elements_of(std::hint::black_box(&version)))
    });
    group.finish();
}

criterion_group!(benches, codec, extract);
criterion_main!(benches);
