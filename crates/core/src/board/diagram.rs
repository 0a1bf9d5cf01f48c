//! The board drawn as a picture: the pieces' outlines, shared by the HTML report's viewer (which
//! turns them into `<symbol>`s and places them with its script) and by [`svg`], which draws one
//! whole position as a standalone SVG document for [`super::image`] to rasterise for vision
//! models.
//!
//! The pieces are drawn here, simple silhouettes on a 45-unit square, rather than vendored: the
//! well-known SVG sets are CC BY-SA (Cburnett's, as redistributed in cm-chessboard), GPL or
//! non-commercial (lichess's others), and a glyph font would depend on the fonts of the reader's
//! machine. For the same reason the coordinates of a standalone board are strokes drawn here, not
//! text: the rasteriser is built without fonts, so that a picture is the same bytes on every
//! machine.

use std::fmt::Write as _;

use shakmaty::{CastlingMode, Color, Piece, Role, Square, fen::Fen};

use super::BoardError;

/// The side of one square in board units (the pieces are drawn on a 45 × 45 box).
pub const SQUARE: u32 = 45;

/// The light squares' colour (the report's stylesheet uses the same).
pub(crate) const LIGHT: &str = "#eed9b4";
/// The dark squares' colour (the report's stylesheet uses the same).
pub(crate) const DARK: &str = "#b58863";
/// The last move's two squares are overlaid with this colour.
const LAST_MOVE: &str = "#ffeb3b";
/// The opacity of the last-move overlay.
const LAST_MOVE_OPACITY: &str = "0.45";
/// The coordinates' colour.
const COORDS: &str = "#5d4037";

/// One piece's drawing: its letter, outline paths filled in the piece's colour, and detail paths
/// stroked in the contrasting colour.
#[derive(Debug, Clone, Copy)]
pub struct PieceShape {
    /// The piece's upper-case letter (`P`, `N`, `B`, `R`, `Q`, `K`).
    pub letter: char,
    /// Paths filled with the piece's colour and outlined.
    pub outline: &'static [&'static str],
    /// Paths stroked in the contrasting colour (no fill).
    pub details: &'static [&'static str],
}

/// How one side's pieces are painted.
#[derive(Debug, Clone, Copy)]
pub struct PiecePaint {
    /// The outline paths' fill.
    pub fill: &'static str,
    /// The outline paths' stroke.
    pub stroke: &'static str,
    /// The detail paths' stroke.
    pub detail: &'static str,
}

/// White's paint, then Black's.
pub const PAINT: [(Color, PiecePaint); 2] = [
    (
        Color::White,
        PiecePaint {
            fill: "#fafafa",
            stroke: "#1a1a1a",
            detail: "#1a1a1a",
        },
    ),
    (
        Color::Black,
        PiecePaint {
            fill: "#262626",
            stroke: "#1a1a1a",
            detail: "#e8e8e8",
        },
    ),
];

const BASE: &str = "M9.5 39.5h26v-3.5h-26z";

