//! Pacing requests to a provider's rate limits, with adaptive concurrency and fair turns.
//!
//! Every player on one endpoint and API key shares one [`Pacer`]. A request waits for it before
//! it is sent, until all of these hold:
//!
//! - **its turn**: waiting requests are served by *lane* (the player asking) in rotation, one
//!   request per lane in turn and first come first served within a lane, so a player with many
//!   games in flight cannot crowd out one with few, and no request starves;
//! - **a concurrency slot**: fewer requests in flight than the current window (see below);
//! - **the rate**: a token bucket over requests and one over estimated tokens. Each is refilled
//!   at 98 % of the per-minute limit spread over the seconds of a minute and holds one second's
//!   worth, because providers enforce their per-minute limits over short windows (a burst of a
//!   minute's requests in one second is refused). The limit is the lower of the declared one
//!   (`rate = { rpm, tpm }`) and the one the answers' headers report (see [`ReportedLimits`]);
//!   the buckets are also lowered to what the headers say remains, so that a provider's
//!   accounting corrects arena's. A request's tokens are estimated before it is sent (prompt
//!   bytes / 4 plus `max_tokens`, as OpenAI counts a request before answering it); a reply that
//!   used more is charged the difference afterwards;
//! - **no hold**: after a 429 the whole key waits as long as the provider asked (`retry-after`),
//!   and an exhausted limit that the headers report waits for its reset.
//!
//! Until the first answer comes back from an endpoint without a declared rate, one request at a
//! time is sent: its headers tell the limits before a burst can run into them.
//!
//! **Adaptive concurrency** is AIMD, as TCP's congestion window: the window starts at the
//! endpoint's `max_concurrency`; an answer of 429, 503 or 529 (Anthropic's "overloaded") halves
//! it (at least 1), once per round, since the answers to requests sent before the cut say nothing
//! new; every success widens it by 1 / window, so a whole window of successes adds one slot, back
//! up to `max_concurrency`.
//!
//! Hand-written: the rate-limit crates (`governor` and the like) pace one fixed rate, while this
//! needs rates that change with every answer, a token cost known only afterwards, a concurrency
//! window and per-player turns.

use std::{
    collections::VecDeque,
    sync::{Mutex, MutexGuard, PoisonError},
    time::{Duration, Instant, SystemTime},
};

use reqwest::header::HeaderMap;
use serde::{Deserialize, Serialize};
use tokio::sync::Notify;

use super::{limits::ReportedLimits, retry_delay};

/// The share of a limit that arena paces to, leaving room for clocks that differ and requests
/// that arrive bunched.
const SAFETY: f64 = 0.98;

/// Rate limits declared for an endpoint and key, per minute (`rate = { rpm = 500, tpm = 200000 }`
/// in a player's table). Unset parts are learned from the answers' headers.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RateLimit {
    /// Requests per minute.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub rpm: Option<u64>,
    /// Tokens per minute (prompt and completion).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tpm: Option<u64>,
}

impl RateLimit {
    fn is_declared(&self) -> bool {
        self.rpm.is_some() || self.tpm.is_some()
    }
}

/// What one endpoint and key is doing, for the progress line (`--format json` key names).
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct EndpointLoad {
    /// The endpoint's host and the name of its key variable (never the key).
    pub endpoint: String,
    /// Requests sent and not yet answered.
    pub in_flight: usize,
    /// The current concurrency window.
    pub window: usize,
    /// The requests-per-minute limit paced to, when one is known.
    pub rpm_limit: Option<f64>,
    /// The tokens-per-minute limit paced to, when one is known.
    pub tpm_limit: Option<f64>,
    /// Requests sent in the last minute.
    pub requests_last_minute: u64,
    /// Tokens sent (estimated, then corrected) in the last minute.
    pub tokens_last_minute: u64,
    /// Requests sent so far.
    pub requests: u64,
    /// Answers of 429 so far.
    pub rate_limited: u64,
    /// Answers of 503 or 529 so far.
    pub overloaded: u64,
}

/// A token bucket whose rate may change.
#[derive(Debug)]
struct Bucket {
    /// Refill per second; `None` while no limit is known (the bucket then admits everything).
    per_second: Option<f64>,
    level: f64,
    at: Instant,
}

impl Bucket {
    fn new(now: Instant) -> Self {
        Self {
            per_second: None,
            level: 0.0,
            at: now,
        }
    }

    /// What the bucket holds at most: one second's refill, and at least one request.
    fn capacity(&self) -> f64 {
        self.per_second.map_or(f64::INFINITY, |r| r.max(1.0))
    }

