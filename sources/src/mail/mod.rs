//! The e-mail source: mbox files, `.eml` files and maildir folders.
//!
//! Each message becomes one `EMAIL` event keyed `<tenant>/mail/<Message-ID>` (or
//! `mail/sha256:<hex>` when the message has no Message-ID), so the same message read from two
//! stores is one item. The event carries:
//! - `title`: the decoded Subject (RFC 2047 encoded words, any charset);
//! - `body`: the text/plain part, else the HTML part as text, with quoted replies and the
//!   signature cut when [`MailConfig`] says so (kept in the `quoted_text` and `signature`
//!   extras);
//! - `occurred_at` from Date; `authors` from From; `participants` from To, Cc and Bcc;
//! - `thread_id`: `mail/<first References id>`, else `mail/<In-Reply-To>`, else its own id;
//! - `links`: one `attachment` per attachment (name, media type, size; never the content) and
//!   one `reply_to` to the parent message;
//! - and, for each PDF, DOCX, PPTX or XLSX attachment, a `DOCUMENT` event of its own holding its
//!   text (`<message id>/attachment/<n>`, linked `attached_to` the message), or a dead letter
//!   with the reason when it cannot be read ([`ParsedMail::into_events`]);
//! - `extras`: `message_id`, `in_reply_to`, `references` (space separated), `charset`,
//!   `mailbox` (the file or folder name), and for maildir `maildir_folder`, `maildir_flags`.
//!
//! A message that cannot be read (truncated, not an e-mail, too large) becomes a dead letter
//! with the reason, its location and its bytes; readers never stop on one bad message.
//!
//! Pieces: [`parse_message`] (pure, one message), the readers [`read_mbox`], [`read_eml`] and
//! [`read_maildir`], and inside, the mbox splitter, the HTML-to-text converter and the
//! quote/signature splitter.

mod body;
mod config;
mod mbox;
mod message;
mod source;

pub use config::MailConfig;
pub use message::{AttachedFile, MailError, MailEvents, ParsedMail, parse_message};
pub use source::{read_eml, read_maildir, read_mbox};

#[cfg(test)]
mod tests;
