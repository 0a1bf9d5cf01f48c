//! Board renderings and move lists for prompts. Always drawn from White's side (rank 8 at the top),
//! the way FEN lists the ranks, so a model can match the drawing against the FEN.

use shakmaty::{
    CastlingSide, Chess, Color, File, Move, Piece, Position, Rank, Role, Square,
    san::{San, SanPlus, Suffix},
    uci::UciMove,
};

/// Draws the board with one character per square: upper case for White, lower case for Black,
/// `.` for an empty square, with rank numbers on the left and file letters below.
///
/// ```text
/// 8 r n b q k b n r
/// 7 p p p p p p p p
/// 6 . . . . . . . .
/// ...
/// 1 R N B Q K B N R
///   a b c d e f g h
/// ```
pub fn ascii(pos: &Chess) -> String {
    draw(pos, |piece| piece.map_or('.', Piece::char))
}

/// Draws the board with chess glyphs (♔ White, ♚ Black) and `·` for an empty square, labelled like
/// [`ascii`].
pub fn unicode(pos: &Chess) -> String {
    draw(pos, |piece| piece.map_or('·', glyph))
}

fn glyph(piece: Piece) -> char {
    match (piece.color, piece.role) {
        (Color::White, Role::King) => '♔',
        (Color::White, Role::Queen) => '♕',
        (Color::White, Role::Rook) => '♖',
        (Color::White, Role::Bishop) => '♗',
        (Color::White, Role::Knight) => '♘',
        (Color::White, Role::Pawn) => '♙',
        (Color::Black, Role::King) => '♚',
        (Color::Black, Role::Queen) => '♛',
        (Color::Black, Role::Rook) => '♜',
        (Color::Black, Role::Bishop) => '♝',
        (Color::Black, Role::Knight) => '♞',
        (Color::Black, Role::Pawn) => '♟',
    }
}

fn draw(pos: &Chess, cell: impl Fn(Option<Piece>) -> char) -> String {
    let board = pos.board();
    let mut out = String::with_capacity(9 * 18 * 3);
    for rank in Rank::ALL.into_iter().rev() {
        out.push(rank.char());
        for file in File::ALL {
            out.push(' ');
            out.push(cell(board.piece_at(Square::from_coords(file, rank))));
        }
        out.push('\n');
    }
    out.push(' ');
    for file in File::ALL {
        out.push(' ');
        out.push(file.char());
    }
    out.push('\n');
    out
}

/// The legal moves in UCI notation (castling as `e1g1` in standard chess, as king takes rook,
/// `e1h1`, in Chess960), sorted.
pub fn legal_uci(pos: &Chess) -> Vec<String> {
    legal_uci_texts(pos).to_vec()
}

/// [`legal_uci`] as one [`MoveTexts`]: what every prompt's legal moves are made from.
pub fn legal_uci_texts(pos: &Chess) -> MoveTexts {
    // Sorted as numbers that order as the text does, then written: sorting the strings
    // themselves was 40 % of this function's instructions, and it runs for every prompt.
    let mode = pos.castles().mode();
    let mut moves: Vec<(u32, UciMove)> = pos
        .legal_moves()
        .iter()
        .map(|m| {
            let uci = m.to_uci(mode);
            (uci_order(&uci), uci)
        })
        .collect();
    moves.sort_unstable_by_key(|&(order, _)| order);
    let mut texts = MoveTexts::with_capacity(moves.len(), 5);
    for (_, uci) in moves {
        uci.append_to_string(&mut texts.text);
        texts.end_move();
    }
    texts
}

/// A list of moves as text, held as one string and where each move ends in it rather than a
/// `String` each: the legal moves are made for every prompt and dropped after it, and one
/// allocation per move (with its free) was a tenth of their cost.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct MoveTexts {
    /// The moves, one after the other.
    text: String,
    /// Where each move ends in `text`.
    ends: Vec<u32>,
}

impl MoveTexts {
    fn with_capacity(moves: usize, bytes_per_move: usize) -> Self {
        MoveTexts {
            text: String::with_capacity(moves * bytes_per_move),
            ends: Vec::with_capacity(moves),
        }
    }

