//! The FIDE Dutch system (FIDE Handbook C.04.3, 2025 rules), paired as bbpPairings pairs it.
//!
//! The rules define, for every round, one best pairing; bbpPairings finds it with maximum-weight
//! matchings over the whole field, one pairing bracket at a time, from the top score group
//! down. This module follows the same public method, in its own code:
//!
//! - An edge joins two players who may meet under the absolute criteria (C1–C3: they have not
//!   played each other, they do not share an absolute colour preference unless one of them is a
//!   top scorer in the last round). Its weight is a number whose bit fields, from the most
//!   significant down, are the completion criteria (everyone paired, the bye to an eligible
//!   player of the lowest possible score), the bracket's own criteria (pairs in the bracket, the
//!   scores of its downfloaters, pairs and scores in the next bracket, the bye's holder with the
//!   fewest unplayed games), the colour criteria (absolute imbalances, absolute preferences,
//!   preferences, strong preferences) and the float criteria of the last two rounds (repeated
//!   downfloaters and upfloaters, then their scores). A maximum-weight matching therefore meets
//!   the criteria in their order: a more important one is never traded for a less important one.
//! - Within a bracket, which moved-down players are paired, with whom, and which players are
//!   exchanged between the halves S1 and S2 are then fixed one decision at a time, each time by
//!   raising the weight of the preferred choice by a unit too small to outweigh any criterion
//!   and matching again: the Dutch system's order of transpositions and exchanges.
//! - Colours follow the allocation rules (C.04.3 E): both preferences granted when they differ,
//!   else the stronger preference, else alternation from the last round in which the two had
//!   different colours, else the higher-ranked player's preference; with no preference at all,
//!   the initial colour alternating down the pairing numbers.
//!
//! Scores are integers in any unit (tenths of a point in TRF files); a loss scores 0.

use std::collections::{BTreeMap, HashSet};

use super::PairingError;
use super::blossom::{self, Weight};
use super::wide::Wide;

/// A piece colour.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Colour {
    /// White.
    White,
    /// Black.
    Black,
}

impl Colour {
    /// The other colour.
    #[must_use]
    pub(crate) fn invert(self) -> Self {
        match self {
            Colour::White => Colour::Black,
            Colour::Black => Colour::White,
        }
    }
}

/// One player's round, in the order the rounds were played.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum RoundEntry {
    /// A game played over the board.
    Played {
        /// The opponent's index in [`Tournament::players`].
        opponent: usize,
        /// This player's colour.
        colour: Colour,
        /// The points this player scored.
        points: u32,
    },
    /// The pairing-allocated bye.
    PairingBye {
        /// The points it scored.
        points: u32,
    },
    /// No game played: a forfeit either way, a requested bye, an absence, a void game.
    Unplayed {
        /// The points it scored.
        points: u32,
    },
}

impl RoundEntry {
    fn points(&self) -> u32 {
        match *self {
            RoundEntry::Played { points, .. }
            | RoundEntry::PairingBye { points }
            | RoundEntry::Unplayed { points } => points,
        }
    }
}

/// A player: the rounds so far and whether the player is to be paired in the next one.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Player {
    /// One entry per round already played, every player the same number.
    pub rounds: Vec<RoundEntry>,
    /// Whether the player takes part in the round being paired.
    pub available: bool,
}

/// The tournament so far. Players are listed in pairing-number order (the first is number 1).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Tournament {
    /// Every player, in pairing-number order.
    pub players: Vec<Player>,
    /// The rounds the tournament will have (for the last round's top-scorer rules).
    pub total_rounds: usize,
    /// Points for a win (the unit of every score).
    pub points_for_win: u32,
    /// Points for a draw.
    pub points_for_draw: u32,
    /// The colour player number 1 had, or would have had, in round 1.
    pub initial_colour: Colour,
    /// Pairs that must not meet, as indices, besides those that have played each other.
    pub forbidden: Vec<(usize, usize)>,
}

impl Tournament {
    /// The forbidden pairs that matter to a pairing program: each pair once, lower index first,
    /// sorted, leaving out a player paired with itself and pairs that have already played (they
    /// cannot meet again anyway). What a TRF file's `XXP` lines hold.
    pub(crate) fn barred_pairs(&self) -> Vec<(usize, usize)> {
        let played = |a: usize, b: usize| {
            self.players[a]
                .rounds
                .iter()
                .any(|r| matches!(r, RoundEntry::Played { opponent, .. } if *opponent == b))
        };
        let mut barred: Vec<(usize, usize)> = self
            .forbidden
            .iter()
            .map(|&(a, b)| (a.min(b), a.max(b)))
            .filter(|&(a, b)| a != b && !played(a, b))
            .collect();
        barred.sort_unstable();
        barred.dedup();
        barred
    }
}

