//! `arena export`: write stored games out (`arena export pgn`, a Swiss as a FIDE TRF file with
//! `arena export trf`) and the datasets
//! (`arena export sft|positions|jsonl`, each with a `manifest.json` beside it).

use std::{
    fs::File,
    io::{BufWriter, Write},
    path::{Path, PathBuf},
};

use anyhow::{Context, Result, bail};
use arena::{
    export::{self, JsonlTable, SftFilter, SftOptions},
    lua::LuaHost,
    store::{Store, TournamentRow},
    tournament::standings::stored_pairing_record,
};
use clap::{Subcommand, ValueEnum};
use serde_json::{Value, json};

use super::common::{open_existing, select, there_are, write_stdout};

#[derive(Debug, clap::Args)]
pub(super) struct Args {
    #[command(subcommand)]
    what: ExportCommand,
}

#[derive(Debug, Subcommand)]
enum ExportCommand {
    /// Every game as PGN.
    Pgn {
        /// The SQLite store.
        #[arg(long)]
        db: PathBuf,
        /// The output file (default: standard output).
        #[arg(long)]
        out: Option<PathBuf>,
        /// The tournament (default: every tournament in the store).
        #[arg(long)]
        tournament: Option<String>,
        /// Annotate the moves: `[%eval]` and NAGs from the engine analysis, `[%emt]` (each
        /// move's time), the protocol failures of each ply, and the ECO, Opening, TimeControl and
        /// Annotator tags.
        #[arg(long)]
        annotate: bool,
        /// With --annotate: add the model's replies (and reasoning texts) to each move's comment.
        #[arg(long, requires = "annotate")]
        reasoning: bool,
    },
    /// One chat per accepted move of a language model (`{"messages": [...]}`, the OpenAI
    /// fine-tuning and Hugging Face chat format), for supervised fine-tuning.
    Sft {
        #[command(flatten)]
        common: DatasetArgs,
        /// Only this player's moves.
        #[arg(long)]
        player: Option<String>,
        /// Which moves to keep, by the stored engine analysis.
        #[arg(long, value_enum, default_value_t = Filter::Legal)]
        filter: Filter,
        /// Replace the answer by the engine's best move, in the mode's answer format.
        #[arg(long, value_enum)]
        rewrite: Option<Rewrite>,
        /// What becomes of the reasoning beside each answer.
        #[arg(long, value_enum, default_value_t = Reasoning::Keep)]
        reasoning: Reasoning,
        /// Add a `meta` object to each line (game, ply, player, mode, FEN, moves, verdict).
        #[arg(long)]
        meta: bool,
    },
    /// A Swiss tournament as a FIDE TRF file (TRF-16 player lines with the XXR, XXC and XXP
    /// lines of TRF(x)), for checking its pairings with a pairing program of your own, e.g.
    /// `bbpPairings --dutch FILE -c`.
    Trf {
        /// The store: a SQLite file or a `postgres://` URL (env `ARENA_DB`).
        #[arg(long, env = "ARENA_DB", hide_env_values = true)]
        db: PathBuf,
        /// The tournament (default: the store's only tournament).
        #[arg(long)]
        tournament: Option<String>,
        /// The output file (default: standard output).
        #[arg(long)]
        out: Option<PathBuf>,
    },
    /// Every analysed position: FEN, side, legal moves, the move played, the engine's top moves
    /// with Win%, the player and mode.
    Positions {
        #[command(flatten)]
        common: DatasetArgs,
    },
    /// One JSON object per stored row of a table, streamed.
    Jsonl {
        #[command(flatten)]
        common: DatasetArgs,
        /// The table to write.
        #[arg(long, value_enum)]
        what: What,
    },
}

