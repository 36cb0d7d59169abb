//! `crash-trials`: `kill -9` of `epigraph run` at seeded random moments while a generated
//! organisation is ingested, then a final `run --until-idle`, and both stores compared with a
//! clean run of the same input (issue 24, "Faults", first bullet).
//!
//! 1. `epigraph gen --seed S --scale N` writes the corpus; its lines are turned into events
//!    once, with one fixed ingestion time, so that every view gets byte-identical input (each
//!    view's topics are read back and hashed to check it).
//! 2. **Clean runs**: the corpus is published to a fresh view and `run --until-idle` consumes
//!    it (its duration D is the window of the random kills); a second clean view is compared
//!    with the first (are two runs of the same input bitwise equal, K and vectors included?),
//!    and is then rebuilt once with `epigraph rebuild` (timed: the window of the rebuild
//!    kills; compared again).
//! 3. **Trials**, each in a fresh view (topic prefix, consumer group, LanceDB and state
//!    folders): `epigraph run` starts, the corpus is published into it in `--batches` batches
//!    (live epochs), and the run is killed (`SIGKILL`) and restarted at the trial's moments;
//!    after the last kill and the last batch, `run --until-idle`; both stores are dumped and
//!    compared with the clean run. Kinds, in turn: `random` (1..=`--max-kills` kills uniform
//!    in [0.5 s, D]), `filler` (a kill while the vector filler has a backlog, after the
//!    restore and with every offset committed), `compaction` (compaction after every epoch and
//!    every idle second; kills 0–120 ms after a compaction began) and `rebuild` (a random kill,
//!    then, after the comparison, `epigraph rebuild` killed at a random moment in its clean
//!    duration, a final `run --until-idle` and a second comparison). `--kinds clearing`: a
//!    `rebuild` trial whose rebuild is killed 0–300 ms after its first log line, while it
//!    clears the views.
//!
//! Which phase a kill hit is read from the process's log and `/metrics` at that moment:
//! start-up, restore (epoch 0 and its reconciliation writes), live epochs, compaction (between
//! lance's `compacting` of the first table and `compacted the memory table`), vector filler
//! (everything committed, rows waiting for vectors), idle.
//!
//! Build with `cargo build --workspace --all-targets --locked`, then
//! `target/debug/crash-trials --trials 20 --seed 24 --scale 250` (Kafka, Neo4j up). Prints a
//! Markdown table and writes `results.json` and `results.md` under `--out`.

mod dump;
mod proc;

use std::collections::hash_map::DefaultHasher;
use std::hash::{Hash, Hasher};
use std::path::PathBuf;
use std::process::Command;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant};

use anyhow::{Context, Result, bail};
use clap::{Parser, ValueEnum};
use epigraph_schemas::SourceEvent;
use epigraph_sinks::neo4j::{Neo4jConfig, Neo4jSink};
use epigraph_sources::kafka::{
    EventConsumer, EventProducer, KafkaConfig, delete_topics, ensure_topics,
};
use indicatif::{ProgressBar, ProgressStyle};
use serde::Serialize;
use serde_json::{Value, json};

use dump::{Diff, Dump};
use proc::{Setup, Watched};

#[derive(Clone, Copy, Debug, PartialEq, Eq, ValueEnum, Serialize)]
#[serde(rename_all = "lowercase")]
enum Kind {
    Random,
    Filler,
    Compaction,
    Rebuild,
    /// A `rebuild` trial whose rebuild is killed while it clears the views: 0–300 ms after
    /// its first log line (not in the default rotation).
    Clearing,
}