/// A Swiss tournament as a pairing program sees it, with the players' names and ratings: what
/// a FIDE TRF file holds.
#[derive(Debug, Clone, PartialEq)]
pub struct Record {
    /// The tournament (players in pairing-number order).
    pub tournament: Tournament,
    /// Each player's name, in pairing-number order.
    pub names: Vec<String>,
    /// Each player's rating where it has one, in pairing-number order.
    pub ratings: Vec<Option<f64>>,
    /// Games that were paired but not played (arena's void games): in [`Tournament::players`]
    /// both players' rounds are [`RoundEntry::Unplayed`], but the round's pairing had them meet,
    /// which a pairing program checking that round must know.
    pub unplayed: Vec<UnplayedGame>,
}

/// A game paired but not played, by its round and its players' colours.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct UnplayedGame {
    /// The round (0-based, as an index into a player's rounds).
    pub round: usize,
    /// The player paired with White.
    pub white: usize,
    /// The player paired with Black.
    pub black: usize,
}

/// A round's pairing.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Pairing {
    /// `(white, black)` player indices in board order: by the higher score in the pair, then the
    /// lower, then the higher-ranked player's pairing number.
    pub pairs: Vec<(usize, usize)>,
    /// The player given the pairing-allocated bye.
    pub bye: Option<usize>,
}

/// Pairs the next round of `tournament` by the Dutch system.
///
/// # Errors
/// [`PairingError::Invalid`] when the players' rounds disagree, [`PairingError::NoPairing`] when
/// no pairing keeps the absolute criteria, [`PairingError::TooLarge`] for a field whose weights
/// would not fit 1023 bits.
pub fn pair_round(tournament: &Tournament) -> Result<Pairing, PairingError> {
    let field = Field::new(tournament)?;
    if field.order.is_empty() {
        return Ok(Pairing {
            pairs: Vec::new(),
            bye: None,
        });
    }
    if field.order.len() == 1 {
        let only = field.order[0];
        if !field.info[only].bye_eligible {
            return Err(PairingError::NoPairing {
                round: field.played + 1,
            });
        }
        return Ok(Pairing {
            pairs: Vec::new(),
            bye: Some(only),
        });
    }
    let bits = field.layout.total + 4;
    match bits {
        0..=126 => field.pair::<Wide<2>>(),
        127..=254 => field.pair::<Wide<4>>(),
        255..=510 => field.pair::<Wide<8>>(),
        511..=1022 => field.pair::<Wide<16>>(),
        _ => Err(PairingError::TooLarge {
            players: field.order.len(),
            groups: field.layout.groups,
            bits,
            max: 1022,
        }),
    }
}

/// What the weights need of a number besides [`Weight`].
trait Bits: Weight {
    fn from_u64(v: u64) -> Self;
    fn shifted_left(self, k: u32) -> Self;
    fn is_zero(&self) -> bool;
}

impl<const N: usize> Bits for Wide<N> {
    fn from_u64(v: u64) -> Self {
        Wide::from_u64(v)
    }
    fn shifted_left(self, k: u32) -> Self {
        Wide::shifted_left(self, k)
    }
    fn is_zero(&self) -> bool {
        Wide::is_zero(self)
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Float {
    Down,
    Up,
    None,
}

/// A player's colour and bye situation, worked out from its rounds.
#[derive(Debug, Clone)]
struct Info {
    score: u32,
    played_games: usize,
    /// Colours of the games played, in order.
    colours: Vec<Colour>,
    /// |whites - blacks|.
    imbalance: usize,
    preference: Option<Colour>,
    /// The colour of the last two games when they were the same.
    repeated: Option<Colour>,
    strong: bool,
    bye_eligible: bool,
}

impl Info {
    fn of(player: &Player, win: u32) -> Self {
        let mut colours = Vec::new();
        let mut bye_eligible = true;
        for entry in &player.rounds {
            match *entry {
                RoundEntry::Played { colour, .. } => colours.push(colour),
                RoundEntry::PairingBye { .. } => bye_eligible = false,
                RoundEntry::Unplayed { points } => {
                    if points >= win {
                        bye_eligible = false;
                    }
                }
            }
        }
        let whites = colours.iter().filter(|&&c| c == Colour::White).count();
        let blacks = colours.len() - whites;
        let lower = if whites > blacks {
            Colour::Black
        } else {
            Colour::White
        };
        let imbalance = whites.abs_diff(blacks);
        let last = colours.last().copied();
        let run = last.map_or(0, |l| colours.iter().rev().take_while(|&&c| c == l).count());
        let preference = if imbalance > 1 {
            Some(lower)
        } else if run > 1 {
            last.map(Colour::invert)
        } else if imbalance > 0 {
            Some(lower)
        } else {
            last.map(Colour::invert)
        };
        let repeated = if run > 1 { last } else { None };
        let absolute = imbalance > 1 || repeated.is_some();
        Info {
            score: player.rounds.iter().map(RoundEntry::points).sum(),
            played_games: colours.len(),
            imbalance,
            preference,
            repeated,
            strong: !absolute && imbalance > 0,
            bye_eligible,
            colours,
        }
    }

    fn absolute_imbalance(&self) -> bool {
        self.imbalance > 1
    }

    fn absolute(&self) -> bool {
        self.absolute_imbalance() || self.repeated.is_some()
    }
}

/// The widths of the weight's bit fields.
#[derive(Debug, Clone, Copy)]
struct Layout {
    /// Bits for a count of players in one score group.
    size: u32,
    /// Bits for a sum of one-hot score-group markers (each group its own field).
    groups_bits: u32,
    groups: usize,
    /// All fields below the top (completion) field.
    total: u32,
}

fn bits_for(v: usize) -> u32 {
    usize::BITS - v.leading_zeros()
}

struct Field<'a> {
    t: &'a Tournament,
    info: Vec<Info>,
    /// Players to pair, best first (score, then pairing number): vertex `v` is `order[v]`.
    order: Vec<usize>,
    played: usize,
    forbidden: HashSet<(usize, usize)>,
    /// Per score, the shift of its score group's field.
    group_shift: BTreeMap<u32, u32>,
    layout: Layout,
}

/// Which criteria an edge weight includes, beyond the completion field.
struct EdgeContext<'b> {
    bye_score: u32,
    single_downfloater_is_bye: bool,
    unplayed_rank: &'b BTreeMap<usize, u64>,
}

