//! Real servers the end-to-end tests and the load runs start on loopback ports: Radicale
//! (CalDAV) and Dovecot (IMAP), each with a throwaway user and storage in a temp dir.

use std::path::Path;
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use epigraph_sources::imap::{ImapConfig, ImapTls};

/// A Radicale server (the venv `deploy/local/python.sh` makes) on a loopback port with one user
/// (htpasswd, plain); killed when dropped.
#[derive(Debug)]
pub struct Radicale {
    child: Child,
    /// Its HTTP port.
    pub port: u16,
    dir: tempfile::TempDir,
    user: String,
}

impl Radicale {
    /// Start it on `port` with its storage in `dir`, for `user` with `password`.
    pub fn start(dir: tempfile::TempDir, port: u16, user: &str, password: &str) -> Self {
        let radicale = epigraph_sinks::embed::default_home().join("venv/bin/radicale");
        assert!(
            radicale.exists(),
            "{} is missing: run deploy/local/python.sh",
            radicale.display()
        );
        std::fs::write(dir.path().join("users"), format!("{user}:{password}\n")).unwrap();
        let child = Command::new(radicale)
            .args(["--server-hosts", &format!("127.0.0.1:{port}")])
            .args(["--storage-filesystem-folder"])
            .arg(dir.path().join("collections"))
            .args([
                "--auth-type",
                "htpasswd",
                "--auth-htpasswd-encryption",
                "plain",
            ])
            .arg("--auth-htpasswd-filename")
            .arg(dir.path().join("users"))
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .expect("starting radicale");
        let server = Radicale {
            child,
            port,
            dir,
            user: user.to_string(),
        };
        let deadline = Instant::now() + Duration::from_secs(30);
        while std::net::TcpStream::connect(("127.0.0.1", port)).is_err() {
            assert!(Instant::now() < deadline, "radicale did not start");
            std::thread::sleep(Duration::from_millis(100));
        }
        server
    }

    /// The URL of the user's `work` calendar (make it with `MKCALENDAR`).
    pub fn collection(&self) -> String {
        format!("http://127.0.0.1:{}/{}/work/", self.port, self.user)
    }

    /// Kill it, keeping its storage: `(dir, port)` to start it again with.
    pub fn stop(mut self) -> (tempfile::TempDir, u16) {
        let _ = self.child.kill();
        let _ = self.child.wait();
        let port = self.port;
        let dir = std::mem::replace(&mut self.dir, tempfile::tempdir().unwrap());
        (dir, port)
    }
}

impl Drop for Radicale {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// A Dovecot on a free loopback port, its configuration, users and maildirs in a temp dir;
/// killed when dropped.
#[derive(Debug)]
pub struct Dovecot {
    child: Child,
    /// Its IMAP port (plain text, loopback).
    pub port: u16,
    dir: tempfile::TempDir,
    user: String,
    password: String,
}

impl Dovecot {
    /// Start it on `port` with its configuration and maildirs in `dir`, for `user` with
    /// `password`.
    pub fn start(dir: tempfile::TempDir, port: u16, user: &str, password: &str) -> Self {
        let root = dir.path();
        let binary = ["/usr/sbin/dovecot", "/usr/local/sbin/dovecot"]
            .into_iter()
            .find(|p| Path::new(p).exists())
            .expect("dovecot is missing: run deploy/local/test.sh (epigraph_imap_setup)");
        let me = whoami();
        // As root (CI), Dovecot refuses to run its login and mail processes as root: they run as
        // the users the Debian package creates, and the maildirs belong to `dovecot`.
        let (login_user, internal_user, mail_user) = if me == "root" {
            ("dovenull", "dovecot", "dovecot")
        } else {
            (me.as_str(), me.as_str(), me.as_str())
        };
        let mail = root.join("mail");
        std::fs::create_dir_all(&mail).unwrap();
        if me == "root" {
            let status = Command::new("chown")
                .arg(format!("{mail_user}:{mail_user}"))
                .arg(&mail)
                .status()
                .unwrap();
            assert!(status.success());
        }
        std::fs::write(
            root.join("users"),
            format!("{user}:{{PLAIN}}{password}::::\n"),
        )
        .unwrap();
        let r = root.display();
        std::fs::write(
            root.join("dovecot.conf"),
            format!(
                "protocols = imap\nlisten = 127.0.0.1\nbase_dir = {r}/run\nstate_dir = {r}/state\n\
                 log_path = {r}/dovecot.log\nssl = no\ndisable_plaintext_auth = no\n\
                 auth_mechanisms = plain login\nfirst_valid_uid = 1\ndefault_login_user = {login_user}\n\
                 default_internal_user = {internal_user}\nmail_location = maildir:{r}/mail/%u\n\
                 passdb {{\n  driver = passwd-file\n  args = scheme=PLAIN {r}/users\n}}\n\
                 userdb {{\n  driver = static\n  args = uid={mail_user} gid={mail_user} home={r}/mail/%u\n}}\n\
                 service imap-login {{\n  inet_listener imap {{\n    address = 127.0.0.1\n    port = {port}\n  }}\n\
                 \x20 inet_listener imaps {{\n    port = 0\n  }}\n}}\n"
            ),
        )
        .unwrap();
        // The mail processes (not root) must reach the maildirs inside the temp dir.
        let status = Command::new("chmod").arg("755").arg(root).status().unwrap();
        assert!(status.success());
        let child = Command::new(binary)
            .arg("-F")
            .arg("-c")
            .arg(root.join("dovecot.conf"))
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .expect("starting dovecot");
        let server = Dovecot {
            child,
            port,
            dir,
            user: user.to_string(),
            password: password.to_string(),
        };
        let deadline = Instant::now() + Duration::from_secs(30);
        while std::net::TcpStream::connect(("127.0.0.1", port)).is_err() {
            assert!(
                Instant::now() < deadline,
                "dovecot did not start: {}",
                std::fs::read_to_string(server.dir.path().join("dovecot.log")).unwrap_or_default()
            );
            std::thread::sleep(Duration::from_millis(100));
        }
        server
    }

    /// The user's maildir (`cur`, `new`, `tmp` under it), for delivering files directly.
    pub fn maildir(&self) -> std::path::PathBuf {
        self.dir.path().join("mail").join(&self.user)
    }

    /// A plain-text (loopback) configuration logging in as its user.
    pub fn config(&self) -> ImapConfig {
        ImapConfig {
            host: Some("127.0.0.1".into()),
            port: Some(self.port),
            tls: ImapTls::None,
            username: Some(self.user.clone()),
            password: Some(self.password.clone()),
            timeout_ms: 10_000,
            ..ImapConfig::default()
        }
    }

    /// Kill it, keeping its maildirs: `(dir, port)` to start it again with.
    pub fn stop(mut self) -> (tempfile::TempDir, u16) {
        let _ = self.child.kill();
        let _ = self.child.wait();
        let port = self.port;
        let dir = std::mem::replace(&mut self.dir, tempfile::tempdir().unwrap());
        (dir, port)
    }
}

impl Drop for Dovecot {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// The user running this process.
fn whoami() -> String {
    let out = Command::new("id").arg("-un").output().expect("id -un");
    String::from_utf8_lossy(&out.stdout).trim().to_string()
}

/// A free loopback port.
pub fn free_port() -> u16 {
    std::net::TcpListener::bind("127.0.0.1:0")
        .expect("a free port")
        .local_addr()
        .expect("its address")
        .port()
}