/// The six shapes; each is drawn once white and once black.
pub const SHAPES: [PieceShape; 6] = [
    PieceShape {
        letter: 'P',
        outline: &[
            BASE,
            "M15 36c0-7 4-10 5-13h5c1 3 5 6 5 13z",
            "M22.5 9a5.5 5.5 0 1 0 0.01 0zM17 22.5h11v-2.5h-11z",
        ],
        details: &[],
    },
    PieceShape {
        letter: 'R',
        outline: &[
            BASE,
            "M14 36l1.5-17h14l1.5 17z",
            "M12 19v-9h4v3.5h4v-3.5h5v3.5h4v-3.5h4v9z",
        ],
        details: &["M15.5 30h14M15 23h15"],
    },
    PieceShape {
        letter: 'N',
        outline: &[
            BASE,
            "M13.5 36c0-6 3-10 7-13-4 0-7 2-9.5 1.5-2.5-1-2-4 0-6.5 3-3.5 6-7 8.5-9l1-4 2.5 3.5c7 1 11.5 7 11 17-.5 5-2 8-2 10.5z",
        ],
        details: &["M15.5 17.5a1.2 1.2 0 1 0 0.01 0zM24 12c3 1.5 5 5 5 10"],
    },
    PieceShape {
        letter: 'B',
        outline: &[
            BASE,
            "M15 36c0-5 3-8 4.5-10h6c1.5 2 4.5 5 4.5 10z",
            "M22.5 9c-5 4.5-7.5 9-7.5 12.5 0 3 3 4.5 7.5 4.5s7.5-1.5 7.5-4.5c0-3.5-2.5-8-7.5-12.5z",
            "M22.5 4.5a2.2 2.2 0 1 0 0.01 0z",
        ],
        details: &["M19.5 18.5l6-5M22.5 29.5v0"],
    },
    PieceShape {
        letter: 'Q',
        outline: &[
            BASE,
            "M11.5 36l2-11-5-10 7.5 7 2.5-11 4 10 4-10 2.5 11 7.5-7-5 10 2 11z",
            "M8.5 13a2 2 0 1 0 0.01 0zM18 9a2 2 0 1 0 0.01 0zM27 9a2 2 0 1 0 0.01 0zM36.5 13a2 2 0 1 0 0.01 0zM22.5 8a2 2 0 1 0 0.01 0z",
        ],
        details: &["M13.5 30h18"],
    },
    PieceShape {
        letter: 'K',
        outline: &[
            BASE,
            "M12.5 36c0-6 2-10 3.5-14h13c1.5 4 3.5 8 3.5 14z",
            "M15.5 22c-2.5-5 1-9.5 7-9.5s9.5 4.5 7 9.5z",
            "M21 4h3v3.5h3.5v3h-3.5v3h-3v-3h-3.5v-3h3.5z",
        ],
        details: &["M14 30h17"],
    },
];

/// The stroke width of outlines and details, in board units.
pub const STROKE_WIDTH: &str = "1.5";

/// The file letters and rank digits as strokes in a 4 × 6 box (x-height from 2 to 6, `g`
/// descending to 7.5), indexed `a`–`h` then `1`–`8`.
const GLYPHS: [&str; 16] = [
    // a b c d
    "M4 4a2 2 0 1 0 -4 0a2 2 0 1 0 4 0M4 2v4",
    "M4 4a2 2 0 1 0 -4 0a2 2 0 1 0 4 0M0 0v6",
    "M3.8 2.9a2 2 0 1 0 0 2.2",
    "M4 4a2 2 0 1 0 -4 0a2 2 0 1 0 4 0M4 0v6",
    // e f g h
    "M0 4h4a2 2 0 1 0 -0.6 1.4",
    "M3.6 0.4a1.5 1.5 0 0 0 -2.4 1.2v4.4M0 2.4h3",
    "M4 4a2 2 0 1 0 -4 0a2 2 0 1 0 4 0M4 2v5a1.5 1.5 0 0 1 -3.6 0.4",
    "M0 0v6M0 4a2 2 0 0 1 4 0v2",
    // 1 2 3 4
    "M0.8 1.2l1.6-1.2v6M0.8 6h3.2",
    "M0.2 1.4a1.9 1.6 0 1 1 3.3 1.3L0.2 6h3.8",
    "M0.3 0h3.4l-2 2.3a1.8 1.8 0 1 1 -1.6 2.9",
    "M3 6v-6l-3 4.2h4",
    // 5 6 7 8
    "M3.7 0h-3.1l-0.3 2.6a1.9 1.8 0 1 1 -0.2 2.8",
    "M3.4 0.4a2.6 2.6 0 0 0 -3.4 3.6M0 4a2 2 0 1 0 4 0a2 2 0 1 0 -4 0",
    "M0 0h4l-2.6 6",
    "M2 0a1.4 1.4 0 1 0 0 2.8a1.4 1.4 0 1 0 0 -2.8M2 2.8a1.6 1.6 0 1 0 0 3.2a1.6 1.6 0 1 0 0 -3.2",
];

/// How a standalone board is drawn.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct DiagramOptions {
    /// The side at the bottom; `None` puts the side to move there.
    pub orientation: Option<Color>,
    /// Whether file letters and rank digits are drawn along the bottom and left edges.
    pub coordinates: bool,
    /// A move to mark (in UCI, `e2e4`): its two squares are tinted.
    pub last_move: Option<String>,
}

impl Default for DiagramOptions {
    /// The side to move at the bottom, coordinates on, no move marked.
    fn default() -> Self {
        Self {
            orientation: None,
            coordinates: true,
            last_move: None,
        }
    }
}