impl<'a> Field<'a> {
    fn new(t: &'a Tournament) -> Result<Self, PairingError> {
        let played = t.players.first().map_or(0, |p| p.rounds.len());
        for (i, p) in t.players.iter().enumerate() {
            if p.rounds.len() != played {
                return Err(PairingError::Invalid(format!(
                    "player {} has {} rounds where player 1 has {played}",
                    i + 1,
                    p.rounds.len()
                )));
            }
            for r in &p.rounds {
                if let RoundEntry::Played { opponent, .. } = r
                    && (*opponent >= t.players.len() || *opponent == i)
                {
                    return Err(PairingError::Invalid(format!(
                        "player {} has an opponent {} that is not another player",
                        i + 1,
                        opponent + 1
                    )));
                }
            }
        }
        let info: Vec<Info> = t
            .players
            .iter()
            .map(|p| Info::of(p, t.points_for_win))
            .collect();
        let mut order: Vec<usize> = (0..t.players.len())
            .filter(|&i| t.players[i].available)
            .collect();
        order.sort_by(|&a, &b| info[b].score.cmp(&info[a].score).then(a.cmp(&b)));
        let mut forbidden = HashSet::new();
        for (i, p) in t.players.iter().enumerate() {
            for r in &p.rounds {
                if let RoundEntry::Played { opponent, .. } = *r {
                    forbidden.insert((i.min(opponent), i.max(opponent)));
                }
            }
        }
        for &(a, b) in &t.forbidden {
            forbidden.insert((a.min(b), a.max(b)));
        }
        // Each score group gets a field wide enough to count its players; the lowest group
        // sits lowest.
        let mut counts: BTreeMap<u32, usize> = BTreeMap::new();
        for &p in &order {
            *counts.entry(info[p].score).or_default() += 1;
        }
        let mut group_shift = BTreeMap::new();
        let mut groups_bits = 0;
        for (&score, &count) in &counts {
            group_shift.insert(score, groups_bits);
            groups_bits += bits_for(count);
        }
        let size = bits_for(counts.values().copied().max().unwrap_or(0)).max(1);
        let float_rounds = played.min(2) as u32;
        // Bracket (pairs, scores) twice, the bye's unplayed games, four colour fields, two float
        // counts and two float scores a remembered round, then room for the bracket's decisions.
        let total = 2 * (size + groups_bits)
            + 2 * size
            + 4 * size
            + float_rounds * 2 * size
            + float_rounds * 2 * groups_bits
            + 3 * size
            + 1;
        Ok(Field {
            t,
            info,
            order,
            played,
            forbidden,
            group_shift,
            layout: Layout {
                size,
                groups_bits,
                groups: counts.len(),
                total,
            },
        })
    }

    fn score(&self, p: usize) -> u32 {
        self.info[p].score
    }

    /// The score `back` rounds ago.
    fn score_back(&self, p: usize, back: usize) -> u32 {
        let rounds = &self.t.players[p].rounds;
        self.info[p].score
            - rounds[rounds.len() - back..]
                .iter()
                .map(RoundEntry::points)
                .sum::<u32>()
    }

    fn float(&self, p: usize, back: usize) -> Float {
        match self.t.players[p].rounds[self.played - back] {
            RoundEntry::Played { opponent, .. } => {
                let (mine, theirs) = (self.score_back(p, back), self.score_back(opponent, back));
                if mine > theirs {
                    Float::Down
                } else if mine < theirs {
                    Float::Up
                } else {
                    Float::None
                }
            }
            entry if entry.points() > 0 => Float::Down,
            _ => Float::None,
        }
    }

    /// The absolute criteria: no rematch, no shared absolute colour preference (unless a top
    /// scorer is in the pair in the last round).
    fn compatible(&self, a: usize, b: usize) -> bool {
        if self.forbidden.contains(&(a.min(b), a.max(b))) {
            return false;
        }
        let (x, y) = (&self.info[a], &self.info[b]);
        if !x.absolute() || !y.absolute() || x.preference != y.preference {
            return true;
        }
        let threshold =
            (self.played as u32 * self.t.points_for_win.max(self.t.points_for_draw)) >> 1;
        self.played + 1 >= self.t.total_rounds && (x.score > threshold || y.score > threshold)
    }

