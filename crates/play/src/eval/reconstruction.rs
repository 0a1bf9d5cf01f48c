//! Board reconstruction: after a list of moves, the model states the FEN of the position.
//!
//! ChessArena scores exact string equality between the expected FEN and the first FEN its
//! `extract_fen` finds ([`extract_fen_chessarena`]). We also report per-field accuracy (board,
//! side to move, castling rights, en passant square, the two clocks), which tells a model that
//! lost track of a clock apart from one that misplaced a piece. Our extraction ([`extract_fen`])
//! prefers the *last* fenced block holding a FEN (the final answer after reasoning), then the last
//! FEN in the text, and does not let a language tag eat the first rank.

use std::sync::LazyLock;

use regex::Regex;

const FEN_PATTERN: &str =
    r"([rnbqkpRNBQKP1-8/]+)\s+([wb])\s+([KQkq\-]+)\s+([a-h][36]\-|[a-h][36]|\-)\s+(\d+)\s+(\d+)";

static FEN: LazyLock<Regex> =
    LazyLock::new(|| Regex::new(FEN_PATTERN).expect("the FEN pattern is valid"));
static CHESSARENA_BLOCK: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(r"(?s)```(?:\w+)?\s*([^`]+)\s*```").expect("the block pattern is valid")
});
static BLOCK: LazyLock<Regex> =
    LazyLock::new(|| Regex::new(r"(?s)```([^`]*)```").expect("the block pattern is valid"));

/// ChessArena's `extract_fen`: the first FEN inside the first code block that has one, else the
/// first FEN in the text. Its block pattern lets an optional language word swallow a FEN's first
/// rank when the FEN follows the fence on the same line; that is kept.
pub fn extract_fen_chessarena(reply: &str) -> Option<String> {
    CHESSARENA_BLOCK
        .captures_iter(reply)
        .find_map(|c| FEN.find(c[1].trim()).map(|m| m.as_str().to_owned()))
        .or_else(|| FEN.find(reply).map(|m| m.as_str().to_owned()))
}

/// Our extraction: the last FEN in the last fenced block that holds one, else the last FEN in the
/// text; the whitespace between fields is normalised to single spaces.
pub fn extract_fen(reply: &str) -> Option<String> {
    let normal = |s: &str| s.split_whitespace().collect::<Vec<_>>().join(" ");
    BLOCK
        .captures_iter(reply)
        .filter_map(|c| FEN.find_iter(&c[1]).last().map(|m| normal(m.as_str())))
        .last()
        .or_else(|| FEN.find_iter(reply).last().map(|m| normal(m.as_str())))
}

/// Which fields of a stated FEN match the expected one.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct FenMatch {
    /// The strings are identical (ChessArena's criterion).
    pub exact: bool,
    /// Piece placement.
    pub board: bool,
    /// Side to move.
    pub side: bool,
    /// Castling rights.
    pub castling: bool,
    /// En passant square.
    pub en_passant: bool,
    /// Halfmove clock.
    pub halfmove: bool,
    /// Fullmove number.
    pub fullmove: bool,
}

/// Compares a stated FEN (`None` when the reply had none) with the expected one, field by field.
pub fn compare(expected: &str, stated: Option<&str>) -> FenMatch {
    let Some(stated) = stated else {
        return FenMatch::default();
    };
    let e: Vec<&str> = expected.split_whitespace().collect();
    let s: Vec<&str> = stated.split_whitespace().collect();
    let field = |i: usize| e.get(i).is_some_and(|x| s.get(i) == Some(x));
    FenMatch {
        exact: expected == stated,
        board: field(0),
        side: field(1),
        castling: field(2),
        en_passant: field(3),
        halfmove: field(4),
        fullmove: field(5),
    }
}

