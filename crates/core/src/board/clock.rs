//! Chess clocks: the time control a script asks for (`time_control = { base_s = 900,
//! increment_s = 10 }`, `{ per_move_s = 60 }`, or both) and the arithmetic of one side's clock.
//!
//! Hand-written: a few lines of millisecond arithmetic, and no clock crate we know of fits a
//! clock that is charged measured times (rather than one that reads the wall clock itself).
//!
//! Rules (FIDE's Fischer clock): a side's clock starts at `base_s`; each move's time is taken off,
//! and `increment_s` is added after a move made in time. A move that takes longer than the time
//! left, or longer than `per_move_s`, loses on time. With `base_s = 0` a side starts with one
//! increment in hand (so that its first move is not lost before it is made).

use std::fmt;

use serde::{Deserialize, Serialize};

/// A time control, validated: at least one of a base clock and a per-move limit, every time
/// above 0 (an increment may be 0), in whole milliseconds.
#[derive(Debug, Clone, Copy, Serialize, Deserialize, PartialEq, Eq)]
#[serde(try_from = "RawTimeControl", into = "RawTimeControl")]
pub struct TimeControl {
    /// The base clock each side starts with, if there is one.
    pub base_ms: Option<u64>,
    /// Added to a base clock after each move made in time.
    pub increment_ms: u64,
    /// The longest one move may take, if limited.
    pub per_move_ms: Option<u64>,
}

/// [`TimeControl`] as a script writes it, in seconds, before its values are checked.
#[derive(Debug, Clone, Copy, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
struct RawTimeControl {
    #[serde(default, skip_serializing_if = "Option::is_none")]
    base_s: Option<f64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    increment_s: Option<f64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    per_move_s: Option<f64>,
}

impl TryFrom<RawTimeControl> for TimeControl {
    type Error = String;

    fn try_from(raw: RawTimeControl) -> Result<Self, Self::Error> {
        if raw.base_s.is_none() && raw.per_move_s.is_none() {
            return Err(if raw.increment_s.is_some() {
                "a time control with `increment_s` needs `base_s`, the clock it is added to".into()
            } else {
                "a time control needs `base_s` (with `increment_s` if wanted), `per_move_s`, or both"
                    .into()
            });
        }
        let millis = |name: &str, v: f64, zero_ok: bool| -> Result<u64, String> {
            if !v.is_finite() || v < 0.0 || (v == 0.0 && !zero_ok) {
                let least = if zero_ok { "0 or more" } else { "above 0" };
                return Err(format!(
                    "time control `{name}` must be a finite number of seconds {least}, not {v}"
                ));
            }
            let ms = (v * 1000.0).round();
            if ms < 1.0 && !zero_ok {
                return Err(format!(
                    "time control `{name}` must be at least 0.001 seconds, not {v}"
                ));
            }
            Ok(ms as u64)
        };
        let increment_ms = match raw.increment_s {
            Some(v) => millis("increment_s", v, true)?,
            None => 0,
        };
        let base_ms = match raw.base_s {
            Some(v) => {
                let ms = millis("base_s", v, true)?;
                if ms == 0 && increment_ms == 0 {
                    return Err(
                        "time control `base_s` = 0 without an `increment_s` leaves no time to move"
                            .into(),
                    );
                }
                Some(ms)
            }
            None => None,
        };
        let per_move_ms = raw
            .per_move_s
            .map(|v| millis("per_move_s", v, false))
            .transpose()?;
        Ok(TimeControl {
            base_ms,
            increment_ms,
            per_move_ms,
        })
    }
}

impl From<TimeControl> for RawTimeControl {
    fn from(tc: TimeControl) -> Self {
        let seconds = |ms: u64| ms as f64 / 1000.0;
        RawTimeControl {
            base_s: tc.base_ms.map(seconds),
            increment_s: tc.base_ms.map(|_| seconds(tc.increment_ms)),
            per_move_s: tc.per_move_ms.map(seconds),
        }
    }
}

