//! Evaluation runs: the task tables of `arena eval-report`, then every item with what each player
//! was asked, what it answered, the parsed answer and the score.

use super::{
    ReportError, long_text,
    markup::{Element, el},
    overview::table_html,
};
use crate::{
    eval,
    store::{EvalRunRow, Store},
};

pub(super) fn section(store: &Store, runs: &[EvalRunRow]) -> Result<Element, ReportError> {
    let mut section = el("section")
        .class("evals")
        .id("evals")
        .child(el("h2").text("Evaluation runs"));
    for run in runs {
        section.push(run_section(store, run)?);
    }
    Ok(section)
}

fn run_section(store: &Store, run: &EvalRunRow) -> Result<Element, ReportError> {
    let mut div = el("div")
        .class("eval-run")
        .id(format!("run{}", run.id))
        .child(el("h3").text(format!("Run {}", run.name)))
        .child(el("p").class("note").text(format!(
            "script {}{}",
            run.script_path,
            run.source_run_id
                .map(|s| format!("; re-scored from run {s}"))
                .unwrap_or_default()
        )));
    for table in eval::run::report(store, &run.name, false)? {
        div.push(table_html(&table));
    }
    // A re-scored run reads the items and replies of the run it re-scored.
    let source = run.source_run_id.unwrap_or(run.id);
    for task in store.eval_tasks(source)? {
        let keys: Vec<String> = store
            .eval_items(source, &task)?
            .into_iter()
            .map(|(k, _)| k)
            .collect();
        let results = store.eval_results(run.id, &task)?;
        let mut head = el("tr");
        for c in [
            "item",
            "player",
            "calls",
            "prompt",
            "reply",
            "parsed answer",
            "score",
        ] {
            head.push(el("th").text(c));
        }
        let mut body = el("tbody");
        for r in &results {
            let replies = store.eval_replies(source, &task, &r.player, r.idx)?;
            let mut prompt = el("td");
            let mut reply = el("td");
            for rep in &replies {
                let sent = rep
                    .prompt_json
                    .as_deref()
                    .and_then(|j| serde_json::from_str::<Vec<crate::llm::ChatMessage>>(j).ok())
                    .map(|ms| {
                        ms.iter()
                            .map(|m| format!("[{}]\n{}", m.role, m.content))
                            .collect::<Vec<_>>()
                            .join("\n\n")
                    });
                let label = if replies.len() > 1 {
                    format!("#{} ", rep.seq + 1)
                } else {
                    String::new()
                };
                match sent {
                    Some(s) => prompt.push(long_text(&label, "prompt", &s)),
                    None => prompt.push(el("span").class("note").text("no prompt (native player)")),
                }
                reply.push(long_text(&label, "reply", &rep.reply_text));
                if let Some(reasoning) = &rep.reasoning {
                    reply.push(long_text("reasoning ", "reasoning", reasoning));
                }
            }
            body.push(
                el("tr")
                    .child(
                        el("td").text(
                            keys.get(r.idx as usize)
                                .cloned()
                                .unwrap_or_else(|| r.idx.to_string()),
                        ),
                    )
                    .child(el("td").text(r.player.clone()))
                    .child(el("td").class("num").text(r.calls.to_string()))
                    .child(prompt)
                    .child(reply)
                    .child(el("td").child(el("code").text(r.parsed_json.clone())))
                    .child(el("td").child(el("code").text(r.score_json.clone()))),
            );
        }
        div.push(
            el("details")
                .class("items")
                .child(el("summary").text(format!(
                    "{task}: {} scored answer(s) over {} item(s)",
                    results.len(),
                    keys.len()
                )))
                .child(
                    el("table")
                        .class("eval-items")
                        .child(el("thead").child(head))
                        .child(body),
                ),
        );
    }
    Ok(div)
}
