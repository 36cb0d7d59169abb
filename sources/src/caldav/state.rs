use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};
use sha2::{Digest, Sha256};

use crate::SourceError;

/// What the CalDAV source last published for one `(tenant, collection)`: the server's sync
/// token and, per calendar object, its etag and the events it yielded (source id → version).
///
/// Written only after the broker acknowledged the events, so a failed sync is fetched again.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct CaldavState {
    /// Tenant the calendar is published into.
    pub tenant: String,
    /// The collection's URL.
    pub url: String,
    /// The token of the last `sync-collection`, when the server has them.
    pub sync_token: Option<String>,
    /// Calendar object href → what was published from it.
    pub objects: BTreeMap<String, PublishedObject>,
}

/// One calendar object as last published.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct PublishedObject {
    /// The entity tag it had.
    pub etag: Option<String>,
    /// Source id → version of every event published from it (tombstones included).
    pub events: BTreeMap<String, String>,
}

impl CaldavState {
    /// Where the state of `(tenant, url)` lives under `state_dir`.
    pub fn path(state_dir: &Path, tenant: &str, url: &str) -> PathBuf {
        let digest = Sha256::digest(format!("{tenant}\0{url}").as_bytes());
        state_dir
            .join("caldav")
            .join(format!("{}.json", hex::encode(&digest[..12])))
    }

    /// Load the state, or an empty one when this collection was never synced.
    pub fn load(state_dir: &Path, tenant: &str, url: &str) -> Result<Self, SourceError> {
        let path = Self::path(state_dir, tenant, url);
        match std::fs::read(&path) {
            Ok(bytes) => serde_json::from_slice(&bytes).map_err(|e| {
                SourceError::Config(format!("corrupt CalDAV state {}: {e}", path.display()))
            }),
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(CaldavState {
                tenant: tenant.to_string(),
                url: url.to_string(),
                ..CaldavState::default()
            }),
            Err(e) => Err(SourceError::io(path)(e)),
        }
    }

    /// Write the state atomically (temp file + rename).
    pub fn save(&self, state_dir: &Path) -> Result<(), SourceError> {
        let path = Self::path(state_dir, &self.tenant, &self.url);
        let dir = path.parent().expect("state path has a parent");
        std::fs::create_dir_all(dir).map_err(SourceError::io(dir))?;
        let tmp = path.with_extension("json.tmp");
        let bytes = serde_json::to_vec(self).expect("the state serializes");
        std::fs::write(&tmp, bytes).map_err(SourceError::io(&tmp))?;
        std::fs::rename(&tmp, &path).map_err(SourceError::io(&path))
    }
}