    /// Sets the rate to `per_minute` (paced at [`SAFETY`]), starting full when it was unknown.
    fn set_limit(&mut self, per_minute: Option<f64>, now: Instant) {
        self.refill(now);
        let was_known = self.per_second.is_some();
        self.per_second = per_minute.filter(|l| *l > 0.0).map(|l| l / 60.0 * SAFETY);
        if !was_known {
            self.level = self.capacity();
        }
        self.level = self.level.min(self.capacity());
    }

    fn refill(&mut self, now: Instant) {
        if let Some(rate) = self.per_second {
            let elapsed = now.saturating_duration_since(self.at).as_secs_f64();
            self.level = (self.level + elapsed * rate).min(self.capacity());
        }
        self.at = now;
    }

    /// How long until `cost` can be taken (a full bucket takes any cost); zero when it can now.
    fn wait_for(&self, cost: f64) -> Duration {
        let Some(rate) = self.per_second else {
            return Duration::ZERO;
        };
        let missing = cost.min(self.capacity()) - self.level;
        if missing <= 0.0 {
            Duration::ZERO
        } else {
            Duration::from_secs_f64(missing / rate)
        }
    }

    fn take(&mut self, cost: f64) {
        if self.per_second.is_some() {
            self.level -= cost;
        }
    }

    /// Lowers the level to what the provider says remains.
    fn at_most(&mut self, remaining: Option<f64>) {
        if let (Some(remaining), Some(_)) = (remaining, self.per_second) {
            self.level = self.level.min(remaining);
        }
    }
}

/// The waiting requests of one lane, in arrival order.
#[derive(Debug)]
struct Lane {
    name: String,
    waiting: VecDeque<u64>,
}

#[derive(Debug)]
struct State {
    max_concurrency: usize,
    declared: RateLimit,
    learned: ReportedLimits,
    requests: Bucket,
    tokens: Bucket,
    hold_until: Option<Instant>,
    heard_back: bool,
    in_flight: usize,
    window: f64,
    last_cut: Option<Instant>,
    /// Lanes in turn order: the first lane with a waiting request is served next, then goes last.
    lanes: VecDeque<Lane>,
    next_ticket: u64,
    /// Send times and token costs of the last minute's requests.
    recent: VecDeque<(Instant, f64)>,
    sent: u64,
    rate_limited: u64,
    overloaded: u64,
}

impl State {
    fn rpm(&self) -> Option<f64> {
        min_known(
            self.declared.rpm.map(|r| r as f64),
            self.learned.requests.limit,
        )
    }

    fn tpm(&self) -> Option<f64> {
        min_known(
            self.declared.tpm.map(|t| t as f64),
            self.learned.tokens.limit,
        )
    }

    fn allowed_in_flight(&self, paced: bool) -> usize {
        if !paced {
            return self.max_concurrency;
        }
        if !self.heard_back && !self.declared.is_declared() {
            return 1;
        }
        // The window is at least 1 and at most max_concurrency, so the cast keeps its value.
        (self.window.floor() as usize).clamp(1, self.max_concurrency)
    }

    /// Grants `ticket` of `lane` when it may go now; otherwise how long to wait (`None`: until
    /// something changes).
    fn try_grant(
        &mut self,
        ticket: u64,
        cost: f64,
        paced: bool,
        now: Instant,
    ) -> Result<(), Option<Duration>> {
        let Some(turn) = self.lanes.iter().position(|l| !l.waiting.is_empty()) else {
            return Err(None);
        };
        if self.lanes[turn].waiting.front() != Some(&ticket) {
            return Err(None);
        }
        if self.in_flight >= self.allowed_in_flight(paced) {
            return Err(None);
        }
        if paced {
            if let Some(until) = self.hold_until {
                if now < until {
                    return Err(Some(until - now));
                }
                self.hold_until = None;
            }
            self.requests.refill(now);
            self.tokens.refill(now);
            let wait = self.requests.wait_for(1.0).max(self.tokens.wait_for(cost));
            if !wait.is_zero() {
                return Err(Some(wait));
            }
            self.requests.take(1.0);
            self.tokens.take(cost);
        }
        let mut lane = self.lanes.remove(turn).expect("the lane whose turn it is");
        lane.waiting.pop_front();
        self.lanes.push_back(lane);
        self.in_flight += 1;
        self.sent += 1;
        self.recent.push_back((now, cost));
        self.forget_old(now);
        Ok(())
    }

    fn forget_old(&mut self, now: Instant) {
        while self
            .recent
            .front()
            .is_some_and(|(at, _)| now.saturating_duration_since(*at) > Duration::from_secs(60))
        {
            self.recent.pop_front();
        }
    }

