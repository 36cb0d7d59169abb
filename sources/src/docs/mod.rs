//! The documents source: Markdown and plain-text files in a folder.
//!
//! Each file becomes one `DOCUMENT` event keyed `<tenant>/<path relative to the folder>`. A
//! manifest (in the state directory) remembers the version published per file, so an unchanged
//! file is not republished and a removed file is published once as a tombstone. It also
//! remembers when each line was written: a republished file says so in its `written` extra
//! (`start-end@ms` character spans), so a statement kept through an edit stays valid from when
//! it was first written, not from the edit.

mod config;
mod manifest;
mod source;

pub use config::DocsConfig;
pub use manifest::{LineStamp, Manifest};
pub use source::{DocsScan, declared_date, line_stamps, named_date, scan_folder, written_spans};
