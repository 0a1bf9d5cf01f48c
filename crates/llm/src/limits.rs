//! The rate limits a provider reports in its response headers, read from every answer (not only a
//! 429's), so that requests can be paced to them before the provider has to refuse one.
//!
//! Three header families are read, all as limits per minute:
//!
//! | provider | requests | tokens | reset |
//! |---|---|---|---|
//! | OpenAI (and servers that copy it) | `x-ratelimit-{limit,remaining,reset}-requests` | `x-ratelimit-{limit,remaining,reset}-tokens` | a Go duration (`6m0s`, `20ms`) |
//! | OpenRouter | `x-ratelimit-{limit,remaining,reset}` | none | a Unix time in milliseconds |
//! | Anthropic | `anthropic-ratelimit-requests-*` | `anthropic-ratelimit-input-tokens-*`, else `-tokens-*`; output tokens apart | an RFC 3339 time |
//!
//! Anthropic counts input and output tokens against separate limits; arena's token estimate of
//! a request is mostly its prompt, so its input-token limit paces the token bucket, and an
//! exhausted output-token limit holds requests until it resets.

use std::time::{Duration, SystemTime, UNIX_EPOCH};

use reqwest::header::HeaderMap;

use super::ratelimit::{parse_duration, parse_rfc3339};

/// One limit as an answer reports it; each part is `None` when the headers do not say.
#[derive(Debug, Clone, Copy, Default, PartialEq)]
pub struct LimitState {
    /// The limit, per minute.
    pub limit: Option<f64>,
    /// What is left of it.
    pub remaining: Option<f64>,
    /// Time until it is wholly available again.
    pub reset: Option<Duration>,
}

impl LimitState {
    fn is_known(&self) -> bool {
        self.limit.is_some() || self.remaining.is_some() || self.reset.is_some()
    }

    /// Whether nothing is left of it.
    pub(crate) fn is_exhausted(&self) -> bool {
        self.remaining.is_some_and(|r| r <= 0.0)
    }
}

/// The limits one answer reports.
#[derive(Debug, Clone, Copy, Default, PartialEq)]
pub struct ReportedLimits {
    /// Requests per minute.
    pub requests: LimitState,
    /// Tokens per minute (for Anthropic its input tokens, or its combined `tokens` without them).
    pub tokens: LimitState,
    /// Anthropic's output tokens per minute.
    pub output_tokens: LimitState,
}

impl ReportedLimits {
    /// Reads the limits in `headers`, resets measured from `now` (which the caller passes so that
    /// tests can fix it).
    pub fn read(headers: &HeaderMap, now: SystemTime) -> Self {
        let header = |name: &str| headers.get(name).and_then(|v| v.to_str().ok());
        let number = |name: &str| header(name).and_then(|v| v.trim().parse::<f64>().ok());
        let openai = |limit: &str| LimitState {
            limit: number(&format!("x-ratelimit-limit-{limit}")),
            remaining: number(&format!("x-ratelimit-remaining-{limit}")),
            reset: header(&format!("x-ratelimit-reset-{limit}")).and_then(parse_duration),
        };
        let anthropic = |limit: &str| LimitState {
            limit: number(&format!("anthropic-ratelimit-{limit}-limit")),
            remaining: number(&format!("anthropic-ratelimit-{limit}-remaining")),
            reset: header(&format!("anthropic-ratelimit-{limit}-reset"))
                .and_then(parse_rfc3339)
                // A reset already past (clock skew) means the limit is available again.
                .map(|at| at.duration_since(now).unwrap_or(Duration::ZERO)),
        };
        let openrouter = LimitState {
            limit: number("x-ratelimit-limit"),
            remaining: number("x-ratelimit-remaining"),
            reset: number("x-ratelimit-reset").map(|at| unix_reset(at, now)),
        };
        let mut requests = openai("requests");
        if !requests.is_known() {
            requests = anthropic("requests");
        }
        if !requests.is_known() {
            requests = openrouter;
        }
        let mut tokens = openai("tokens");
        if !tokens.is_known() {
            tokens = anthropic("input-tokens");
        }
        if !tokens.is_known() {
            tokens = anthropic("tokens");
        }
        Self {
            requests,
            tokens,
            output_tokens: anthropic("output-tokens"),
        }
    }

