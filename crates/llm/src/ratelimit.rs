//! How long a rate-limited or overloaded provider asks us to wait, read from its response headers.
//!
//! In order of preference:
//! 1. `retry-after-ms` (OpenAI, milliseconds) and `retry-after` (seconds; every provider);
//! 2. Anthropic's `anthropic-ratelimit-<limit>-reset` (an RFC 3339 time) beside
//!    `anthropic-ratelimit-<limit>-remaining`;
//! 3. OpenAI's `x-ratelimit-reset-<limit>` (a Go-style duration such as `6m0s` or `20ms`) beside
//!    `x-ratelimit-remaining-<limit>`.
//!
//! Of the reset headers, those of limits with nothing remaining decide, the latest of them since
//! every exhausted limit must have reset; when no limit is known to be exhausted, the earliest
//! reset is a first guess that the next answer will correct.
//!
//! ```
//! use std::time::{Duration, SystemTime};
//!
//! use arena_llm::retry_delay;
//! use reqwest::header::{HeaderMap, HeaderValue};
//!
//! let mut headers = HeaderMap::new();
//! headers.insert("x-ratelimit-remaining-tokens", HeaderValue::from_static("0"));
//! headers.insert("x-ratelimit-reset-tokens", HeaderValue::from_static("1m30s"));
//! assert_eq!(retry_delay(&headers, SystemTime::now()), Some(Duration::from_secs(90)));
//! ```

use std::time::{Duration, SystemTime, UNIX_EPOCH};

use reqwest::header::HeaderMap;

use super::retry::parse_retry_after;

/// Anthropic's reset headers are `anthropic-ratelimit-<limit>-reset`.
const ANTHROPIC_PREFIX: &str = "anthropic-ratelimit-";
/// OpenAI's reset headers are `x-ratelimit-reset-<limit>`.
const OPENAI_RESET_PREFIX: &str = "x-ratelimit-reset-";

/// The wait the headers ask for, measured from `now` (which the caller passes so that tests can
/// fix it). `None` when no header says anything usable.
pub fn retry_delay(headers: &HeaderMap, now: SystemTime) -> Option<Duration> {
    let header = |name: &str| headers.get(name).and_then(|v| v.to_str().ok());
    let ms_delay = header("retry-after-ms")
        .and_then(|v| v.trim().parse::<f64>().ok())
        .and_then(|ms| Duration::try_from_secs_f64(ms / 1000.0).ok());
    if let Some(delay) = ms_delay {
        return Some(delay);
    }
    if let Some(delay) = header("retry-after").and_then(parse_retry_after) {
        return Some(delay);
    }
    let mut resets: Vec<(Duration, bool)> = Vec::new();
    for (name, value) in headers {
        let Ok(value) = value.to_str() else {
            continue;
        };
        let name = name.as_str();
        if let Some(limit) = name
            .strip_prefix(ANTHROPIC_PREFIX)
            .and_then(|rest| rest.strip_suffix("-reset"))
        {
            let Some(at) = parse_rfc3339(value) else {
                continue;
            };
            // A reset already past (clock skew) means the limit is available again.
            let delay = at.duration_since(now).unwrap_or(Duration::ZERO);
            let remaining = header(&format!("{ANTHROPIC_PREFIX}{limit}-remaining"));
            resets.push((delay, is_zero(remaining)));
        } else if let Some(limit) = name.strip_prefix(OPENAI_RESET_PREFIX) {
            let Some(delay) = parse_duration(value) else {
                continue;
            };
            let remaining = header(&format!("x-ratelimit-remaining-{limit}"));
            resets.push((delay, is_zero(remaining)));
        }
    }
    let exhausted = resets
        .iter()
        .filter(|(_, exhausted)| *exhausted)
        .map(|(delay, _)| *delay)
        .max();
    exhausted.or_else(|| resets.iter().map(|(delay, _)| *delay).min())
}

/// Whether a `remaining` header says the limit is used up.
fn is_zero(remaining: Option<&str>) -> bool {
    remaining.is_some_and(|r| r.trim().parse::<f64>().is_ok_and(|n| n <= 0.0))
}