    /// Marks the end of the move just appended to `text`.
    fn end_move(&mut self) {
        self.ends
            .push(u32::try_from(self.text.len()).expect("a move list is far below 4 GB"));
    }

    /// Appends `text` as the list's last move.
    pub fn push(&mut self, text: &str) {
        self.text.push_str(text);
        self.end_move();
    }

    /// Keeps only the first `len` moves.
    pub fn truncate(&mut self, len: usize) {
        self.ends.truncate(len);
        self.text
            .truncate(self.ends.last().map_or(0, |&end| end as usize));
    }

    /// How many of `moves`, from the first, the list starts with.
    pub fn common_prefix(&self, moves: &[impl AsRef<str>]) -> usize {
        self.iter()
            .zip(moves)
            .take_while(|(held, m)| *held == m.as_ref())
            .count()
    }

    /// How many moves the list holds.
    pub fn len(&self) -> usize {
        self.ends.len()
    }

    /// Whether the list holds no move.
    pub fn is_empty(&self) -> bool {
        self.ends.is_empty()
    }

    /// The moves in order.
    pub fn iter(&self) -> impl ExactSizeIterator<Item = &str> + '_ {
        let mut start = 0;
        self.ends.iter().map(move |&end| {
            let end = end as usize;
            let text = &self.text[start..end];
            start = end;
            text
        })
    }

    /// The moves as a `String` each.
    pub fn to_vec(&self) -> Vec<String> {
        self.iter().map(str::to_owned).collect()
    }
}

impl<S: AsRef<str>> FromIterator<S> for MoveTexts {
    fn from_iter<I: IntoIterator<Item = S>>(moves: I) -> Self {
        let mut texts = MoveTexts::default();
        for m in moves {
            texts.push(m.as_ref());
        }
        texts
    }
}

/// As a sequence of strings, as a `Vec<String>` of the same moves is.
impl serde::Serialize for MoveTexts {
    fn serialize<S: serde::Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        serializer.collect_seq(self.iter())
    }
}

/// A number that orders UCI moves as their text does: from-file, from-rank, to-file, to-rank
/// (each as its letter or digit sorts), then the promotion letter, none first.
fn uci_order(uci: &UciMove) -> u32 {
    match *uci {
        UciMove::Normal {
            from,
            to,
            promotion,
        } => {
            (u32::from(from.file()) << 24)
                | (u32::from(from.rank()) << 20)
                | (u32::from(to.file()) << 16)
                | (u32::from(to.rank()) << 12)
                | promotion.map_or(0, |role| u32::from(role.char()))
        }
        // Drops and null moves are never legal in the variants arena plays.
        UciMove::Put { .. } | UciMove::Null => u32::MAX,
    }
}

/// The legal moves in SAN with check and mate suffixes, sorted.
pub fn legal_san(pos: &Chess) -> Vec<String> {
    let mut moves: Vec<String> = pos
        .legal_moves()
        .iter()
        .map(|m| {
            // Appended, not formatted through `Display`.
            let mut san = String::with_capacity(8);
            legal_san_plus(pos, *m).append_to_string(&mut san);
            san
        })
        .collect();
    moves.sort_unstable();
    moves
}

/// `SanPlus::from_move(pos.clone(), m)` for a legal move `m`, at a third of its cost: shakmaty
/// finds the suffix through the position's outcome, which generates every legal reply after
/// each move (to tell a stalemate), where only a move that gives check needs them (to tell a
/// mate). For standard chess and Chess960 (no variant outcome) the result is the same; a test
/// compares the two on thousands of positions.
fn legal_san_plus(pos: &Chess, m: Move) -> SanPlus {
    // The candidates shakmaty disambiguates against, as `SanPlus::from_move` takes them.
    let candidates = match m {
        Move::Normal { role, to, .. } | Move::Put { role, to } => pos.san_candidates(role, to),
        Move::EnPassant { to, .. } => pos.san_candidates(Role::Pawn, to),
        Move::Castle { king, rook } if king.file() < rook.file() => {
            pos.castling_moves(CastlingSide::KingSide)
        }
        Move::Castle { .. } => pos.castling_moves(CastlingSide::QueenSide),
    };
    let san = San::disambiguate(m, &candidates);
    let mut after = pos.clone();
    after.play_unchecked(m);
    let suffix = after.checkers().any().then(|| {
        if after.legal_moves().is_empty() {
            Suffix::Checkmate
        } else {
            Suffix::Check
        }
    });
    SanPlus { san, suffix }
}

