//! `arena leaderboard`: the ratings (Glicko-1 and Bradley–Terry) and standings of stored
//! tournaments, and optionally a ladder.

use std::path::PathBuf;

use anyhow::{Context, Result, bail};
use arena::{leaderboard, rating::glicko::Compat, report};

use super::common::{
    format_tables, open_existing, select, there_are, versions_table, write_stdout,
};

#[derive(Debug, clap::Args)]
pub(super) struct Args {
    /// The store: a SQLite file or a `postgres://` URL (env `ARENA_DB`).
    #[arg(long, env = "ARENA_DB", hide_env_values = true)]
    db: PathBuf,
    /// The tournament (default: every tournament in the store).
    #[arg(long)]
    tournament: Option<String>,
    /// Show players whose rating deviation is above `--max-rd`, marked provisional (the default;
    /// kept for scripts that ask for it).
    #[arg(long, conflicts_with = "hide_provisional")]
    all: bool,
    /// Leave out the Glicko-1 table's provisional players (RD above `--max-rd`), as ChessArena's
    /// leaderboard does.
    #[arg(long)]
    hide_provisional: bool,
    /// The rating deviation above which a rating is provisional.
    #[arg(long, default_value_t = 100.0)]
    max_rd: f64,
    /// Rate with ChessArena's published update rule (with its bug), to compare with their numbers.
    #[arg(long)]
    chessarena_compat: bool,
    /// Add the attempt statistics and the terminations of each player.
    #[arg(long)]
    stats: bool,
    /// Add one row per game (result, termination, length, each side's attempts).
    #[arg(long)]
    games: bool,
    /// Also fit a ladder: maximum-likelihood Elo of every player with this anchor pinned,
    /// as `NAME=RATING` (e.g. `sf-1350=1350`), or `NAME=RATING±SE` for a calibrated anchor
    /// (its standard error then widens every other error, in quadrature).
    #[arg(long, value_name = "ANCHOR=RATING[±SE]")]
    ladder: Option<leaderboard::ladder::Anchor>,
    /// Drawn games the ladder and Bradley–Terry fits add to every pair that met (0: the pure MLE,
    /// which has no finite rating for a player who won or lost every game). Default: 1 per pair
    /// for the ladder; for Bradley–Terry 0.1 per game of the pair, at most 0.5.
    #[arg(long)]
    virtual_draws: Option<f64>,
    /// Hold this player at this Elo in the Bradley–Terry table, as `NAME=ELO` or `NAME=ELO±SE`
    /// (a calibrated anchor: its error widens every margin, in quadrature; default: the
    /// players' mean is 0).
    #[arg(long, value_name = "NAME=ELO[±SE]")]
    anchor: Option<leaderboard::ladder::Anchor>,
    /// Bootstrap samples behind the Bradley–Terry intervals and rank stability (0: intervals
    /// from the observed information instead).
    #[arg(long, default_value_t = 1000)]
    bootstrap: usize,
    /// Seed of the bootstrap: the same games and seed give the same intervals.
    #[arg(long, default_value_t = 1)]
    bootstrap_seed: u64,
    /// Add the LLM Chess table (Win/Loss, game duration, wrong actions, tokens, cost, Elo
    /// against anchors); shown anyway when a player plays the agentic mode.
    #[arg(long)]
    llm_chess: bool,
    /// Output format.
    #[arg(long, value_enum, default_value_t = report::Format::Text)]
    format: report::Format,
}

