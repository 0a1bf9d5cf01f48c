//! One progress line per model endpoint and key: requests in flight, the limits learned or
//! declared and how close the last minute came to them, and the 429s so far. Shown under the
//! progress bar of `arena run` and with the plain progress lines of `arena run` and `arena eval`.
//!
//! A line fits an 80-column terminal: the figures come first in importance and are kept whole,
//! and the endpoint's label (host and key variable) is shortened to what is left.
//!
//! ```text
//!   api.openai.com (O…: 12 in flight · rpm 480/500 96% · tpm 150k/200k 75% · 3×429
//!   127.0.0.1:8799: 0 in flight · rpm 37/? · 0×429
//! ```

use crate::llm::EndpointLoad;

/// The widest line, in characters.
pub(crate) const WIDTH: usize = 80;

/// The line of one endpoint (see the module's documentation). When the figures leave too
/// little room for the label, the last minute's counts are left out and only how close they
/// came to each limit is shown (`rpm 96% of 500`).
pub fn endpoint_line(load: &EndpointLoad) -> String {
    const INDENT: &str = "  ";
    const MIN_LABEL: usize = 8;
    let full = figures(load, false);
    let figures = if INDENT.len() + MIN_LABEL + 2 + full.chars().count() > WIDTH {
        figures(load, true)
    } else {
        full
    };
    let room = WIDTH.saturating_sub(INDENT.len() + figures.chars().count() + 2);
    format!(
        "{INDENT}{}: {figures}",
        shorten(&load.endpoint, room.max(MIN_LABEL))
    )
}

/// In flight, requests and tokens against their limits, 429s and overloaded answers.
fn figures(load: &EndpointLoad, compact: bool) -> String {
    let mut out = format!("{} in flight", load.in_flight);
    out.push_str(&usage(
        "rpm",
        load.requests_last_minute,
        load.rpm_limit,
        compact,
    ));
    if load.tpm_limit.is_some() || load.tokens_last_minute > 0 {
        out.push_str(&usage(
            "tpm",
            load.tokens_last_minute,
            load.tpm_limit,
            compact,
        ));
    }
    out.push_str(&format!(" · {}×429", load.rate_limited));
    if load.overloaded > 0 {
        out.push_str(&format!(" · {}×5xx", load.overloaded));
    }
    out
}

/// Every endpoint's line, in the order given.
pub(crate) fn endpoint_lines(loads: &[EndpointLoad]) -> Vec<String> {
    loads.iter().map(endpoint_line).collect()
}

/// ` · rpm 480/500 96%` (compact: ` · rpm 96% of 500`): the last minute's use against the
/// limit, `?` while none is known.
fn usage(unit: &str, used: u64, limit: Option<f64>, compact: bool) -> String {
    match limit {
        Some(limit) if limit > 0.0 => {
            let pct = (used as f64 / limit * 100.0).round();
            if compact {
                format!(" · {unit} {pct:.0}% of {}", human(limit))
            } else {
                format!(
                    " · {unit} {}/{} {pct:.0}%",
                    human(used as f64),
                    human(limit)
                )
            }
        }
        _ => format!(" · {unit} {}/?", human(used as f64)),
    }
}

/// A count in at most five characters: `950`, `12.5k`, `200k`, `1.5M`.
fn human(n: f64) -> String {
    let n = n.max(0.0);
    if n < 1_000.0 {
        format!("{n:.0}")
    } else if n < 100_000.0 {
        trim(format!("{:.1}", n / 1e3)) + "k"
    } else if n < 1_000_000.0 {
        format!("{:.0}k", n / 1e3)
    } else {
        trim(format!("{:.1}", n / 1e6)) + "M"
    }
}

/// `12.0` as `12`.
fn trim(s: String) -> String {
    match s.strip_suffix(".0") {
        Some(whole) => whole.to_owned(),
        None => s,
    }
}

/// `text` cut to `max` characters, its end replaced by `…` when cut.
fn shorten(text: &str, max: usize) -> String {
    if text.chars().count() <= max {
        return text.to_owned();
    }
    let kept: String = text.chars().take(max.saturating_sub(1)).collect();
    format!("{kept}…")
}

#[cfg(test)]
mod tests {
    use super::*;

    fn load(endpoint: &str) -> EndpointLoad {
        EndpointLoad {
            endpoint: endpoint.to_owned(),
            in_flight: 12,
            window: 16,
            rpm_limit: Some(500.0),
            tpm_limit: Some(200_000.0),
            requests_last_minute: 480,
            tokens_last_minute: 150_000,
            requests: 9_000,
            rate_limited: 3,
            overloaded: 0,
        }
    }

    #[test]
    fn a_line_shows_in_flight_limits_closeness_and_429s() {
        let line = endpoint_line(&load("api.openai.com (OPENAI_API_KEY)"));
        assert_eq!(
            line,
            "  api.openai.com (O…: 12 in flight · rpm 480/500 96% · tpm 150k/200k 75% · 3×429"
        );
        assert!(line.chars().count() <= WIDTH, "{line}");
    }

    #[test]
    fn unknown_limits_show_a_question_mark_and_no_tokens_no_tpm() {
        let mut l = load("127.0.0.1:8799");
        l.rpm_limit = None;
        l.tpm_limit = None;
        l.tokens_last_minute = 0;
        l.requests_last_minute = 37;
        l.rate_limited = 0;
        assert_eq!(
            endpoint_line(&l),
            "  127.0.0.1:8799: 12 in flight · rpm 37/? · 0×429"
        );
    }

    #[test]
    fn long_labels_and_large_figures_stay_within_80_columns() {
        let mut l = load(&format!(
            "{} (A_VERY_LONG_KEY_VARIABLE_NAME)",
            "x".repeat(60)
        ));
        l.in_flight = 256;
        l.requests_last_minute = 9_999;
        l.rpm_limit = Some(10_000.0);
        l.tokens_last_minute = 12_345_678;
        l.tpm_limit = Some(30_000_000.0);
        l.rate_limited = 1_234;
        l.overloaded = 7;
        let line = endpoint_line(&l);
        assert!(
            line.chars().count() <= WIDTH,
            "{line} is {} wide",
            line.chars().count()
        );
        assert_eq!(
            line,
            "  xxxxxxxx…: 256 in flight · rpm 100% of 10k · tpm 41% of 30M · 1234×429 · 7×5xx"
        );
    }

    #[test]
    fn counts_are_written_in_five_characters_at_most() {
        for (n, want) in [
            (0.0, "0"),
            (950.0, "950"),
            (1_000.0, "1k"),
            (12_500.0, "12.5k"),
            (200_000.0, "200k"),
            (1_500_000.0, "1.5M"),
        ] {
            assert_eq!(human(n), want);
        }
    }
}