/// The last `n` moves of a history (all of them when there are fewer).
pub fn last_moves(moves: &[String], n: usize) -> &[String] {
    &moves[moves.len().saturating_sub(n)..]
}

#[cfg(test)]
mod tests {
    use shakmaty::{CastlingMode, fen::Fen};

    use super::*;

    fn pos(fen: &str) -> Chess {
        fen.parse::<Fen>()
            .unwrap()
            .into_position(CastlingMode::Standard)
            .unwrap()
    }

    #[test]
    fn move_texts_hold_each_move_and_serialise_as_a_list() {
        let moves = ["e2e4", "", "e7e8q"];
        let texts: MoveTexts = moves.iter().collect();
        assert_eq!(texts.len(), 3);
        assert!(!texts.is_empty() && MoveTexts::default().is_empty());
        assert_eq!(texts.iter().collect::<Vec<_>>(), moves);
        assert_eq!(texts.to_vec(), moves);
        assert_eq!(texts.common_prefix(&["e2e4", "", "e7e8r"]), 2);
        assert_eq!(texts.common_prefix(&["e2e4", "", "e7e8q", "a2a3"]), 3);
        let mut cut = texts.clone();
        cut.truncate(1);
        cut.push("d2d4");
        assert_eq!(cut.iter().collect::<Vec<_>>(), ["e2e4", "d2d4"]);
        assert_eq!(
            serde_json::to_string(&texts).unwrap(),
            serde_json::to_string(&moves).unwrap()
        );
    }

    /// The numeric sort gives the order of the text, on positions with promotions (with and
    /// without capture), castling both ways, and Chess960's king-takes-rook castling.
    #[test]
    fn legal_uci_is_sorted_as_text() {
        for (fen, mode) in [
            (
                "rnbqkbnr/pppppppp/8/8/8/8/PPPPPPPP/RNBQKBNR w KQkq - 0 1",
                CastlingMode::Standard,
            ),
            (
                "r3k2r/1P4P1/8/8/8/8/1p4p1/R3K2R w KQkq - 0 1",
                CastlingMode::Standard,
            ),
            (
                "r3k2r/1P4P1/8/8/8/8/1p4p1/R3K2R b KQkq - 0 1",
                CastlingMode::Standard,
            ),
            (
                "1r2k1r1/pppppppp/8/8/8/8/PPPPPPPP/1R2K1R1 w GBgb - 0 1",
                CastlingMode::Chess960,
            ),
        ] {
            let pos: Chess = fen.parse::<Fen>().unwrap().into_position(mode).unwrap();
            let mut as_text: Vec<String> = pos
                .legal_moves()
                .iter()
                .map(|m| m.to_uci(mode).to_string())
                .collect();
            as_text.sort_unstable();
            let listed = legal_uci(&pos);
            assert_eq!(listed, as_text, "{fen}");
            assert!(
                listed.iter().any(|m| m.len() == 5) || !fen.contains("1P4P1"),
                "{fen}"
            );
        }
    }

    #[test]
    fn ascii_initial_position() {
        let expected = "\
8 r n b q k b n r
7 p p p p p p p p
6 . . . . . . . .
5 . . . . . . . .
4 . . . . . . . .
3 . . . . . . . .
2 P P P P P P P P
1 R N B Q K B N R
  a b c d e f g h
";
        assert_eq!(ascii(&Chess::default()), expected);
    }

