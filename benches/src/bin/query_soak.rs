//! `query-soak`: the query service under a steady load for minutes — errors, p50/p99 latency
//! and the resident memory of the `epigraph serve` process per window, to show whether they stay
//! stable — alone, or while a live `epigraph run` ingests at a stated rate (issue 24, "Load").
//!
//! The load is open-loop: a request is sent every `1 / --rate` seconds whatever the answers do
//! (a closed loop would slow down with the server and hide a backlog), `--context-share` of them
//! `POST /v1/context`, the rest `GET /v1/search`, with queries drawn from the corpus' own
//! statements. An error is any answer that is not `2xx`, a transport failure, or no answer
//! within 30 s; they are counted by kind (`errors_by_kind`: `overloaded_503` refused by the
//! admission control, `timed_out` (408/504 or the client's 30 s), `other_status`, `transport`).
//!
//! Setup: `epigraph gen` writes an organisation of `--preload + --ingest-rate × --seconds`
//! events into `$EPIGRAPH_HOME/soak-corpus-<n>`; the first `--preload` are published and built
//! (`epigraph run --until-idle`, static-table vectors) into their own topics (`--prefix`) and
//! LanceDB folder (`$EPIGRAPH_HOME/soak-lancedb`, emptied first); then `epigraph serve` starts
//! as its own process (its RSS is read from `/proc`), and with `--ingest-rate` a live
//! `epigraph run` follows the topics while the rest of the corpus is published at that rate.
//!
//! ```text
//! query-soak --rate 20 --seconds 300                      # the service alone
//! query-soak --rate 20 --seconds 300 --ingest-rate 100    # under a concurrent ingest
//! query-soak --rate 5 --seconds 1800 --ingest-rate 100     # the pipeline for 30 minutes
//! query-soak … --plot soak.svg                              # and its picture
//! ```
//!
//! Per window (`--window`, 30 s): requests, errors, p50/p99 of searches and of context blocks,
//! the largest RSS of `serve` and of the live `run`, and the run's largest consumer lag (its
//! `/metrics`), so a leak or a backlog shows as a trend; the whole run's figures at the end, as
//! one JSON object on stdout.

use std::path::PathBuf;
use std::process::{Child, Command, Stdio};
use std::sync::Arc;
use std::time::{Duration, Instant};

use anyhow::{Context, Result, bail};
use clap::Parser;
use epigraph_sources::kafka::{EventProducer, ensure_topics};
use serde_json::{Value, json};
use tokio::sync::Mutex;

#[derive(Debug, Parser)]
#[command(about = "The query service under a steady load: errors, latency and RSS over time")]
struct Args {
    /// Requests per second (open loop).
    #[arg(long, default_value_t = 20.0)]
    rate: f64,
    /// How long the load lasts, in seconds.
    #[arg(long, default_value_t = 300)]
    seconds: u64,
    /// Share of the requests that are `POST /v1/context` (the rest are searches).
    #[arg(long, default_value_t = 0.3)]
    context_share: f64,
    /// Events published per second to a live `epigraph run` during the load (0: no ingest).
    #[arg(long, default_value_t = 0.0)]
    ingest_rate: f64,
    /// Events built before the load starts.
    #[arg(long, default_value_t = 4000)]
    preload: u64,
    /// Length of a reporting window, in seconds.
    #[arg(long, default_value_t = 30)]
    window: u64,
    /// Tenant of the soak (a run with ingest adds `-live`).
    #[arg(long, default_value = "soak")]
    tenant: String,
    /// Topic prefix of the soak's own topics (a run with ingest adds `-live`).
    #[arg(long, default_value = "soak")]
    prefix: String,
    /// Also draw the windows (latency, RSS, lag against minutes) as an SVG here.
    #[arg(long)]
    plot: Option<PathBuf>,
    /// Run nothing: draw `--plot` from the summary (the last stdout line) of an earlier soak.
    #[arg(long, requires = "plot")]
    plot_from: Option<PathBuf>,
}

