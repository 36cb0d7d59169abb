//! An `epigraph` process under watch: its log is read line by line as it is written (to tell
//! which phase a kill hits: restore, compaction, …) and its `/metrics` scraped every 100 ms
//! (consumer lag, vector backlog); `kill -9` on demand.

use std::io::{BufRead, BufReader, Write};
use std::net::TcpListener;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, ExitStatus, Stdio};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

use anyhow::{Context, Result};
use epigraph_tests::{metric_sample, scrape_metrics};

/// What the log has said so far.
#[derive(Clone, Debug, Default)]
pub struct LogState {
    /// `started: Kafka and Neo4j reached`: start-up (the services reached, the model
    /// loaded) is over.
    pub serving: bool,
    /// `views cleared; restoring …` (`epigraph rebuild`).
    pub cleared: bool,
    /// `restored state from the compacted topics`: the restore (epoch 0 and its
    /// reconciliation writes) is over.
    pub restored: bool,
    /// Compactions begun (lance's `event="compacting"` on the chunks table, the first step of
    /// `LanceSink::compact`) and ended (`compacted the memory table`, its last).
    pub compactions_begun: u64,
    pub compactions_ended: u64,
    /// When the last compaction began.
    pub compaction_began: Option<Instant>,
    /// `ERROR` lines.
    pub errors: Vec<String>,
    /// When the first line came.
    pub first_line: Option<Instant>,
}

/// The last scrape of `/metrics`.
#[derive(Clone, Copy, Debug, Default)]
pub struct Scrape {
    pub epochs: f64,
    /// Rows and chunks waiting for a vector.
    pub pending: f64,
    /// Summed over partitions; `None` until the first commit after the restore.
    pub lag: Option<f64>,
    pub compactions: f64,
}

/// A running `epigraph` process.
#[derive(Debug)]
pub struct Watched {
    child: Child,
    pub started: Instant,
    pub log: Arc<Mutex<LogState>>,
    pub scrape: Arc<Mutex<Option<Scrape>>>,
    stop: Arc<AtomicBool>,
    threads: Vec<JoinHandle<()>>,
}

/// Removes terminal colour sequences (`ESC [ … letter`).
fn strip_ansi(line: &str) -> String {
    let mut out = String::with_capacity(line.len());
    let mut chars = line.chars();
    while let Some(c) = chars.next() {
        if c == '\u{1b}' {
            for d in chars.by_ref() {
                if d.is_ascii_alphabetic() {
                    break;
                }
            }
        } else {
            out.push(c);
        }
    }
    out
}

fn parse(text: &str) -> Scrape {
    let lag = text
        .lines()
        .filter(|l| l.starts_with("epigraph_consumer_lag{"))
        .filter_map(|l| l.rsplit(' ').next()?.parse::<f64>().ok())
        .fold(None, |sum: Option<f64>, v| Some(sum.unwrap_or(0.0) + v));
    Scrape {
        epochs: metric_sample(text, "epigraph_epochs_total").unwrap_or(0.0),
        pending: metric_sample(text, "epigraph_vector_pending_rows").unwrap_or(0.0),
        lag,
        compactions: metric_sample(text, "epigraph_lancedb_compactions_total").unwrap_or(0.0),
    }
}

/// A free local port for `/metrics`.
pub fn free_addr() -> Result<String> {
    let port = TcpListener::bind("127.0.0.1:0")?.local_addr()?.port();
    Ok(format!("127.0.0.1:{port}"))
}