    #[test]
    fn unicode_marks_pieces_by_color() {
        let text = unicode(&pos("4k3/8/8/8/8/8/8/4K2R w K - 0 1"));
        let lines: Vec<&str> = text.lines().collect();
        assert_eq!(lines[0], "8 · · · · ♚ · · ·");
        assert_eq!(lines[7], "1 · · · · ♔ · · ♖");
        assert_eq!(lines[8], "  a b c d e f g h");
    }

    #[test]
    fn legal_san_is_shakmaty_s_san_of_every_legal_move() {
        use rand::{RngExt, SeedableRng, rngs::StdRng};
        let slow = |pos: &Chess| -> Vec<String> {
            let mut moves: Vec<String> = pos
                .legal_moves()
                .iter()
                .map(|m| SanPlus::from_move(pos.clone(), *m).to_string())
                .collect();
            moves.sort_unstable();
            moves
        };
        // Mates, checks by promotion, en passant and castling, stalemates, disambiguation, Chess960
        // castling (king takes rook), then the positions of random games from each.
        let starts = [
            (
                "rnbqkbnr/pppppppp/8/8/8/8/PPPPPPPP/RNBQKBNR w KQkq - 0 1",
                CastlingMode::Standard,
            ),
            (
                "6k1/5ppp/8/8/8/8/5PPP/R5K1 w - - 0 1",
                CastlingMode::Standard,
            ),
            ("k7/4P3/8/8/8/8/8/4K3 w - - 0 1", CastlingMode::Standard),
            ("8/8/8/2k5/3Pp3/8/8/4K3 b - d3 0 1", CastlingMode::Standard),
            ("5k2/8/8/8/8/8/8/4K2R w K - 0 1", CastlingMode::Standard),
            ("7k/5Q2/6K1/8/8/8/8/8 w - - 0 1", CastlingMode::Standard),
            // Queens that need a file, a rank or both to tell apart; knights and rooks too.
            ("7k/8/8/1Q1Q4/8/1Q6/8/K7 w - - 0 1", CastlingMode::Standard),
            ("3k4/8/8/8/1N3N2/8/R6R/K7 w - - 0 1", CastlingMode::Standard),
            (
                "1r2k1r1/8/8/8/8/8/8/1R2K1R1 w GBgb - 0 1",
                CastlingMode::Chess960,
            ),
        ];
        let mut rng = StdRng::seed_from_u64(7);
        let mut checked = 0;
        for (fen, mode) in starts {
            for _ in 0..12 {
                let mut p: Chess = fen.parse::<Fen>().unwrap().into_position(mode).unwrap();
                for _ in 0..120 {
                    assert_eq!(
                        legal_san(&p),
                        slow(&p),
                        "{}",
                        Fen::from_position(&p, shakmaty::EnPassantMode::Legal)
                    );
                    checked += 1;
                    let moves = p.legal_moves();
                    if moves.is_empty() {
                        break;
                    }
                    let m = moves[rng.random_range(0..moves.len())];
                    p.play_unchecked(m);
                }
            }
        }
        assert!(checked > 5000, "{checked}");
    }

    #[test]
    fn legal_lists() {
        let start = Chess::default();
        let uci = legal_uci(&start);
        assert_eq!(uci.len(), 20);
        assert_eq!(uci.first().map(String::as_str), Some("a2a3"));
        assert!(uci.is_sorted());
        let san = legal_san(&start);
        assert_eq!(san.len(), 20);
        assert!(san.contains(&"Nf3".to_owned()));

        let p = pos("4k3/8/8/8/8/8/8/R3K2R w KQ - 0 1");
        assert!(legal_uci(&p).contains(&"e1g1".to_owned()));
        let san = legal_san(&p);
        assert!(san.contains(&"O-O".to_owned()));
        assert!(san.contains(&"Ra8+".to_owned()));
    }

    #[test]
    fn last_moves_slices_the_tail() {
        let moves: Vec<String> = ["e2e4", "e7e5", "g1f3"].map(String::from).to_vec();
        assert_eq!(last_moves(&moves, 2), ["e7e5", "g1f3"]);
        assert_eq!(last_moves(&moves, 10), moves.as_slice());
        assert!(last_moves(&moves, 0).is_empty());
    }
}