/// Rates over items.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct ReconstructionMetrics {
    /// Exact matches over items (ChessArena's accuracy).
    pub exact: f64,
    /// Board field matches over items.
    pub board: f64,
    /// Side-to-move matches over items.
    pub side: f64,
    /// Castling matches over items.
    pub castling: f64,
    /// En passant matches over items.
    pub en_passant: f64,
    /// Halfmove clock matches over items.
    pub halfmove: f64,
    /// Fullmove number matches over items.
    pub fullmove: f64,
    /// Number of items.
    pub total: usize,
}

/// Aggregates per-item matches; all rates are 0 for no items.
pub fn aggregate(matches: &[FenMatch]) -> ReconstructionMetrics {
    let n = matches.len();
    let rate = |f: fn(&FenMatch) -> bool| {
        if n == 0 {
            0.0
        } else {
            matches.iter().filter(|m| f(m)).count() as f64 / n as f64
        }
    };
    ReconstructionMetrics {
        exact: rate(|m| m.exact),
        board: rate(|m| m.board),
        side: rate(|m| m.side),
        castling: rate(|m| m.castling),
        en_passant: rate(|m| m.en_passant),
        halfmove: rate(|m| m.halfmove),
        fullmove: rate(|m| m.fullmove),
        total: n,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const AFTER_E4: &str = "rnbqkbnr/pppppppp/8/8/4P3/8/PPPP1PPP/RNBQKBNR b KQkq - 0 1";

    #[test]
    fn extraction_prefers_blocks() {
        let reply = format!(
            "Start was rnbqkbnr/pppppppp/8/8/8/8/PPPPPPPP/RNBQKBNR w KQkq - 0 1.\n```\n{AFTER_E4}\n```"
        );
        assert_eq!(extract_fen_chessarena(&reply).as_deref(), Some(AFTER_E4));
        assert_eq!(extract_fen(&reply).as_deref(), Some(AFTER_E4));
        let text_only = format!("The position is {AFTER_E4} now.");
        assert_eq!(
            extract_fen_chessarena(&text_only).as_deref(),
            Some(AFTER_E4)
        );
        assert_eq!(extract_fen(&text_only).as_deref(), Some(AFTER_E4));
        assert_eq!(extract_fen("no fen here"), None);
    }

    #[test]
    fn chessarena_tag_quirk_is_kept_and_ours_is_not() {
        // The FEN right after the fence: `(?:\w+)?` eats the first rank in ChessArena's pattern.
        let reply = format!("```{AFTER_E4}```");
        let theirs = extract_fen_chessarena(&reply).expect("a FEN");
        assert_eq!(theirs, "/pppppppp/8/8/4P3/8/PPPP1PPP/RNBQKBNR b KQkq - 0 1");
        assert_eq!(extract_fen(&reply).as_deref(), Some(AFTER_E4));
        // Two blocks: theirs takes the first, ours the last.
        let two = format!(
            "```\n{}\n```\nno wait\n```\n{AFTER_E4}\n```",
            AFTER_E4.replace(" b ", " w ")
        );
        assert_ne!(extract_fen_chessarena(&two).as_deref(), Some(AFTER_E4));
        assert_eq!(extract_fen(&two).as_deref(), Some(AFTER_E4));
    }

    #[test]
    fn fields_are_compared_one_by_one() {
        let wrong_clock = AFTER_E4.replace(" 0 1", " 1 1");
        let m = compare(AFTER_E4, Some(&wrong_clock));
        assert!(
            !m.exact
                && m.board
                && m.side
                && m.castling
                && m.en_passant
                && !m.halfmove
                && m.fullmove
        );
        let exact = compare(AFTER_E4, Some(AFTER_E4));
        assert!(exact.exact && exact.board && exact.fullmove);
        let none = compare(AFTER_E4, None);
        assert_eq!(none, FenMatch::default());
        let agg = aggregate(&[m, exact, none]);
        assert_eq!(agg.total, 3);
        assert!((agg.exact - 1.0 / 3.0).abs() < 1e-12);
        assert!((agg.board - 2.0 / 3.0).abs() < 1e-12);
        assert!((agg.halfmove - 1.0 / 3.0).abs() < 1e-12);
    }
}
