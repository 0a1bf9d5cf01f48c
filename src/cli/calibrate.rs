//! `arena calibrate`: fits the engine ladder from a stored calibration tournament
//! (`tournaments/calibrate.lua`) and writes what arena ships: the games as PGN and
//! `calibration.json` (rung settings, Elo, standard error, games, engine version, date).
//!
//! The fit reads the games back from the PGN it has just written, so the shipped file follows
//! from the shipped games alone (a unit test redoes it).

use std::path::PathBuf;

use anyhow::{Context, Result, bail};
use arena::{
    engine::{self, EngineHandle, EngineSpec},
    export, leaderboard,
    rating::calibration::{self, AnchorSource, Calibration},
};

use super::common::{open_existing, select, write_stdout};

#[derive(Debug, clap::Args)]
pub(super) struct Args {
    /// The store of the calibration run: a SQLite file or a `postgres://` URL (env `ARENA_DB`).
    #[arg(long, env = "ARENA_DB", hide_env_values = true)]
    db: PathBuf,
    /// The calibration tournaments, fitted together (repeat the flag; default: every tournament
    /// in the store, e.g. `calibrate` and `calibrate-uci`).
    #[arg(long = "tournament", value_name = "NAME")]
    tournaments: Vec<String>,
    /// The rung held at a known rating, as `NAME=ELO` (default: LLM Chess's random mover).
    #[arg(long, value_name = "NAME=ELO", default_value = "random=-122.27")]
    anchor: leaderboard::ladder::Anchor,
    /// The anchor's own standard error on its scale (LLM Chess: ±23.03 at 95 %, so 11.75).
    #[arg(long, default_value_t = 11.75)]
    anchor_se: f64,
    /// Where the anchor's rating comes from, for the file's reader.
    #[arg(
        long,
        default_value = "LLM Chess (Saplin): the random mover against Komodo Dragon levels 1-4, \
                         1000 games each, Algorithm 1; -122.27 +/- 23.03 (95 %)"
    )]
    anchor_source: String,
    /// Drawn games the ladder fit adds to every pair that met, the same number whatever the pair
    /// played (keeps a sweep finite).
    #[arg(long, default_value_t = 1.0)]
    virtual_draws: f64,
    /// The machine and duration of the run, for the file's reader.
    #[arg(long, default_value = "")]
    played_on: String,
    /// The engine binary whose `id name` is recorded.
    #[arg(long, default_value = "stockfish")]
    engine: String,
    /// The folder written to (`calibrate.pgn.gz` and `calibration.json`).
    #[arg(long, default_value = "data/ladder")]
    out: PathBuf,
}

pub(super) async fn run(args: Args) -> Result<u8> {
    let store = open_existing(&args.db)?;
    let tournaments = if args.tournaments.is_empty() {
        select(&store, None)?
    } else {
        let mut chosen = Vec::new();
        for name in &args.tournaments {
            chosen.extend(select(&store, Some(name))?);
        }
        chosen
    };
    if tournaments.is_empty() {
        bail!("the store `{}` has no tournament", args.db.display());
    }
    let mut finished_at = Vec::new();
    let mut players: Vec<(String, serde_json::Map<String, serde_json::Value>)> = Vec::new();
    for t in &tournaments {
        let rows = store.games(t.id)?;
        if rows
            .iter()
            .any(|g| g.status != arena::store::GameStatus::Finished)
        {
            bail!(
                "tournament `{}` has unfinished games: finish the run first (arena run resumes it)",
                t.name
            );
        }
        finished_at.extend(rows.into_iter().filter_map(|g| g.finished_at));
        for p in store.players(t.id)? {
            if players.iter().any(|(name, _)| *name == p.name) {
                continue;
            }
            let settings: serde_json::Map<String, serde_json::Value> =
                serde_json::from_str(&p.settings_json)
                    .with_context(|| format!("settings of player `{}`", p.name))?;
            players.push((p.name, settings));
        }
    }
    let pgn = export::pgn(&store, &tournaments)?;
    std::fs::create_dir_all(&args.out)
        .with_context(|| format!("cannot create `{}`", args.out.display()))?;
    let games_file = calibration::GAMES_FILE;
    let pgn_path = args.out.join(games_file);
    calibration::write_games_file(&pgn_path, &pgn)
        .with_context(|| format!("cannot write `{}`", pgn_path.display()))?;
    let games = calibration::read_games_file(&pgn_path).context("reading back the exported PGN")?;

    let anchor = AnchorSource {
        player: args.anchor.name.clone(),
        elo: args.anchor.rating,
        se: args.anchor_se,
        source: args.anchor_source,
    };
    let config = arena::rating::ladder::LadderConfig {
        anchor: anchor.player.clone(),
        anchor_rating: anchor.elo,
        virtual_draws: args.virtual_draws,
    };
    let mut rungs = calibration::fit_rungs(&players, &games, &config)?;
    // Weakest first, whichever tournament a rung played in.
    rungs.sort_by(|a, b| a.elo.total_cmp(&b.elo));
    let time_control = uci_time_control(&rungs);
    let uci_elo = calibration::fit_uci_scale(&mut rungs, &games, &config, &time_control)?;
    let date = finished_at
        .iter()
        .max()
        .map(|d| d.chars().take(10).collect())
        .unwrap_or_default();
    let calibration = Calibration {
        engine: engine_id(&args.engine).await?,
        date,
        played_on: args.played_on,
        anchor,
        virtual_draws: args.virtual_draws,
        games_file: games_file.into(),
        games: u32::try_from(games.len()).unwrap_or(u32::MAX),
        uci_elo,
        rungs,
    };
    let json_path = args.out.join("calibration.json");
    let mut json = serde_json::to_string_pretty(&calibration)?;
    json.push('\n');
    std::fs::write(&json_path, json)
        .with_context(|| format!("cannot write `{}`", json_path.display()))?;
    let mut text = format!(
        "{} games, {} pinned at {}; wrote {} and {}\n",
        calibration.games,
        calibration.anchor.player,
        calibration.anchor.elo,
        pgn_path.display(),
        json_path.display(),
    );
    text.push_str(&calibration::side_by_side(&calibration));
    write_stdout(&text)?;
    Ok(0)
}

/// The clock the `UCI_LimitStrength` rungs played at, as PGN writes it (`60+0.6`).
fn uci_time_control(rungs: &[calibration::Rung]) -> String {
    let mut controls: Vec<String> = rungs
        .iter()
        .filter(|r| r.nominal_uci_elo().is_some())
        .filter_map(|r| {
            let tc = r.player.get("time_control")?.as_object()?;
            let base = tc.get("base_s").and_then(serde_json::Value::as_f64);
            let inc = tc.get("increment_s").and_then(serde_json::Value::as_f64);
            let per_move = tc.get("per_move_s").and_then(serde_json::Value::as_f64);
            Some(match (base, inc, per_move) {
                (Some(b), inc, _) => format!("{b}+{}", inc.unwrap_or(0.0)),
                (None, _, Some(m)) => format!("{m} s per move"),
                _ => return None,
            })
        })
        .collect();
    controls.dedup();
    if controls.is_empty() {
        "none".into()
    } else {
        controls.join(", ")
    }
}

/// What the engine binary calls itself.
async fn engine_id(command: &str) -> Result<String> {
    let path = engine::locate(command)?;
    let handle = EngineHandle::spawn(EngineSpec::new("calibrate", path.display().to_string()))
        .await
        .with_context(|| format!("starting `{command}` for its version"))?;
    let id = handle.id_name().unwrap_or(command).to_string();
    handle.shutdown().await;
    Ok(id)
}
