//! One call of an OpenAI-compatible `POST {base_url}/chat/completions`: the messages, the answer
//! schema as `response_format` (`{"type": "json_object", "schema": …}`, which llama.cpp's
//! server turns into a grammar), temperature 0 and a fixed seed; the answer's text, its token
//! counts and how long it took.

use std::time::{Duration, Instant};

use serde::{Deserialize, Serialize};

use super::LlmConfig;

/// One chat message.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Message {
    /// `system`, `user` or `assistant`.
    pub role: String,
    /// The text.
    pub content: String,
}

impl Message {
    /// A message of `role`.
    pub fn new(role: &str, content: impl Into<String>) -> Self {
        Message {
            role: role.into(),
            content: content.into(),
        }
    }
}

/// What one call returned.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Reply {
    /// The answer's text.
    pub content: String,
    /// Prompt tokens, as the endpoint counted them.
    pub prompt_tokens: u64,
    /// Completion tokens.
    pub completion_tokens: u64,
    /// How long the call took.
    pub latency: Duration,
}

/// Why a call failed (the key is never part of it).
#[derive(Debug, thiserror::Error)]
pub enum CallError {
    /// The request could not be made or read (refused connection, timeout, …).
    #[error("calling the model: {0}")]
    Http(#[source] reqwest::Error),
    /// The endpoint answered with an error status.
    #[error("the model endpoint answered {status}: {body}")]
    Status {
        /// The status.
        status: u16,
        /// The start of the body.
        body: String,
    },
    /// The endpoint answered something that is not a chat completion.
    #[error("not a chat completion: {0}")]
    BadReply(String),
}

#[derive(Deserialize)]
struct Completion {
    choices: Vec<Choice>,
    #[serde(default)]
    usage: Option<Usage>,
}

#[derive(Deserialize)]
struct Choice {
    message: ReplyMessage,
}

#[derive(Deserialize)]
struct ReplyMessage {
    #[serde(default)]
    content: Option<String>,
}

#[derive(Deserialize)]
struct Usage {
    #[serde(default)]
    prompt_tokens: u64,
    #[serde(default)]
    completion_tokens: u64,
}

/// A client of one endpoint and model.
#[derive(Clone)]
pub struct ChatClient {
    http: reqwest::Client,
    url: String,
    api_key: Option<String>,
    model: String,
    max_tokens: u32,
}

impl std::fmt::Debug for ChatClient {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ChatClient")
            .field("url", &self.url)
            .field("model", &self.model)
            .finish()
    }
}

/// The chat-completions URL of an API root.
///
/// ```
/// use epigraph::llm::client::completions_url;
/// assert_eq!(completions_url("http://127.0.0.1:8090/v1/"), "http://127.0.0.1:8090/v1/chat/completions");
/// ```
pub fn completions_url(base_url: &str) -> String {
    format!("{}/chat/completions", base_url.trim().trim_end_matches('/'))
}

impl ChatClient {
    /// A client for `[llm]`.
    pub fn new(config: &LlmConfig) -> Result<Self, CallError> {
        let http = reqwest::Client::builder()
            .timeout(config.timeout())
            .build()
            .map_err(CallError::Http)?;
        Ok(ChatClient {
            http,
            url: completions_url(&config.base_url),
            api_key: config.api_key.clone().filter(|k| !k.is_empty()),
            model: config.model.clone(),
            max_tokens: config.max_tokens,
        })
    }

    /// The request body sent for `messages` under `schema`.
    pub fn body(&self, messages: &[Message], schema: &serde_json::Value) -> serde_json::Value {
        serde_json::json!({
            "model": self.model,
            "messages": messages,
            "temperature": 0.0,
            "seed": 0,
            "max_tokens": self.max_tokens,
            "response_format": {"type": "json_object", "schema": schema},
        })
    }

    /// One call.
    pub async fn complete(
        &self,
        messages: &[Message],
        schema: &serde_json::Value,
    ) -> Result<Reply, CallError> {
        let started = Instant::now();
        let mut request = self.http.post(&self.url).json(&self.body(messages, schema));
        if let Some(key) = &self.api_key {
            request = request.bearer_auth(key);
        }
        let response = request.send().await.map_err(CallError::Http)?;
        let status = response.status();
        let text = response.text().await.map_err(CallError::Http)?;
        let latency = started.elapsed();
        if !status.is_success() {
            return Err(CallError::Status {
                status: status.as_u16(),
                body: text.chars().take(300).collect(),
            });
        }
        let completion: Completion =
            serde_json::from_str(&text).map_err(|e| CallError::BadReply(e.to_string()))?;
        let content = completion
            .choices
            .into_iter()
            .next()
            .and_then(|c| c.message.content)
            .ok_or_else(|| CallError::BadReply("no choice with content".into()))?;
        let usage = completion.usage.unwrap_or(Usage {
            prompt_tokens: 0,
            completion_tokens: 0,
        });
        Ok(Reply {
            content,
            prompt_tokens: usage.prompt_tokens,
            completion_tokens: usage.completion_tokens,
            latency,
        })
    }
}