impl TimeControl {
    /// This control with its base clock and per-move limit scaled by `share` (rounded to the
    /// millisecond), its increment kept: a side given time odds (an armageddon's Black).
    pub fn scaled(self, share: f64) -> TimeControl {
        #[allow(
            clippy::cast_possible_truncation,
            clippy::cast_sign_loss,
            clippy::cast_precision_loss
        )]
        let scale = |ms: u64| (ms as f64 * share).round().max(1.0) as u64;
        TimeControl {
            base_ms: self.base_ms.map(scale),
            increment_ms: self.increment_ms,
            per_move_ms: self.per_move_ms.map(scale),
        }
    }

    /// The PGN `TimeControl` tag's value (the PGN standard, section 9.6.1): `900+10` (`900`
    /// without an increment) for a base clock; for a per-move limit alone, `1/60` (one move per
    /// period of 60 seconds: the standard's only form that states a time per move, read by every
    /// tool; unlike arena's limit, the standard lets unused time carry over). When both apply,
    /// the base clock's form: the standard's `:` joins successive periods, which would misstate a
    /// limit that holds on every move, so the per-move limit goes in [`TimeControl::move_time_tag`].
    /// Fractions are decimals in seconds (`60+0.6`).
    pub(crate) fn pgn_tag(&self) -> String {
        match (self.base_ms, self.per_move_ms) {
            (Some(b), _) if self.increment_ms == 0 => seconds(b),
            (Some(b), _) => format!("{}+{}", seconds(b), seconds(self.increment_ms)),
            (None, Some(p)) => format!("1/{}", seconds(p)),
            (None, None) => "-".into(),
        }
    }

    /// The per-move limit in seconds when a base clock applies too (written as arena's own PGN tag
    /// `ArenaMoveTime`, since `TimeControl` holds the base clock); `None` otherwise.
    pub(crate) fn move_time_tag(&self) -> Option<String> {
        self.base_ms.and(self.per_move_ms).map(seconds)
    }
}

/// Milliseconds as seconds, a decimal without trailing zeros (`0.6`, `60`).
fn seconds(ms: u64) -> String {
    if ms.is_multiple_of(1000) {
        (ms / 1000).to_string()
    } else {
        let s = format!("{:.3}", ms as f64 / 1000.0);
        s.trim_end_matches('0').to_string()
    }
}

/// The clocks of a game, as stored with it (`games.time_control`): each side's time control, or
/// `None` for an untimed side.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct GameClocks {
    /// White's time control.
    pub white: Option<TimeControl>,
    /// Black's time control.
    pub black: Option<TimeControl>,
}

impl GameClocks {
    /// The clocks as stored: `None` when neither side has one.
    pub fn to_json(&self) -> Option<String> {
        (self.white.is_some() || self.black.is_some())
            .then(|| serde_json::to_string(self).expect("time controls serialize"))
    }

    /// The PGN tags of these clocks: `TimeControl` when both sides play on the same one (and
    /// `ArenaMoveTime` for a per-move limit beside a base clock), else `WhiteTimeControl` and
    /// `BlackTimeControl` (`-` for an untimed side: the standard's "no time control"), since the
    /// standard's tag has one value for both.
    pub fn pgn_tags(&self) -> Vec<(String, String)> {
        let tag = |tc: Option<TimeControl>| tc.map_or_else(|| "-".to_owned(), |t| t.pgn_tag());
        let mut tags = Vec::new();
        if self.white == self.black {
            tags.push(("TimeControl".to_owned(), tag(self.white)));
            if let Some(seconds) = self.white.and_then(|t| t.move_time_tag()) {
                tags.push(("ArenaMoveTime".to_owned(), seconds));
            }
        } else {
            tags.push(("WhiteTimeControl".to_owned(), tag(self.white)));
            tags.push(("BlackTimeControl".to_owned(), tag(self.black)));
            for (name, tc) in [
                ("ArenaWhiteMoveTime", self.white),
                ("ArenaBlackMoveTime", self.black),
            ] {
                if let Some(seconds) = tc.and_then(|t| t.move_time_tag()) {
                    tags.push((name.to_owned(), seconds));
                }
            }
        }
        tags
    }
}

/// How a side ran out of time.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Flag {
    /// The move took longer than the per-move limit.
    PerMove {
        /// What the move took, in milliseconds.
        used_ms: u64,
        /// The limit.
        limit_ms: u64,
    },
    /// The move took longer than the time left on the base clock.
    Base {
        /// What the move took, in milliseconds.
        used_ms: u64,
        /// What was left before the move.
        left_ms: u64,
    },
}

