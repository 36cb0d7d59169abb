//! The IMAP commands the source needs, through `async-imap`: connect (plain, STARTTLS or
//! implicit TLS), `LOGIN`, `EXAMINE` (read-only: flags are never changed), `UID SEARCH ALL` and
//! `UID FETCH` of sizes and of whole messages with `BODY.PEEK[]` (never marks them read).

use std::collections::BTreeMap;
use std::future::Future;
use std::sync::Arc;
use std::time::Duration;

use async_imap::error::Error as ImapProtocolError;
use async_imap::{Client, Session};
use futures::TryStreamExt;
use tokio::io::{AsyncRead, AsyncWrite};
use tokio::net::TcpStream;
use tokio_rustls::rustls;

use super::{ImapConfig, ImapTls};
use crate::SourceError;

/// What went wrong talking to an IMAP server. Credentials never appear in these messages.
#[derive(Debug, thiserror::Error)]
pub enum ImapError {
    /// The server could not be reached, did not answer in time, or the connection broke.
    #[error("imap: {server}: {reason}")]
    Unreachable {
        /// `host:port`.
        server: String,
        /// What failed.
        reason: String,
    },
    /// The server refused the login.
    #[error(
        "imap: {server} refused the login of {username:?} ({reason}): check imap.username / EPIGRAPH_IMAP__PASSWORD"
    )]
    Refused {
        /// `host:port`.
        server: String,
        /// The login name.
        username: String,
        /// The server's answer.
        reason: String,
    },
    /// The TLS handshake failed (e.g. a certificate that is not trusted).
    #[error("imap: {server}: TLS: {reason}")]
    Tls {
        /// `host:port`.
        server: String,
        /// What failed.
        reason: String,
    },
    /// A followed mailbox cannot be opened (it does not exist, or access is denied).
    #[error("imap: {server}: mailbox {mailbox:?} cannot be opened: {reason}")]
    NoMailbox {
        /// `host:port`.
        server: String,
        /// The mailbox name.
        mailbox: String,
        /// The server's answer.
        reason: String,
    },
    /// A command failed or its answer could not be read.
    #[error("imap: {server}: {command}: {reason}")]
    Protocol {
        /// `host:port`.
        server: String,
        /// The command (never `LOGIN`'s arguments).
        command: String,
        /// What failed.
        reason: String,
    },
}

impl ImapError {
    /// Whether trying again later may succeed (the server is down, overloaded or confused).
    pub fn retryable(&self) -> bool {
        matches!(
            self,
            ImapError::Unreachable { .. } | ImapError::Protocol { .. }
        )
    }
}

/// A byte stream an IMAP session runs over (TCP, or TLS over TCP).
pub trait ImapStream: AsyncRead + AsyncWrite + Unpin + Send + std::fmt::Debug {}
impl<T: AsyncRead + AsyncWrite + Unpin + Send + std::fmt::Debug> ImapStream for T {}

/// The counters `EXAMINE` gives.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct MailboxStatus {
    /// UIDVALIDITY.
    pub uid_validity: u32,
    /// UIDNEXT, when the server sent it.
    pub uid_next: Option<u32>,
    /// Number of messages.
    pub exists: u32,
}

/// A logged-in IMAP session.
pub struct ImapSession {
    session: Session<Box<dyn ImapStream>>,
    server: String,
    timeout: Duration,
}

impl std::fmt::Debug for ImapSession {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ImapSession")
            .field("server", &self.server)
            .finish_non_exhaustive()
    }
}

/// Messages fetched per `UID FETCH` of bodies.
const BODY_BATCH: usize = 50;

