//! python-chess's `Board.parse_san` (version 1.x), reproduced because ChessArena passes every
//! predicted move through it (`san_to_uci`), and its rules differ from shakmaty's SAN parser:
//! a fully specified `g1f3` is accepted for any piece, `e2-e4` and `xe4` parse, `e1h1` means
//! castling, `--` is a null move, and a move that does not parse is returned unchanged.

use std::sync::LazyLock;

use regex::Regex;
use shakmaty::{Chess, File, Move, Position, Rank, Role, Square, uci::UciMove};

static SAN_REGEX: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(r"^([NBKRQ])?([a-h])?([1-8])?[\-x]?([a-h][1-8])(=?[nbrqkNBRQK])?[\+#]?\z")
        .expect("the python-chess SAN pattern is valid")
});

const KINGSIDE: [&str; 6] = ["O-O", "O-O+", "O-O#", "0-0", "0-0+", "0-0#"];
const QUEENSIDE: [&str; 6] = ["O-O-O", "O-O-O+", "O-O-O#", "0-0-0", "0-0-0+", "0-0-0#"];
const NULL_MOVES: [&str; 4] = ["--", "Z0", "0000", "@@@@"];

/// ChessArena's `san_to_uci`: the UCI of `text` read as SAN by python-chess, or `text` unchanged
/// when python-chess would raise.
pub fn san_to_uci(text: &str, pos: &Chess) -> String {
    parse_san(text, pos).unwrap_or_else(|| text.to_owned())
}

/// `Board.parse_san(text).uci()`, `None` where python-chess raises.
pub(crate) fn parse_san(san: &str, pos: &Chess) -> Option<String> {
    let legal = pos.legal_moves();
    if KINGSIDE.contains(&san) || QUEENSIDE.contains(&san) {
        let kingside = KINGSIDE.contains(&san);
        return legal
            .iter()
            .find(|m| match m {
                Move::Castle { king, rook } => (rook.file() > king.file()) == kingside,
                _ => false,
            })
            .map(|m| uci_of(pos, m));
    }
    let Some(caps) = SAN_REGEX.captures(san) else {
        return NULL_MOVES.contains(&san).then(|| "0000".to_owned());
    };
    let to: Square = caps[4].parse().expect("the pattern captures a square");
    let promotion = caps
        .get(5)
        .map(|p| role_of(p.as_str().chars().last().expect("the group is not empty")));
    let file = caps.get(2).map(|f| File::from_char(char_at(f.as_str())));
    let rank = caps.get(3).map(|r| Rank::from_char(char_at(r.as_str())));
    let piece = caps.get(1).map(|p| role_of(char_at(p.as_str())));

    if piece.is_none()
        && let (Some(Some(file)), Some(Some(rank))) = (file, rank)
    {
        return find_move(pos, Square::from_coords(file, rank), to, promotion);
    }
    let file = file.flatten();
    let rank = rank.flatten();
    let role = piece.unwrap_or(Role::Pawn);
    // Pawn moves without a file letter are pushes from the target's own file.
    let file = match (piece, file) {
        (None, None) => Some(to.file()),
        (_, f) => f,
    };
    let mut matched = None;
    for m in &legal {
        // python-chess masks the target with the mover's own pieces, which excludes castling
        // (internally king-takes-rook) from this path.
        if matches!(m, Move::Castle { .. }) || m.role() != role {
            continue;
        }
        let (from, dest, promo) = parts(m);
        if dest != to
            || promo != promotion
            || file.is_some_and(|f| from.file() != f)
            || rank.is_some_and(|r| from.rank() != r)
        {
            continue;
        }
        if matched.is_some() {
            return None;
        }
        matched = Some(m);
    }
    matched.map(|m| uci_of(pos, m))
}

/// `Board.find_move` followed by parse_san's promotion check.
fn find_move(pos: &Chess, from: Square, to: Square, promotion: Option<Role>) -> Option<String> {
    let board = pos.board();
    let mut effective = promotion;
    if effective.is_none()
        && board.pawns().contains(from)
        && matches!(to.rank(), Rank::First | Rank::Eighth)
    {
        effective = Some(Role::Queen);
    }
    let mut to = to;
    if effective.is_none() && pos.castles().mode().is_standard() {
        // `_from_chess960` (standard boards only): king-takes-rook notation from the standard
        // king squares.
        let king_on = |sq: Square| board.kings().contains(sq);
        if from == Square::E1 && king_on(Square::E1) {
            to = match to {
                Square::H1 => Square::G1,
                Square::A1 => Square::C1,
                other => other,
            };
        } else if from == Square::E8 && king_on(Square::E8) {
            to = match to {
                Square::H8 => Square::G8,
                Square::A8 => Square::C8,
                other => other,
            };
        }
    }
    let found = pos
        .legal_moves()
        .into_iter()
        .find(|m| parts(m) == (from, to, effective))?;
    (effective == promotion).then(|| uci_of(pos, &found))
}