impl fmt::Display for Flag {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let s = |ms: u64| ms as f64 / 1000.0;
        match *self {
            Flag::PerMove { used_ms, limit_ms } => write!(
                f,
                "took {:.3} s for a move, over the per-move limit of {:.3} s",
                s(used_ms),
                s(limit_ms)
            ),
            Flag::Base { used_ms, left_ms } => write!(
                f,
                "ran out of time: took {:.3} s for a move with {:.3} s left",
                s(used_ms),
                s(left_ms)
            ),
        }
    }
}

/// One side's clock under a [`TimeControl`].
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Clock {
    control: TimeControl,
    /// Time left on the base clock, if there is one.
    left_ms: Option<u64>,
}

impl Clock {
    /// A clock at the start of a game.
    pub fn new(control: TimeControl) -> Clock {
        let left_ms = control
            .base_ms
            .map(|b| if b == 0 { control.increment_ms } else { b });
        Clock { control, left_ms }
    }

    /// The time control.
    pub fn control(&self) -> TimeControl {
        self.control
    }

    /// Time left on the base clock (`None` without one).
    pub fn left_ms(&self) -> Option<u64> {
        self.left_ms
    }

    /// The most the next move may take without losing on time: the time left, or the per-move
    /// limit if that is smaller.
    pub fn allowance_ms(&self) -> u64 {
        match (self.left_ms, self.control.per_move_ms) {
            (Some(a), Some(b)) => a.min(b),
            (Some(a), None) | (None, Some(a)) => a,
            (None, None) => u64::MAX,
        }
    }