impl ImapSession {
    /// Connect to `[imap] host`/`port` as `tls` says and log in.
    ///
    /// The password goes only into the `LOGIN` command; `async-imap` traces every command it
    /// sends at the `log` crate's trace level, so that level is lowered to debug while logging
    /// in (a `RUST_LOG=trace` run never prints the password).
    pub async fn connect(config: &ImapConfig) -> Result<Self, SourceError> {
        let host = required(config.host.as_deref(), "imap.host", "EPIGRAPH_IMAP__HOST")?;
        let username = required(
            config.username.as_deref(),
            "imap.username",
            "EPIGRAPH_IMAP__USERNAME",
        )?;
        let password = required(
            config.password.as_deref(),
            "imap.password",
            "EPIGRAPH_IMAP__PASSWORD",
        )?;
        let port = config.port();
        let server = format!("{host}:{port}");
        let timeout = Duration::from_millis(config.timeout_ms.max(1));
        let unreachable = |reason: String| ImapError::Unreachable {
            server: server.clone(),
            reason,
        };
        let tcp = match tokio::time::timeout(timeout, TcpStream::connect((host, port))).await {
            Ok(Ok(tcp)) => tcp,
            Ok(Err(e)) => return Err(unreachable(format!("cannot connect: {e}")).into()),
            Err(_) => {
                return Err(unreachable(format!(
                    "cannot connect: no answer within {} ms",
                    timeout.as_millis()
                ))
                .into());
            }
        };
        let stream: Box<dyn ImapStream> = match config.tls {
            ImapTls::None => Box::new(tcp),
            ImapTls::Implicit => Box::new(tls(host, &server, Box::new(tcp), timeout).await?),
            ImapTls::Starttls => {
                let mut client = Client::new(Box::new(tcp) as Box<dyn ImapStream>);
                greeting(&mut client, &server, timeout).await?;
                within(&server, "STARTTLS", timeout, async {
                    client.run_command_and_check_ok("STARTTLS", None).await
                })
                .await?;
                Box::new(tls(host, &server, client.into_inner(), timeout).await?)
            }
        };
        let mut client = Client::new(stream);
        if config.tls != ImapTls::Starttls {
            greeting(&mut client, &server, timeout).await?;
        }
        let login = {
            let _quiet = QuietLog::new();
            tokio::time::timeout(timeout, client.login(username, password)).await
        };
        let session = match login {
            Ok(Ok(session)) => session,
            Ok(Err((ImapProtocolError::No(reason) | ImapProtocolError::Bad(reason), _))) => {
                return Err(ImapError::Refused {
                    server,
                    username: username.to_string(),
                    reason: reason.trim().to_string(),
                }
                .into());
            }
            Ok(Err((error, _))) => return Err(failure(&server, "LOGIN", error).into()),
            Err(_) => {
                return Err(unreachable(format!(
                    "LOGIN: no answer within {} ms",
                    timeout.as_millis()
                ))
                .into());
            }
        };
        tracing::debug!(server = %server, "logged in to the IMAP server");
        Ok(ImapSession {
            session,
            server,
            timeout,
        })
    }

    /// `host:port` of the server.
    pub fn server(&self) -> &str {
        &self.server
    }

    /// The underlying `async-imap` session, for commands this type does not wrap (tests append,
    /// move and expunge messages with it).
    pub fn session_mut(&mut self) -> &mut Session<Box<dyn ImapStream>> {
        &mut self.session
    }

    /// Open `mailbox` read-only (`EXAMINE`) and return its counters.
    pub async fn examine(&mut self, mailbox: &str) -> Result<MailboxStatus, ImapError> {
        let command = format!("EXAMINE {mailbox:?}");
        let answer = tokio::time::timeout(self.timeout, self.session.examine(mailbox)).await;
        self.drain();
        let status = match answer {
            Ok(Ok(status)) => status,
            Ok(Err(ImapProtocolError::No(reason))) => {
                return Err(ImapError::NoMailbox {
                    server: self.server.clone(),
                    mailbox: mailbox.to_string(),
                    reason: reason.trim().to_string(),
                });
            }
            Ok(Err(error)) => return Err(failure(&self.server, &command, error)),
            Err(_) => return Err(self.timed_out(&command)),
        };
        let uid_validity = status.uid_validity.ok_or_else(|| ImapError::Protocol {
            server: self.server.clone(),
            command: command.clone(),
            reason: "the answer has no UIDVALIDITY (RFC 3501 requires it)".into(),
        })?;
        Ok(MailboxStatus {
            uid_validity,
            uid_next: status.uid_next,
            exists: status.exists,
        })
    }

