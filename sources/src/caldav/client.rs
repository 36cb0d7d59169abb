//! The few WebDAV/CalDAV requests the source needs: `sync-collection` (RFC 6578), a `PROPFIND`
//! of the members' etags for servers without it, and a `GET` of one calendar object.

use std::time::Duration;

use reqwest::{Method, StatusCode, Url};

use super::CaldavConfig;

/// What went wrong talking to a CalDAV server. Credentials never appear in these messages.
#[derive(Debug, thiserror::Error)]
pub enum CaldavError {
    /// The server could not be reached or the connection broke.
    #[error("caldav: {url}: {reason}")]
    Unreachable {
        /// The request's URL (never carries credentials).
        url: String,
        /// The client's error.
        reason: String,
    },
    /// The server refused the credentials (401) or the access (403).
    #[error(
        "caldav: {url} refused access ({status}): check caldav.username / EPIGRAPH_CALDAV__PASSWORD"
    )]
    Unauthorized {
        /// The request's URL.
        url: String,
        /// 401 or 403.
        status: u16,
    },
    /// The server answered with an unexpected status.
    #[error("caldav: {url} answered {status}")]
    Status {
        /// The request's URL.
        url: String,
        /// The HTTP status.
        status: u16,
    },
    /// The server no longer accepts the sync token (RFC 6578 `valid-sync-token`): sync again
    /// from scratch.
    #[error("caldav: {url}: the sync token is no longer valid")]
    InvalidSyncToken {
        /// The collection's URL.
        url: String,
    },
    /// The server does not support `sync-collection`.
    #[error("caldav: {url} does not support sync-collection ({status})")]
    SyncUnsupported {
        /// The collection's URL.
        url: String,
        /// The HTTP status.
        status: u16,
    },
    /// A multistatus answer that is not the XML RFC 4918 describes.
    #[error("caldav: {url}: unreadable multistatus: {reason}")]
    Multistatus {
        /// The request's URL.
        url: String,
        /// What was wrong.
        reason: String,
    },
    /// The configured URL is not an http(s) URL.
    #[error("caldav: {0:?} is not an http(s) URL of a calendar collection")]
    BadUrl(String),
}

impl CaldavError {
    /// Whether trying again later may succeed (the server is down or overloaded).
    pub fn retryable(&self) -> bool {
        match self {
            CaldavError::Unreachable { .. } => true,
            CaldavError::Status { status, .. } => *status >= 500 || *status == 429,
            _ => false,
        }
    }
}

/// One member of a collection, as a multistatus lists it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Member {
    /// The member's path as the server wrote it (e.g. `/alice/work/a1.ics`).
    pub href: String,
    /// Its entity tag, when the server sent one.
    pub etag: Option<String>,
    /// The server says it is gone (a `404` status: removed since the sync token).
    pub gone: bool,
}

/// A multistatus body that is not the XML RFC 4918 describes.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[error("{0}")]
pub struct MultistatusError(pub String);

/// A parsed `207 Multi-Status` answer.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Multistatus {
    /// The new sync token (`sync-collection` answers only).
    pub sync_token: Option<String>,
    /// Every member listed, in the server's order.
    pub members: Vec<Member>,
}

