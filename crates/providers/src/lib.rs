//! The wire formats arena speaks, one module per provider: OpenAI-compatible chat completions
//! ([`openai`]), the OpenAI Responses API ([`responses`]), Anthropic messages ([`anthropic`]) and
//! Gemini `generateContent` ([`gemini`]). Each implements `arena_llm::wire::WireFormat`; the LLM
//! client knows only that trait, and the program hands these modules to it at start with
//! [`install`].
//!
//! Why a crate of their own: every crate that calls a model (play, lua, outputs) depends on the
//! client, so a format inside the client rebuilt all of them on every edit; here, an edit
//! rebuilds this crate and the program only (measured in the book's benchmarks page).
//!
//! A new format is a new module here, a variant of `arena_llm::Provider` and its arm in
//! [`format_of`].

mod anthropic;
mod gemini;
mod openai;
mod responses;
#[cfg(test)]
mod tests;

use arena_llm::{Provider, wire::WireFormat};

/// The module that speaks `provider`'s format: the one place the formats are listed.
pub fn format_of(provider: Provider) -> &'static dyn WireFormat {
    match provider {
        Provider::OpenAiChat => &openai::OpenAiChat,
        Provider::OpenAiResponses => &responses::OpenAiResponses,
        Provider::Anthropic => &anthropic::Anthropic,
        Provider::Gemini => &gemini::Gemini,
    }
}

/// Installs these formats into the LLM client for the whole process (see
/// `arena_llm::wire::install`); a program calls it before it makes any call. Calling it again
/// is harmless.
pub fn install() {
    arena_llm::wire::install(format_of);
}