#[derive(Debug, Parser)]
#[command(
    about = "kill -9 of epigraph run at seeded random moments; both stores compared with a clean run"
)]
struct Args {
    /// Trials (each in its own view).
    #[arg(long, default_value_t = 20)]
    trials: usize,
    /// Seed of the corpus and of the kill moments.
    #[arg(long, default_value_t = 24)]
    seed: u64,
    /// Generated events (`epigraph gen --scale`).
    #[arg(long, default_value_t = 250)]
    scale: u64,
    /// Kinds of trial, taken in turn (default: random, filler, compaction, rebuild).
    #[arg(long, value_delimiter = ',')]
    kinds: Vec<Kind>,
    /// Most kills of a `random` trial (it draws 1..=this).
    #[arg(long, default_value_t = 3)]
    max_kills: u64,
    /// Batches the corpus is published in, into the running pipeline.
    #[arg(long, default_value_t = 6)]
    batches: usize,
    /// Pause before the first batch and between batches, in ms.
    #[arg(long, default_value_t = 1500)]
    batch_gap_ms: u64,
    /// Largest difference of a vector component accepted (0: bitwise equal). The transformer's
    /// vector of a text varies in its last bits (≈ 1e-7) with the other texts of its batch.
    #[arg(long, default_value_t = 1e-6)]
    vector_tolerance: f32,
    /// Longest a final `run --until-idle` may take, in s.
    #[arg(long, default_value_t = 900)]
    limit_s: u64,
    /// Working folder (corpus, logs, dumps). Default `/tmp/crash-trials-<pid>`.
    #[arg(long)]
    out: Option<PathBuf>,
    /// Keep every view's topics and LanceDB folder (its Neo4j nodes are always deleted: the
    /// next view holds the same tenant).
    #[arg(long)]
    keep: bool,
    /// Only delete these views (topic prefixes, comma separated: the Neo4j nodes and topics an
    /// interrupted invocation left), then exit.
    #[arg(long, value_delimiter = ',')]
    remove_views: Vec<String>,
}

/// SplitMix64: the kill moments of trial `i` depend on `--seed` and `i` only.
#[derive(Debug)]
struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^ (z >> 31)
    }
    fn range(&mut self, a: f64, b: f64) -> f64 {
        a + (b - a) * ((self.next() >> 11) as f64 / (1u64 << 53) as f64)
    }
    fn below(&mut self, n: u64) -> u64 {
        self.next() % n.max(1)
    }
}

/// When a kill fires.
#[derive(Clone, Copy, Debug)]
enum Trigger {
    /// Seconds after the trial started.
    At(f64),
    /// `delay` s after the filler is seen with a backlog, everything published and committed.
    Filler { delay: f64 },
    /// `delay` s after the first compaction that begins `after` s into the trial.
    Compaction { after: f64, delay: f64 },
}

#[derive(Clone, Debug, Serialize)]
struct Kill {
    /// Seconds since the trial started.
    at: f64,
    /// Seconds since the killed process started.
    uptime: f64,
    trigger: String,
    phase: String,
    detail: String,
}

#[derive(Clone, Debug, Serialize)]
struct Outcome {
    trial: String,
    kind: Kind,
    kills: Vec<Kill>,
    input_identical: bool,
    exact: bool,
    result: String,
    final_run: Value,
    diff: Option<Diff>,
    seconds: f64,
}

struct Ctx {
    args: Args,
    bin: PathBuf,
    out: PathBuf,
    base: String,
    tenant: String,
    events: Arc<Vec<SourceEvent>>,
    graph: neo4rs::Graph,
    clean: Dump,
    digest: (u64, u64, usize),
    window: f64,
    rebuild_window: f64,
}

fn kafka(prefix: &str) -> KafkaConfig {
    KafkaConfig {
        topic_prefix: prefix.to_string(),
        group_id: prefix.to_string(),
        ..KafkaConfig::default()
    }
}

/// Publish `events` in `batches`, the first after `gap`, then every `gap`, on a thread of its
/// own; the flag is set once every event is acknowledged.
fn publish(
    prefix: &str,
    events: Arc<Vec<SourceEvent>>,
    batches: usize,
    gap: Duration,
) -> (Arc<AtomicBool>, std::thread::JoinHandle<Result<()>>) {
    let done = Arc::new(AtomicBool::new(false));
    let (flag, config) = (done.clone(), kafka(prefix));
    let handle = std::thread::spawn(move || -> Result<()> {
        let runtime = tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()?;
        runtime.block_on(async {
            let producer = EventProducer::new(&config)?;
            let size = events.len().div_ceil(batches.max(1)).max(1);
            for chunk in events.chunks(size) {
                tokio::time::sleep(gap).await;
                producer.publish(chunk.to_vec(), |_| {}).await?;
            }
            producer.flush()?;
            anyhow::Ok(())
        })?;
        flag.store(true, Ordering::SeqCst);
        Ok(())
    });
    (done, handle)
}