/// A legal move as standard UCI sees it: castling goes to the king's destination square.
fn parts(m: &Move) -> (Square, Square, Option<Role>) {
    match *m {
        Move::Normal {
            from,
            to,
            promotion,
            ..
        } => (from, to, promotion),
        Move::EnPassant { from, to } => (from, to, None),
        Move::Castle { king, rook } => {
            let file = if rook.file() > king.file() {
                File::G
            } else {
                File::C
            };
            (king, Square::from_coords(file, king.rank()), None)
        }
        Move::Put { to, .. } => (to, to, None),
    }
}

/// python-chess's `Move.uci()` on a board of `pos`'s kind: castling as the king's destination on a
/// standard board, as king takes rook on a Chess960 board (`chess960=True`).
fn uci_of(pos: &Chess, m: &Move) -> String {
    UciMove::from_move(*m, pos.castles().mode()).to_string()
}

fn char_at(s: &str) -> char {
    s.chars().next().expect("the group is not empty")
}

fn role_of(c: char) -> Role {
    Role::from_char(c.to_ascii_lowercase()).expect("the pattern admits only piece letters")
}

#[cfg(test)]
mod tests {
    use shakmaty::{CastlingMode, fen::Fen};

    use super::*;

    fn conv(fen: &str, text: &str) -> String {
        let pos = fen
            .parse::<Fen>()
            .expect("test FEN parses")
            .into_position(CastlingMode::Standard)
            .expect("test FEN is legal");
        san_to_uci(text, &pos)
    }

    const START: &str = "rnbqkbnr/pppppppp/8/8/8/8/PPPPPPPP/RNBQKBNR w KQkq - 0 1";
    const CASTLES: &str = "r3k2r/pppppppp/8/8/8/8/PPPPPPPP/R3K2R w KQkq - 0 1";
    const PROMOTE: &str = "1n6/P7/8/8/8/8/k7/4K3 w - - 0 1";

    #[test]
    fn follows_python_chess() {
        assert_eq!(conv(START, "Nf3"), "g1f3");
        assert_eq!(conv(START, "g1f3"), "g1f3");
        assert_eq!(conv(START, "e4"), "e2e4");
        assert_eq!(conv(START, "e2-e4"), "e2e4");
        assert_eq!(conv(START, "xe4"), "e2e4");
        assert_eq!(conv(START, "Ng1f3"), "g1f3");
        assert_eq!(conv(START, "--"), "0000");
        // Not parsed: returned unchanged.
        assert_eq!(conv(START, "Pe4"), "Pe4");
        assert_eq!(conv(START, "e2e5"), "e2e5");
        assert_eq!(conv(START, " e2e4"), " e2e4");
        assert_eq!(conv(START, "g8f6"), "g8f6");
        assert_eq!(conv(START, "None"), "None");
        assert_eq!(conv(CASTLES, "O-O"), "e1g1");
        assert_eq!(conv(CASTLES, "0-0-0"), "e1c1");
        assert_eq!(conv(CASTLES, "e1h1"), "e1g1");
        assert_eq!(conv(CASTLES, "Kg1"), "Kg1");
        assert_eq!(conv(START, "O-O"), "O-O");
        assert_eq!(conv(PROMOTE, "a8=Q"), "a7a8q");
        assert_eq!(conv(PROMOTE, "axb8N"), "a7b8n");
        assert_eq!(conv(PROMOTE, "a7a8q"), "a7a8q");
        // A fully specified pawn move to the last rank without a piece is refused.
        assert_eq!(conv(PROMOTE, "a7a8"), "a7a8");
        assert_eq!(conv(PROMOTE, "a8"), "a8");
    }

    #[test]
    fn ambiguity_is_refused() {
        let fen = "4k3/8/8/8/8/8/8/1N2KN2 w - - 0 1";
        assert_eq!(conv(fen, "Nd2"), "Nd2");
        assert_eq!(conv(fen, "Nbd2"), "b1d2");
    }
}