    /// Charges a move that took `used_ms`: the time comes off the clock and the increment is
    /// added; a move over the time left or over the per-move limit is a flag (and the clock
    /// then reads 0).
    ///
    /// # Errors
    /// The flag, when the move was not made in time.
    pub fn charge(&mut self, used_ms: u64) -> Result<(), Flag> {
        if let Some(left_ms) = self.left_ms
            && used_ms > left_ms
        {
            self.left_ms = Some(0);
            return Err(Flag::Base { used_ms, left_ms });
        }
        if let Some(limit_ms) = self.control.per_move_ms
            && used_ms > limit_ms
        {
            if let Some(left) = self.left_ms.as_mut() {
                *left -= used_ms;
            }
            return Err(Flag::PerMove { used_ms, limit_ms });
        }
        if let Some(left) = self.left_ms.as_mut() {
            *left = *left - used_ms + self.control.increment_ms;
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn tc(json: &str) -> Result<TimeControl, String> {
        serde_json::from_str(json).map_err(|e| e.to_string())
    }

    #[test]
    fn time_controls_read_seconds_with_fractions() {
        let t = tc(r#"{"base_s": 60, "increment_s": 0.6}"#).unwrap();
        assert_eq!(
            t,
            TimeControl {
                base_ms: Some(60_000),
                increment_ms: 600,
                per_move_ms: None
            }
        );
        assert_eq!(t.pgn_tag(), "60+0.6");
        assert_eq!(
            tc(r#"{"base_s": 900, "increment_s": 10}"#)
                .unwrap()
                .pgn_tag(),
            "900+10"
        );
        assert_eq!(tc(r#"{"base_s": 300}"#).unwrap().pgn_tag(), "300");
        assert_eq!(tc(r#"{"per_move_s": 60}"#).unwrap().pgn_tag(), "1/60");
        let both = tc(r#"{"per_move_s": 2.5, "base_s": 2, "increment_s": 0.05}"#).unwrap();
        assert_eq!(both.pgn_tag(), "2+0.05");
        assert_eq!(both.move_time_tag().as_deref(), Some("2.5"));
        assert_eq!(tc(r#"{"per_move_s": 2.5}"#).unwrap().move_time_tag(), None);
        // It round-trips through the form it is stored in.
        let back: TimeControl = serde_json::from_str(&serde_json::to_string(&t).unwrap()).unwrap();
        assert_eq!(back, t);
    }

    #[test]
    fn a_clock_without_time_is_refused() {
        for (json, says) in [
            ("{}", "needs `base_s`"),
            (r#"{"increment_s": 2}"#, "needs `base_s`"),
            (r#"{"base_s": 0}"#, "leaves no time"),
            (r#"{"base_s": 0, "increment_s": 0}"#, "leaves no time"),
            (r#"{"per_move_s": 0}"#, "above 0"),
            (r#"{"per_move_s": -5}"#, "above 0"),
            (r#"{"base_s": -60}"#, "0 or more"),
            (r#"{"base_s": 60, "increment_s": -1}"#, "0 or more"),
            (r#"{"per_move_s": 0.0001}"#, "at least 0.001"),
            (r#"{"base_s": 60, "inc_s": 1}"#, "unknown field `inc_s`"),
        ] {
            let e = tc(json).expect_err(json);
            assert!(e.contains(says), "{json}: {e}");
        }
        assert!(tc(r#"{"base_s": 0, "increment_s": 1}"#).is_ok());
    }

    #[test]
    fn a_fischer_clock_takes_time_off_and_adds_the_increment() {
        let mut c = Clock::new(tc(r#"{"base_s": 2, "increment_s": 0.05}"#).unwrap());
        assert_eq!((c.left_ms(), c.allowance_ms()), (Some(2000), 2000));
        c.charge(500).unwrap();
        assert_eq!(c.left_ms(), Some(1550));
        // Exactly the time left is in time.
        c.charge(1550).unwrap();
        assert_eq!(c.left_ms(), Some(50));
        assert_eq!(
            c.charge(51),
            Err(Flag::Base {
                used_ms: 51,
                left_ms: 50
            })
        );
        assert_eq!(c.left_ms(), Some(0));
    }

    #[test]
    fn a_per_move_limit_flags_one_long_move() {
        let mut c = Clock::new(tc(r#"{"per_move_s": 1}"#).unwrap());
        assert_eq!((c.left_ms(), c.allowance_ms()), (None, 1000));
        c.charge(1000).unwrap();
        c.charge(10).unwrap();
        assert_eq!(
            c.charge(1001),
            Err(Flag::PerMove {
                used_ms: 1001,
                limit_ms: 1000
            })
        );
        // Both rules: the allowance is the smaller, and either can flag.
        let mut c = Clock::new(tc(r#"{"per_move_s": 1, "base_s": 1.5}"#).unwrap());
        assert_eq!(c.allowance_ms(), 1000);
        c.charge(900).unwrap();
        assert_eq!(c.allowance_ms(), 600);
        assert!(matches!(c.charge(700), Err(Flag::Base { .. })));
        // A base of 0 starts with one increment in hand.
        let c = Clock::new(tc(r#"{"base_s": 0, "increment_s": 3}"#).unwrap());
        assert_eq!(c.left_ms(), Some(3000));
    }

    #[test]
    fn pgn_tags_say_each_sides_clock() {
        let blitz = tc(r#"{"base_s": 180, "increment_s": 2}"#).unwrap();
        let same = GameClocks {
            white: Some(blitz),
            black: Some(blitz),
        };
        assert_eq!(
            same.pgn_tags(),
            [("TimeControl".to_owned(), "180+2".to_owned())]
        );
        let both = tc(r#"{"base_s": 180, "per_move_s": 30}"#).unwrap();
        let tags = GameClocks {
            white: Some(both),
            black: None,
        }
        .pgn_tags();
        assert_eq!(
            tags,
            [
                ("WhiteTimeControl".to_owned(), "180".to_owned()),
                ("BlackTimeControl".to_owned(), "-".to_owned()),
                ("ArenaWhiteMoveTime".to_owned(), "30".to_owned()),
            ]
        );
        assert_eq!(GameClocks::default().to_json(), None);
        let json = same.to_json().unwrap();
        assert_eq!(serde_json::from_str::<GameClocks>(&json).unwrap(), same);
    }

    #[test]
    fn flags_say_what_happened() {
        let f = Flag::Base {
            used_ms: 2100,
            left_ms: 50,
        };
        assert_eq!(
            f.to_string(),
            "ran out of time: took 2.100 s for a move with 0.050 s left"
        );
    }
}
