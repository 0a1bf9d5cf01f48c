//! The board as a PNG picture, for vision models: [`super::diagram::svg`] rasterised with resvg.
//!
//! resvg is built without its default features: they bring text layout with system fonts and
//! decoders for embedded raster images, and a board drawn by [`super::diagram`] has neither (its
//! coordinates are strokes). Without system fonts the output depends on nothing but the FEN and
//! the options, so the same position gives the same bytes on every machine of one architecture
//! (tiny-skia's SIMD paths may round an edge pixel differently on another, which is why the
//! golden tests compare pixels with a tolerance rather than bytes).

use resvg::{tiny_skia, usvg};

use super::{
    BoardError,
    diagram::{self, DiagramOptions, SQUARE},
};

/// The media type of [`png`]'s output.
pub const PNG_MEDIA_TYPE: &str = "image/png";

/// The smallest picture side accepted, in pixels: below it a piece is a few pixels wide.
pub(crate) const MIN_SIZE: u32 = 64;
/// The largest picture side accepted, in pixels: providers scale larger images down anyway.
pub(crate) const MAX_SIZE: u32 = 2048;
/// The picture side used when none is asked for: each square 48 pixels, within the tile sizes
/// providers bill images by (512 × 512 for OpenAI's low detail).
pub const DEFAULT_SIZE: u32 = 384;

/// The position in `fen`, drawn as `options` say, as a `size` × `size` PNG. The same FEN, size and
/// options always give the same bytes.
///
/// # Errors
/// [`BoardError::InvalidFen`] for a bad FEN or last move, [`BoardError::Picture`] for a size
/// outside [`MIN_SIZE`]..=[`MAX_SIZE`].
pub fn png(fen: &str, size: u32, options: &DiagramOptions) -> Result<Vec<u8>, BoardError> {
    if !(MIN_SIZE..=MAX_SIZE).contains(&size) {
        return Err(BoardError::Picture(format!(
            "a board picture is {MIN_SIZE} to {MAX_SIZE} pixels wide, not {size}"
        )));
    }
    let svg = diagram::svg(fen, options)?;
    let tree = usvg::Tree::from_str(&svg, &usvg::Options::default())
        .map_err(|e| BoardError::Picture(format!("the board drawing does not parse: {e}")))?;
    let mut pixmap = tiny_skia::Pixmap::new(size, size)
        .ok_or_else(|| BoardError::Picture(format!("no {size} × {size} canvas")))?;
    let scale = size as f32 / (8 * SQUARE) as f32;
    resvg::render(
        &tree,
        tiny_skia::Transform::from_scale(scale, scale),
        &mut pixmap.as_mut(),
    );
    pixmap
        .encode_png()
        .map_err(|e| BoardError::Picture(format!("failed to encode the board as png: {e}")))
}

#[cfg(test)]
mod tests {
    use std::path::PathBuf;

    use shakmaty::Color;

    use super::*;

    /// The positions pinned by golden pictures: `(file name, FEN, size, options)`.
    fn cases() -> Vec<(&'static str, &'static str, u32, DiagramOptions)> {
        vec![
            (
                "start",
                "rnbqkbnr/pppppppp/8/8/8/8/PPPPPPPP/RNBQKBNR w KQkq - 0 1",
                DEFAULT_SIZE,
                DiagramOptions::default(),
            ),
            (
                // Chess960 start 0 (BBQNNRKR), after 1. g3: Black to move, so Black at the bottom.
                "chess960_black_to_move",
                "bbqnnrkr/pppppppp/8/8/8/6P1/PPPPPP1P/BBQNNRKR b HFhf - 0 1",
                DEFAULT_SIZE,
                DiagramOptions {
                    last_move: Some("g2g3".into()),
                    ..DiagramOptions::default()
                },
            ),
            (
                // A pawn about to promote on e8, a queen just promoted on a1.
                "promotion",
                "4k3/4P3/8/8/8/8/8/q3K3 w - - 0 1",
                256,
                DiagramOptions {
                    last_move: Some("b2a1q".into()),
                    ..DiagramOptions::default()
                },
            ),
            (
                "start_flipped_no_coordinates",
                "rnbqkbnr/pppppppp/8/8/8/8/PPPPPPPP/RNBQKBNR w KQkq - 0 1",
                DEFAULT_SIZE,
                DiagramOptions {
                    orientation: Some(Color::Black),
                    coordinates: false,
                    last_move: None,
                },
            ),
        ]
    }

