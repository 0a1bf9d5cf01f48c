//! What an evaluation script asks for, as plain data validated strictly (unknown keys are errors).
//! The Lua side (`lua::task`) fills these from the table `arena.evaluation{}` returns.

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};

use crate::spec::PlayerSpec;

/// The four fine-grained tasks.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum TaskKind {
    /// Name the piece on a square and list its legal moves.
    BasicUnderstanding,
    /// Choose a move in a position.
    MoveSelection,
    /// Solve puzzles move by move.
    Puzzles,
    /// State the FEN after a list of moves.
    BoardReconstruction,
}

impl TaskKind {
    /// Every task, in the papers' order.
    pub const ALL: [TaskKind; 4] = [
        TaskKind::BasicUnderstanding,
        TaskKind::MoveSelection,
        TaskKind::Puzzles,
        TaskKind::BoardReconstruction,
    ];

    /// The name scripts and the command line use (`basic_understanding`, ...).
    pub fn as_str(self) -> &'static str {
        match self {
            TaskKind::BasicUnderstanding => "basic_understanding",
            TaskKind::MoveSelection => "move_selection",
            TaskKind::Puzzles => "puzzles",
            TaskKind::BoardReconstruction => "board_reconstruction",
        }
    }

    /// The task with this name.
    pub fn parse(name: &str) -> Option<TaskKind> {
        TaskKind::ALL.into_iter().find(|t| t.as_str() == name)
    }
}

/// Settings of the whole evaluation (everything but tasks and players).
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
#[serde(deny_unknown_fields)]
pub struct EvalSettings {
    /// Name; a store holds several runs, told apart by name.
    pub name: String,
    /// Items answered at once (the command line's `--concurrency` wins).
    #[serde(default)]
    pub concurrency: Option<usize>,
    /// Seed of random players and of built data sets.
    #[serde(default)]
    pub seed: u64,
}

/// How a data set is built when no file gives it.
#[derive(Debug, Clone, Default, Serialize, Deserialize, PartialEq)]
#[serde(deny_unknown_fields)]
pub struct BuildSpec {
    /// An EPD or PGN book the positions come from (relative to the script, or `$VAR/...`).
    #[serde(default)]
    pub book: Option<String>,
    /// Or an arena store: the positions of its stored games (every position a player was to move
    /// in, book moves excluded).
    #[serde(default)]
    pub games: Option<String>,
    /// With `games`: only the positions this player was to move in (default: every player's).
    #[serde(default)]
    pub player: Option<String>,
    /// How many items to build.
    pub count: usize,
    /// Engine search depth for move-selection sets (default 10 unless `nodes` is given).
    #[serde(default)]
    pub depth: Option<u32>,
    /// Engine nodes per search instead of a depth.
    #[serde(default)]
    pub nodes: Option<u64>,
    /// Board reconstruction: plies per move list (default 12).
    #[serde(default)]
    pub plies: Option<u32>,
    /// Seed of the sampling (default: the evaluation's seed).
    #[serde(default)]
    pub seed: Option<u64>,
    /// The analysis engine (default `stockfish`).
    #[serde(default)]
    pub engine: Option<String>,
    /// Engine processes for the analysis (default 1).
    #[serde(default)]
    pub processes: Option<usize>,
}

/// One task of an evaluation.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
#[serde(deny_unknown_fields)]
pub struct TaskSpec {
    /// Which task.
    pub task: TaskKind,
    /// The task's label in reports and the store (default: the task name); two entries of the
    /// same task (say, two scorings) need different labels.
    #[serde(default)]
    pub name: Option<String>,
    /// A data file or folder (relative to the script, or starting with `$VAR/`).
    #[serde(default)]
    pub data: Option<String>,
    /// Build the data set instead of reading it.
    #[serde(default)]
    pub build: Option<BuildSpec>,
    /// Use only the first N items.
    #[serde(default)]
    pub limit: Option<usize>,
    /// Basic understanding: `strict` (default) or `chessarena`.
    #[serde(default)]
    pub scoring: Option<String>,
    /// Puzzles: replies allowed per solver move (default 5, as ChessArena).
    #[serde(default)]
    pub max_attempts: Option<u32>,
    /// Options of the task script (`parser`, `legal_moves`, ...).
    #[serde(default)]
    pub options: serde_json::Map<String, serde_json::Value>,
    /// The task script module (default `tasks.<task>`).
    #[serde(default)]
    pub script: Option<String>,
}

impl TaskSpec {
    /// The label: `name`, else the task's name.
    pub fn label(&self) -> String {
        self.name
            .clone()
            .unwrap_or_else(|| self.task.as_str().to_owned())
    }

    /// The task script module.
    pub fn module(&self) -> String {
        self.script
            .clone()
            .unwrap_or_else(|| format!("tasks.{}", self.task.as_str()))
    }
}

/// A whole evaluation: settings, tasks, players and where each player was defined.
#[derive(Debug, Clone, PartialEq)]
pub struct EvalSpec {
    /// Everything but tasks and players.
    pub settings: EvalSettings,
    /// The tasks, in script order.
    pub tasks: Vec<TaskSpec>,
    /// The players, in script order.
    pub players: Vec<PlayerSpec>,
    /// `file:line` of each player's definition by name; `""` is the evaluation table itself.
    pub defined_at: BTreeMap<String, String>,
}

/// Expands a data path: `$VAR/rest` takes the folder from the environment variable `VAR` (names
/// holding `KEY`, `TOKEN`, `SECRET` or `PASSWORD` are refused, so a script cannot point a
/// reader at a secret); a relative path is taken from `script_dir`.
///
/// # Errors
/// A message naming the variable when it is unset or refused.
pub(crate) fn resolve_data_path(
    path: &str,
    script_dir: &std::path::Path,
) -> Result<std::path::PathBuf, String> {
    if let Some(rest) = path.strip_prefix('$') {
        let (var, tail) = rest.split_once('/').unwrap_or((rest, ""));
        let upper = var.to_ascii_uppercase();
        if ["KEY", "TOKEN", "SECRET", "PASSWORD"]
            .iter()
            .any(|w| upper.contains(w))
        {
            return Err(format!(
                "data path `{path}`: the variable `{var}` looks like a secret and is not read"
            ));
        }
        let root = std::env::var_os(var)
            .filter(|v| !v.is_empty())
            .ok_or_else(|| {
                format!("data path `{path}`: the environment variable `{var}` is not set")
            })?;
        return Ok(std::path::PathBuf::from(root).join(tail));
    }
    let p = std::path::Path::new(path);
    Ok(if p.is_absolute() {
        p.to_path_buf()
    } else {
        script_dir.join(p)
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn data_paths_expand_variables_but_not_secrets() {
        let dir = std::path::Path::new("tournaments");
        assert_eq!(
            resolve_data_path("data/x.jsonl", dir).unwrap(),
            dir.join("data/x.jsonl")
        );
        // PATH is always set; it stands in for ARENA_REFERENCE_DATA.
        let path = resolve_data_path("$PATH/x", dir).unwrap();
        assert!(path.ends_with("x"));
        let err = resolve_data_path("$MY_API_KEY/x", dir).unwrap_err();
        assert!(err.contains("secret"), "{err}");
        let err = resolve_data_path("$ARENA_SURELY_UNSET_VAR/x", dir).unwrap_err();
        assert!(err.contains("not set"), "{err}");
        assert_eq!(
            TaskKind::parse("board_reconstruction"),
            Some(TaskKind::BoardReconstruction)
        );
    }
}
