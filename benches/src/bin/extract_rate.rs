//! Throughput of the extraction dataflow (`extract_graph`: per-source extraction plus the
//! cross-source aggregation of entities, relations and mentions) per timely worker, on a
//! generated organisation.
//!
//! ```text
//! cargo run --release --bin extract-rate -- --events 20000 --workers 1 --workers 2
//! ```
//! Prints one JSON line per worker count: events, MB of text, seconds, MB/s, MB/s per worker.

use std::sync::{Arc, Mutex};
use std::time::Instant;

use clap::Parser;
use differential_dataflow::input::Input;
use epigraph_benches::generated_sources;
use epigraph_operators::{Extractor, SourceVersion, extract_graph};
use timely::dataflow::ProbeHandle;

/// Measures extract_graph throughput.
#[derive(Debug, Parser)]
struct Args {
    /// Generated events.
    #[arg(long, default_value_t = 20_000)]
    events: u64,
    /// Generator seed.
    #[arg(long, default_value_t = 7)]
    seed: u64,
    /// Worker counts to measure (repeatable).
    #[arg(long, default_values_t = [1usize, 2])]
    workers: Vec<usize>,
}

fn main() {
    let args = Args::parse();
    let sources = Arc::new(generated_sources(args.seed, args.events));
    let bytes: usize = sources.iter().map(|s| s.body.len()).sum();
    for &workers in &args.workers {
        let outputs = Arc::new(Mutex::new(0usize));
        let started = Instant::now();
        let (shared, counter) = (sources.clone(), outputs.clone());
        timely::execute(timely::Config::process(workers), move |worker| {
            let extractor = Arc::new(Extractor::bundled());
            let probe = ProbeHandle::new();
            let counter = counter.clone();
            let mut input = worker.dataflow::<u64, _, _>(|scope| {
                let (input, docs) = scope.new_collection::<SourceVersion, isize>();
                extract_graph(docs, extractor)
                    .inspect_batch(move |_, updates| {
                        *counter.lock().expect("counter") += updates.len();
                    })
                    .probe_with(&probe);
                input
            });
            // Each worker feeds its share; the dataflow exchanges what it aggregates.
            for (i, source) in shared.iter().enumerate() {
                if i % worker.peers() == worker.index() {
                    input.insert(source.clone());
                }
            }
            input.advance_to(1);
            input.flush();
            worker.step_while(|| probe.less_than(input.time()));
        })
        .expect("timely runs");
        let seconds = started.elapsed().as_secs_f64();
        let mb = bytes as f64 / 1e6;
        println!(
            "{}",
            serde_json::json!({
                "events": sources.len(),
                "workers": workers,
                "mb_text": (mb * 100.0).round() / 100.0,
                "seconds": (seconds * 1000.0).round() / 1000.0,
                "mb_per_s": (mb / seconds * 100.0).round() / 100.0,
                "mb_per_s_per_worker": (mb / seconds / workers as f64 * 100.0).round() / 100.0,
                "output_updates": *outputs.lock().expect("counter"),
            })
        );
    }
}