/// Parse a WebDAV multistatus body (namespace-aware; any prefix).
///
/// ```
/// use epigraph_sources::caldav::parse_multistatus;
/// let xml = r#"<?xml version="1.0"?><d:multistatus xmlns:d="DAV:">
///   <d:sync-token>tok-2</d:sync-token>
///   <d:response><d:href>/cal/a.ics</d:href><d:propstat><d:prop><d:getetag>"e1"</d:getetag></d:prop>
///     <d:status>HTTP/1.1 200 OK</d:status></d:propstat></d:response>
///   <d:response><d:href>/cal/b.ics</d:href><d:status>HTTP/1.1 404 Not Found</d:status></d:response>
/// </d:multistatus>"#;
/// let answer = parse_multistatus(xml).unwrap();
/// assert_eq!(answer.sync_token.as_deref(), Some("tok-2"));
/// assert_eq!(answer.members[0].etag.as_deref(), Some("\"e1\""));
/// assert!(answer.members[1].gone);
/// ```
pub fn parse_multistatus(xml: &str) -> Result<Multistatus, MultistatusError> {
    const DAV: &str = "DAV:";
    let doc = roxmltree::Document::parse(xml).map_err(|e| MultistatusError(e.to_string()))?;
    let root = doc.root_element();
    if !root.has_tag_name((DAV, "multistatus")) {
        return Err(MultistatusError(format!(
            "the root element is <{}>, not DAV: multistatus",
            root.tag_name().name()
        )));
    }
    fn child<'a, 'i>(node: roxmltree::Node<'a, 'i>, name: &str) -> Option<roxmltree::Node<'a, 'i>> {
        node.children().find(|c| c.has_tag_name((DAV, name)))
    }
    fn text(node: Option<roxmltree::Node<'_, '_>>) -> Option<String> {
        node.and_then(|n| n.text())
            .map(str::trim)
            .filter(|t| !t.is_empty())
            .map(str::to_string)
    }
    let status_code =
        |status: Option<String>| -> Option<u16> { status?.split_whitespace().nth(1)?.parse().ok() };
    let mut answer = Multistatus {
        sync_token: text(child(root, "sync-token")),
        members: Vec::new(),
    };
    for response in root
        .children()
        .filter(|c| c.has_tag_name((DAV, "response")))
    {
        let Some(href) = text(child(response, "href")) else {
            return Err(MultistatusError("a response without href".into()));
        };
        let gone = status_code(text(child(response, "status"))) == Some(404);
        let etag = response
            .children()
            .filter(|c| c.has_tag_name((DAV, "propstat")))
            .filter(|p| status_code(text(child(*p, "status"))).is_none_or(|s| s == 200))
            .find_map(|p| text(child(p, "prop").and_then(|prop| child(prop, "getetag"))));
        answer.members.push(Member { href, etag, gone });
    }
    Ok(answer)
}

/// A client for one calendar collection.
pub struct DavClient {
    http: reqwest::Client,
    collection: Url,
    username: Option<String>,
    password: Option<String>,
}

impl std::fmt::Debug for DavClient {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("DavClient")
            .field("collection", &self.collection.as_str())
            .field("username", &self.username)
            .finish_non_exhaustive()
    }
}

const SYNC_COLLECTION: &str = r#"<?xml version="1.0" encoding="utf-8"?>
<d:sync-collection xmlns:d="DAV:"><d:sync-token>TOKEN</d:sync-token><d:sync-level>1</d:sync-level><d:prop><d:getetag/></d:prop></d:sync-collection>"#;

const PROPFIND_ETAGS: &str = r#"<?xml version="1.0" encoding="utf-8"?>
<d:propfind xmlns:d="DAV:"><d:prop><d:getetag/><d:resourcetype/></d:prop></d:propfind>"#;

impl DavClient {
    /// A client for the collection at `url` (a trailing `/` is added when missing). User
    /// information in the URL is refused: credentials belong in the configuration.
    pub fn new(url: &str, config: &CaldavConfig) -> Result<Self, CaldavError> {
        let mut collection = Url::parse(url).map_err(|_| CaldavError::BadUrl(redact(url)))?;
        if !matches!(collection.scheme(), "http" | "https")
            || !collection.username().is_empty()
            || collection.password().is_some()
        {
            return Err(CaldavError::BadUrl(redact(url)));
        }
        if !collection.path().ends_with('/') {
            let path = format!("{}/", collection.path());
            collection.set_path(&path);
        }
        let http = reqwest::Client::builder()
            .timeout(Duration::from_millis(config.timeout_ms.max(1)))
            .build()
            .map_err(|e| CaldavError::Unreachable {
                url: collection.to_string(),
                reason: e.to_string(),
            })?;
        Ok(DavClient {
            http,
            collection,
            username: config.username.clone(),
            password: config.password.clone(),
        })
    }

    /// The collection's URL.
    pub fn collection(&self) -> &Url {
        &self.collection
    }

    /// The absolute URL of a member's href.
    pub fn member_url(&self, href: &str) -> Url {
        self.collection
            .join(href)
            .unwrap_or_else(|_| self.collection.clone())
    }

    /// Whether an href is the collection itself or a sub-collection (not a calendar object).
    pub fn is_collection(&self, href: &str) -> bool {
        href.ends_with('/') || self.member_url(href).path() == self.collection.path()
    }

    fn request(&self, method: Method, url: Url) -> reqwest::RequestBuilder {
        let request = self.http.request(method, url);
        match &self.username {
            Some(user) => request.basic_auth(user, self.password.as_deref()),
            None => request,
        }
    }

