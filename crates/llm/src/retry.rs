//! When and how long to wait before retrying a failed LLM request.
//!
//! Failures that are not the model's fault (connection errors, timeouts, the statuses OpenAI's and
//! Anthropic's SDKs retry, garbled bodies; see [`LlmError::is_transient`](super::LlmError::is_transient))
//! are retried with the SDKs' backoff, and a server's `Retry-After` is honoured. The SDKs' backoff
//! starts at 0.5 s and doubles, each wait drawn between 75 % and 100 % of it; they give up after
//! two retries and 8 s, arena instead after a total time budget (the player's `outage_s`) and a
//! longer cap, so that an endpoint that is down pauses a tournament instead of failing every game
//! at once.

use std::time::Duration;

use rand::RngExt;

/// How often and how long a transient failure is retried.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RetryPolicy {
    /// Attempts in total, the first one included (at least 1).
    pub max_attempts: u32,
    /// Delay before the first retry; it doubles with each further retry.
    pub base_delay: Duration,
    /// Upper bound of one backoff delay (a server's `Retry-After` may exceed it).
    pub max_delay: Duration,
    /// Total time budget for transient failures, counted from the first attempt: no retry is
    /// scheduled that would start after it.
    pub give_up_after: Duration,
    /// Retries of a success status whose body cannot be read as a reply (an HTML page from a
    /// gateway, a truncated body): a server that sends one may well send it again, and each may be
    /// billed, so these get a budget of their own, well below `max_attempts`.
    pub decode_retries: u32,
}

/// Retries of an undecodable success body unless a player says otherwise.
pub const DEFAULT_DECODE_RETRIES: u32 = 3;

impl Default for RetryPolicy {
    /// Twenty attempts, 0.5 s doubling to at most 60 s, within 10 minutes: rides out a restarting
    /// server or a provider outage of a few minutes; of those, at most
    /// [`DEFAULT_DECODE_RETRIES`] retries of undecodable bodies.
    fn default() -> Self {
        Self {
            max_attempts: 20,
            base_delay: Duration::from_millis(500),
            max_delay: Duration::from_secs(60),
            give_up_after: Duration::from_secs(600),
            decode_retries: DEFAULT_DECODE_RETRIES,
        }
    }
}

impl RetryPolicy {
    /// The delay before the next attempt after `attempt` attempts (1-based) failed transiently, or
    /// `None` when the policy gives up: the attempts are used up, or waiting would leave the time
    /// budget (`elapsed` is the time since the first attempt started). A server's `retry_after` is
    /// used as is; otherwise the delay is the capped exponential backoff with jitter.
    pub(crate) fn next_delay(
        &self,
        attempt: u32,
        elapsed: Duration,
        retry_after: Option<Duration>,
    ) -> Option<Duration> {
        if attempt >= self.max_attempts {
            return None;
        }
        let delay = retry_after.unwrap_or_else(|| self.backoff(attempt));
        (elapsed.saturating_add(delay) <= self.give_up_after).then_some(delay)
    }

    /// The backoff after the `attempt`-th failure: `base_delay * 2^(attempt-1)` capped at
    /// `max_delay`, then drawn uniformly between 75 % and 100 % of it, as the SDKs draw it, so
    /// that clients that failed together do not retry together.
    pub fn backoff(&self, attempt: u32) -> Duration {
        let doublings = attempt.saturating_sub(1).min(31);
        let ceiling = self
            .base_delay
            .saturating_mul(1u32 << doublings)
            .min(self.max_delay);
        let floor = ceiling.mul_f64(0.75);
        let spread = u64::try_from((ceiling - floor).as_nanos()).unwrap_or(u64::MAX);
        floor + Duration::from_nanos(rand::rng().random_range(0..=spread))
    }
}

/// Parses a `Retry-After` header given in seconds (`"3"`, also `"1.5"`). The HTTP-date form is not
/// used by LLM providers and yields `None`, which falls back to the backoff.
pub fn parse_retry_after(value: &str) -> Option<Duration> {
    let seconds: f64 = value.trim().parse().ok()?;
    Duration::try_from_secs_f64(seconds).ok()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn policy() -> RetryPolicy {
        RetryPolicy {
            max_attempts: 5,
            base_delay: Duration::from_millis(100),
            max_delay: Duration::from_millis(350),
            give_up_after: Duration::from_secs(10),
            decode_retries: 3,
        }
    }

    #[test]
    fn backoff_doubles_within_jitter_and_is_capped() {
        let p = policy();
        for _ in 0..50 {
            let d1 = p.backoff(1);
            assert!((75..=100).contains(&d1.as_millis()), "{d1:?}");
            let d2 = p.backoff(2);
            assert!((150..=200).contains(&d2.as_millis()), "{d2:?}");
            let d9 = p.backoff(9);
            assert!((262..=350).contains(&d9.as_millis()), "{d9:?}");
        }
        // Huge attempt numbers must not overflow.
        assert!(p.backoff(u32::MAX) <= p.max_delay);
    }

    #[test]
    fn gives_up_after_max_attempts() {
        let p = policy();
        assert!(p.next_delay(4, Duration::ZERO, None).is_some());
        assert_eq!(p.next_delay(5, Duration::ZERO, None), None);
    }

    #[test]
    fn gives_up_when_the_budget_would_be_exceeded() {
        let p = policy();
        let late = Duration::from_millis(9_990);
        assert_eq!(p.next_delay(1, late, Some(Duration::from_millis(20))), None);
        assert_eq!(
            p.next_delay(1, late, Some(Duration::from_millis(5))),
            Some(Duration::from_millis(5))
        );
    }

    #[test]
    fn retry_after_overrides_backoff_even_beyond_max_delay() {
        let p = policy();
        assert_eq!(
            p.next_delay(1, Duration::ZERO, Some(Duration::from_secs(2))),
            Some(Duration::from_secs(2))
        );
    }

    #[test]
    fn parses_retry_after_seconds() {
        assert_eq!(parse_retry_after("3"), Some(Duration::from_secs(3)));
        assert_eq!(
            parse_retry_after(" 1.5 "),
            Some(Duration::from_millis(1500))
        );
        assert_eq!(parse_retry_after("-1"), None);
        assert_eq!(parse_retry_after("Wed, 21 Oct 2015 07:28:00 GMT"), None);
    }
}