/// The view's input: a hash of every key's decoded events in offset order (the record: what
/// the run's state depends on), a hash of every message with its offset (the topics byte for byte)
/// and the number of messages.
/// Every message is listed in `<dir>/input.tsv` (topic, partition, offset, key, hash of the
/// payload).
async fn input_digest(prefix: &str, dir: &std::path::Path) -> Result<(u64, u64, usize)> {
    let mut config = kafka(prefix);
    config.group_id = format!("{prefix}-digest");
    let consumer = EventConsumer::from_beginning(&config, &config.all_event_topics())?;
    let mut messages = Vec::new();
    consumer
        .read_to_end(Duration::from_secs(30), |m| {
            messages.push((
                m.topic.replacen(prefix, "", 1),
                m.partition,
                m.offset,
                m.key,
                m.payload,
            ))
        })
        .await?;
    messages.sort();
    let mut listing = String::new();
    for (topic, partition, offset, key, payload) in &messages {
        let mut hasher = DefaultHasher::new();
        payload.hash(&mut hasher);
        listing.push_str(&format!(
            "{topic}\t{partition}\t{offset}\t{}\t{:016x}\n",
            String::from_utf8_lossy(key.as_deref().unwrap_or_default()),
            hasher.finish()
        ));
    }
    std::fs::write(dir.join("input.tsv"), listing)?;
    let mut strict = DefaultHasher::new();
    messages.hash(&mut strict);
    // The record compares decoded events: the Avro encoder writes a map (`extras`) in the
    // order of a `HashMap`, so the same event is not always the same bytes.
    let mut per_key: std::collections::BTreeMap<_, Vec<_>> = Default::default();
    for (topic, partition, _, key, payload) in &messages {
        let event = payload.as_deref().map(|bytes| {
            epigraph_schemas::codec::decode_event(bytes)
                .ok()
                .and_then(|event| serde_json::to_string(&event).ok())
                .unwrap_or_else(|| format!("{bytes:?}"))
        });
        per_key
            .entry((topic, partition, key))
            .or_default()
            .push(event);
    }
    let mut record = DefaultHasher::new();
    per_key.hash(&mut record);
    Ok((record.finish(), strict.finish(), messages.len()))
}

async fn dump_view(graph: &neo4rs::Graph, setup: &Setup) -> Result<Dump> {
    let mut dump = Dump::default();
    dump::neo4j(graph, &setup.prefix, &mut dump).await?;
    dump::lance(&setup.lance_dir(), &setup.prefix, &mut dump).await?;
    Ok(dump)
}

/// Delete the view: its Neo4j nodes (always: the next view holds the same tenant, and a tenant
/// belongs to one view), and unless `keep` its topics and folders (logs stay).
async fn remove_view(setup: &Setup, keep: bool) -> Result<()> {
    let sink = Neo4jSink::connect(&Neo4jConfig::default()).await?;
    sink.with_view(&setup.prefix).clear(None).await?;
    if keep {
        return Ok(());
    }
    delete_topics(&kafka(&setup.prefix)).await?;
    let _ = std::fs::remove_dir_all(setup.lance_dir());
    let _ = std::fs::remove_dir_all(setup.dir.join("state"));
    Ok(())
}

fn last_json(path: &std::path::Path) -> Value {
    std::fs::read_to_string(path)
        .unwrap_or_default()
        .lines()
        .rev()
        .find_map(|l| serde_json::from_str(l).ok())
        .unwrap_or(Value::Null)
}

fn log_tail(path: &std::path::Path) -> String {
    let text = std::fs::read_to_string(path).unwrap_or_default();
    let lines: Vec<&str> = text.lines().collect();
    lines[lines.len().saturating_sub(8)..].join("\n")
}