    async fn send(
        &self,
        request: reqwest::RequestBuilder,
        url: &Url,
    ) -> Result<(StatusCode, Option<String>, Vec<u8>), CaldavError> {
        let unreachable = |e: reqwest::Error| CaldavError::Unreachable {
            url: url.to_string(),
            reason: e.without_url().to_string(),
        };
        let response = request.send().await.map_err(unreachable)?;
        let status = response.status();
        let etag = response
            .headers()
            .get(reqwest::header::ETAG)
            .and_then(|v| v.to_str().ok())
            .map(str::to_string);
        let body = response.bytes().await.map_err(unreachable)?.to_vec();
        if status == StatusCode::UNAUTHORIZED {
            return Err(CaldavError::Unauthorized {
                url: url.to_string(),
                status: status.as_u16(),
            });
        }
        Ok((status, etag, body))
    }

    fn multistatus(&self, url: &Url, body: &[u8]) -> Result<Multistatus, CaldavError> {
        let text = std::str::from_utf8(body).map_err(|_| CaldavError::Multistatus {
            url: url.to_string(),
            reason: "not UTF-8".into(),
        })?;
        parse_multistatus(text).map_err(|error| CaldavError::Multistatus {
            url: url.to_string(),
            reason: error.0,
        })
    }

    /// `REPORT sync-collection`: the members changed or removed since `token` (every member
    /// when `token` is `None`) and the next token.
    pub async fn sync_collection(&self, token: Option<&str>) -> Result<Multistatus, CaldavError> {
        let url = self.collection.clone();
        let body = SYNC_COLLECTION.replace("TOKEN", &xml_escape(token.unwrap_or_default()));
        let request = self
            .request(
                Method::from_bytes(b"REPORT").expect("a valid method"),
                url.clone(),
            )
            .header("Depth", "1")
            .header("Content-Type", "application/xml; charset=utf-8")
            .body(body);
        let (status, _, body) = self.send(request, &url).await?;
        match status.as_u16() {
            207 => self.multistatus(&url, &body),
            403 | 409 if String::from_utf8_lossy(&body).contains("valid-sync-token") => {
                Err(CaldavError::InvalidSyncToken {
                    url: url.to_string(),
                })
            }
            403 => Err(CaldavError::Unauthorized {
                url: url.to_string(),
                status: 403,
            }),
            code @ (400 | 405 | 415 | 501) => Err(CaldavError::SyncUnsupported {
                url: url.to_string(),
                status: code,
            }),
            code => Err(CaldavError::Status {
                url: url.to_string(),
                status: code,
            }),
        }
    }

    /// `PROPFIND` (depth 1) of every member's etag, for servers without `sync-collection`.
    pub async fn list_members(&self) -> Result<Multistatus, CaldavError> {
        let url = self.collection.clone();
        let request = self
            .request(
                Method::from_bytes(b"PROPFIND").expect("a valid method"),
                url.clone(),
            )
            .header("Depth", "1")
            .header("Content-Type", "application/xml; charset=utf-8")
            .body(PROPFIND_ETAGS);
        let (status, _, body) = self.send(request, &url).await?;
        match status.as_u16() {
            207 => self.multistatus(&url, &body),
            403 => Err(CaldavError::Unauthorized {
                url: url.to_string(),
                status: 403,
            }),
            code => Err(CaldavError::Status {
                url: url.to_string(),
                status: code,
            }),
        }
    }

    /// `GET` one calendar object: its bytes and entity tag, or `None` when it is gone (404).
    pub async fn get(&self, href: &str) -> Result<Option<(Vec<u8>, Option<String>)>, CaldavError> {
        let url = self.member_url(href);
        let (status, etag, body) = self
            .send(self.request(Method::GET, url.clone()), &url)
            .await?;
        match status.as_u16() {
            200 => Ok(Some((body, etag))),
            404 | 410 => Ok(None),
            403 => Err(CaldavError::Unauthorized {
                url: url.to_string(),
                status: 403,
            }),
            code => Err(CaldavError::Status {
                url: url.to_string(),
                status: code,
            }),
        }
    }
}

fn xml_escape(text: &str) -> String {
    text.replace('&', "&amp;")
        .replace('<', "&lt;")
        .replace('>', "&gt;")
}

/// A URL for an error message, without any user information it may carry.
fn redact(url: &str) -> String {
    match Url::parse(url) {
        Ok(mut parsed) => {
            let _ = parsed.set_username("");
            let _ = parsed.set_password(None);
            parsed.to_string()
        }
        Err(_) => "<not a URL>".to_string(),
    }
}
