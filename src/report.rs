//! Tables for people: the standings of a tournament.

use crate::store::StandingRow;

/// The standings as an aligned text table: player, games, W/D/L, score %, and the protocol
/// failures that are the model's fault (forfeits, parse errors, illegal moves), kept apart from the
/// chess result.
pub fn standings_table(rows: &[StandingRow]) -> String {
    let header = [
        "#",
        "player",
        "games",
        "W",
        "D",
        "L",
        "score %",
        "forfeits",
        "parse errors",
        "illegal moves",
        "LLM calls",
        "tokens",
    ];
    let mut table: Vec<Vec<String>> = vec![header.iter().map(|s| s.to_string()).collect()];
    for (i, r) in rows.iter().enumerate() {
        table.push(vec![
            (i + 1).to_string(),
            r.player.clone(),
            r.games.to_string(),
            r.wins.to_string(),
            r.draws.to_string(),
            r.losses.to_string(),
            format!("{:.1}", r.score_percent()),
            r.forfeits.to_string(),
            r.parse_errors.to_string(),
            r.illegal_moves.to_string(),
            r.llm_calls.to_string(),
            (r.prompt_tokens + r.completion_tokens).to_string(),
        ]);
    }
    align(&table)
}

/// Left-aligns the first two columns (rank, name) and right-aligns numbers.
pub(crate) fn align(rows: &[Vec<String>]) -> String {
    let columns = rows.first().map_or(0, Vec::len);
    let widths: Vec<usize> = (0..columns)
        .map(|c| rows.iter().map(|r| r[c].chars().count()).max().unwrap_or(0))
        .collect();
    let mut out = String::new();
    for (i, row) in rows.iter().enumerate() {
        let cells: Vec<String> = row
            .iter()
            .enumerate()
            .map(|(c, cell)| {
                if c == 1 {
                    format!("{cell:<width$}", width = widths[c])
                } else {
                    format!("{cell:>width$}", width = widths[c])
                }
            })
            .collect();
        out.push_str(cells.join("  ").trim_end());
        out.push('\n');
        if i == 0 {
            let rule: usize = widths.iter().sum::<usize>() + 2 * widths.len().saturating_sub(1);
            out.push_str(&"-".repeat(rule));
            out.push('\n');
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn standings_are_aligned_with_one_row_per_player() {
        let rows = vec![
            StandingRow {
                player: "stockfish".into(),
                games: 4,
                wins: 4,
                draws: 0,
                losses: 0,
                score: 4.0,
                forfeits: 0,
                parse_errors: 0,
                illegal_moves: 0,
                forbidden_reasoning: 0,
                llm_calls: 0,
                prompt_tokens: 0,
                completion_tokens: 0,
            },
            StandingRow {
                player: "smollm2".into(),
                games: 4,
                wins: 0,
                draws: 1,
                losses: 3,
                score: 0.5,
                forfeits: 2,
                parse_errors: 7,
                illegal_moves: 3,
                forbidden_reasoning: 0,
                llm_calls: 20,
                prompt_tokens: 5000,
                completion_tokens: 400,
            },
        ];
        let table = standings_table(&rows);
        let lines: Vec<&str> = table.lines().collect();
        assert_eq!(lines.len(), 4);
        assert!(lines[0].starts_with("#  player"), "{table}");
        assert!(
            lines[2].contains("stockfish") && lines[2].contains("100.0"),
            "{table}"
        );
        assert!(
            lines[3].contains("12.5") && lines[3].contains("5400"),
            "{table}"
        );
        // Columns line up: every data line is as wide as the header.
        assert_eq!(lines[2].len(), lines[0].len());
    }
}