/// What every dataset export takes.
#[derive(Debug, clap::Args)]
struct DatasetArgs {
    /// The store: a SQLite file or a `postgres://` URL (env `ARENA_DB`).
    #[arg(long, env = "ARENA_DB", hide_env_values = true)]
    db: PathBuf,
    /// The output file (JSON Lines).
    #[arg(long)]
    out: PathBuf,
    /// The tournament (default: every tournament in the store).
    #[arg(long)]
    tournament: Option<String>,
    /// Where the manifest goes (default: `manifest.json` in the output's folder).
    #[arg(long)]
    manifest: Option<PathBuf>,
}

#[derive(Clone, Copy, Debug, ValueEnum)]
enum Filter {
    /// Every accepted move.
    Legal,
    /// The moves among the engine's three best.
    Top3,
    /// The moves that were the engine's best.
    Best,
}

#[derive(Clone, Copy, Debug, ValueEnum)]
enum Rewrite {
    /// The engine's best move, written as the mode asks for an answer.
    Best,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, ValueEnum)]
enum Reasoning {
    /// The answer as written, plus the provider's reasoning text as `reasoning_content`.
    Keep,
    /// The answer reduced to the move in the mode's format.
    Drop,
}

#[derive(Clone, Copy, Debug, ValueEnum)]
enum What {
    /// Every LLM call.
    Calls,
    /// Every ply, with its analysis.
    Plies,
    /// Every game.
    Games,
}

pub(super) fn run(args: Args) -> Result<u8> {
    match args.what {
        ExportCommand::Pgn {
            db,
            out,
            tournament,
            annotate,
            reasoning,
        } => pgn(&db, out, tournament.as_deref(), annotate, reasoning),
        ExportCommand::Trf {
            db,
            tournament,
            out,
        } => trf(&db, tournament.as_deref(), out),
        ExportCommand::Sft {
            common,
            player,
            filter,
            rewrite,
            reasoning,
            meta,
        } => {
            let options = SftOptions {
                player,
                filter: match filter {
                    Filter::Legal => SftFilter::Legal,
                    Filter::Top3 => SftFilter::Top3,
                    Filter::Best => SftFilter::Best,
                },
                rewrite_best: rewrite.is_some(),
                reasoning: reasoning == Reasoning::Keep,
                meta,
            };
            let described = json!({
                "kind": "sft",
                "player": options.player,
                "filter": format!("{filter:?}").to_lowercase(),
                "rewrite": rewrite.map(|_| "best"),
                "reasoning": format!("{reasoning:?}").to_lowercase(),
                "meta": meta,
            });
            dataset(&common, described, |store, t, out| {
                if let Some(name) = &options.player {
                    known_player(store, t, name)?;
                }
                let counts = export::sft(store, t, &options, out)?;
                eprintln!(
                    "{} chats written; {} moves left out by the filter, {} without a usable request or reply",
                    counts.written, counts.filtered, counts.unusable
                );
                Ok(json!({ "rows": counts.written, "filtered": counts.filtered,
                           "unusable": counts.unusable }))
            })
        }
        ExportCommand::Positions { common } => {
            dataset(&common, json!({ "kind": "positions" }), |store, t, out| {
                let rows = export::positions(store, t, out)?;
                eprintln!("{rows} positions written");
                Ok(json!({ "rows": rows }))
            })
        }
        ExportCommand::Jsonl { common, what } => {
            let table = match what {
                What::Calls => JsonlTable::Calls,
                What::Plies => JsonlTable::Plies,
                What::Games => JsonlTable::Games,
            };
            let described = json!({ "kind": "jsonl", "what": table.as_str() });
            dataset(&common, described, |store, t, out| {
                let rows = export::jsonl(store, t, table, out)?;
                eprintln!("{rows} {} written", table.as_str());
                Ok(json!({ "rows": rows }))
            })
        }
    }
}