    fn golden(name: &str) -> PathBuf {
        PathBuf::from(concat!(env!("CARGO_MANIFEST_DIR"), "/../.."))
            .join("tests/fixtures/boards")
            .join(format!("{name}.png"))
    }

    /// The largest difference of one colour channel at which two pixels count as the same, and
    /// how many pixels may differ by more. Antialiased edges may round differently where
    /// tiny-skia takes another SIMD path (another architecture); a wrong piece, square or
    /// orientation changes thousands of pixels by far more.
    const CHANNEL_TOLERANCE: u8 = 8;
    const DIFFERENT_PIXELS_ALLOWED: usize = 16;

    /// The pixels that differ by more than [`CHANNEL_TOLERANCE`] in some channel.
    fn differing_pixels(a: &tiny_skia::Pixmap, b: &tiny_skia::Pixmap) -> usize {
        assert_eq!((a.width(), a.height()), (b.width(), b.height()), "sizes");
        a.data()
            .chunks_exact(4)
            .zip(b.data().chunks_exact(4))
            .filter(|(p, q)| {
                p.iter()
                    .zip(q.iter())
                    .any(|(x, y)| x.abs_diff(*y) > CHANNEL_TOLERANCE)
            })
            .count()
    }

    /// `ARENA_BLESS=1 cargo test --lib board_pictures` writes the golden files instead.
    #[test]
    fn board_pictures_match_their_golden_files() {
        let bless = std::env::var("ARENA_BLESS").is_ok_and(|v| v == "1");
        for (name, fen, size, options) in cases() {
            let bytes = png(fen, size, &options).unwrap();
            assert_eq!(
                bytes,
                png(fen, size, &options).unwrap(),
                "{name}: deterministic"
            );
            let path = golden(name);
            if bless {
                std::fs::create_dir_all(path.parent().unwrap()).unwrap();
                std::fs::write(&path, &bytes).unwrap();
                continue;
            }
            let made = tiny_skia::Pixmap::decode_png(&bytes).unwrap();
            let want = tiny_skia::Pixmap::decode_png(&std::fs::read(&path).unwrap_or_else(|e| {
                panic!(
                    "{}: {e}; run `ARENA_BLESS=1 cargo test --lib board_pictures`",
                    path.display()
                )
            }))
            .unwrap();
            let differing = differing_pixels(&made, &want);
            assert!(
                differing <= DIFFERENT_PIXELS_ALLOWED,
                "{name}: {differing} pixels differ from {}; if the drawing changed on purpose, \
                 run `ARENA_BLESS=1 cargo test --lib board_pictures` and look at the pictures",
                path.display()
            );
        }
    }

    #[test]
    fn the_size_is_bounded() {
        let start = "rnbqkbnr/pppppppp/8/8/8/8/PPPPPPPP/RNBQKBNR w KQkq - 0 1";
        for size in [0, MIN_SIZE - 1, MAX_SIZE + 1] {
            assert!(matches!(
                png(start, size, &DiagramOptions::default()),
                Err(BoardError::Picture(_))
            ));
        }
        let small = png(start, MIN_SIZE, &DiagramOptions::default()).unwrap();
        let decoded = tiny_skia::Pixmap::decode_png(&small).unwrap();
        assert_eq!((decoded.width(), decoded.height()), (MIN_SIZE, MIN_SIZE));
    }
}
