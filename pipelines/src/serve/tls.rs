//! HTTPS for `epigraph serve` (`[serve.tls]`): rustls with the ring provider, HTTP/1.1 and
//! HTTP/2 by ALPN, graceful shutdown.
//!
//! Without `[serve.tls]` the service speaks plain HTTP, which is right on loopback and behind a
//! proxy that terminates TLS (docs/query.md, "TLS"). With it, the service reads a PEM
//! certificate chain and its private key at start (a missing or unreadable file is an error
//! that names the file and the key of the setting), and every connection is a TLS one; a client
//! that speaks plain HTTP to it fails its handshake and nothing else is affected. Certificates
//! are read once: restart the service after renewing them.

use std::future::Future;
use std::net::SocketAddr;
use std::path::Path;
use std::sync::Arc;
use std::time::Duration;

use anyhow::{Context, Result, bail};
use axum::Router;
use hyper_util::rt::{TokioExecutor, TokioIo};
use hyper_util::service::TowerToHyperService;
use tokio::net::TcpListener;
use tokio_rustls::TlsAcceptor;
use tokio_rustls::rustls;
use tokio_rustls::rustls::pki_types::pem::PemObject;
use tokio_rustls::rustls::pki_types::{CertificateDer, PrivateKeyDer};
use tracing::{debug, warn};

pub use crate::config::TlsConfig;

/// The rustls acceptor for `files`, offering HTTP/2 and HTTP/1.1.
pub fn acceptor(files: &TlsConfig) -> Result<TlsAcceptor> {
    let chain = read_chain(Path::new(&files.cert_file))?;
    let key = PrivateKeyDer::from_pem_file(&files.key_file).map_err(|error| {
        anyhow::anyhow!(
            "serve.tls.key_file {:?}: no private key read: {error}",
            files.key_file
        )
    })?;
    let provider = Arc::new(rustls::crypto::ring::default_provider());
    let mut config = rustls::ServerConfig::builder_with_provider(provider)
        .with_safe_default_protocol_versions()
        .context("TLS protocol versions")?
        .with_no_client_auth()
        .with_single_cert(chain, key)
        .with_context(|| {
            format!(
                "serve.tls: the key in {:?} does not go with the certificate in {:?}, or one of them is not supported",
                files.key_file, files.cert_file
            )
        })?;
    config.alpn_protocols = vec![b"h2".to_vec(), b"http/1.1".to_vec()];
    Ok(TlsAcceptor::from(Arc::new(config)))
}

fn read_chain(path: &Path) -> Result<Vec<CertificateDer<'static>>> {
    let chain = CertificateDer::pem_file_iter(path)
        .and_then(|certs| certs.collect::<Result<Vec<_>, _>>())
        .map_err(|error| anyhow::anyhow!("serve.tls.cert_file {path:?}: {error}"))?;
    if chain.is_empty() {
        bail!("serve.tls.cert_file {path:?}: no certificate in it (PEM `CERTIFICATE` blocks)");
    }
    Ok(chain)
}

/// How long a client may take to finish its TLS handshake.
const HANDSHAKE_TIMEOUT: Duration = Duration::from_secs(10);

/// Serve `app` over TLS on `listener` until `shutdown` resolves, then stop accepting, let every
/// connection finish the request it is serving, and return.
///
/// A failed handshake (a plain-HTTP client, a client that does not trust the certificate, a
/// scanner) ends that connection only, logged at debug level.
pub async fn serve(
    listener: TcpListener,
    acceptor: TlsAcceptor,
    app: Router,
    shutdown: impl Future<Output = ()>,
) -> Result<()> {
    let (stop, stopping) = tokio::sync::watch::channel(false);
    let mut connections = tokio::task::JoinSet::new();
    tokio::pin!(shutdown);
    loop {
        tokio::select! {
            () = &mut shutdown => break,
            accepted = listener.accept() => {
                let (tcp, peer) = match accepted {
                    Ok(accepted) => accepted,
                    Err(error) => {
                        // Out of file descriptors and the like: wait instead of spinning.
                        warn!(%error, "accepting a connection");
                        tokio::time::sleep(Duration::from_millis(100)).await;
                        continue;
                    }
                };
                connections.spawn(connection(tcp, peer, acceptor.clone(), app.clone(), stopping.clone()));
            }
            Some(_) = connections.join_next(), if !connections.is_empty() => {}
        }
    }
    let _ = stop.send(true);
    while connections.join_next().await.is_some() {}
    Ok(())
}