/// Opens the store, writes the export through `write` into `--out`, then the manifest (with the
/// export's description, its counts and the output's file name).
fn dataset(
    args: &DatasetArgs,
    mut described: Value,
    write: impl FnOnce(&Store, Option<i64>, &mut BufWriter<File>) -> Result<Value>,
) -> Result<u8> {
    let store = open_existing(&args.db)?;
    let tournaments: Vec<TournamentRow> = select(&store, args.tournament.as_deref())?;
    let only = args.tournament.as_ref().map(|_| tournaments[0].id);
    let file = File::create(&args.out)
        .with_context(|| format!("cannot write `{}`", args.out.display()))?;
    let mut out = BufWriter::new(file);
    let counts = write(&store, only, &mut out)?;
    out.flush()
        .with_context(|| format!("cannot write `{}`", args.out.display()))?;
    if let (Some(object), Value::Object(counts)) = (described.as_object_mut(), counts) {
        object.extend(counts);
        object.insert(
            "file".into(),
            args.out
                .file_name()
                .map(|n| n.to_string_lossy().into_owned())
                .into(),
        );
        object.insert(
            "store".into(),
            arena::store::display_location(&args.db).into(),
        );
    }
    let manifest = export::manifest(&store, &tournaments, described)?;
    let path = args.manifest.clone().unwrap_or_else(|| {
        args.out
            .parent()
            .unwrap_or(Path::new("."))
            .join("manifest.json")
    });
    let text = serde_json::to_string_pretty(&manifest)? + "\n";
    std::fs::write(&path, text).with_context(|| format!("cannot write `{}`", path.display()))?;
    Ok(0)
}

fn trf(db: &Path, tournament: Option<&str>, out: Option<PathBuf>) -> Result<u8> {
    let store = open_existing(db)?;
    let tournaments = select(&store, tournament)?;
    let t = match tournaments.as_slice() {
        [one] => one,
        [] => bail!("the store has no tournament"),
        many => bail!(
            "the store has {} tournaments; name one with --tournament ({})",
            many.len(),
            many.iter()
                .map(|t| t.name.as_str())
                .collect::<Vec<_>>()
                .join(", ")
        ),
    };
    let record = stored_pairing_record(&store, &LuaHost, t)
        .with_context(|| format!("cannot read tournament `{}`", t.name))?
        .with_context(|| {
            format!(
                "tournament `{}` is not a Swiss tournament with games (a TRF file records a Swiss system)",
                t.name
            )
        })?;
    if record.tournament.points_for_win != 10 {
        bail!(
            "tournament `{}` plays two games a pairing each round; a TRF file records one game a round",
            t.name
        );
    }
    let text = export::trf(&t.name, &record);
    match out {
        Some(path) => std::fs::write(&path, text)
            .with_context(|| format!("cannot write `{}`", path.display()))?,
        None => write_stdout(&text)?,
    }
    Ok(0)
}

/// Refuses a `--player` that played in none of the chosen tournaments (`only`, or all), listing
/// the players there are: an export of nobody's moves would be empty without saying why.
fn known_player(store: &Store, only: Option<i64>, name: &str) -> Result<()> {
    let mut players = Vec::new();
    for t in store.tournaments()? {
        if only.is_none_or(|id| id == t.id) {
            players.extend(store.players(t.id)?.into_iter().map(|p| p.name));
        }
    }
    players.sort();
    players.dedup();
    if players.iter().any(|p| p == name) {
        return Ok(());
    }
    bail!(
        "--player names `{name}`, who plays in no tournament exported; {}",
        there_are(&players, "there is no player")
    )
}

fn pgn(
    db: &Path,
    out: Option<PathBuf>,
    tournament: Option<&str>,
    annotate: bool,
    reasoning: bool,
) -> Result<u8> {
    let store = open_existing(db)?;
    let tournaments = select(&store, tournament)?;
    let text = export::pgn_with(
        &store,
        &tournaments,
        export::PgnOptions {
            annotate,
            reasoning,
        },
    )?;
    match out {
        Some(path) => std::fs::write(&path, text)
            .with_context(|| format!("cannot write `{}`", path.display()))?,
        None => write_stdout(&text)?,
    }
    Ok(0)
}