/// Run `epigraph <args>` to its end in the view; its duration and its report (last JSON line).
async fn complete(ctx: &Ctx, setup: &Setup, args: &[&str], name: &str) -> Result<(f64, Value)> {
    let started = Instant::now();
    let process = setup.spawn(args, name)?;
    let status = process.wait(Duration::from_secs(ctx.args.limit_s)).await?;
    let log = setup.dir.join(format!("{name}.log"));
    if !status.success() {
        bail!("epigraph {args:?} failed ({status}):\n{}", log_tail(&log));
    }
    Ok((
        started.elapsed().as_secs_f64(),
        last_json(&log.with_extension("out")),
    ))
}

fn prepare(ctx: &Ctx, name: &str, vars: Vec<(String, String)>) -> Result<Setup> {
    let dir = ctx.out.join(name);
    std::fs::create_dir_all(&dir)?;
    Ok(Setup {
        bin: ctx.bin.clone(),
        prefix: format!("{}-{name}", ctx.base),
        dir,
        vars,
    })
}

/// The phase a kill of `p` hits now, and the figures it was read from.
fn phase(p: &Watched, published: bool, rebuild: bool) -> (String, String) {
    let log = p.log_state();
    let s = p.last_scrape().unwrap_or_default();
    let compacting = log.compactions_begun > log.compactions_ended;
    let phase = if rebuild && !log.cleared {
        "clearing the views"
    } else if !log.restored && !log.serving && !rebuild {
        "start-up"
    } else if !log.restored {
        "restore"
    } else if compacting {
        "compaction"
    } else if rebuild {
        "vector filler"
    } else if s.lag != Some(0.0) {
        "live epochs"
    } else if s.pending > 0.0 {
        "vector filler"
    } else if !published {
        "live, between batches"
    } else {
        "idle"
    };
    let detail = format!(
        "epochs {}, lag {}, vectors pending {}, compactions {} (log: begun {}, ended {})",
        s.epochs,
        s.lag.map_or("-".into(), |l| l.to_string()),
        s.pending,
        s.compactions,
        log.compactions_begun,
        log.compactions_ended
    );
    (phase.to_string(), detail)
}

fn plan(ctx: &Ctx, kind: Kind, rng: &mut Rng) -> Vec<Trigger> {
    let d = ctx.window;
    match kind {
        Kind::Random | Kind::Rebuild | Kind::Clearing => {
            let kills = if kind != Kind::Random {
                1
            } else {
                1 + rng.below(ctx.args.max_kills)
            };
            let mut at: Vec<f64> = (0..kills).map(|_| rng.range(0.5, d)).collect();
            at.sort_by(f64::total_cmp);
            at.into_iter().map(Trigger::At).collect()
        }
        Kind::Filler => {
            let mut plan = Vec::new();
            if rng.below(2) == 1 {
                plan.push(Trigger::At(rng.range(0.5, d / 2.0)));
            }
            plan.push(Trigger::Filler {
                delay: rng.range(0.0, 3.0),
            });
            plan
        }
        Kind::Compaction => {
            let mut after = [rng.range(0.5, d), rng.range(0.5, d)];
            after.sort_by(f64::total_cmp);
            after
                .into_iter()
                .map(|after| Trigger::Compaction {
                    after,
                    delay: rng.range(0.0, 0.12),
                })
                .collect()
        }
    }
}