/// What the sampler read every 2 s.
struct Probe {
    /// Seconds since the load started.
    at: f64,
    /// RSS of `epigraph serve`, MiB.
    serve_rss: Option<f64>,
    /// RSS of the live `epigraph run`, MiB.
    run_rss: Option<f64>,
    /// The live run's consumer lag (messages not yet read, summed over topics).
    lag: Option<f64>,
}

/// One answered (or failed) request.
struct Sample {
    /// Seconds since the load started, when it was sent.
    at: f64,
    /// Latency in ms.
    ms: f64,
    outcome: Outcome,
    context: bool,
}

/// How a request ended: the errors apart, since they mean different things (a refusal by the
/// admission control is the service protecting itself; a timeout is a request it could not
/// serve in time).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Outcome {
    /// `2xx`, body read.
    Ok,
    /// `503 Service Unavailable`: refused by the admission control (or a store down).
    Overloaded,
    /// `408`/`504` from the service, or no answer within the client's 30 s.
    TimedOut,
    /// Any other status.
    OtherStatus,
    /// The connection failed.
    Transport,
}

impl Outcome {
    const ERRORS: [(Outcome, &'static str); 4] = [
        (Outcome::Overloaded, "overloaded_503"),
        (Outcome::TimedOut, "timed_out"),
        (Outcome::OtherStatus, "other_status"),
        (Outcome::Transport, "transport"),
    ];
}

/// The errors of some samples, by kind, as a JSON object.
fn errors_by_kind<'a>(samples: impl Iterator<Item = &'a Sample> + Clone) -> Value {
    let mut by_kind = serde_json::Map::new();
    for (outcome, name) in Outcome::ERRORS {
        let n = samples.clone().filter(|s| s.outcome == outcome).count();
        by_kind.insert(name.into(), n.into());
    }
    Value::Object(by_kind)
}

fn percentile(sorted: &[f64], p: f64) -> f64 {
    if sorted.is_empty() {
        return 0.0;
    }
    let i = ((sorted.len() as f64 - 1.0) * p).round() as usize;
    (sorted[i] * 10.0).round() / 10.0
}

/// Resident memory of a process in MiB (`VmRSS` of `/proc/<pid>/status`).
fn rss_mib(pid: u32) -> Option<f64> {
    let status = std::fs::read_to_string(format!("/proc/{pid}/status")).ok()?;
    let kib: f64 = status
        .lines()
        .find(|l| l.starts_with("VmRSS:"))?
        .split_whitespace()
        .nth(1)?
        .parse()
        .ok()?;
    Some((kib / 1024.0 * 10.0).round() / 10.0)
}

fn free_port() -> Result<u16> {
    Ok(std::net::TcpListener::bind("127.0.0.1:0")?
        .local_addr()?
        .port())
}

/// A child process killed (and waited for) when dropped.
struct Process(Child);

impl Drop for Process {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

struct Setup {
    bin: PathBuf,
    envs: Vec<(&'static str, String)>,
    out: PathBuf,
}

impl Setup {
    fn command(&self, args: &[&str]) -> Command {
        let mut command = Command::new(&self.bin);
        command
            .args(args)
            .envs(self.envs.iter().map(|(k, v)| (*k, v.as_str())));
        command
    }

    fn run(&self, args: &[&str]) -> Result<String> {
        let envs = self.envs.iter().map(|(k, v)| (*k, v.as_str()));
        epigraph_benches::run_epigraph(&self.bin, envs, args)
    }