/// Reads a FEN for drawing: its placement, whose move it is, any castling rights (standard or
/// Chess960), and a legal position.
fn parse(fen: &str) -> Result<shakmaty::Chess, BoardError> {
    let invalid = |reason: String| BoardError::InvalidFen {
        fen: fen.to_owned(),
        reason,
    };
    let parsed: Fen = fen.trim().parse().map_err(|e| invalid(format!("{e}")))?;
    parsed
        .into_position(CastlingMode::Chess960)
        .map_err(|e| invalid(format!("{e}")))
}

/// The two squares of a UCI move (`e2e4`, `e7e8q`).
fn move_squares(fen: &str, uci: &str) -> Result<(Square, Square), BoardError> {
    let square = |at: std::ops::Range<usize>| {
        uci.get(at)
            .and_then(|s| s.parse::<Square>().ok())
            .ok_or_else(|| BoardError::InvalidFen {
                fen: fen.to_owned(),
                reason: format!("the last move `{uci}` is not a move in UCI (like `e2e4`)"),
            })
    };
    Ok((square(0..2)?, square(2..4)?))
}

/// The position in `fen` as a standalone SVG document, `8 × SQUARE` units wide, drawn as
/// `options` say. The same FEN and options always give the same text.
///
/// # Errors
/// [`BoardError::InvalidFen`] for a FEN that does not parse or is not a legal position, or a last
/// move that is not UCI.
pub fn svg(fen: &str, options: &DiagramOptions) -> Result<String, BoardError> {
    let pos = parse(fen)?;
    let bottom = options
        .orientation
        .unwrap_or(shakmaty::Position::turn(&pos));
    let marked = match &options.last_move {
        Some(uci) => Some(move_squares(fen, uci)?),
        None => None,
    };
    let side = SQUARE * 8;
    // (column, row) from the top-left corner as seen with `bottom` at the bottom.
    let place = |sq: Square| {
        let (file, rank) = (u32::from(sq.file()), u32::from(sq.rank()));
        match bottom {
            Color::White => (file, 7 - rank),
            Color::Black => (7 - file, rank),
        }
    };
    let mut out = String::with_capacity(16 * 1024);
    let _ = write!(
        out,
        r#"<svg xmlns="http://www.w3.org/2000/svg" width="{side}" height="{side}" viewBox="0 0 {side} {side}">"#
    );
    let _ = write!(
        out,
        r#"<rect width="{side}" height="{side}" fill="{LIGHT}"/>"#
    );
    for sq in Square::ALL {
        if sq.is_dark() {
            let (x, y) = place(sq);
            let _ = write!(
                out,
                r#"<rect x="{}" y="{}" width="{SQUARE}" height="{SQUARE}" fill="{DARK}"/>"#,
                x * SQUARE,
                y * SQUARE
            );
        }
    }
    if let Some((from, to)) = marked {
        for sq in [from, to] {
            let (x, y) = place(sq);
            let _ = write!(
                out,
                r#"<rect x="{}" y="{}" width="{SQUARE}" height="{SQUARE}" fill="{LAST_MOVE}" fill-opacity="{LAST_MOVE_OPACITY}"/>"#,
                x * SQUARE,
                y * SQUARE
            );
        }
    }
    if options.coordinates {
        push_coordinates(&mut out, bottom);
    }
    for (sq, piece) in shakmaty::Position::board(&pos).iter() {
        let (x, y) = place(sq);
        push_piece(&mut out, piece, x * SQUARE, y * SQUARE);
    }
    out.push_str("</svg>");
    Ok(out)
}

/// File letters in the bottom row's lower right corners and rank digits in the left column's
/// upper left corners, as the report's viewer places them.
fn push_coordinates(out: &mut String, bottom: Color) {
    let _ = write!(
        out,
        r#"<g fill="none" stroke="{COORDS}" stroke-width="0.7" stroke-linecap="round" stroke-linejoin="round">"#
    );
    for i in 0..8u32 {
        let (file, rank) = match bottom {
            Color::White => (i, 7 - i),
            Color::Black => (7 - i, i),
        };
        // A glyph's box is 4 × 6, scaled by 1.5 to a fifth of a square.
        let _ = write!(
            out,
            r#"<path transform="translate({} {}) scale(1.5)" d="{}"/>"#,
            i * SQUARE + SQUARE - 8,
            8 * SQUARE - 12,
            GLYPHS[file as usize]
        );
        let _ = write!(
            out,
            r#"<path transform="translate({} {}) scale(1.5)" d="{}"/>"#,
            2,
            i * SQUARE + 3,
            GLYPHS[8 + rank as usize]
        );
    }
    out.push_str("</g>");
}