impl Watched {
    /// Spawn `command` (stdout to `<log>.out`, stderr read here and written to `log`), and
    /// scrape `metrics` (`host:port`) when given.
    pub fn spawn(mut command: Command, log: &Path, metrics: Option<String>) -> Result<Self> {
        let mut child = command
            .stdin(Stdio::null())
            .stdout(std::fs::File::create(log.with_extension("out"))?)
            .stderr(Stdio::piped())
            .spawn()
            .context("spawning epigraph")?;
        let stderr = child.stderr.take().context("stderr")?;
        let state = Arc::new(Mutex::new(LogState::default()));
        let scrape = Arc::new(Mutex::new(None));
        let stop = Arc::new(AtomicBool::new(false));
        let mut file = std::io::BufWriter::new(std::fs::File::create(log)?);
        let reader_state = state.clone();
        let mut threads = vec![std::thread::spawn(move || {
            for line in BufReader::new(stderr).lines() {
                let Ok(line) = line else { break };
                let line = strip_ansi(&line);
                let _ = writeln!(file, "{line}");
                let mut s = reader_state.lock().unwrap();
                s.first_line.get_or_insert_with(Instant::now);
                if line.contains("started: Kafka and Neo4j reached") {
                    s.serving = true;
                } else if line.contains("views cleared; restoring") {
                    s.cleared = true;
                } else if line.contains("restored state from the compacted topics") {
                    s.restored = true;
                } else if line.contains("event=\"compacting\"") && line.contains("chunks.lance") {
                    s.compactions_begun += 1;
                    s.compaction_began = Some(Instant::now());
                } else if line.contains("compacted the memory table") {
                    s.compactions_ended += 1;
                } else if line.contains(" ERROR ") && s.errors.len() < 20 {
                    s.errors.push(line.clone());
                }
            }
            let _ = file.flush();
        })];
        if let Some(addr) = metrics {
            let (scrape, stop) = (scrape.clone(), stop.clone());
            threads.push(std::thread::spawn(move || {
                while !stop.load(Ordering::Relaxed) {
                    if let Some(text) = scrape_metrics(&addr) {
                        *scrape.lock().unwrap() = Some(parse(&text));
                    }
                    std::thread::sleep(Duration::from_millis(100));
                }
            }));
        }
        Ok(Watched {
            child,
            started: Instant::now(),
            log: state,
            scrape,
            stop,
            threads,
        })
    }

    pub fn log_state(&self) -> LogState {
        self.log.lock().unwrap().clone()
    }

    pub fn last_scrape(&self) -> Option<Scrape> {
        *self.scrape.lock().unwrap()
    }

    /// Whether it exited, and how.
    pub fn exited(&mut self) -> Result<Option<ExitStatus>> {
        Ok(self.child.try_wait()?)
    }

    /// `kill -9`, then wait for it and for the watchers.
    pub fn kill9(mut self) -> Result<()> {
        self.child.kill().context("kill -9")?;
        self.finish()?;
        Ok(())
    }

    /// Wait for the process to exit by itself (at most `limit`; then it is killed and an error
    /// returned).
    pub async fn wait(mut self, limit: Duration) -> Result<ExitStatus> {
        while self.started.elapsed() < limit {
            if let Some(status) = self.child.try_wait()? {
                self.finish()?;
                return Ok(status);
            }
            tokio::time::sleep(Duration::from_millis(100)).await;
        }
        self.child.kill()?;
        self.finish()?;
        anyhow::bail!("still running after {} s: killed", limit.as_secs())
    }

    fn finish(&mut self) -> Result<ExitStatus> {
        let status = self.child.wait()?;
        self.stop.store(true, Ordering::Relaxed);
        for thread in self.threads.drain(..) {
            let _ = thread.join();
        }
        Ok(status)
    }
}

impl Drop for Watched {
    fn drop(&mut self) {
        if !self.threads.is_empty() {
            let _ = self.child.kill();
            let _ = self.finish();
        }
    }
}

/// The environment of one view: topic prefix (= view, = consumer group), state and LanceDB
/// folders.
#[derive(Clone, Debug)]
pub struct Setup {
    pub bin: PathBuf,
    pub prefix: String,
    pub dir: PathBuf,
    /// Extra `EPIGRAPH_*` variables (compaction settings of a trial).
    pub vars: Vec<(String, String)>,
}

impl Setup {
    pub fn lance_dir(&self) -> PathBuf {
        self.dir.join("lancedb")
    }

    /// `epigraph <args>` in this environment; `metrics` sets `run.metrics_listen`.
    pub fn command(&self, args: &[&str], metrics: Option<&str>) -> Command {
        let mut command = Command::new(&self.bin);
        command
            .args(args)
            .env("EPIGRAPH_STATE_DIR", self.dir.join("state"))
            .env("EPIGRAPH_LANCEDB__DIR", self.lance_dir())
            .env("EPIGRAPH_KAFKA__TOPIC_PREFIX", &self.prefix)
            .env("EPIGRAPH_KAFKA__GROUP_ID", &self.prefix)
            .env("EPIGRAPH_RUN__METRICS_LISTEN", metrics.unwrap_or(""))
            .env(
                "RUST_LOG",
                "warn,epigraph=info,epigraph_sinks=info,lance::dataset_events=info",
            )
            .env("NO_COLOR", "1");
        for (key, value) in &self.vars {
            command.env(key, value);
        }
        command
    }

    /// Spawn `epigraph <args>` with its log `<dir>/<name>.log` and `/metrics` on a free port.
    pub fn spawn(&self, args: &[&str], name: &str) -> Result<Watched> {
        let addr = free_addr()?;
        let log = self.dir.join(format!("{name}.log"));
        Watched::spawn(self.command(args, Some(&addr)), &log, Some(addr))
    }
}