    fn spawn(&self, name: &str, args: &[&str]) -> Result<Process> {
        let child = self
            .command(args)
            .stdin(Stdio::null())
            .stdout(std::fs::File::create(self.out.join(format!("{name}.out")))?)
            .stderr(std::fs::File::create(self.out.join(format!("{name}.err")))?)
            .spawn()
            .with_context(|| format!("spawning epigraph {args:?}"))?;
        Ok(Process(child))
    }
}

/// Queries: the first five words of the corpus' statements (deterministic).
fn queries(lines: &[String]) -> Vec<String> {
    lines
        .iter()
        .filter_map(|l| serde_json::from_str::<Value>(l).ok())
        .filter_map(|e| e["body"].as_str().map(str::to_string))
        .flat_map(|body| {
            body.split(['.', '\n'])
                .map(|s| s.split_whitespace().take(5).collect::<Vec<_>>().join(" "))
                .filter(|q| q.len() > 12)
                .collect::<Vec<_>>()
        })
        .step_by(7)
        .take(500)
        .collect()
}

async fn wait_healthy(client: &reqwest::Client, url: &str, child: &mut Process) -> Result<()> {
    let deadline = Instant::now() + Duration::from_secs(180);
    loop {
        if let Ok(r) = client.get(url).send().await
            && r.status().is_success()
        {
            return Ok(());
        }
        if let Some(status) = child.0.try_wait()? {
            bail!("{url}: the process exited ({status})");
        }
        if Instant::now() > deadline {
            bail!("{url} did not answer within 3 minutes");
        }
        tokio::time::sleep(Duration::from_millis(250)).await;
    }
}

/// The consumer lag a live run reports on `/metrics` (summed over topics).
async fn lag(client: &reqwest::Client, metrics: &str) -> Option<f64> {
    let text = client
        .get(format!("http://{metrics}/metrics"))
        .timeout(Duration::from_secs(2))
        .send()
        .await
        .ok()?
        .text()
        .await
        .ok()?;
    Some(
        text.lines()
            .filter(|l| l.starts_with("epigraph_consumer_lag{"))
            .filter_map(|l| l.rsplit(' ').next()?.parse::<f64>().ok())
            .sum(),
    )
}

#[tokio::main(flavor = "multi_thread")]
async fn main() -> Result<()> {
    let args = Args::parse();
    if let (Some(from), Some(path)) = (&args.plot_from, &args.plot) {
        let text =
            std::fs::read_to_string(from).with_context(|| format!("reading {}", from.display()))?;
        let summary: Value = serde_json::from_str(text.lines().last().unwrap_or_default())
            .with_context(|| format!("{}: not a query-soak summary", from.display()))?;
        let windows = summary["windows"].as_array().cloned().unwrap_or_default();
        epigraph_benches::soak_plot::plot_windows(&windows, path, &soak_title(&summary))?;
        eprintln!("plot: {}", path.display());
        return Ok(());
    }
    let home = epigraph_sinks::embed::default_home();
    let live = args.ingest_rate > 0.0;
    let prefix = if live {
        format!("{}-live", args.prefix)
    } else {
        args.prefix.clone()
    };
    // A tenant belongs to one topic prefix per Neo4j database: the live soak has its own.
    let tenant = if live {
        format!("{}-live", args.tenant)
    } else {
        args.tenant.clone()
    };
    let lance_dir = home.join(format!("{prefix}-lancedb"));
    let state_dir = home.join(format!("{prefix}-state"));
    let out = home.join(format!("{prefix}-logs"));
    for dir in [&lance_dir, &state_dir] {
        let _ = std::fs::remove_dir_all(dir);
    }
    std::fs::create_dir_all(&out)?;
    let run_metrics = format!("127.0.0.1:{}", free_port()?);
    let setup = Setup {
        bin: epigraph_tests::binary(),
        envs: vec![
            ("EPIGRAPH_KAFKA__TOPIC_PREFIX", prefix.clone()),
            ("EPIGRAPH_LANCEDB__DIR", lance_dir.display().to_string()),
            ("EPIGRAPH_STATE_DIR", state_dir.display().to_string()),
            ("EPIGRAPH_MODEL__KIND", "static".into()),
            ("EPIGRAPH_RUN__METRICS_LISTEN", run_metrics.clone()),
            ("RUST_LOG", "warn".into()),
            ("NO_COLOR", "1".into()),
        ],
        out: out.clone(),
    };
    // Topics from an earlier soak under the same prefix would be read again: start clean.
    let mut config =
        epigraph::config::EpigraphConfig::load(None).map_err(|e| anyhow::anyhow!("{e}"))?;
    config.kafka.topic_prefix = prefix.clone();
    let kafka = config.kafka.clone();
    epigraph_sources::kafka::delete_topics(&kafka).await.ok();
    ensure_topics(&kafka).await?;

    let live_events = (args.ingest_rate * args.seconds as f64).ceil() as u64;
    let total = args.preload + live_events;
    let corpus = home.join(format!("soak-corpus-{total}"));
    let started = Instant::now();
    if !corpus.join("events.jsonl").exists() {
        eprintln!("setup: generating {total} events");
        setup.run(&[
            "gen",
            corpus.to_str().context("utf-8")?,
            "--seed",
            "13",
            "--scale",
            &total.to_string(),
        ])?;
    }
    let lines: Vec<String> = std::fs::read_to_string(corpus.join("events.jsonl"))?
        .lines()
        .map(str::to_string)
        .collect();
    let split = (args.preload as usize).min(lines.len());
    let (first, rest) = lines.split_at(split);
    let preload = out.join("preload.jsonl");
    std::fs::write(&preload, first.join("\n") + "\n")?;
    eprintln!("setup: publishing and building {} events", first.len());
    setup.run(&[
        "ingest",
        "events",
        preload.to_str().context("utf-8")?,
        "--tenant",
        &tenant,
    ])?;
    setup.run(&["run", "--until-idle"])?;
    eprintln!("setup: {:.0} s", started.elapsed().as_secs_f64());

    let port = free_port()?;
    let base = format!("http://127.0.0.1:{port}");
    let client = reqwest::Client::builder()
        .pool_max_idle_per_host(256)
        .timeout(Duration::from_secs(30))
        .build()?;
    let mut serve = setup.spawn(
        "serve",
        &["serve", "--listen", &format!("127.0.0.1:{port}")],
    )?;
    wait_healthy(&client, &format!("{base}/healthz"), &mut serve).await?;
    let serve_pid = serve.0.id();
    let mut run = None;
    if live {
        let mut child = setup.spawn("run", &["run"])?;
        wait_healthy(
            &client,
            &format!("http://{run_metrics}/metrics"),
            &mut child,
        )
        .await?;
        run = Some(child);
    }
    let run_pid = run.as_ref().map(|p| p.0.id());
    let queries = Arc::new(queries(first));
    if queries.is_empty() {
        bail!("no queries: the corpus has no text");
    }
    // Warm up (first requests load the model and open tables), not counted.
    for q in queries.iter().take(5) {
        client
            .get(format!("{base}/v1/search"))
            .query(&[("q", q.as_str()), ("tenant", &tenant)])
            .send()
            .await?;
    }

    let samples: Arc<Mutex<Vec<Sample>>> = Arc::default();
    let probes: Arc<Mutex<Vec<Probe>>> = Arc::default();
    let load_started = Instant::now();
    let until = load_started + Duration::from_secs(args.seconds);
    // RSS of both processes and the live run's consumer lag, every 2 s.
    let sampler = {
        let (probes, client, metrics) = (probes.clone(), client.clone(), run_metrics.clone());
        tokio::spawn(async move {
            while Instant::now() < until {
                let at = load_started.elapsed().as_secs_f64();
                let lag = match run_pid {
                    Some(_) => lag(&client, &metrics).await,
                    None => None,
                };
                probes.lock().await.push(Probe {
                    at,
                    serve_rss: rss_mib(serve_pid),
                    run_rss: run_pid.and_then(rss_mib),
                    lag,
                });
                tokio::time::sleep(Duration::from_secs(2)).await;
            }
        })
    };
    // The concurrent ingest: the rest of the corpus at its rate, in batches every 100 ms.
    let publisher = if live {
        let producer = EventProducer::new(&kafka)?;
        let (rest, tenant, rate) = (rest.to_vec(), tenant.clone(), args.ingest_rate);
        Some(tokio::spawn(async move {
            let now = epigraph_schemas::now_millis();
            let mut sent = 0usize;
            let mut refused = 0usize;
            while Instant::now() < until && sent < rest.len() {
                let due = ((load_started.elapsed().as_secs_f64() * rate) as usize).min(rest.len());
                let mut batch = Vec::new();
                for line in &rest[sent..due] {
                    match epigraph::serve::webhook::parse_event(line.as_bytes(), &tenant, now) {
                        Ok(event) => batch.push(event),
                        Err(_) => refused += 1,
                    }
                }
                sent = due;
                if !batch.is_empty() {
                    producer.publish(batch, |_| {}).await?;
                }
                tokio::time::sleep(Duration::from_millis(100)).await;
            }
            anyhow::Ok((sent, refused))
        }))
    } else {
        None
    };
    // The load: one request every 1 / rate s.
    let interval = Duration::from_secs_f64(1.0 / args.rate.max(0.01));
    let mut requests = tokio::task::JoinSet::new();
    let mut i = 0u64;
    loop {
        let due = load_started + interval * i as u32;
        if due >= until {
            break;
        }
        tokio::time::sleep_until(due.into()).await;
        let context = ((i as f64 * args.context_share).floor()
            - ((i as f64 - 1.0) * args.context_share).floor())
            >= 1.0;
        let q = queries[i as usize % queries.len()].clone();
        let (client, base, tenant, samples) = (
            client.clone(),
            base.clone(),
            tenant.clone(),
            samples.clone(),
        );
        requests.spawn(async move {
            let sent = Instant::now();
            let answer = if context {
                client
                    .post(format!("{base}/v1/context?tenant={tenant}"))
                    .json(&json!({"query": q, "budget_tokens": 2000}))
                    .send()
                    .await
            } else {
                client
                    .get(format!("{base}/v1/search"))
                    .query(&[("q", q.as_str()), ("k", "10"), ("tenant", tenant.as_str())])
                    .send()
                    .await
            };
            let outcome = match answer {
                Ok(r) if r.status().is_success() => match r.bytes().await {
                    Ok(_) => Outcome::Ok,
                    Err(e) if e.is_timeout() => Outcome::TimedOut,
                    Err(_) => Outcome::Transport,
                },
                Ok(r) => match r.status().as_u16() {
                    503 => Outcome::Overloaded,
                    408 | 504 => Outcome::TimedOut,
                    _ => Outcome::OtherStatus,
                },
                Err(e) if e.is_timeout() => Outcome::TimedOut,
                Err(_) => Outcome::Transport,
            };
            samples.lock().await.push(Sample {
                at: sent.duration_since(load_started).as_secs_f64(),
                ms: sent.elapsed().as_secs_f64() * 1000.0,
                outcome,
                context,
            });
        });
        while requests.try_join_next().is_some() {}
        i += 1;
    }
    while requests.join_next().await.is_some() {}
    sampler.await?;
    let published = match publisher {
        Some(task) => Some(task.await??),
        None => None,
    };
    let lag_at_end = if live {
        lag(&client, &run_metrics).await
    } else {
        None
    };
    drop(run);
    drop(serve);

    // Per window: requests, errors, p50/p99 of searches and of context blocks, RSS (max).
    let samples = samples.lock().await;
    let probes = probes.lock().await;
    let windows = args.seconds.div_ceil(args.window);
    let mut report = Vec::new();
    for w in 0..windows {
        let (from, to) = ((w * args.window) as f64, ((w + 1) * args.window) as f64);
        let inside: Vec<&Sample> = samples
            .iter()
            .filter(|s| s.at >= from && s.at < to)
            .collect();
        let sorted = |context: bool| {
            let mut v: Vec<f64> = inside
                .iter()
                .filter(|s| s.context == context)
                .map(|s| s.ms)
                .collect();
            v.sort_by(f64::total_cmp);
            v
        };
        let (search, context) = (sorted(false), sorted(true));
        let max = |pick: fn(&Probe) -> Option<f64>| {
            probes
                .iter()
                .filter(|p| p.at >= from && p.at < to)
                .filter_map(pick)
                .fold(None, |a: Option<f64>, b| Some(a.map_or(b, |a| a.max(b))))
        };
        let line = json!({
            "window_s": [from, to.min(args.seconds as f64)],
            "requests": inside.len(),
            "errors": inside.iter().filter(|s| s.outcome != Outcome::Ok).count(),
            "errors_by_kind": errors_by_kind(inside.iter().copied()),
            "search_p50_ms": percentile(&search, 0.5), "search_p99_ms": percentile(&search, 0.99),
            "context_p50_ms": percentile(&context, 0.5), "context_p99_ms": percentile(&context, 0.99),
            "serve_rss_mib": max(|p| p.serve_rss),
            "run_rss_mib": max(|p| p.run_rss),
            "run_lag_max": max(|p| p.lag),
        });
        eprintln!("{line}");
        report.push(line);
    }
    let all = |context: bool| {
        let mut v: Vec<f64> = samples
            .iter()
            .filter(|s| s.context == context)
            .map(|s| s.ms)
            .collect();
        v.sort_by(f64::total_cmp);
        v
    };
    let (search, context) = (all(false), all(true));
    let summary = json!({
        "profile": if cfg!(debug_assertions) { "dev" } else { "release" },
        "rate_per_s": args.rate,
        "seconds": args.seconds,
        "preloaded_events": first.len(),
        "ingest_rate_per_s": args.ingest_rate,
        "published_live": published.map(|p| p.0),
        "refused_live": published.map(|p| p.1),
        "run_consumer_lag_at_end": lag_at_end,
        "requests": samples.len(),
        "errors": samples.iter().filter(|s| s.outcome != Outcome::Ok).count(),
        "errors_by_kind": errors_by_kind(samples.iter()),
        "search_p50_ms": percentile(&search, 0.5), "search_p99_ms": percentile(&search, 0.99),
        "context_p50_ms": percentile(&context, 0.5), "context_p99_ms": percentile(&context, 0.99),
        "serve_rss_mib_first_window": report.first().and_then(|w| w["serve_rss_mib"].as_f64()),
        "serve_rss_mib_last_window": report.last().and_then(|w| w["serve_rss_mib"].as_f64()),
        "run_rss_mib_first_window": report.first().and_then(|w| w["run_rss_mib"].as_f64()),
        "run_rss_mib_last_window": report.last().and_then(|w| w["run_rss_mib"].as_f64()),
        "logs": out.display().to_string(),
        "windows": report,
    });
    println!("{summary}");
    if let Some(path) = &args.plot {
        epigraph_benches::soak_plot::plot_windows(&report, path, &soak_title(&summary))?;
        eprintln!("plot: {}", path.display());
    }
    Ok(())
}

/// The plot's title, from a soak's summary.
fn soak_title(summary: &Value) -> String {
    let ingest = summary["ingest_rate_per_s"].as_f64().unwrap_or(0.0);
    format!(
        "query-soak: {} req/s for {} s{} ({} build)",
        summary["rate_per_s"],
        summary["seconds"],
        if ingest > 0.0 {
            format!(", ingest {ingest} events/s")
        } else {
            String::new()
        },
        summary["profile"].as_str().unwrap_or("?")
    )
}
