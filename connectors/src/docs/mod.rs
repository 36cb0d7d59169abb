//! The documents source: Markdown and plain-text files in a folder.
//!
//! Each file becomes one `DOCUMENT` event keyed `<tenant>/<path relative to the folder>`. A
//! manifest (in the state directory) remembers the version published per file, so an unchanged
//! file is not republished and a removed file is published once as a tombstone.

mod config;
mod manifest;
mod source;

pub use config::DocsConfig;
pub use manifest::Manifest;
pub use source::{DocsScan, scan_folder};