    fn enqueue(&mut self, lane: &str) -> u64 {
        let ticket = self.next_ticket;
        self.next_ticket += 1;
        match self.lanes.iter_mut().find(|l| l.name == lane) {
            Some(l) => l.waiting.push_back(ticket),
            None => self.lanes.push_back(Lane {
                name: lane.to_owned(),
                waiting: VecDeque::from([ticket]),
            }),
        }
        ticket
    }

    fn dequeue(&mut self, ticket: u64) {
        for lane in &mut self.lanes {
            lane.waiting.retain(|t| *t != ticket);
        }
    }
}

fn min_known(a: Option<f64>, b: Option<f64>) -> Option<f64> {
    match (a, b) {
        (Some(a), Some(b)) => Some(a.min(b)),
        (a, b) => a.or(b),
    }
}

/// The pacing of one endpoint and key, shared by every player on it.
#[derive(Debug)]
pub(super) struct Pacer {
    label: String,
    state: Mutex<State>,
    changed: Notify,
}

impl Pacer {
    /// A pacer for `label` (host and key variable), with at most `max_concurrency` requests in
    /// flight and the declared `rate`.
    pub(super) fn new(label: String, max_concurrency: usize, rate: RateLimit) -> Self {
        let now = Instant::now();
        let max_concurrency = max_concurrency.max(1);
        let mut state = State {
            max_concurrency,
            declared: rate,
            learned: ReportedLimits::default(),
            requests: Bucket::new(now),
            tokens: Bucket::new(now),
            hold_until: None,
            heard_back: false,
            in_flight: 0,
            window: max_concurrency as f64,
            last_cut: None,
            lanes: VecDeque::new(),
            next_ticket: 0,
            recent: VecDeque::new(),
            sent: 0,
            rate_limited: 0,
            overloaded: 0,
        };
        let (rpm, tpm) = (state.rpm(), state.tpm());
        state.requests.set_limit(rpm, now);
        state.tokens.set_limit(tpm, now);
        Self {
            label,
            state: Mutex::new(state),
            changed: Notify::new(),
        }
    }

    fn state(&self) -> MutexGuard<'_, State> {
        self.state.lock().unwrap_or_else(PoisonError::into_inner)
    }

    /// Waits until a request of `lane` estimated at `tokens` tokens may be sent (see the module
    /// docs); with `paced` false, only until a slot of `max_concurrency` is free, in turn.
    pub(super) async fn acquire(&self, lane: &str, tokens: f64, paced: bool) -> Slot<'_> {
        let ticket = self.state().enqueue(lane);
        let mut waiting = Waiting {
            pacer: self,
            ticket: Some(ticket),
        };
        loop {
            let changed = self.changed.notified();
            tokio::pin!(changed);
            changed.as_mut().enable();
            let verdict = self
                .state()
                .try_grant(ticket, tokens, paced, Instant::now());
            match verdict {
                Ok(()) => {
                    waiting.ticket = None;
                    // The next lane's head may go now.
                    self.changed.notify_waiters();
                    return Slot {
                        pacer: self,
                        sent: Instant::now(),
                        tokens,
                    };
                }
                Err(Some(wait)) => {
                    tokio::select! {
                        () = &mut changed => {}
                        () = tokio::time::sleep(wait) => {}
                    }
                }
                Err(None) => changed.await,
            }
        }
    }

    /// What this endpoint and key is doing now.
    pub(super) fn load(&self) -> EndpointLoad {
        let mut state = self.state();
        state.forget_old(Instant::now());
        let (rpm, tpm) = (state.rpm(), state.tpm());
        EndpointLoad {
            endpoint: self.label.clone(),
            in_flight: state.in_flight,
            window: state.allowed_in_flight(true),
            rpm_limit: rpm,
            tpm_limit: tpm,
            requests_last_minute: state.recent.len() as u64,
            tokens_last_minute: state.recent.iter().map(|(_, t)| *t).sum::<f64>() as u64,
            requests: state.sent,
            rate_limited: state.rate_limited,
            overloaded: state.overloaded,
        }
    }
}

/// A request still waiting for its turn; leaves the queue when dropped (a caller that gave up).
struct Waiting<'a> {
    pacer: &'a Pacer,
    ticket: Option<u64>,
}

impl Drop for Waiting<'_> {
    fn drop(&mut self) {
        if let Some(ticket) = self.ticket {
            self.pacer.state().dequeue(ticket);
            self.pacer.changed.notify_waiters();
        }
    }
}

