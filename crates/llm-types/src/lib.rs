//! What a language-model call says and costs, apart from how it is sent: chat messages (with
//! their pictures and tool calls), token usage, and prices.
//!
//! These types outlive a call: the store keeps them (requests, usage, costs, pictures), and the
//! reports read them back. They live below both the LLM client (`arena-llm`, which sends and
//! decodes them, and re-exports them under its own name) and the store, so that neither depends
//! on the other and an edit to a wire format does not rebuild the store. No HTTP here.

mod pricing;

use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};

pub use self::pricing::{CallCost, CostSource, Price, PriceTable};

/// One message of a chat.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ChatMessage {
    /// `system`, `user`, `assistant`, or `tool` for the result of a tool call.
    pub role: String,
    /// The text.
    pub content: String,
    /// Pictures shown with the text (a board for a vision model), after it; serialised as
    /// references (see [`Image`]), and not at all when there are none, so a message without
    /// pictures reads as it always did.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub images: Vec<Image>,
    /// The tools an `assistant` message called (empty for every other message, and skipped
    /// when stored, so a conversation without tools is stored as it always was).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub tool_calls: Vec<ToolCall>,
    /// For a `tool` message: the id of the call whose result it is.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tool_call_id: Option<String>,
    /// For an `assistant` message of a dialog without tool calls: the reasoning blocks of the
    /// reply it repeats that the provider wants back unchanged (Anthropic's `thinking` and
    /// `redacted_thinking` blocks, signatures included), which open the message again as they
    /// opened the reply. Empty for the other formats and skipped when stored without any, so a
    /// conversation without them is stored as it always was. (A tool dialog's message carries
    /// them on its first call, [`ToolCall::thinking`].)
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub thinking: Vec<Value>,
}

impl ChatMessage {
    /// A message with the given role and text.
    pub fn new(role: impl Into<String>, content: impl Into<String>) -> Self {
        Self {
            role: role.into(),
            content: content.into(),
            images: Vec::new(),
            tool_calls: Vec::new(),
            tool_call_id: None,
            thinking: Vec::new(),
        }
    }

    /// The message with `image` shown after its text (and after the pictures it had).
    pub fn with_image(mut self, image: Image) -> Self {
        self.images.push(image);
        self
    }

    /// An `assistant` message: the reply's text and the tools it called.
    pub fn assistant(content: impl Into<String>, tool_calls: Vec<ToolCall>) -> Self {
        Self {
            tool_calls,
            ..Self::new("assistant", content)
        }
    }

    /// A `tool` message: the result of the call `call_id`.
    pub fn tool_result(call_id: impl Into<String>, content: impl Into<String>) -> Self {
        Self {
            tool_call_id: Some(call_id.into()),
            ..Self::new("tool", content)
        }
    }
}

/// A picture sent with a message, sent inline (base64) in each provider's format: OpenAI chat's
/// `image_url` data URL, the Responses API's `input_image`, Anthropic's base64 `image` block,
/// Gemini's `inlineData`.
///
/// Serialised, an image is a reference, its media type and the SHA-256 of its bytes, never the
/// bytes: a stored request names its pictures, and the store keeps each distinct picture once
/// (`images`, see `store::images`). A board picture is 5 to 20 KB, and a game shows one per ply
/// that often repeats (a retry, a replay, the same position in another game), where the request
/// around it is 1 to 3 KB; inlined, pictures would be nearly all of a store. Read back from JSON,
/// an image has its reference and no bytes until the store fills them ([`Image::is_resolved`]).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Image {
    /// The media type, `image/png`.
    pub media_type: String,
    /// The SHA-256 of the bytes, in lower-case hex.
    pub sha256: String,
    /// The bytes; empty in an image read back from JSON until resolved from the store.
    #[serde(skip)]
    pub data: std::sync::Arc<[u8]>,
}

impl Image {
    /// An image of `media_type` holding `data`, its SHA-256 computed.
    pub fn new(media_type: impl Into<String>, data: impl Into<std::sync::Arc<[u8]>>) -> Self {
        let data = data.into();
        Self {
            media_type: media_type.into(),
            sha256: sha256_hex(&data),
            data,
        }
    }

    /// Whether the bytes are here (an image read back from JSON has only its reference).
    pub fn is_resolved(&self) -> bool {
        !self.data.is_empty()
    }

    /// The bytes in standard base64, as every provider takes them.
    pub fn base64(&self) -> String {
        use base64::Engine as _;
        base64::engine::general_purpose::STANDARD.encode(&self.data)
    }

    /// The image as a `data:` URL, as the OpenAI formats take it.
    pub fn data_url(&self) -> String {
        format!("data:{};base64,{}", self.media_type, self.base64())
    }
}

