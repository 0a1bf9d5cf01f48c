//! `arena prompt`: the messages one player of a tournament script would be sent at a position,
//! rendered without calling any model, so that a prompt change can be read before it is paid for.

use std::{path::PathBuf, sync::Arc};

use anyhow::Result;
use arena::{
    board::{Variant, game::Game},
    llm::{ChatMessage, ToolSpec},
    lua::Generation,
    tournament::{
        rules::{Rules, script_dir},
        schedule,
        turn::{LegalMoves, TurnContext},
    },
};
use shakmaty::{Color, Position as _};

use super::common::write_stdout;

#[derive(Debug, clap::Args)]
pub(super) struct Args {
    /// The tournament or experiment script.
    script: PathBuf,
    /// The player whose messages are shown (a model player or a mixture of agents).
    #[arg(long)]
    player: String,
    /// The position, as a FEN (default: the tournament's first opening, else the initial
    /// position).
    #[arg(long)]
    fen: Option<String>,
    /// Moves in UCI, separated by spaces, played from the position before the prompt is made
    /// (they are the game's history the prompt may show).
    #[arg(long, value_name = "UCI MOVES")]
    moves: Option<String>,
}

/// Fixed plies a game may last here: only the position matters.
const MAX_PLIES: u32 = 1000;

pub(super) fn run(args: &Args) -> Result<u8> {
    let generation = match Generation::load(&args.script, 1) {
        Ok(g) => g,
        Err(errors) => {
            eprintln!("{}", errors.to_string().trim_end());
            return Ok(2);
        }
    };
    let Some(player) = generation.spec.player(&args.player) else {
        let names: Vec<String> = generation
            .spec
            .players
            .iter()
            .map(|p| format!("`{}`", p.name()))
            .collect();
        eprintln!(
            "error: no player `{}` in {} (the players: {})",
            args.player,
            args.script.display(),
            names.join(", ")
        );
        return Ok(2);
    };
    let Some(binding) = player.mode_binding() else {
        eprintln!(
            "error: player `{}` ({}) plays without a play mode: it is sent no prompt",
            args.player,
            player.kind()
        );
        return Ok(2);
    };
    let game = match position(&generation, args) {
        Ok(game) => game,
        Err(message) => {
            eprintln!("error: {message}");
            return Ok(2);
        }
    };
    let mode = match generation.play_mode(binding) {
        Ok(mode) => mode,
        Err(e) => {
            eprintln!("error: player `{}`: {e}", args.player);
            return Ok(2);
        }
    };
    let pos = game.position();
    let ctx = TurnContext {
        fen: game.fen(),
        start_fen: game.start_fen(),
        variant: game.variant().as_str(),
        side: if pos.turn() == Color::White {
            "white"
        } else {
            "black"
        },
        ply: game.ply(),
        move_number: pos.fullmoves().get(),
        legal: Arc::new(LegalMoves::of(pos)),
        history_uci: game.uci_history(),
        history_san: game.san_history(),
        last_move: game.uci_moves().last().cloned(),
        attempt: 1,
        max_attempts: mode.max_attempts(),
        player: args.player.clone(),
        opponent: "opponent".into(),
        game: 1,
        options: mode.options().clone(),
        dialog: Default::default(),
        previous_dialog: Default::default(),
        reasoning: None,
        finish_reason: None,
    };
    let opening = match mode.start(&ctx) {
        Ok(opening) => opening,
        Err(e) => {
            eprintln!("error: player `{}`: {e}", args.player);
            return Ok(2);
        }
    };
    let words = match generation.replaced.get(&args.player) {
        Some(map) => map
            .iter()
            .map(|(required, module)| format!("{module} for {required}"))
            .collect::<Vec<_>>()
            .join(", "),
        None => "the mode's own".to_string(),
    };
    eprintln!(
        "player `{}`: mode `{}`, modules: {words}; position {}; no model was called",
        args.player,
        binding.mode,
        game.fen()
    );
    write_stdout(&render(&opening.messages, &opening.request, &opening.tools))?;
    Ok(0)
}

/// Why the position asked for cannot be set up.
#[derive(Debug, thiserror::Error)]
enum PositionError {
    /// The tournament's opening book could not be read.
    #[error("the tournament's openings: {0}")]
    Openings(String),
    /// The FEN (or the opening's) is not a position.
    #[error("the position: {0}")]
    Position(String),
    /// A `--moves` move is not legal where it is played.
    #[error("move `{0}`: {1}")]
    Move(String, String),
}

/// The game at the position asked for: `--fen` (else the tournament's first opening, else the
/// initial position), then `--moves`.
fn position(generation: &Generation, args: &Args) -> Result<Game, PositionError> {
    let settings = &generation.spec.settings;
    let (variant, fen, mut moves) = match &args.fen {
        Some(fen) => (Variant::Standard, Some(fen.clone()), Vec::new()),
        None => {
            let openings = schedule::load_openings(
                settings.openings.as_ref(),
                script_dir(&generation.entry),
                settings.seed,
            )
            .map_err(|e| PositionError::Openings(e.to_string()))?;
            match openings.into_iter().next() {
                Some(o) => (o.variant, o.fen, o.moves),
                None => (Variant::Standard, None, Vec::new()),
            }
        }
    };
    if let Some(more) = &args.moves {
        moves.extend(more.split_whitespace().map(str::to_string));
    }
    let mut game = Game::new_in(variant, fen.as_deref(), MAX_PLIES)
        .map_err(|e| PositionError::Position(e.to_string()))?;
    for mv in &moves {
        game.play_uci(mv)
            .map_err(|e| PositionError::Move(mv.clone(), e.to_string()))?;
    }
    Ok(game)
}

/// The messages as the golden prompt files under `tests/fixtures/prompts/` show them: each as a
/// `--- role ---` line and its exact text, a line per picture and per tool call, then the
/// request's extra fields and the tools offered, as pretty JSON, when there are any.
fn render(
    messages: &[ChatMessage],
    request: &serde_json::Map<String, serde_json::Value>,
    tools: &[ToolSpec],
) -> String {
    let mut out = String::new();
    for m in messages {
        match &m.tool_call_id {
            Some(id) => out += &format!("--- {} {id} ---\n{}\n", m.role, m.content),
            None => out += &format!("--- {} ---\n{}\n", m.role, m.content),
        }
        for image in &m.images {
            out += &format!("--- image ({}) ---\n", image.media_type);
        }
        for call in &m.tool_calls {
            out += &format!("[call {}] {} {}\n", call.id, call.name, call.arguments);
        }
    }
    if !request.is_empty() {
        let json = serde_json::to_string_pretty(request).unwrap_or_default();
        out += &format!("--- request ---\n{json}\n");
    }
    if !tools.is_empty() {
        let json = serde_json::to_string_pretty(tools).unwrap_or_default();
        out += &format!("--- tools ---\n{json}\n");
    }
    out
}