/// A request in flight. Its answer is reported with [`Slot::answered`]; dropping it frees the
/// concurrency slot.
#[derive(Debug)]
pub(super) struct Slot<'a> {
    pacer: &'a Pacer,
    sent: Instant,
    tokens: f64,
}

impl Slot<'_> {
    /// Learns from an answer's status and headers: the limits it reports, a 429's wait, and the
    /// window's cut (429, 503, 529) or growth (success).
    pub(super) fn answered(&self, status: u16, headers: &HeaderMap) {
        let now = Instant::now();
        let reported = ReportedLimits::read(headers, SystemTime::now());
        let mut state = self.pacer.state();
        state.heard_back = true;
        if reported.is_known() {
            merge(&mut state.learned, &reported);
            let (rpm, tpm) = (state.rpm(), state.tpm());
            state.requests.set_limit(rpm, now);
            state.tokens.set_limit(tpm, now);
            state.requests.at_most(reported.requests.remaining);
            state.tokens.at_most(reported.tokens.remaining);
            if reported.output_tokens.is_exhausted()
                && let Some(reset) = reported.output_tokens.reset
            {
                hold(&mut state, now + reset);
            }
        }
        match status {
            429 | 503 | 529 => {
                if status == 429 {
                    state.rate_limited += 1;
                    state.requests.at_most(Some(0.0));
                } else {
                    state.overloaded += 1;
                }
                if let Some(wait) = retry_delay(headers, SystemTime::now()) {
                    hold(&mut state, now + wait);
                }
                if state.last_cut.is_none_or(|cut| self.sent > cut) {
                    state.window = (state.window / 2.0).max(1.0);
                    state.last_cut = Some(now);
                }
            }
            200..=299 => {
                let max = state.max_concurrency as f64;
                state.window = (state.window + 1.0 / state.window).min(max);
            }
            _ => {}
        }
        drop(state);
        self.pacer.changed.notify_waiters();
    }

    /// Charges the tokens a reply used beyond the estimate it was sent with.
    pub(super) fn used(&self, tokens: u64) {
        let extra = tokens as f64 - self.tokens;
        if extra > 0.0 {
            let mut state = self.pacer.state();
            state.tokens.take(extra);
            if let Some(last) = state.recent.back_mut() {
                last.1 += extra;
            }
        }
    }
}

impl Drop for Slot<'_> {
    fn drop(&mut self) {
        self.pacer.state().in_flight -= 1;
        self.pacer.changed.notify_waiters();
    }
}

/// Holds every request until `until` (the later of two holds wins).
fn hold(state: &mut State, until: Instant) {
    state.hold_until = Some(state.hold_until.map_or(until, |h| h.max(until)));
}

/// Keeps what `new` reports over what was known, part by part.
fn merge(known: &mut ReportedLimits, new: &ReportedLimits) {
    for (known, new) in [
        (&mut known.requests, &new.requests),
        (&mut known.tokens, &new.tokens),
        (&mut known.output_tokens, &new.output_tokens),
    ] {
        known.limit = new.limit.or(known.limit);
        known.remaining = new.remaining.or(known.remaining);
        known.reset = new.reset.or(known.reset);
    }
}

/// The tokens a request is expected to cost before it is sent: its text's bytes / 4 (about a
/// token for four bytes of English or chess notation), plus one, plus the completion it allows.
pub(super) fn estimate_tokens(request: &super::ChatRequest) -> f64 {
    let bytes: usize = request.messages.iter().map(|m| m.content.len()).sum();
    (bytes / 4 + 1) as f64 + f64::from(request.max_tokens.unwrap_or(0))
}

#[cfg(test)]
mod tests {
    use futures_util::FutureExt;
    use reqwest::header::HeaderValue;

    use super::*;

    /// A pacer whose rate never binds (only its window does).
    fn unhurried(max_concurrency: usize) -> Pacer {
        Pacer::new(
            "test".into(),
            max_concurrency,
            RateLimit {
                rpm: Some(10_000_000),
                tpm: None,
            },
        )
    }