pub(super) fn run(args: Args) -> Result<u8> {
    let Args {
        db,
        tournament,
        all: _,
        hide_provisional,
        max_rd,
        chessarena_compat,
        stats,
        games,
        ladder,
        virtual_draws,
        anchor,
        bootstrap,
        bootstrap_seed,
        llm_chess,
        format,
    } = args;
    let store = open_existing(&db)?;
    let options = leaderboard::Options {
        compat: if chessarena_compat {
            Compat::ChessArena
        } else {
            Compat::Correct
        },
        max_rd,
        show_all: !hide_provisional,
        stats,
        games,
        llm_chess,
        bradley_terry: leaderboard::bradley_terry::Options {
            anchor: anchor.clone(),
            samples: bootstrap,
            seed: bootstrap_seed,
            virtual_draws: virtual_draws.map_or(
                arena::rating::bradley_terry::VirtualDraws::DEFAULT,
                arena::rating::bradley_terry::VirtualDraws::PerPair,
            ),
        },
        format_tables: Vec::new(),
    };
    let mut tables = Vec::new();
    let mut selected = select(&store, tournament.as_deref())?;
    // A tournament named on the command line brings its later versions (`NAME@v2`, ...), so
    // that they are compared side by side.
    if let Some(name) = tournament.as_deref() {
        for (version, row) in arena::tournament::versions::versions(&store, name)? {
            if version > 1 && !selected.iter().any(|t| t.id == row.id) {
                selected.push(row);
            }
        }
    }
    for t in selected {
        // A misspelt anchor is the user's mistake, not a property of the pool: say so loudly,
        // with the names that would do.
        let rated = leaderboard::bradley_terry::rated_in(&store, t.id)?;
        let mut players: Vec<String> = rated.players().to_vec();
        players.sort();
        for (option, anchor) in [("--anchor", &anchor), ("--ladder", &ladder)] {
            if let Some(anchor) = anchor
                && !players.contains(&anchor.name)
            {
                bail!(
                    "{option} names `{}`, who has no finished game in tournament `{}`; {}",
                    anchor.name,
                    t.name,
                    there_are(&players, "it has no finished game")
                );
            }
        }
        let options = leaderboard::Options {
            format_tables: format_tables(&store, &t),
            ..options.clone()
        };
        tables.extend(leaderboard::tables(&store, &t, &options)?);
        tables.extend(versions_table(&store, &t));
        if let Some(anchor) = &ladder {
            let mut table = leaderboard::ladder::ladder_table(
                &store.games(t.id)?,
                anchor,
                virtual_draws.unwrap_or_else(ladder_virtual_draws),
            )
            .with_context(|| format!("ladder of tournament `{}`", t.name))?;
            table.set_tournament(&t.name);
            tables.push(table);
        }
    }
    write_stdout(&report::render(&tables, format))?;
    Ok(0)
}

/// The ladder's virtual draws when `--virtual-draws` is not given: the regularised fit's.
fn ladder_virtual_draws() -> f64 {
    arena::rating::ladder::LadderConfig::regularised("", 0.0).virtual_draws
}

#[cfg(test)]
mod tests {
    use arena::rating::bradley_terry::VirtualDraws;
    use clap::CommandFactory;

    /// The number written in `text` right after `marker`.
    fn number_after(text: &str, marker: &str) -> f64 {
        let rest = &text[text
            .find(marker)
            .unwrap_or_else(|| panic!("no `{marker}` in {text}"))
            + marker.len()..];
        let digits: String = rest
            .chars()
            .take_while(|c| c.is_ascii_digit() || *c == '.')
            .collect();
        digits
            .trim_end_matches('.')
            .parse()
            .unwrap_or_else(|_| panic!("no number after `{marker}` in {text}"))
    }

    /// The help of `--virtual-draws` states the defaults the fits use: read back from the help
    /// text and compared with what the code gives a pair of one game and of a hundred.
    #[test]
    fn the_virtual_draws_help_states_the_defaults_the_fits_use() {
        let command = super::super::Cli::command();
        let leaderboard = command.find_subcommand("leaderboard").unwrap();
        let arg = leaderboard
            .get_arguments()
            .find(|a| a.get_id() == "virtual_draws")
            .unwrap();
        let help = arg
            .get_long_help()
            .or(arg.get_help())
            .unwrap()
            .to_string()
            .replace('\n', " ");
        let ladder = number_after(&help, "Default: ");
        let share = number_after(&help, "for Bradley–Terry ");
        let cap = number_after(&help, "at most ");
        assert_eq!(ladder, super::ladder_virtual_draws(), "{help}");
        let default = VirtualDraws::DEFAULT;
        assert_eq!(default.for_pair(1.0), share, "{help}");
        assert_eq!(default.for_pair(2.0), 2.0 * share, "{help}");
        assert_eq!(default.for_pair(100.0), cap, "{help}");
    }
}