/// Parses a Go-style duration as OpenAI sends it (`1s`, `6m0s`, `1h2m3.5s`, `20ms`) and the
/// protobuf form Gemini uses (`17s`, `0.5s`).
pub(super) fn parse_duration(text: &str) -> Option<Duration> {
    let mut rest = text.trim();
    if rest.is_empty() {
        return None;
    }
    let mut total = 0.0_f64;
    while !rest.is_empty() {
        let number_len = rest
            .find(|c: char| !(c.is_ascii_digit() || c == '.'))
            .unwrap_or(rest.len());
        let number: f64 = rest[..number_len].parse().ok()?;
        rest = &rest[number_len..];
        let unit_len = rest
            .find(|c: char| c.is_ascii_digit() || c == '.')
            .unwrap_or(rest.len());
        let seconds_per_unit = match &rest[..unit_len] {
            "h" => 3600.0,
            "m" => 60.0,
            "s" => 1.0,
            "ms" => 1e-3,
            "us" | "µs" => 1e-6,
            "ns" => 1e-9,
            _ => return None,
        };
        rest = &rest[unit_len..];
        total += number * seconds_per_unit;
    }
    Duration::try_from_secs_f64(total).ok()
}

/// Parses an RFC 3339 time (`2025-06-01T12:00:30Z`, fractions and `+hh:mm` offsets allowed).
pub(super) fn parse_rfc3339(text: &str) -> Option<SystemTime> {
    let text = text.trim();
    let (date, time) = text.split_once(['T', 't', ' '])?;
    let mut date_parts = date.splitn(3, '-');
    let year: i64 = date_parts.next()?.parse().ok()?;
    let month: u32 = date_parts.next()?.parse().ok()?;
    let day: u32 = date_parts.next()?.parse().ok()?;
    if !(1..=12).contains(&month) || !(1..=31).contains(&day) {
        return None;
    }
    let (clock, offset_seconds) = if let Some(clock) = time.strip_suffix(['Z', 'z']) {
        (clock, 0)
    } else {
        let sign_at = time.rfind(['+', '-'])?;
        let (clock, offset) = time.split_at(sign_at);
        let sign = if offset.starts_with('-') { -1 } else { 1 };
        let (hours, minutes) = offset[1..].split_once(':')?;
        let hours: i64 = hours.parse().ok()?;
        let minutes: i64 = minutes.parse().ok()?;
        (clock, sign * (hours * 3600 + minutes * 60))
    };
    let mut clock_parts = clock.splitn(3, ':');
    let hour: i64 = clock_parts.next()?.parse().ok()?;
    let minute: i64 = clock_parts.next()?.parse().ok()?;
    let second: f64 = clock_parts.next()?.parse().ok()?;
    if hour > 23 || minute > 59 || !(0.0..61.0).contains(&second) {
        return None;
    }
    let days = days_from_civil(year, month, day);
    let whole = days * 86_400 + hour * 3600 + minute * 60 - offset_seconds;
    let unix = Duration::try_from_secs_f64(whole as f64 + second).ok()?;
    UNIX_EPOCH.checked_add(unix)
}

/// Days from 1970-01-01 to the given proleptic Gregorian date (Howard Hinnant's algorithm).
fn days_from_civil(year: i64, month: u32, day: u32) -> i64 {
    let year = if month <= 2 { year - 1 } else { year };
    let era = year.div_euclid(400);
    let year_of_era = year - era * 400;
    let month = i64::from(month);
    let shifted_month = if month > 2 { month - 3 } else { month + 9 };
    let day_of_year = (153 * shifted_month + 2) / 5 + i64::from(day) - 1;
    let day_of_era = year_of_era * 365 + year_of_era / 4 - year_of_era / 100 + day_of_year;
    era * 146_097 + day_of_era - 719_468
}

#[cfg(test)]
mod tests {
    use reqwest::header::{HeaderName, HeaderValue};

    use super::*;

    fn headers(pairs: &[(&str, &str)]) -> HeaderMap {
        let mut map = HeaderMap::new();
        for (name, value) in pairs {
            map.insert(
                HeaderName::from_bytes(name.as_bytes()).expect("header name"),
                HeaderValue::from_str(value).expect("header value"),
            );
        }
        map
    }

    fn at(text: &str) -> SystemTime {
        parse_rfc3339(text).expect("valid time")
    }

    #[test]
    fn parses_go_and_protobuf_durations() {
        assert_eq!(parse_duration("1s"), Some(Duration::from_secs(1)));
        assert_eq!(parse_duration("6m0s"), Some(Duration::from_secs(360)));
        assert_eq!(parse_duration("20ms"), Some(Duration::from_millis(20)));
        assert_eq!(
            parse_duration("1h2m3.5s"),
            Some(Duration::from_millis(3_723_500))
        );
        assert_eq!(parse_duration("0.5s"), Some(Duration::from_millis(500)));
        for bad in ["", "5", "s", "3 days", "1x", "-1s"] {
            assert_eq!(parse_duration(bad), None, "{bad}");
        }
    }