    #[tokio::test]
    async fn the_window_halves_once_per_round_and_grows_back() {
        let pacer = unhurried(8);
        let none = HeaderMap::new();
        assert_eq!(pacer.load().window, 8);
        let early: Vec<Slot<'_>> =
            futures_util::future::join_all((0..4).map(|_| pacer.acquire("a", 10.0, true))).await;
        early[0].answered(429, &none);
        assert_eq!(pacer.load().window, 4);
        // Sent before the cut: the same congestion, no second cut.
        early[1].answered(429, &none);
        early[2].answered(529, &none);
        assert_eq!(pacer.load().window, 4);
        drop(early);
        let late = pacer.acquire("a", 10.0, true).await;
        late.answered(503, &none);
        let load = pacer.load();
        assert_eq!(load.window, 2);
        assert_eq!((load.rate_limited, load.overloaded), (2, 2));
        // Additive increase: a window's worth of successes adds about one slot (2 + 1/2 +
        // 1/2.5 + 1/2.9 passes 3 at the third).
        late.answered(200, &none);
        late.answered(200, &none);
        assert_eq!(pacer.load().window, 2);
        late.answered(200, &none);
        assert_eq!(pacer.load().window, 3);
        for _ in 0..40 {
            late.answered(200, &none);
        }
        assert_eq!(
            pacer.load().window,
            8,
            "back up to max_concurrency, no further"
        );
        drop(late);
        // Never below one.
        for _ in 0..10 {
            let slot = pacer.acquire("a", 10.0, true).await;
            slot.answered(429, &none);
        }
        assert_eq!(pacer.load().window, 1);
    }

    #[tokio::test]
    async fn the_window_bounds_requests_in_flight() {
        let pacer = unhurried(8);
        let none = HeaderMap::new();
        let first = pacer.acquire("a", 1.0, true).await;
        let second = pacer.acquire("a", 1.0, true).await;
        first.answered(429, &none);
        // The window is 4 now: two more may go, the fifth waits.
        let third = pacer.acquire("b", 1.0, true).await;
        let fourth = pacer.acquire("b", 1.0, true).await;
        assert!(pacer.acquire("b", 1.0, true).now_or_never().is_none());
        drop((first, second, third, fourth));
        // Once they end a request may go again. Awaited with a deadline rather than polled once:
        // on a loaded machine the rate bucket may ask for a few microseconds first.
        let next = tokio::time::timeout(Duration::from_secs(10), pacer.acquire("b", 1.0, true));
        assert!(
            next.await.is_ok(),
            "a freed window lets the next request go"
        );
    }

    #[tokio::test]
    async fn one_request_probes_an_endpoint_of_unknown_limits() {
        let pacer = Pacer::new("test".into(), 16, RateLimit::default());
        let probe = pacer.acquire("a", 1.0, true).await;
        assert!(pacer.acquire("a", 1.0, true).now_or_never().is_none());
        // Unpaced, the probe is not waited for.
        assert!(pacer.acquire("a", 1.0, false).now_or_never().is_some());
        let mut headers = HeaderMap::new();
        headers.insert(
            "x-ratelimit-limit-requests",
            HeaderValue::from_static("600"),
        );
        headers.insert(
            "x-ratelimit-remaining-requests",
            HeaderValue::from_static("9"),
        );
        probe.answered(200, &headers);
        drop(probe);
        assert_eq!(pacer.load().rpm_limit, Some(600.0));
        // Learned: 9.8 a second, and what the server says remains (9) at once.
        let slots: Vec<Slot<'_>> = (0..9)
            .map(|_| {
                pacer
                    .acquire("a", 1.0, true)
                    .now_or_never()
                    .expect("within what remains")
            })
            .collect();
        assert!(pacer.acquire("a", 1.0, true).now_or_never().is_none());
        assert_eq!(pacer.load().in_flight, 9);
        drop(slots);
        assert_eq!(pacer.load().in_flight, 0);
    }

    #[tokio::test]
    async fn a_retry_after_holds_the_whole_key() {
        let pacer = unhurried(8);
        let slot = pacer.acquire("a", 1.0, true).await;
        let mut headers = HeaderMap::new();
        headers.insert("retry-after", HeaderValue::from_static("30"));
        slot.answered(429, &headers);
        drop(slot);
        assert!(pacer.acquire("b", 1.0, true).now_or_never().is_none());
        assert!(pacer.acquire("b", 1.0, false).now_or_never().is_some());
    }

    #[test]
    fn declared_and_learned_limits_the_lower_wins() {
        let pacer = Pacer::new(
            "test".into(),
            4,
            RateLimit {
                rpm: Some(500),
                tpm: Some(200_000),
            },
        );
        let load = pacer.load();
        assert_eq!(
            (load.rpm_limit, load.tpm_limit),
            (Some(500.0), Some(200_000.0))
        );
        let mut state = pacer.state();
        state.learned.requests.limit = Some(60.0);
        state.learned.tokens.limit = Some(900_000.0);
        assert_eq!((state.rpm(), state.tpm()), (Some(60.0), Some(200_000.0)));
    }
}
