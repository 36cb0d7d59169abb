//! Avro single-object encode/decode of source events.

use criterion::{Criterion, Throughput, criterion_group, criterion_main};
use epigraph_benches::synthetic_body;
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

criterion_group!(benches, codec);
criterion_main!(benches);