    #[test]
    fn parses_rfc3339_times() {
        assert_eq!(at("1970-01-01T00:00:00Z"), UNIX_EPOCH);
        // 2025-06-01T12:00:30Z is 1_748_779_230 s after the epoch.
        let expected = UNIX_EPOCH + Duration::from_secs(1_748_779_230);
        assert_eq!(at("2025-06-01T12:00:30Z"), expected);
        assert_eq!(at("2025-06-01T14:00:30+02:00"), expected);
        assert_eq!(at("2025-06-01T07:00:30-05:00"), expected);
        assert_eq!(
            at("2025-06-01T12:00:30.25Z"),
            expected + Duration::from_millis(250)
        );
        // A leap day.
        assert_eq!(
            at("2024-03-01T00:00:00Z")
                .duration_since(at("2024-02-28T00:00:00Z"))
                .ok(),
            Some(Duration::from_secs(2 * 86_400))
        );
        for bad in [
            "2025-13-01T00:00:00Z",
            "2025-06-01",
            "yesterday",
            "2025-06-01T25:00:00Z",
        ] {
            assert_eq!(parse_rfc3339(bad), None, "{bad}");
        }
    }

    #[test]
    fn retry_after_headers_come_first() {
        let now = at("2025-06-01T12:00:00Z");
        let h = headers(&[
            ("retry-after", "7"),
            ("anthropic-ratelimit-requests-remaining", "0"),
            ("anthropic-ratelimit-requests-reset", "2025-06-01T12:01:00Z"),
        ]);
        assert_eq!(retry_delay(&h, now), Some(Duration::from_secs(7)));
        let h = headers(&[("retry-after-ms", "1500"), ("retry-after", "2")]);
        assert_eq!(retry_delay(&h, now), Some(Duration::from_millis(1500)));
        assert_eq!(retry_delay(&HeaderMap::new(), now), None);
    }

    #[test]
    fn anthropic_resets_of_exhausted_limits_decide() {
        let now = at("2025-06-01T12:00:00Z");
        let h = headers(&[
            ("anthropic-ratelimit-requests-remaining", "49"),
            ("anthropic-ratelimit-requests-reset", "2025-06-01T12:00:02Z"),
            ("anthropic-ratelimit-input-tokens-remaining", "0"),
            (
                "anthropic-ratelimit-input-tokens-reset",
                "2025-06-01T12:00:40Z",
            ),
            ("anthropic-ratelimit-output-tokens-remaining", "0"),
            (
                "anthropic-ratelimit-output-tokens-reset",
                "2025-06-01T12:00:25Z",
            ),
        ]);
        assert_eq!(retry_delay(&h, now), Some(Duration::from_secs(40)));
        // Nothing known to be exhausted: the earliest reset.
        let h = headers(&[
            ("anthropic-ratelimit-tokens-reset", "2025-06-01T12:00:09Z"),
            ("anthropic-ratelimit-requests-reset", "2025-06-01T12:00:03Z"),
        ]);
        assert_eq!(retry_delay(&h, now), Some(Duration::from_secs(3)));
        // A reset in the past.
        let h = headers(&[("anthropic-ratelimit-tokens-reset", "2025-06-01T11:59:00Z")]);
        assert_eq!(retry_delay(&h, now), Some(Duration::ZERO));
    }

    #[test]
    fn openai_resets_of_exhausted_limits_decide() {
        let now = SystemTime::now();
        let h = headers(&[
            ("x-ratelimit-remaining-requests", "0"),
            ("x-ratelimit-reset-requests", "8.64s"),
            ("x-ratelimit-remaining-tokens", "120"),
            ("x-ratelimit-reset-tokens", "20ms"),
        ]);
        assert_eq!(retry_delay(&h, now), Some(Duration::from_millis(8640)));
        let h = headers(&[
            ("x-ratelimit-reset-requests", "1m0s"),
            ("x-ratelimit-reset-tokens", "2s"),
        ]);
        assert_eq!(retry_delay(&h, now), Some(Duration::from_secs(2)));
        let h = headers(&[("x-ratelimit-reset-tokens", "soon")]);
        assert_eq!(retry_delay(&h, now), None);
    }
}