/// The SHA-256 of `data` in lower-case hex.
pub fn sha256_hex(data: &[u8]) -> String {
    use sha2::Digest as _;
    use std::fmt::Write as _;
    let digest = sha2::Sha256::digest(data);
    let mut hex = String::with_capacity(64);
    for byte in digest {
        let _ = write!(hex, "{byte:02x}");
    }
    hex
}

/// A tool call in a model's reply. Fields are in alphabetical order, as the store writes
/// requests.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ToolCall {
    /// The arguments as JSON text, as the model wrote them (Anthropic and Gemini send an
    /// object, written out here compactly). It may not be valid JSON: the reader decides.
    pub arguments: String,
    /// The provider's id of the call, which its result names (OpenAI's `id`, the Responses
    /// API's `call_id`, Anthropic's `tool_use` id; Gemini's `id`, or `call_N` by position
    /// when the model gave none).
    pub id: String,
    /// The tool's name.
    pub name: String,
    /// Gemini's `thoughtSignature` of the part that made the call: the model's encrypted thinking,
    /// which Gemini's thinking models want back with the call in the next request of a tool
    /// dialog. Only Gemini sends it; skipped when stored without one.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub signature: Option<String>,
    /// The reasoning that came before the calls and must go back with them, on the reply's
    /// first call: Anthropic's `thinking` and `redacted_thinking` blocks as received
    /// (signatures and encrypted data included), which the API requires back unchanged in the
    /// assistant message of a tool dialog; the Responses API's `reasoning` items (id, summary,
    /// encrypted content), sent back as input items. Empty for the other formats, and skipped
    /// when stored without any.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub thinking: Vec<Value>,
}

impl ToolCall {
    /// The arguments as a JSON object, for the wire formats that send an object (Anthropic,
    /// Gemini); arguments that are not a JSON object are sent as an empty one.
    pub fn arguments_object(&self) -> Value {
        match serde_json::from_str::<Value>(&self.arguments) {
            Ok(Value::Object(map)) => Value::Object(map),
            _ => Value::Object(Map::new()),
        }
    }
}

/// Token counts reported by the server, mapped to one meaning across APIs.
///
/// The three details are `None` when the response does not report them (unknown, which is not
/// the same as zero: an Anthropic reply never splits its thinking tokens out, for instance).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Usage {
    /// Tokens in the prompt, cached ones (read or written) included.
    pub prompt_tokens: u64,
    /// Tokens generated, reasoning included.
    pub completion_tokens: u64,
    /// Their sum, as reported (or computed when the API reports none).
    pub total_tokens: u64,
    /// The part of `completion_tokens` spent reasoning, when reported.
    #[serde(default)]
    pub reasoning_tokens: Option<u64>,
    /// The part of `prompt_tokens` read from the provider's prompt cache, when reported.
    #[serde(default)]
    pub cached_tokens: Option<u64>,
    /// The part of `prompt_tokens` written to the provider's prompt cache, when reported
    /// (Anthropic's `cache_creation_input_tokens`, OpenRouter's `cache_write_tokens`).
    #[serde(default)]
    pub cache_write_tokens: Option<u64>,
}

/// What the provider itself says a call cost, when its response carries it (OpenRouter's
/// `usage.cost`, in its credits, which are US dollars).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ProviderCost {
    /// US dollars charged for the call. For a bring-your-own-key call (OpenRouter's
    /// `is_byok`), the router's fee plus the upstream provider's charge
    /// (`cost_details.upstream_inference_cost`), since both are paid.
    pub usd: f64,
    /// The provider's cost breakdown as sent (`usage.cost_details`), kept verbatim.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub details: Option<Value>,
}

impl ProviderCost {
    /// The cost reported in a usage object that follows OpenRouter's fields (`cost`,
    /// `cost_details`, `is_byok`), as both OpenAI wire formats carry it; `None` when `cost` is
    /// absent or not a finite number of at least 0 (a gateway's placeholder must not pass as a
    /// price).
    pub fn from_usage_fields(
        cost: Option<Value>,
        details: Option<Value>,
        is_byok: Option<Value>,
    ) -> Option<ProviderCost> {
        let cost = cost
            .as_ref()
            .and_then(Value::as_f64)
            .filter(|c| c.is_finite() && *c >= 0.0)?;
        let is_byok = is_byok.as_ref().and_then(Value::as_bool);
        let upstream = details
            .as_ref()
            .and_then(|d| d.get("upstream_inference_cost"))
            .and_then(Value::as_f64)
            .filter(|c| c.is_finite() && *c >= 0.0);
        let usd = match (is_byok, upstream) {
            (Some(true), Some(upstream)) => cost + upstream,
            _ => cost,
        };
        Some(ProviderCost {
            usd,
            details: details.filter(|d| !d.is_null()),
        })
    }
}