    /// Every UID of the examined mailbox, ascending (`UID SEARCH ALL`).
    pub async fn uids(&mut self) -> Result<Vec<u32>, ImapError> {
        let session = &mut self.session;
        let uids = within(&self.server, "UID SEARCH ALL", self.timeout, async {
            session.uid_search("ALL").await
        })
        .await?;
        self.drain();
        let mut uids: Vec<u32> = uids.into_iter().collect();
        uids.sort_unstable();
        Ok(uids)
    }

    /// The size in bytes of each of `uids` that still exists (`UID FETCH … RFC822.SIZE`).
    pub async fn sizes(&mut self, uids: &[u32]) -> Result<BTreeMap<u32, u32>, ImapError> {
        let mut sizes = BTreeMap::new();
        for chunk in uids.chunks(1000) {
            for fetch in self.fetch(chunk, "(UID RFC822.SIZE)").await? {
                if let (Some(uid), Some(size)) = (fetch.uid, fetch.size) {
                    sizes.insert(uid, size);
                }
            }
        }
        Ok(sizes)
    }

    /// The raw bytes of each of `uids` that still exists (`BODY.PEEK[]`: the message stays
    /// unread), or with `header_only` its header block.
    pub async fn messages(
        &mut self,
        uids: &[u32],
        header_only: bool,
    ) -> Result<BTreeMap<u32, Vec<u8>>, ImapError> {
        let item = if header_only {
            "(UID BODY.PEEK[HEADER])"
        } else {
            "(UID BODY.PEEK[])"
        };
        let mut messages = BTreeMap::new();
        for chunk in uids.chunks(BODY_BATCH) {
            for fetch in self.fetch(chunk, item).await? {
                let bytes = if header_only {
                    fetch.header()
                } else {
                    fetch.body()
                };
                if let (Some(uid), Some(bytes)) = (fetch.uid, bytes) {
                    messages.insert(uid, bytes.to_vec());
                }
            }
        }
        Ok(messages)
    }

    /// Log out (errors ignored: the session is over either way).
    pub async fn logout(mut self) {
        let _ = tokio::time::timeout(self.timeout, self.session.logout()).await;
    }

    async fn fetch(
        &mut self,
        uids: &[u32],
        items: &str,
    ) -> Result<Vec<async_imap::types::Fetch>, ImapError> {
        if uids.is_empty() {
            return Ok(Vec::new());
        }
        let set = uid_set(uids);
        let command = format!("UID FETCH {items}");
        let session = &mut self.session;
        let fetched = within(&self.server, &command, self.timeout, async {
            session
                .uid_fetch(&set, items)
                .await?
                .try_collect::<Vec<_>>()
                .await
        })
        .await?;
        self.drain();
        Ok(fetched)
    }

    /// Unsolicited answers (EXISTS, EXPUNGE, FETCH FLAGS) are not used: the mailbox is listed
    /// again on each sync. Dropped so their bounded channel never fills.
    fn drain(&mut self) {
        while self.session.unsolicited_responses.try_recv().is_ok() {}
    }

    fn timed_out(&self, command: &str) -> ImapError {
        ImapError::Unreachable {
            server: self.server.clone(),
            reason: format!(
                "{command}: no answer within {} ms",
                self.timeout.as_millis()
            ),
        }
    }
}

/// A UID set in IMAP syntax, runs collapsed: `[1, 2, 3, 7]` → `1:3,7`.
///
/// ```
/// assert_eq!(epigraph_sources::imap::uid_set(&[1, 2, 3, 7, 9, 10]), "1:3,7,9:10");
/// ```
pub fn uid_set(uids: &[u32]) -> String {
    let mut sorted = uids.to_vec();
    sorted.sort_unstable();
    sorted.dedup();
    let mut parts = Vec::new();
    let mut i = 0;
    while i < sorted.len() {
        let start = sorted[i];
        let mut end = start;
        while i + 1 < sorted.len() && sorted[i + 1] == end + 1 {
            i += 1;
            end = sorted[i];
        }
        parts.push(if start == end {
            start.to_string()
        } else {
            format!("{start}:{end}")
        });
        i += 1;
    }
    parts.join(",")
}

fn required<'a>(value: Option<&'a str>, key: &str, var: &str) -> Result<&'a str, SourceError> {
    value
        .filter(|v| !v.is_empty())
        .ok_or_else(|| SourceError::Config(format!("{key} is not set (config file or {var})")))
}