    /// Whether the headers said anything about limits.
    pub(crate) fn is_known(&self) -> bool {
        self.requests.is_known() || self.tokens.is_known() || self.output_tokens.is_known()
    }
}

/// The time until a reset given as a Unix time, in milliseconds (OpenRouter) or, for a value too
/// small to be milliseconds of this century, in seconds.
fn unix_reset(at: f64, now: SystemTime) -> Duration {
    let seconds = if at > 1e11 { at / 1000.0 } else { at };
    let at = Duration::try_from_secs_f64(seconds)
        .ok()
        .and_then(|d| UNIX_EPOCH.checked_add(d));
    at.and_then(|at| at.duration_since(now).ok())
        .unwrap_or(Duration::ZERO)
}

#[cfg(test)]
mod tests {
    use reqwest::header::{HeaderName, HeaderValue};

    use super::*;

    /// The headers of a recorded response head (status line first, then `name: value` lines).
    fn recorded(head: &str) -> HeaderMap {
        let mut map = HeaderMap::new();
        for line in head.lines().skip(1) {
            let (name, value) = line.split_once(':').expect("a header line");
            map.insert(
                HeaderName::from_bytes(name.trim().as_bytes()).expect("header name"),
                HeaderValue::from_str(value.trim()).expect("header value"),
            );
        }
        map
    }

    fn at(text: &str) -> SystemTime {
        parse_rfc3339(text).expect("valid time")
    }

    #[test]
    fn reads_openai_limits() {
        let headers = recorded(include_str!("fixtures/openai_ratelimit_headers.txt"));
        let limits = ReportedLimits::read(&headers, SystemTime::now());
        assert_eq!(
            limits.requests,
            LimitState {
                limit: Some(5000.0),
                remaining: Some(4999.0),
                reset: Some(Duration::from_millis(12)),
            }
        );
        assert_eq!(
            limits.tokens,
            LimitState {
                limit: Some(800_000.0),
                remaining: Some(799_412.0),
                reset: Some(Duration::from_millis(44)),
            }
        );
        assert_eq!(limits.output_tokens, LimitState::default());
        assert!(!limits.requests.is_exhausted());
    }

    #[test]
    fn reads_anthropic_limits_input_tokens_first() {
        let headers = recorded(include_str!("fixtures/anthropic_ratelimit_headers.txt"));
        let limits = ReportedLimits::read(&headers, at("2025-12-02T14:05:11Z"));
        assert_eq!(
            limits.requests,
            LimitState {
                limit: Some(50.0),
                remaining: Some(47.0),
                reset: Some(Duration::from_secs(2)),
            }
        );
        assert_eq!(
            limits.tokens,
            LimitState {
                limit: Some(20_000.0),
                remaining: Some(0.0),
                reset: Some(Duration::from_secs(19)),
            }
        );
        assert!(limits.tokens.is_exhausted());
        assert_eq!(limits.output_tokens.limit, Some(8000.0));
        assert_eq!(limits.output_tokens.reset, Some(Duration::from_secs(1)));
        // Later than every reset: all are available again.
        let late = ReportedLimits::read(&headers, at("2025-12-02T14:06:00Z"));
        assert_eq!(late.tokens.reset, Some(Duration::ZERO));
    }

    #[test]
    fn reads_openrouter_limits() {
        let headers = recorded(include_str!("fixtures/openrouter_429_headers.txt"));
        // 1764684360000 ms is 2025-12-02T14:06:00Z.
        let limits = ReportedLimits::read(&headers, at("2025-12-02T14:05:11Z"));
        assert_eq!(
            limits.requests,
            LimitState {
                limit: Some(20.0),
                remaining: Some(0.0),
                reset: Some(Duration::from_secs(49)),
            }
        );
        assert!(limits.requests.is_exhausted());
        assert_eq!(limits.tokens, LimitState::default());
    }

    #[test]
    fn knows_when_nothing_is_reported() {
        let headers = recorded("HTTP/1.1 200 OK\ncontent-type: application/json\n");
        let limits = ReportedLimits::read(&headers, SystemTime::now());
        assert!(!limits.is_known());
        assert_eq!(limits, ReportedLimits::default());
    }
}