/// One connection: the handshake, then HTTP/2 if the client chose it by ALPN, else HTTP/1.1.
async fn connection(
    tcp: tokio::net::TcpStream,
    peer: SocketAddr,
    acceptor: TlsAcceptor,
    app: Router,
    mut stopping: tokio::sync::watch::Receiver<bool>,
) {
    let stream = match tokio::time::timeout(HANDSHAKE_TIMEOUT, acceptor.accept(tcp)).await {
        Ok(Ok(stream)) => stream,
        Ok(Err(error)) => {
            debug!(%peer, %error, "TLS handshake failed");
            return;
        }
        Err(_) => {
            debug!(%peer, "TLS handshake timed out");
            return;
        }
    };
    let h2 = stream.get_ref().1.alpn_protocol() == Some(b"h2".as_slice());
    let io = TokioIo::new(stream);
    let service = TowerToHyperService::new(app);
    // Serve until the connection ends; on shutdown, finish the requests in flight and close.
    macro_rules! drive {
        ($conn:expr) => {{
            let conn = $conn;
            tokio::pin!(conn);
            let mut asked = false;
            loop {
                tokio::select! {
                    result = conn.as_mut() => {
                        if let Err(error) = result {
                            debug!(%peer, %error, "connection ended with an error");
                        }
                        break;
                    }
                    changed = stopping.changed(), if !asked => {
                        asked = true;
                        if changed.is_ok() {
                            conn.as_mut().graceful_shutdown();
                        }
                    }
                }
            }
        }};
    }
    if h2 {
        drive!(
            hyper::server::conn::http2::Builder::new(TokioExecutor::new())
                .serve_connection(io, service)
        );
    } else {
        drive!(
            hyper::server::conn::http1::Builder::new()
                .serve_connection(io, service)
                .with_upgrades()
        );
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use axum::routing::get;

    const CA: &str = include_str!("../../../tests/fixtures/tls/ca.pem");
    const CERT: &str = include_str!("../../../tests/fixtures/tls/cert.pem");
    const KEY: &str = include_str!("../../../tests/fixtures/tls/key.pem");

    fn files(dir: &Path) -> TlsConfig {
        std::fs::write(dir.join("cert.pem"), CERT).unwrap();
        std::fs::write(dir.join("key.pem"), KEY).unwrap();
        TlsConfig {
            cert_file: dir.join("cert.pem").display().to_string(),
            key_file: dir.join("key.pem").display().to_string(),
        }
    }

    fn client(http2: bool) -> reqwest::Client {
        let builder = reqwest::Client::builder()
            .tls_built_in_root_certs(false)
            .add_root_certificate(reqwest::Certificate::from_pem(CA.as_bytes()).unwrap());
        if http2 {
            builder.http2_prior_knowledge()
        } else {
            builder.http1_only()
        }
        .build()
        .unwrap()
    }

    #[tokio::test]
    async fn https_answers_over_http1_and_http2_refuses_plain_http_and_stops_gracefully() {
        let dir = tempfile::tempdir().unwrap();
        let acceptor = acceptor(&files(dir.path())).unwrap();
        let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
        let port = listener.local_addr().unwrap().port();
        let app =
            Router::new().route(
                "/healthz",
                get(|request: axum::extract::Request| async move {
                    format!("ok {:?}", request.version())
                }),
            );
        let (stop, stopped) = tokio::sync::oneshot::channel::<()>();
        let server = tokio::spawn(serve(listener, acceptor, app, async {
            let _ = stopped.await;
        }));
        let url = format!("https://localhost:{port}/healthz");
        // HTTP/1.1, and HTTP/2 chosen by ALPN, both verified against the test CA.
        let one = client(false).get(&url).send().await.unwrap();
        assert_eq!(one.text().await.unwrap(), "ok HTTP/1.1");
        let two = client(true).get(&url).send().await.unwrap();
        assert_eq!(two.version(), reqwest::Version::HTTP_2);
        assert_eq!(two.text().await.unwrap(), "ok HTTP/2.0");
        // By IP address too (the certificate names 127.0.0.1).
        let by_ip = client(false)
            .get(format!("https://127.0.0.1:{port}/healthz"))
            .send()
            .await
            .unwrap();
        assert!(by_ip.status().is_success());
        // Plain HTTP fails its handshake; a client that does not trust the CA is refused; the
        // server goes on serving.
        let plain = reqwest::Client::new()
            .get(format!("http://127.0.0.1:{port}/healthz"))
            .timeout(Duration::from_secs(5))
            .send()
            .await;
        assert!(plain.is_err() || !plain.unwrap().status().is_success());
        let untrusting = reqwest::Client::builder()
            .tls_built_in_root_certs(false)
            .build()
            .unwrap()
            .get(&url)
            .send()
            .await;
        assert!(
            untrusting.is_err(),
            "a client without the CA must refuse the certificate"
        );
        assert!(
            client(false)
                .get(&url)
                .send()
                .await
                .unwrap()
                .status()
                .is_success()
        );
        // Shutdown returns once the connections are closed.
        stop.send(()).unwrap();
        tokio::time::timeout(Duration::from_secs(10), server)
            .await
            .expect("the server stops")
            .unwrap()
            .unwrap();
        assert!(client(false).get(&url).send().await.is_err());
    }

    /// The error of building the acceptor (the acceptor itself has no `Debug`).
    fn refusal(config: &TlsConfig) -> String {
        match acceptor(config) {
            Ok(_) => panic!("{config:?} was accepted"),
            Err(error) => format!("{error:#}"),
        }
    }

    #[test]
    fn missing_or_wrong_files_are_errors_that_name_them() {
        let dir = tempfile::tempdir().unwrap();
        let good = files(dir.path());
        let missing = TlsConfig {
            cert_file: dir.path().join("nope.pem").display().to_string(),
            ..good.clone()
        };
        let error = refusal(&missing);
        assert!(
            error.contains("serve.tls.cert_file") && error.contains("nope.pem"),
            "{error}"
        );
        // The key given as the certificate: no certificate in it.
        let swapped = TlsConfig {
            cert_file: good.key_file.clone(),
            ..good.clone()
        };
        let error = refusal(&swapped);
        assert!(error.contains("no certificate"), "{error}");
        // The certificate given as the key: no key in it.
        let keyless = TlsConfig {
            key_file: good.cert_file.clone(),
            ..good.clone()
        };
        let error = refusal(&keyless);
        assert!(error.contains("serve.tls.key_file"), "{error}");
        // The CA's certificate with the server's key: they do not go together.
        std::fs::write(dir.path().join("ca.pem"), CA).unwrap();
        let mismatched = TlsConfig {
            cert_file: dir.path().join("ca.pem").display().to_string(),
            ..good
        };
        let error = refusal(&mismatched);
        assert!(error.contains("does not go with"), "{error}");
    }
}