/// Wait until `trigger` fires for `p` (or a deadline passes): a description of what fired.
async fn fire(
    p: &mut Watched,
    trigger: Trigger,
    started: Instant,
    published: &AtomicBool,
    window: f64,
) -> Result<String> {
    let deadline = Instant::now() + Duration::from_secs_f64(window * 3.0 + 60.0);
    let mut armed: Option<Instant> = None;
    let mut quiet: Option<Instant> = None;
    let mut begun_before: Option<u64> = None;
    loop {
        if let Some(status) = p.exited()? {
            bail!("epigraph run exited by itself ({status})");
        }
        let now = Instant::now();
        if now > deadline {
            return Ok(format!("{trigger:?}: not met in time, killed anyway"));
        }
        let elapsed = started.elapsed().as_secs_f64();
        match trigger {
            Trigger::At(at) => {
                if elapsed >= at {
                    return Ok(format!("at {at:.1} s"));
                }
            }
            Trigger::Filler { delay } => {
                let log = p.log_state();
                let s = p.last_scrape().unwrap_or_default();
                // Restored, no offset uncommitted, rows waiting for vectors: the filler works.
                let settled = log.restored && s.lag == Some(0.0);
                if armed.is_none() && settled && s.pending > 0.0 {
                    armed = Some(now);
                }
                if let Some(t) = armed
                    && now >= t + Duration::from_secs_f64(delay)
                {
                    return Ok(format!("filler backlog seen, +{delay:.2} s"));
                }
                if armed.is_none()
                    && settled
                    && s.pending == 0.0
                    && published.load(Ordering::SeqCst)
                {
                    let since = *quiet.get_or_insert(now);
                    if now.duration_since(since) > Duration::from_secs(10) {
                        return Ok("no filler backlog seen: killed idle".into());
                    }
                } else {
                    quiet = None;
                }
            }
            Trigger::Compaction { after, delay } => {
                if elapsed >= after {
                    let log = p.log_state();
                    let before = *begun_before.get_or_insert(log.compactions_begun);
                    if log.compactions_begun > before
                        && let Some(began) = log.compaction_began
                        && now >= began + Duration::from_secs_f64(delay)
                    {
                        return Ok(format!(
                            "compaction began after {after:.1} s, +{:.0} ms",
                            delay * 1000.0
                        ));
                    }
                }
            }
        }
        tokio::time::sleep(Duration::from_millis(5)).await;
    }
}

async fn compare(ctx: &Ctx, setup: &Setup) -> Result<(bool, Diff)> {
    let digest = input_digest(&setup.prefix, &setup.dir).await?;
    let dump = dump_view(&ctx.graph, setup).await?;
    Ok((
        digest.0 == ctx.digest.0,
        dump::diff(&ctx.clean, &dump, ctx.args.vector_tolerance),
    ))
}

fn outcome(
    name: String,
    kind: Kind,
    kills: Vec<Kill>,
    identical: bool,
    final_run: Value,
    diff: Diff,
    started: Instant,
) -> Outcome {
    let exact = diff.exact() && identical;
    let mut result = if !diff.exact() {
        diff.summary()
    } else if diff.max_vector_delta > 0.0 {
        format!("exact (vectors within {:.1e})", diff.max_vector_delta)
    } else {
        "exact".to_string()
    };
    if !identical {
        result.push_str(" (input differs from the clean run's!)");
    }
    Outcome {
        trial: name,
        kind,
        kills,
        input_identical: identical,
        exact,
        result,
        final_run,
        diff: Some(diff),
        seconds: started.elapsed().as_secs_f64(),
    }
}

