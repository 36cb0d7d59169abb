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
    /// The producer refused (dead-lettered) one of its events: it is fetched again on the next
    /// run of the command (not at every poll of the same follow, which would repeat the dead
    /// letter).
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub refused: bool,
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

    /// Undo what this (next) state says about the events the producer refused
    /// (`PublishReport::refused`), back to `previous`, and mark their objects; returns how many
    /// objects were marked.
    ///
    /// ```
    /// use epigraph_sources::caldav::{CaldavState, PublishedObject};
    /// let mut state = CaldavState::default();
    /// let object = PublishedObject { etag: Some("2".into()), ..Default::default() };
    /// state.objects.insert("/c/a.ics".into(), object);
    /// let previous = state.clone();
    /// let next = state.objects.get_mut("/c/a.ics").unwrap();
    /// next.events.insert("cal/a".into(), "v2".into());
    /// assert_eq!(state.mark_refused(&["cal/a".to_string()], &previous), 1);
    /// assert!(state.objects["/c/a.ics"].events.is_empty());
    /// // The next run lists the whole collection and fetches the object again.
    /// assert_eq!(state.retry_refused(), 1);
    /// assert_eq!((state.sync_token.as_ref(), state.objects["/c/a.ics"].etag.as_ref()), (None, None));
    /// ```
    pub fn mark_refused(&mut self, refused: &[String], previous: &CaldavState) -> usize {
        if refused.is_empty() {
            return 0;
        }
        let before: BTreeMap<&String, &String> = previous
            .objects
            .values()
            .flat_map(|o| o.events.iter())
            .collect();
        let mut marked = 0;
        for object in self.objects.values_mut() {
            let mut hit = false;
            for id in refused {
                if object.events.contains_key(id) {
                    hit = true;
                    match before.get(id) {
                        Some(version) => object.events.insert(id.clone(), (*version).clone()),
                        None => object.events.remove(id),
                    };
                }
            }
            if hit {
                object.refused = true;
                marked += 1;
            }
        }
        marked
    }

    /// Have the next sync fetch every refused object again: the sync token is dropped (the whole
    /// collection is listed) and their etags forgotten; returns how many. Called on the first
    /// sync of a run.
    pub fn retry_refused(&mut self) -> usize {
        let mut retried = 0;
        for object in self.objects.values_mut().filter(|o| o.refused) {
            object.etag = None;
            object.refused = false;
            retried += 1;
        }
        if retried > 0 {
            self.sync_token = None;
        }
        retried
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