    fn bye_candidate(&self, p: usize, bye_score: u32) -> bool {
        self.info[p].bye_eligible && self.score(p) <= bye_score
    }

    fn one_at<W: Bits>(&self, score: u32) -> W {
        W::from_u64(1).shifted_left(self.group_shift[&score])
    }

    /// The weight of `higher` (earlier in the order) meeting `lower`, or zero when they may
    /// not meet. `in_bracket`/`in_next`: where `lower` is relative to the bracket being paired.
    fn edge<W: Bits>(
        &self,
        higher: usize,
        lower: usize,
        in_bracket: bool,
        in_next: bool,
        cx: &EdgeContext,
    ) -> W {
        if !self.compatible(higher, lower) {
            return W::default();
        }
        let l = self.layout;
        let (h, lo) = (&self.info[higher], &self.info[lower]);
        let (sh, sl) = (h.score, lo.score);
        let flag = |b: bool| W::from_u64(u64::from(b));
        // Completion: a pair, and neither partner a player who should rather take the bye.
        let mut w = W::from_u64(
            1 + u64::from(!self.bye_candidate(higher, cx.bye_score))
                + u64::from(!self.bye_candidate(lower, cx.bye_score)),
        );
        // Pairs in this bracket, and the scores they lift out of it.
        w = w.shifted_left(l.size) + flag(in_bracket);
        w = w.shifted_left(l.groups_bits);
        if in_bracket {
            w = w + self.one_at(sh);
        }
        // Pairs in the next bracket, and their scores.
        w = w.shifted_left(l.size) + flag(in_next);
        w = w.shifted_left(l.groups_bits);
        if in_next {
            w = w + self.one_at(sh);
        }
        // The bye's future holder: the fewest unplayed games.
        w = w.shifted_left(2 * l.size);
        if cx.single_downfloater_is_bye {
            for p in [higher, lower] {
                if self.score(p) == cx.bye_score {
                    w = w + W::from_u64(cx.unplayed_rank[&self.info[p].played_games]);
                }
            }
        }
        // Colours, only for pairs inside the bracket.
        let same = lo.preference == h.preference;
        let c1 = !lo.absolute_imbalance() || !h.absolute_imbalance() || !same;
        let c2 = !lo.absolute()
            || !h.absolute()
            || !same
            || if lo.imbalance == h.imbalance {
                lo.repeated.is_none() || lo.repeated != h.repeated
            } else {
                let less = if lo.imbalance > h.imbalance { h } else { lo };
                less.repeated != lo.preference.map(Colour::invert)
            };
        let c3 = lo.preference.is_none() || h.preference.is_none() || !same;
        let c4 = (!lo.strong && !lo.absolute())
            || (!h.strong && !h.absolute())
            || (lo.absolute() && h.absolute())
            || !same;
        for c in [c1, c2, c3, c4] {
            w = w.shifted_left(l.size) + flag(in_bracket && c);
        }
        // Floats of the last round, then of the round before: repeated downfloaters and
        // upfloaters avoided.
        for back in 1..=self.played.min(2) {
            w = w.shifted_left(l.size);
            if in_bracket {
                w = w + flag(self.float(lower, back) == Float::Down);
                w = w + flag(sh <= sl && self.float(higher, back) == Float::Down);
            }
            w = w.shifted_left(l.size);
            if in_bracket {
                w = w + flag(!(sh > sl && self.float(lower, back) == Float::Up));
            }
        }
        // ... and then their scores.
        for back in 1..=self.played.min(2) {
            w = w.shifted_left(l.groups_bits);
            if in_bracket {
                if self.float(lower, back) == Float::Down {
                    w = w + self.one_at(sl);
                }
                if self.float(higher, back) == Float::Down {
                    w = w + self.one_at(sh);
                }
            }
            w = w.shifted_left(l.groups_bits);
            if in_bracket && !(self.float(lower, back) == Float::Up && sh > sl) {
                w = w + self.one_at(sh);
            }
        }
        // Room for the bracket's own decisions (moved-down players, exchanges, transpositions).
        w.shifted_left(3 * l.size + 1)
    }

    /// The colour `p` gets against `q`.
    fn colour_of(&self, p: usize, q: usize) -> Colour {
        if let Some(c) = self.neutral_colour(p, q) {
            return c;
        }
        let (a, b) = (&self.info[p], &self.info[q]);
        // `p` ranks below `q`: lower score, or the same score and a later pairing number.
        let p_below = (a.score, q) < (b.score, p);
        let initial = self.t.initial_colour;
        match a.preference {
            None => {
                let top = if p_below { q } else { p };
                let top_colour = if self.rank_of(top) % 2 == 1 {
                    initial.invert()
                } else {
                    initial
                };
                if p_below {
                    top_colour.invert()
                } else {
                    top_colour
                }
            }
            Some(pref) => {
                if p_below {
                    b.preference.map_or(pref, Colour::invert)
                } else {
                    pref
                }
            }
        }
    }

