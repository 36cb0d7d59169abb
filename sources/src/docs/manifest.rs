use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};
use sha2::{Digest, Sha256};

use crate::SourceError;

/// What the documents source last published for one `(tenant, folder)`: path → version, and
/// when each line of each file was written.
///
/// It is written only after the broker acknowledged the events, so a failed run republishes.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Manifest {
    /// Tenant the folder was ingested into.
    pub tenant: String,
    /// Canonical path of the folder.
    pub root: String,
    /// Relative path → published version.
    pub files: BTreeMap<String, String>,
    /// Relative path → its lines, in order: a hash of the line and when it was written (ms
    /// since the Unix epoch). A line kept through an edit keeps its time (the `written` extra).
    #[serde(default)]
    pub lines: BTreeMap<String, Vec<LineStamp>>,
}

/// One line of a published file: a hash of its text and when it was written.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct LineStamp(pub u64, pub i64);

impl Manifest {
    /// Where the manifest of `(tenant, root)` lives under `state_dir`.
    pub fn path(state_dir: &Path, tenant: &str, root: &Path) -> PathBuf {
        let digest = Sha256::digest(format!("{tenant}\0{}", root.display()).as_bytes());
        state_dir
            .join("docs")
            .join(format!("{}.json", hex::encode(&digest[..12])))
    }

    /// Load the manifest, or an empty one when none was written yet.
    pub fn load(state_dir: &Path, tenant: &str, root: &Path) -> Result<Self, SourceError> {
        let path = Self::path(state_dir, tenant, root);
        match std::fs::read(&path) {
            Ok(bytes) => serde_json::from_slice(&bytes).map_err(|e| {
                SourceError::Config(format!("corrupt manifest {}: {e}", path.display()))
            }),
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(Manifest {
                tenant: tenant.to_string(),
                root: root.display().to_string(),
                ..Manifest::default()
            }),
            Err(e) => Err(SourceError::io(path)(e)),
        }
    }

    /// Undo what this (next) manifest says about `source_id`, back to `previous`: for an event
    /// that was dead-lettered instead of published, so the next scan sends it again.
    pub fn forget(&mut self, source_id: &str, previous: &Manifest) {
        match previous.files.get(source_id) {
            Some(version) => self.files.insert(source_id.to_string(), version.clone()),
            None => self.files.remove(source_id),
        };
        match previous.lines.get(source_id) {
            Some(lines) => self.lines.insert(source_id.to_string(), lines.clone()),
            None => self.lines.remove(source_id),
        };
    }

    /// Write the manifest atomically (temp file + rename).
    pub fn save(&self, state_dir: &Path) -> Result<(), SourceError> {
        let path = Self::path(state_dir, &self.tenant, Path::new(&self.root));
        let dir = path.parent().expect("manifest path has a parent");
        std::fs::create_dir_all(dir).map_err(SourceError::io(dir))?;
        let tmp = path.with_extension("json.tmp");
        let bytes = serde_json::to_vec(self).expect("manifests serialize");
        std::fs::write(&tmp, bytes).map_err(SourceError::io(&tmp))?;
        std::fs::rename(&tmp, &path).map_err(SourceError::io(&path))
    }
}