/// One piece on the square whose top-left corner is at `(x, y)`.
fn push_piece(out: &mut String, piece: Piece, x: u32, y: u32) {
    let shape = shape_of(piece.role);
    let paint = paint_of(piece.color);
    let _ = write!(out, r#"<g transform="translate({x} {y})">"#);
    for d in shape.outline {
        let _ = write!(
            out,
            r#"<path d="{d}" fill="{}" stroke="{}" stroke-width="{STROKE_WIDTH}" stroke-linejoin="round"/>"#,
            paint.fill, paint.stroke
        );
    }
    for d in shape.details {
        let _ = write!(
            out,
            r#"<path d="{d}" fill="none" stroke="{}" stroke-width="{STROKE_WIDTH}" stroke-linecap="round"/>"#,
            paint.detail
        );
    }
    out.push_str("</g>");
}

/// The shape of a kind of piece.
pub(crate) fn shape_of(role: Role) -> &'static PieceShape {
    let letter = role.upper_char();
    SHAPES
        .iter()
        .find(|s| s.letter == letter)
        .unwrap_or(&SHAPES[0])
}

/// The paint of a side's pieces.
pub(crate) fn paint_of(color: Color) -> PiecePaint {
    PAINT
        .iter()
        .find(|(c, _)| *c == color)
        .map_or(PAINT[0].1, |(_, p)| *p)
}

#[cfg(test)]
mod tests {
    use super::*;

    const START: &str = "rnbqkbnr/pppppppp/8/8/8/8/PPPPPPPP/RNBQKBNR w KQkq - 0 1";

    #[test]
    fn a_board_has_its_dark_squares_and_pieces() {
        let svg = svg(START, &DiagramOptions::default()).unwrap();
        assert_eq!(svg.matches(&format!(r#"fill="{DARK}""#)).count(), 32);
        assert_eq!(svg.matches("<g transform=").count(), 32);
        // a8 is light, at the top left with White at the bottom.
        assert!(!svg.contains(r#"x="0" y="0" width="45""#), "{svg}");
    }

    #[test]
    fn the_side_to_move_is_at_the_bottom_unless_told() {
        let black = "rnbqkbnr/pppppppp/8/8/4P3/8/PPPP1PPP/RNBQKBNR b KQkq - 0 1";
        let flipped = svg(black, &DiagramOptions::default()).unwrap();
        let told = DiagramOptions {
            orientation: Some(Color::White),
            ..DiagramOptions::default()
        };
        let white = svg(black, &told).unwrap();
        assert_ne!(flipped, white);
        // White's king on e1: column 4 from White's side, column 3 from Black's, bottom row
        // from White's side and top row from Black's.
        assert!(
            white.contains(r#"<g transform="translate(180 315)">"#),
            "{white}"
        );
        assert!(
            flipped.contains(r#"<g transform="translate(135 0)">"#),
            "{flipped}"
        );
    }

    #[test]
    fn coordinates_and_the_last_move_are_options() {
        let plain = DiagramOptions {
            coordinates: false,
            ..DiagramOptions::default()
        };
        assert!(!svg(START, &plain).unwrap().contains(COORDS));
        let marked = DiagramOptions {
            last_move: Some("e2e4".into()),
            ..DiagramOptions::default()
        };
        assert_eq!(svg(START, &marked).unwrap().matches(LAST_MOVE).count(), 2);
        let bad = DiagramOptions {
            last_move: Some("e9".into()),
            ..DiagramOptions::default()
        };
        assert!(matches!(
            svg(START, &bad),
            Err(BoardError::InvalidFen { reason, .. }) if reason.contains("`e9`")
        ));
    }

    #[test]
    fn a_bad_fen_is_refused() {
        assert!(matches!(
            svg(
                "rnbqkbnr/pppppppp/8/8/8/8/PPPPPPPP w",
                &DiagramOptions::default()
            ),
            Err(BoardError::InvalidFen { .. })
        ));
    }
}