    /// A player's 0-based position among the players who are in the tournament.
    fn rank_of(&self, p: usize) -> usize {
        p
    }

    /// The colour the allocation rules give `p` against `q` before falling back to rank.
    fn neutral_colour(&self, p: usize, q: usize) -> Option<Colour> {
        let (a, b) = (&self.info[p], &self.info[q]);
        if a.preference.is_none() || b.preference.is_none() || a.preference != b.preference {
            return a.preference.or(b.preference.map(Colour::invert));
        }
        let pref = a.preference.expect("both have one");
        if a.absolute() && (a.imbalance > b.imbalance || !b.absolute()) {
            return Some(pref);
        }
        if b.absolute() && (b.imbalance > a.imbalance || !a.absolute()) {
            return Some(pref.invert());
        }
        if a.strong && !b.strong {
            return Some(pref);
        }
        if b.strong && !a.strong {
            return Some(pref.invert());
        }
        // Alternate from the last game in which the two had different colours.
        let diff = a
            .colours
            .iter()
            .rev()
            .zip(b.colours.iter().rev())
            .find(|(x, y)| x != y);
        diff.map(|(_, theirs)| *theirs)
    }

    fn pair<W: Bits>(&self) -> Result<Pairing, PairingError> {
        Bracketer::<W>::new(self).run()
    }
}

/// The pairing in progress: the weight of every pair of vertices and the decisions so far.
struct Bracketer<'f, 'a, W: Bits> {
    f: &'f Field<'a>,
    n: usize,
    weights: Vec<W>,
    max_weight: W,
}

impl<'f, 'a, W: Bits> Bracketer<'f, 'a, W> {
    fn new(f: &'f Field<'a>) -> Self {
        let n = f.order.len();
        let max_weight = W::from_u64(1).shifted_left(f.layout.total + 2) - W::from_u64(1);
        Self {
            f,
            n,
            weights: vec![W::default(); n * n],
            max_weight,
        }
    }

    fn set(&mut self, a: usize, b: usize, w: W) {
        self.weights[a * self.n + b] = w;
        self.weights[b * self.n + a] = w;
    }

    fn matching(&self) -> Vec<usize> {
        let mut edges = Vec::new();
        for a in 0..self.n {
            for b in a + 1..self.n {
                let w = self.weights[a * self.n + b];
                if w > W::default() {
                    edges.push((a, b, w));
                }
            }
        }
        blossom::max_weight_matching(self.n, &edges)
            .into_iter()
            .enumerate()
            .map(|(v, m)| m.unwrap_or(v))
            .collect()
    }

    /// Fixes `a` and `b` as a pair: no other edge at either.
    fn finalize(&mut self, a: usize, b: usize) {
        for v in 0..self.n {
            if v != a {
                self.set(a, v, W::default());
            }
            if v != b {
                self.set(b, v, W::default());
            }
        }
        self.set(a, b, self.max_weight);
    }