/// One trial (two outcomes for a `rebuild` trial).
async fn trial(ctx: &Ctx, i: usize, kind: Kind) -> Result<Vec<Outcome>> {
    let started = Instant::now();
    let mut rng = Rng(ctx.args.seed ^ (i as u64 + 1).wrapping_mul(0xD1B5_4A32_D192_ED03));
    let vars = if kind == Kind::Compaction {
        vec![
            ("EPIGRAPH_LANCEDB__COMPACT_EVERY_EPOCHS".into(), "1".into()),
            ("EPIGRAPH_LANCEDB__COMPACT_EVERY_SECS".into(), "1".into()),
        ]
    } else {
        Vec::new()
    };
    let name = format!("t{i:02}");
    let setup = prepare(ctx, &name, vars)?;
    ensure_topics(&kafka(&setup.prefix)).await?;
    let plan = plan(ctx, kind, &mut rng);
    let gap = Duration::from_millis(ctx.args.batch_gap_ms);
    let started_trial = Instant::now();
    let (published, publisher) = publish(&setup.prefix, ctx.events.clone(), ctx.args.batches, gap);
    let mut process = Some(setup.spawn(&["run"], "run-0")?);
    let mut kills = Vec::new();
    for (n, trigger) in plan.iter().enumerate() {
        let mut p = process.take().context("a running process")?;
        let fired = match fire(&mut p, *trigger, started_trial, &published, ctx.window).await {
            Ok(fired) => fired,
            Err(error) => bail!(
                "{error}:\n{}",
                log_tail(&setup.dir.join(format!("run-{n}.log")))
            ),
        };
        let (phase, detail) = phase(&p, published.load(Ordering::SeqCst), false);
        let (at, uptime) = (
            started_trial.elapsed().as_secs_f64(),
            p.started.elapsed().as_secs_f64(),
        );
        p.kill9()?;
        kills.push(Kill {
            at,
            uptime,
            trigger: fired,
            phase,
            detail,
        });
        if n + 1 < plan.len() {
            process = Some(setup.spawn(&["run"], &format!("run-{}", n + 1))?);
        }
    }
    while !publisher.is_finished() {
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    publisher
        .join()
        .map_err(|_| anyhow::anyhow!("publisher panicked"))??;
    let (_, report) = complete(ctx, &setup, &["run", "--until-idle"], "final").await?;
    let (identical, diff) = compare(ctx, &setup).await?;
    let mut outcomes = vec![outcome(
        name.clone(),
        kind,
        kills,
        identical,
        report,
        diff,
        started,
    )];
    if kind == Kind::Rebuild || kind == Kind::Clearing {
        let started = Instant::now();
        let mut at = rng.range(0.05, 1.0) * ctx.rebuild_window;
        let clearing = kind == Kind::Clearing;
        let delay = rng.range(0.0, 0.3);
        let mut p = setup.spawn(&["rebuild", "--tenant", &ctx.tenant], "rebuild")?;
        let mut finished = false;
        loop {
            if clearing {
                let log = p.log_state();
                match log.first_line {
                    Some(first) if Instant::now() >= first + Duration::from_secs_f64(delay) => {
                        at = p.started.elapsed().as_secs_f64();
                        break;
                    }
                    _ => {}
                }
            } else if p.started.elapsed().as_secs_f64() >= at {
                break;
            }
            if p.exited()?.is_some() {
                finished = true;
                break;
            }
            tokio::time::sleep(Duration::from_millis(5)).await;
        }
        let (phase, detail) = if finished {
            ("finished before the kill".to_string(), String::new())
        } else {
            phase(&p, true, true)
        };
        let uptime = p.started.elapsed().as_secs_f64();
        p.kill9()?;
        let kill = Kill {
            at: uptime,
            uptime,
            trigger: if clearing {
                format!(
                    "{:.0} ms after the rebuild's first log line",
                    delay * 1000.0
                )
            } else {
                format!("rebuild at {at:.1} s")
            },
            phase,
            detail,
        };
        let (_, report) =
            complete(ctx, &setup, &["run", "--until-idle"], "final-after-rebuild").await?;
        let (identical, diff) = compare(ctx, &setup).await?;
        outcomes.push(outcome(
            format!("{name}b"),
            kind,
            vec![kill],
            identical,
            report,
            diff,
            started,
        ));
    }
    remove_view(&setup, ctx.args.keep).await?;
    Ok(outcomes)
}

fn table(outcomes: &[Outcome]) -> String {
    let mut md = String::from(
        "| trial | kind | kills: moment (s), process uptime (s), phase | final run: reconciled writes, vectors embedded | result |\n|---|---|---|---|---|\n",
    );
    for o in outcomes {
        let kills: Vec<String> = o
            .kills
            .iter()
            .map(|k| format!("{:.1} ({:.1}) {}", k.at, k.uptime, k.phase))
            .collect();
        md.push_str(&format!(
            "| {} | {} | {} | {}, {} | {} |\n",
            o.trial,
            serde_json::to_value(o.kind)
                .unwrap_or_default()
                .as_str()
                .unwrap_or(""),
            if kills.is_empty() {
                "-".into()
            } else {
                kills.join("; ")
            },
            o.final_run["reconciled_writes"],
            o.final_run["vectors_embedded"],
            o.result
        ));
    }
    md
}

/// A line above the bar, or on stderr when the bar is hidden (not a terminal).
fn say(bar: &ProgressBar, line: String) {
    if bar.is_hidden() {
        eprintln!("{line}");
    } else {
        bar.println(line);
    }
}

#[tokio::main(flavor = "multi_thread")]
async fn main() -> Result<()> {
    let args = Args::parse();
    let bin = epigraph_benches::epigraph_binary();
    if !args.remove_views.is_empty() {
        for prefix in &args.remove_views {
            let setup = Setup {
                bin: bin.clone(),
                prefix: prefix.clone(),
                dir: std::env::temp_dir().join("crash-trials-removed"),
                vars: Vec::new(),
            };
            remove_view(&setup, false).await?;
            eprintln!("removed view {prefix}");
        }
        return Ok(());
    }
    let pid = std::process::id();
    let out = args
        .out
        .clone()
        .unwrap_or_else(|| PathBuf::from(format!("/tmp/crash-trials-{pid}")));
    std::fs::create_dir_all(&out)?;
    let stamp = epigraph_schemas::now_millis();
    let base = format!("crash{pid}x{}", stamp % 1_000_000);
    let tenant = format!("crashtrials-{pid}");
    let corpus = out.join("corpus");
    let generated = Command::new(&bin)
        .args([
            "gen",
            &corpus.display().to_string(),
            "--seed",
            &args.seed.to_string(),
            "--scale",
            &args.scale.to_string(),
        ])
        .output()?;
    if !generated.status.success() {
        bail!(
            "epigraph gen: {}",
            String::from_utf8_lossy(&generated.stderr)
        );
    }
    // One ingestion time for every view: the events (and their bytes) are the same everywhere.
    let events = std::fs::read_to_string(corpus.join("events.jsonl"))?
        .lines()
        .filter(|l| !l.trim().is_empty())
        .map(|l| {
            epigraph::serve::webhook::parse_event(l.as_bytes(), &tenant, stamp)
                .map_err(|e| anyhow::anyhow!("a generated line does not parse: {e:?}"))
        })
        .collect::<Result<Vec<_>>>()?;
    let events = Arc::new(events);
    let mut ctx = Ctx {
        args,
        bin,
        out: out.clone(),
        base,
        tenant,
        events: events.clone(),
        graph: epigraph_tests::neo4j(),
        clean: Dump::default(),
        digest: (0, 0, 0),
        window: 0.0,
        rebuild_window: 0.0,
    };

    // Two clean runs of the same input, and an uncrashed rebuild of the second.
    let mut clean = Vec::new();
    for name in ["clean-a", "clean-b"] {
        let setup = prepare(&ctx, name, Vec::new())?;
        ensure_topics(&kafka(&setup.prefix)).await?;
        let (_, publisher) = publish(&setup.prefix, events.clone(), 1, Duration::ZERO);
        publisher
            .join()
            .map_err(|_| anyhow::anyhow!("publisher panicked"))??;
        let digest = input_digest(&setup.prefix, &setup.dir).await?;
        let (seconds, report) = complete(&ctx, &setup, &["run", "--until-idle"], "final").await?;
        let dump = dump_view(&ctx.graph, &setup).await?;
        std::fs::write(setup.dir.join("dump.json"), serde_json::to_vec(&dump)?)?;
        if name == "clean-a" {
            remove_view(&setup, ctx.args.keep).await?;
        }
        eprintln!(
            "{name}: run --until-idle {seconds:.1} s, {} messages, {report}\n  {}",
            digest.2,
            dump.sizes()
        );
        clean.push((setup, digest, seconds, dump));
    }
    let (_, a_digest, a_seconds, a_dump) = clean.remove(0);
    let (b_setup, b_digest, _, b_dump) = clean.remove(0);
    let twice = dump::diff(&a_dump, &b_dump, 0.0);
    let twice_text = if twice.exact() && a_digest.0 == b_digest.0 {
        format!(
            "exact (bitwise, K and vectors included; the same events, topics byte-identical: {})",
            a_digest.1 == b_digest.1
        )
    } else {
        format!(
            "{} (max vector delta {}; input identical: {}) {:?}",
            twice.summary(),
            twice.max_vector_delta,
            a_digest.0 == b_digest.0,
            twice.examples
        )
    };
    eprintln!("two clean runs: {twice_text}");
    ctx.clean = a_dump;
    ctx.digest = a_digest;
    ctx.window = a_seconds;
    let tenant = ctx.tenant.clone();
    let (rebuild_seconds, _) =
        complete(&ctx, &b_setup, &["rebuild", "--tenant", &tenant], "rebuild").await?;
    let rebuilt = dump::diff(
        &ctx.clean,
        &dump_view(&ctx.graph, &b_setup).await?,
        ctx.args.vector_tolerance,
    );
    let rebuilt_text = if rebuilt.exact() {
        "exact".to_string()
    } else {
        rebuilt.summary()
    };
    eprintln!("uncrashed rebuild: {rebuild_seconds:.1} s, {rebuilt_text}");
    ctx.rebuild_window = rebuild_seconds;
    remove_view(&b_setup, ctx.args.keep).await?;

    let kinds = if ctx.args.kinds.is_empty() {
        vec![Kind::Random, Kind::Filler, Kind::Compaction, Kind::Rebuild]
    } else {
        ctx.args.kinds.clone()
    };
    let bar = ProgressBar::new(ctx.args.trials as u64);
    bar.set_style(
        ProgressStyle::with_template("trials [{bar:30}] {pos}/{len} ({elapsed}, eta {eta}) {msg}")
            .expect("valid template")
            .progress_chars("=> "),
    );
    let mut outcomes: Vec<Outcome> = Vec::new();
    for i in 0..ctx.args.trials {
        let kind = kinds[i % kinds.len()];
        let started = Instant::now();
        match trial(&ctx, i, kind).await {
            Ok(result) => {
                for o in &result {
                    say(
                        &bar,
                        format!(
                            "{} {:?}: kills {:?} → {}",
                            o.trial,
                            o.kind,
                            o.kills
                                .iter()
                                .map(|k| format!("{:.1}s {}", k.at, k.phase))
                                .collect::<Vec<_>>(),
                            o.result
                        ),
                    );
                }
                outcomes.extend(result);
            }
            Err(error) => {
                say(&bar, format!("t{i:02} {kind:?}: error {error:#}"));
                outcomes.push(Outcome {
                    trial: format!("t{i:02}"),
                    kind,
                    kills: Vec::new(),
                    input_identical: false,
                    exact: false,
                    result: format!("error: {error:#}").replace('\n', " / "),
                    final_run: Value::Null,
                    diff: None,
                    seconds: started.elapsed().as_secs_f64(),
                });
            }
        }
        let exact = outcomes.iter().filter(|o| o.exact).count();
        bar.set_message(format!("{exact}/{} exact", outcomes.len()));
        bar.inc(1);
    }
    bar.finish();
    let exact = outcomes.iter().filter(|o| o.exact).count();
    let kills: usize = outcomes.iter().map(|o| o.kills.len()).sum();
    let md = format!(
        "clean run: {:.1} s ({} events, scale {}, seed {}); two clean runs: {twice_text}; uncrashed rebuild: {rebuild_seconds:.1} s, {rebuilt_text}\n\n{}\n{exact}/{} comparisons exact after {kills} kills\n",
        ctx.window,
        events.len(),
        ctx.args.scale,
        ctx.args.seed,
        table(&outcomes),
        outcomes.len()
    );
    println!("{md}");
    std::fs::write(out.join("results.md"), &md)?;
    let result = json!({
        "benchmark": "crash-trials",
        "parameters": {"trials": ctx.args.trials, "seed": ctx.args.seed, "scale": ctx.args.scale, "batches": ctx.args.batches, "batch_gap_ms": ctx.args.batch_gap_ms, "vector_tolerance": ctx.args.vector_tolerance, "max_kills": ctx.args.max_kills},
        "clean": {"seconds": ctx.window, "events": events.len(), "messages": ctx.digest.2, "sizes": ctx.clean.sizes(), "twice": twice_text, "rebuild_seconds": rebuild_seconds, "rebuild": rebuilt_text},
        "skipped_columns": dump::SKIPPED_COLUMNS,
        "outcomes": outcomes,
        "exact": exact,
        "kills": kills,
    });
    std::fs::write(
        out.join("results.json"),
        serde_json::to_vec_pretty(&result)?,
    )?;
    eprintln!("results: {}", out.join("results.md").display());
    if exact < outcomes.len() {
        std::process::exit(1);
    }
    Ok(())
}