async fn within<T>(
    server: &str,
    command: &str,
    timeout: Duration,
    answer: impl Future<Output = async_imap::error::Result<T>>,
) -> Result<T, ImapError> {
    match tokio::time::timeout(timeout, answer).await {
        Ok(Ok(value)) => Ok(value),
        Ok(Err(error)) => Err(failure(server, command, error)),
        Err(_) => Err(ImapError::Unreachable {
            server: server.to_string(),
            reason: format!("{command}: no answer within {} ms", timeout.as_millis()),
        }),
    }
}

fn failure(server: &str, command: &str, error: ImapProtocolError) -> ImapError {
    match error {
        ImapProtocolError::Io(e) => ImapError::Unreachable {
            server: server.to_string(),
            reason: format!("{command}: {e}"),
        },
        ImapProtocolError::ConnectionLost => ImapError::Unreachable {
            server: server.to_string(),
            reason: format!("{command}: connection lost"),
        },
        other => ImapError::Protocol {
            server: server.to_string(),
            command: command.to_string(),
            reason: other.to_string(),
        },
    }
}

async fn greeting(
    client: &mut Client<Box<dyn ImapStream>>,
    server: &str,
    timeout: Duration,
) -> Result<(), ImapError> {
    let unreachable = |reason: String| ImapError::Unreachable {
        server: server.to_string(),
        reason,
    };
    match tokio::time::timeout(timeout, client.read_response()).await {
        Ok(Ok(Some(_))) => Ok(()),
        Ok(Ok(None)) => Err(unreachable(
            "the server closed the connection before its greeting".into(),
        )),
        Ok(Err(e)) => Err(unreachable(format!("reading the greeting: {e}"))),
        Err(_) => Err(unreachable(format!(
            "no greeting within {} ms",
            timeout.as_millis()
        ))),
    }
}

/// TLS over `stream`, the server's certificate checked against the system's roots.
async fn tls(
    host: &str,
    server: &str,
    stream: Box<dyn ImapStream>,
    timeout: Duration,
) -> Result<tokio_rustls::client::TlsStream<Box<dyn ImapStream>>, ImapError> {
    let failed = |reason: String| ImapError::Tls {
        server: server.to_string(),
        reason,
    };
    let mut roots = rustls::RootCertStore::empty();
    let native = rustls_native_certs::load_native_certs();
    let (added, _) = roots.add_parsable_certificates(native.certs);
    if added == 0 {
        return Err(failed(
            "no trusted root certificate found on this system".into(),
        ));
    }
    let provider = Arc::new(rustls::crypto::ring::default_provider());
    let config = rustls::ClientConfig::builder_with_provider(provider)
        .with_safe_default_protocol_versions()
        .map_err(|e| failed(e.to_string()))?
        .with_root_certificates(roots)
        .with_no_client_auth();
    let name = rustls::pki_types::ServerName::try_from(host.to_string())
        .map_err(|e| failed(format!("{host:?} is not a valid server name: {e}")))?;
    let connector = tokio_rustls::TlsConnector::from(Arc::new(config));
    match tokio::time::timeout(timeout, connector.connect(name, stream)).await {
        Ok(Ok(tls)) => Ok(tls),
        Ok(Err(e)) if e.kind() == std::io::ErrorKind::InvalidData => Err(failed(e.to_string())),
        Ok(Err(e)) => Err(ImapError::Unreachable {
            server: server.to_string(),
            reason: format!("TLS handshake: {e}"),
        }),
        Err(_) => Err(ImapError::Unreachable {
            server: server.to_string(),
            reason: format!("TLS handshake: no answer within {} ms", timeout.as_millis()),
        }),
    }
}

/// Lowers the `log` crate's level to debug while alive: `async-imap` traces each command it
/// sends, `LOGIN` and its password included.
struct QuietLog(log::LevelFilter);

impl QuietLog {
    fn new() -> Self {
        let level = log::max_level();
        log::set_max_level(level.min(log::LevelFilter::Debug));
        QuietLog(level)
    }
}

impl Drop for QuietLog {
    fn drop(&mut self) {
        log::set_max_level(self.0);
    }
}