    fn run(mut self) -> Result<Pairing, PairingError> {
        let f = self.f;
        let n = self.n;
        let order = &f.order;
        let odd = n % 2 == 1;
        let score = |v: usize| f.score(order[v]);
        let none_ranks = BTreeMap::new();
        let plain = EdgeContext {
            bye_score: 0,
            single_downfloater_is_bye: false,
            unplayed_rank: &none_ranks,
        };
        // First: can the whole field be paired, and at what score does the bye fall?
        let top = score(0);
        for a in 0..n {
            for b in 0..a {
                let w = if odd {
                    if f.compatible(order[a], order[b]) {
                        let (pa, pb) = (&f.info[order[a]], &f.info[order[b]]);
                        let mut w = W::from_u64(
                            1 + u64::from(!pa.bye_eligible) + u64::from(!pb.bye_eligible),
                        );
                        w = w.shifted_left(f.layout.groups_bits)
                            + W::from_u64(u64::from(
                                f.group_shift[&score(a)] + f.group_shift[&score(b)],
                            ));
                        w.shifted_left(f.layout.size) + W::from_u64(u64::from(score(a) >= top))
                    } else {
                        W::default()
                    }
                } else {
                    f.edge(order[b], order[a], false, false, &plain)
                };
                self.set(a, b, w);
            }
        }
        let first = self.matching();
        let unmatched: Vec<usize> = (0..n).filter(|&v| first[v] == v).collect();
        if unmatched.len() > 1 || unmatched.iter().any(|&v| !f.info[order[v]].bye_eligible) {
            return Err(PairingError::NoPairing {
                round: f.played + 1,
            });
        }
        let mut bye_score = 0;
        let mut single_downfloater_is_bye = false;
        let mut unplayed_rank = BTreeMap::new();
        if odd {
            bye_score = score(unmatched[0]);
            if bye_score >= top {
                single_downfloater_is_bye = (0..n)
                    .take_while(|&v| score(v) >= top)
                    .all(|v| score(first[v]) >= top);
            }
            let mut played: Vec<usize> = (0..n)
                .filter(|&v| score(v) == bye_score)
                .map(|v| f.info[order[v]].played_games)
                .collect();
            played.sort_unstable_by(|a, b| b.cmp(a));
            for (rank, games) in played.into_iter().enumerate() {
                unplayed_rank.insert(games, rank as u64);
            }
            let cx = EdgeContext {
                bye_score,
                single_downfloater_is_bye,
                unplayed_rank: &unplayed_rank,
            };
            for a in 0..n {
                for b in 0..a {
                    let w = f.edge(order[b], order[a], false, false, &cx);
                    self.set(a, b, w);
                }
            }
        }

        let mut partner: Vec<Option<usize>> = vec![None; n];
        let mut matched = vec![false; n];
        // The bracket: moved-down players first, then the score group's residents; then the
        // next score group, which the bracket's weights look into.
        let mut members: Vec<usize> = (0..n).take_while(|&v| score(v) >= top).collect();
        let mut next_group = members.len();
        let mut moved_down = 0;
        let mut group_start = 0;
        while members.len() > 1 || next_group < n {
            let bracket_len = members.len();
            let group_end = group_start + (bracket_len - moved_down);
            if next_group < n {
                let s = score(next_group);
                while next_group < n && score(next_group) >= s {
                    members.push(next_group);
                    next_group += 1;
                }
            }
            let cx = EdgeContext {
                bye_score,
                single_downfloater_is_bye,
                unplayed_rank: &unplayed_rank,
            };
            // base[i][j] for j < i, i from the residents on.
            let mut base: Vec<Vec<W>> = vec![Vec::new(); members.len()];
            for i in moved_down..members.len() {
                for j in 0..i {
                    let w = f.edge(
                        order[members[j]],
                        order[members[i]],
                        i < bracket_len,
                        i >= bracket_len,
                        &cx,
                    );
                    base[i].push(w);
                    self.set(members[i], members[j], w);
                }
            }
            let resident = |v: usize| v >= group_start && v < group_end;
            let mut stable = self.matching();

            // Which moved-down players are paired here: as many as can be, the highest first.
            let mut md_score = 0;
            let mut md_left = 0;
            let mut md_matched_left = 0;
            for i in 0..moved_down {
                let v = members[i];
                if i == 0 || score(v) < md_score {
                    md_score = score(v);
                    md_left = 0;
                    md_matched_left = 0;
                    for &u in members[i..moved_down]
                        .iter()
                        .take_while(|&&u| score(u) >= md_score)
                    {
                        md_left += 1;
                        if resident(stable[u]) {
                            md_matched_left += 1;
                        }
                    }
                }
                if md_matched_left == 0 {
                    continue;
                }
                if md_left <= md_matched_left {
                    matched[v] = true;
                    continue;
                }
                md_left -= 1;
                if !resident(stable[v]) {
                    for o in moved_down..bracket_len {
                        let w = base[o][i];
                        if !w.is_zero() {
                            self.set(v, members[o], w + W::from_u64(1));
                        }
                    }
                    stable = self.matching();
                }
                if resident(stable[v]) {
                    matched[v] = true;
                    md_matched_left -= 1;
                    for o in moved_down..bracket_len {
                        let w = base[o][i];
                        if !w.is_zero() {
                            let w = w + W::from_u64((bracket_len - moved_down) as u64 + 1);
                            self.set(v, members[o], w);
                        }
                    }
                }
            }
            // Their opponents: the highest resident each can have.
            for i in 0..moved_down {
                let v = members[i];
                if !matched[v] {
                    continue;
                }
                let mut bonus = members.len() as u64;
                for o in (moved_down..bracket_len).rev() {
                    let u = members[o];
                    if matched[u] {
                        continue;
                    }
                    let w = base[o][i];
                    if !w.is_zero() {
                        self.set(v, u, w + W::from_u64(bonus));
                        bonus += 1;
                    }
                }
                stable = self.matching();
                let u = stable[v];
                matched[u] = true;
                self.finalize(v, u);
            }

            // The remainder: residents not paired with a moved-down player, split into S1 (the
            // first `pairs`) and S2.
            let mut remainder: Vec<usize> = Vec::new(); // indices into members
            let mut pairs = 0;
            for (i, &v) in members
                .iter()
                .enumerate()
                .take(bracket_len)
                .skip(moved_down)
            {
                if stable[v] < group_start {
                    continue;
                }
                remainder.push(i);
                if stable[v] < v {
                    pairs += 1;
                }
            }
            let size = f.layout.size;
            let ordering = |base: &Vec<Vec<W>>, i: usize, j: usize, pos: usize| -> W {
                // i < j (member indices), `pos` the position of i in the remainder.
                let w = base[j][i];
                if w.is_zero() {
                    return w;
                }
                let exchange_free = W::from_u64(u64::from(pos < pairs)).shifted_left(2 * size);
                (w + exchange_free.shifted_left(1)) - W::from_u64(2 * pos as u64)
            };
            for (b_pos, &j) in remainder.iter().enumerate() {
                for (a_pos, &i) in remainder[..b_pos].iter().enumerate() {
                    let w = ordering(&base, i, j, a_pos);
                    self.set(members[i], members[j], w);
                }
            }
            stable = self.matching();
            let downward = |stable: &Vec<usize>, v: usize| stable[v] > v && stable[v] < group_end;
            let exchanges = remainder[..pairs]
                .iter()
                .filter(|&&i| !downward(&stable, members[i]))
                .count();

            // The lowest players of S1 that can go to S2, lowest first.
            let mut left = exchanges;
            let mut pos = pairs;
            while pos > 0 && left > 0 {
                pos -= 1;
                let i = remainder[pos];
                let v = members[i];
                if downward(&stable, v) {
                    for &j in &remainder[pos + 1..] {
                        let w = ordering(&base, i, j, pos);
                        if !w.is_zero() {
                            self.set(v, members[j], w - W::from_u64(1));
                        }
                    }
                    stable = self.matching();
                }
                let exchanged = !downward(&stable, v);
                if exchanged {
                    left -= 1;
                }
                for &j in &remainder[pos + 1..] {
                    if exchanged {
                        base[j][i] = W::default();
                    }
                    let w = ordering(&base, i, j, pos);
                    self.set(v, members[j], w);
                }
            }
            // The highest players of S2 that can go to S1, highest first.
            let mut left = exchanges;
            let mut pos = pairs;
            while pos < remainder.len() && left > 1 {
                let i = remainder[pos];
                let v = members[i];
                let already = downward(&stable, v);
                if !already {
                    for &j in &remainder[pos + 1..] {
                        let w = ordering(&base, i, j, pos);
                        if !w.is_zero() {
                            self.set(v, members[j], w + W::from_u64(1));
                        }
                    }
                    stable = self.matching();
                }
                if downward(&stable, v) {
                    left -= 1;
                    for &j in &remainder[..pos] {
                        base[i][j] = W::default();
                        self.set(v, members[j], W::default());
                    }
                    for o in bracket_len..members.len() {
                        base[o][i] = W::default();
                        self.set(v, members[o], W::default());
                    }
                }
                if !already {
                    for &j in &remainder[pos + 1..] {
                        let w = ordering(&base, i, j, pos);
                        self.set(v, members[j], w);
                    }
                }
                pos += 1;
            }
            // S1 and S2 are now fixed: keep only S1–S2 edges.
            for (a_pos, &i) in remainder.iter().enumerate() {
                let v = members[i];
                for &j in &remainder[a_pos + 1..] {
                    let u = members[j];
                    if !downward(&stable, v) || downward(&stable, u) {
                        base[j][i] = W::default();
                    }
                    self.set(v, u, base[j][i]);
                }
            }
            // Each S1 player, from the top, takes the highest S2 player it can.
            for &i in &remainder {
                let v = members[i];
                if !downward(&stable, v) {
                    continue;
                }
                let mut bonus = 0u64;
                for &j in remainder.iter().rev() {
                    let u = members[j];
                    if j <= i || matched[u] {
                        continue;
                    }
                    let w = base[j][i];
                    if !w.is_zero() {
                        self.set(v, u, w + W::from_u64(bonus));
                    }
                    bonus += 1;
                }
                stable = self.matching();
                let u = stable[v];
                matched[v] = true;
                matched[u] = true;
                self.finalize(v, u);
            }

            // The next bracket: whoever is left, the next score group's residents after them.
            let next_start = members.get(bracket_len).map(|&v| score(v));
            single_downfloater_is_bye = odd && next_start.is_some_and(|s| bye_score >= s);
            let mut rest = Vec::new();
            moved_down = 0;
            for (i, &v) in members.iter().enumerate() {
                if i < bracket_len && matched[v] {
                    partner[v] = Some(stable[v]);
                    partner[stable[v]] = Some(v);
                } else {
                    rest.push(v);
                    if i < bracket_len {
                        moved_down += 1;
                    }
                    if single_downfloater_is_bye && next_start.is_some_and(|s| score(stable[v]) < s)
                    {
                        single_downfloater_is_bye = false;
                    }
                }
            }
            members = rest;
            group_start = group_end;
        }

        let mut pairs = Vec::new();
        let mut bye = None;
        for v in 0..n {
            let p = order[v];
            match partner[v] {
                Some(u) => {
                    let q = order[u];
                    if p < q {
                        if f.colour_of(p, q) == Colour::White {
                            pairs.push((p, q));
                        } else {
                            pairs.push((q, p));
                        }
                    }
                }
                None => bye = Some(p),
            }
        }
        // Board order: the higher score in the pair, then the lower, then the higher player's
        // pairing number.
        pairs.sort_by_key(|&(w, b)| {
            let (hi, lo) = if (f.score(w), b) > (f.score(b), w) {
                (w, b)
            } else {
                (b, w)
            };
            (
                std::cmp::Reverse(f.score(hi)),
                std::cmp::Reverse(f.score(lo)),
                hi,
            )
        });
        Ok(Pairing { pairs, bye })
    }
}

/// Each rule on a small crafted case; the expected pairings are bbpPairings' own (`-p`) for the
/// same tournament.
#[cfg(test)]
mod tests {
    use super::{Colour, Pairing, Player, RoundEntry, Tournament, pair_round};
    use crate::pairing::PairingError;

    /// A round: games `(white, black, white's points in tenths)` by pairing number, and the bye.
    type Round<'a> = (&'a [(usize, usize, u32)], Option<usize>);

    fn tournament(n: usize, total_rounds: usize, rounds: &[Round], absent: &[usize]) -> Tournament {
        let mut players: Vec<Player> = (1..=n)
            .map(|p| Player {
                rounds: Vec::new(),
                available: !absent.contains(&p),
            })
            .collect();
        for (games, bye) in rounds {
            let mut entry = vec![RoundEntry::Unplayed { points: 0 }; n];
            for &(w, b, points) in *games {
                entry[w - 1] = RoundEntry::Played {
                    opponent: b - 1,
                    colour: Colour::White,
                    points,
                };
                entry[b - 1] = RoundEntry::Played {
                    opponent: w - 1,
                    colour: Colour::Black,
                    points: 10 - points,
                };
            }
            if let Some(b) = bye {
                entry[b - 1] = RoundEntry::PairingBye { points: 10 };
            }
            for (p, e) in players.iter_mut().zip(entry) {
                p.rounds.push(e);
            }
        }
        Tournament {
            players,
            total_rounds,
            points_for_win: 10,
            points_for_draw: 5,
            initial_colour: Colour::White,
            forbidden: Vec::new(),
        }
    }

    /// The pairing by pairing numbers: `(white, black)` in board order, and the bye.
    fn numbers(p: &Pairing) -> (Vec<(usize, usize)>, Option<usize>) {
        (
            p.pairs.iter().map(|&(w, b)| (w + 1, b + 1)).collect(),
            p.bye.map(|b| b + 1),
        )
    }

    #[test]
    fn round_one_splits_the_field_top_half_against_bottom_half() {
        let t = tournament(6, 3, &[], &[]);
        let p = pair_round(&t).unwrap();
        assert_eq!(numbers(&p), (vec![(1, 4), (5, 2), (3, 6)], None));
    }

    #[test]
    fn winners_meet_winners_and_colours_alternate() {
        // Round 1: 1 beat 3 with White, 2 beat 4 with Black.
        let t = tournament(4, 3, &[(&[(1, 3, 10), (4, 2, 0)], None)], &[]);
        let p = pair_round(&t).unwrap();
        assert_eq!(numbers(&p), (vec![(2, 1), (3, 4)], None));
    }

    #[test]
    fn two_players_with_the_same_absolute_colour_preference_never_meet_before_the_last_round() {
        // 1 and 2 both had White twice; 3 and 4 sit the round out. With two rounds to go they
        // cannot meet: there is no pairing.
        let history: [Round; 2] = [
            (&[(1, 3, 10), (2, 4, 10)], None),
            (&[(1, 4, 10), (2, 3, 10)], None),
        ];
        let t = tournament(4, 4, &history, &[3, 4]);
        assert_eq!(pair_round(&t), Err(PairingError::NoPairing { round: 3 }));
        // In the last round two top scorers (more than half the points) may meet: the
        // higher-ranked gets its preference, Black.
        let t = tournament(4, 3, &history, &[3, 4]);
        assert_eq!(numbers(&pair_round(&t).unwrap()), (vec![(2, 1)], None));
    }

    #[test]
    fn the_bye_goes_to_the_lowest_ranked_player_of_the_lowest_score_without_one() {
        // Round 1: 5 had the bye; 3 and 4 lost. Round 2: 4 (the lower of the two) has the bye.
        let t = tournament(5, 3, &[(&[(1, 3, 10), (4, 2, 0)], Some(5))], &[]);
        let p = pair_round(&t).unwrap();
        assert_eq!(numbers(&p), (vec![(5, 1), (2, 3)], Some(4)));
        // Three players, 3 had the bye: 2, the lowest, takes it; 3 and 1 meet.
        let t = tournament(3, 3, &[(&[(1, 2, 10)], Some(3))], &[]);
        let p = pair_round(&t).unwrap();
        assert_eq!(numbers(&p), (vec![(3, 1)], Some(2)), "{p:?}");
    }

    #[test]
    fn floaters_and_colours_settle_a_mixed_field() {
        // Two rounds with draws: scores 2 (p2), 1.5 (p1, p4), 1 (p3), 0 (p5, p6). p2 floats down
        // to the 1.5 group and meets p1, the highest it has not met; p3 floats down to p4.
        let history: [Round; 2] = [
            (&[(1, 4, 5), (5, 2, 0), (3, 6, 10)], None),
            (&[(2, 3, 10), (4, 5, 10), (6, 1, 0)], None),
        ];
        let t = tournament(6, 4, &history, &[]);
        let p = pair_round(&t).unwrap();
        assert_eq!(numbers(&p), (vec![(1, 2), (3, 4), (5, 6)], None));
    }

    #[test]
    fn bad_histories_are_refused() {
        let mut t = tournament(4, 3, &[(&[(1, 3, 10), (4, 2, 0)], None)], &[]);
        t.players[3].rounds.clear();
        assert!(matches!(pair_round(&t), Err(PairingError::Invalid(m)) if m.contains("player 4")));
    }
}
