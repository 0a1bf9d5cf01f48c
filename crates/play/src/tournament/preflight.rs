//! What `arena check` opens before saying a tournament can run: the files its script names
//! (opening books, FEN lists) are read and parsed, and each engine command it names is started
//! once (`uci` → `uciok`), its options checked against those the engine advertises, and its
//! Chess960 support where the openings ask for it. Everything `arena run` would refuse at
//! start-up shows here, with the field it concerns.

use std::{collections::BTreeMap, path::Path};

use crate::engine::{EngineHandle, EngineSpec};
use crate::spec::{PlayerSpec, TournamentSpec};

/// A problem found by opening something a script names.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Finding {
    /// The player whose field it is, or `None` for the tournament's own fields.
    pub player: Option<String>,
    /// The field's path from that table (`openings.file`, `options.Hash`).
    pub path: Vec<String>,
    /// What is wrong.
    pub message: String,
}

impl Finding {
    fn new(player: Option<&str>, path: &[&str], message: impl Into<String>) -> Self {
        Finding {
            player: player.map(str::to_string),
            path: path.iter().map(|s| s.to_string()).collect(),
            message: message.into(),
        }
    }
}

/// Reads the openings the way a run does: the book file, the inline FENs.
pub fn files(spec: &TournamentSpec, script_dir: &Path) -> Vec<Finding> {
    let Some(openings) = &spec.settings.openings else {
        return Vec::new();
    };
    if let Err(e) = super::schedule::load_openings(Some(openings), script_dir, spec.settings.seed) {
        let field = match &e {
            crate::board::BoardError::UnknownBook { .. } => "book",
            crate::board::BoardError::Opening { .. } if openings.fens.is_some() => "fens",
            _ if openings.file.is_some() => "file",
            _ if openings.fens.is_some() => "fens",
            _ => "book",
        };
        return vec![Finding::new(
            None,
            &["openings", field],
            format!("openings: {e}"),
        )];
    }
    Vec::new()
}

/// An engine to try: its command and arguments, who names it, and the options it must accept.
struct Wanted {
    command: String,
    args: Vec<String>,
    /// (player, path of the command field) of every place that names it.
    named_by: Vec<(Option<String>, Vec<&'static str>)>,
    /// Options (name, player) it must advertise.
    options: Vec<(String, String)>,
    chess960: bool,
}

/// Starts every engine command the tournament names once: engine players (with their options),
/// the analysis engine, the adjudication engine.
pub async fn engines(spec: &TournamentSpec) -> Vec<Finding> {
    let chess960 = spec
        .settings
        .openings
        .as_ref()
        .is_some_and(|o| o.is_chess960());
    let mut wanted: BTreeMap<(String, Vec<String>), Wanted> = BTreeMap::new();
    let mut want = |command: &str,
                    args: &[String],
                    player: Option<&str>,
                    path: Vec<&'static str>,
                    options: Vec<(String, String)>,
                    plays: bool| {
        let entry = wanted
            .entry((command.to_string(), args.to_vec()))
            .or_insert_with(|| Wanted {
                command: command.to_string(),
                args: args.to_vec(),
                named_by: Vec::new(),
                options: Vec::new(),
                chess960: false,
            });
        entry.named_by.push((player.map(str::to_string), path));
        entry.options.extend(options);
        entry.chess960 |= plays && chess960;
    };
    for player in &spec.players {
        if let PlayerSpec::Engine(e) = player {
            let options = e
                .options
                .keys()
                .map(|k| (k.clone(), e.name.clone()))
                .collect();
            want(
                &e.command,
                &e.args,
                Some(&e.name),
                vec!["command"],
                options,
                true,
            );
        }
    }
    if let Some(analysis) = &spec.settings.analysis {
        want(
            &analysis.engine,
            &analysis.args,
            None,
            vec!["analysis", "engine"],
            Vec::new(),
            false,
        );
    }
    if let Some(engine) = spec
        .settings
        .adjudication
        .as_ref()
        .and_then(|a| a.engine.as_deref())
        && spec.player(engine).is_none()
    {
        want(
            engine,
            &[],
            None,
            vec!["adjudication", "engine"],
            Vec::new(),
            false,
        );
    }
    let mut findings = Vec::new();
    for w in wanted.into_values() {
        let (player, path) = w.named_by[0].clone();
        let mut engine = EngineSpec::new(
            player.clone().unwrap_or_else(|| w.command.clone()),
            w.command.clone(),
        );
        engine.args = w.args.clone();
        match EngineHandle::spawn(engine).await {
            Err(crate::engine::EngineError::NotFound { command, .. }) => {
                let hint = match crate::engine::locate::did_you_mean(&command) {
                    Some(m) => format!("did you mean `{m}`?"),
                    None => "install it or give its full path".to_string(),
                };
                findings.push(Finding::new(
                    player.as_deref(),
                    &path,
                    format!(
                        "engine `{command}` is not installed (not on PATH, not in /usr/games): {hint}"
                    ),
                ))
            }
            Err(e) => findings.push(Finding::new(
                player.as_deref(),
                &path,
                format!("engine `{}`: {e}", w.command),
            )),
            Ok(handle) => {
                let advertised: Vec<&str> =
                    handle.advertised().iter().map(String::as_str).collect();
                for (option, owner) in &w.options {
                    if !advertised.iter().any(|a| a.eq_ignore_ascii_case(option)) {
                        let hint = crate::script::did_you_mean(option, &advertised)
                            .map(|m| format!("; did you mean `{m}`?"))
                            .unwrap_or_default();
                        findings.push(Finding::new(
                            Some(owner),
                            &["options", option],
                            format!("engine `{}` has no option `{option}`{hint}", w.command),
                        ));
                    }
                }
                if w.chess960 && !handle.supports_chess960() {
                    findings.push(Finding::new(
                        player.as_deref(),
                        &path,
                        format!(
                            "engine `{}` does not play Chess960 (it has no `UCI_Chess960` option), and the openings are Chess960",
                            w.command
                        ),
                    ));
                }
                handle.shutdown().await;
            }
        }
    }
    findings
}

/// Asks each OpenAI-compatible endpoint the tournament's model players use for its model list
/// (`GET {base_url}/models`, once per endpoint and key), and checks that each player's model is
/// on it. Other wire formats are not asked (their model lists live elsewhere).
pub async fn endpoints(spec: &TournamentSpec) -> Vec<Finding> {
    let _ = rustls::crypto::ring::default_provider().install_default();
    let Ok(http) = reqwest::Client::builder()
        .timeout(std::time::Duration::from_secs(20))
        .build()
    else {
        return Vec::new();
    };
    // (player, path prefix, model spec) of every model.
    let mut models = Vec::new();
    for player in &spec.players {
        match player {
            PlayerSpec::Llm(p) => models.push((p.name.clone(), Vec::new(), p.model_spec())),
            PlayerSpec::Moa(p) => {
                for (i, m) in p.proposers.iter().enumerate() {
                    models.push((
                        p.name.clone(),
                        vec!["proposers".to_string(), (i + 1).to_string()],
                        m.clone(),
                    ));
                }
                models.push((
                    p.name.clone(),
                    vec!["synthesizer".to_string()],
                    p.synthesizer.clone(),
                ));
            }
            PlayerSpec::Engine(_) | PlayerSpec::Random(_) | PlayerSpec::Human(_) => {}
        }
    }
    let mut lists: BTreeMap<(String, Option<String>), Result<Vec<String>, String>> =
        BTreeMap::new();
    let mut findings = Vec::new();
    for (player, prefix, model) in models {
        if !matches!(model.provider(), Ok(crate::llm::Provider::OpenAiChat)) {
            continue;
        }
        let key = (model.base_url.clone(), model.api_key_env.clone());
        if !lists.contains_key(&key) {
            let listed = model_list(&http, &model.base_url, model.api_key_env.as_deref()).await;
            lists.insert(key.clone(), listed);
        }
        let at = |field: &str| {
            let mut path = prefix.clone();
            path.push(field.to_string());
            path
        };
        match &lists[&key] {
            Err(e) => findings.push(Finding {
                player: Some(player.clone()),
                path: at("base_url"),
                message: e.clone(),
            }),
            Ok(names) if !names.contains(&model.model) => {
                let known: Vec<&str> = names.iter().map(String::as_str).collect();
                let hint = crate::script::did_you_mean(&model.model, &known)
                    .map(|m| format!("; did you mean `{m}`?"))
                    .unwrap_or_else(|| format!(" (it serves: {})", known.join(", ")));
                findings.push(Finding {
                    player: Some(player.clone()),
                    path: at("model"),
                    message: format!(
                        "{} does not serve the model `{}`{hint}",
                        model.base_url, model.model
                    ),
                });
            }
            Ok(_) => {}
        }
    }
    findings
}

/// The model ids an OpenAI-compatible endpoint lists, or what went wrong asking.
async fn model_list(
    http: &reqwest::Client,
    base_url: &str,
    key_env: Option<&str>,
) -> Result<Vec<String>, String> {
    let url = format!("{}/models", base_url.trim_end_matches('/'));
    let mut request = http.get(&url);
    if let Some(key) = key_env.and_then(|k| std::env::var(k).ok()) {
        request = request.bearer_auth(key);
    }
    let reply = request
        .send()
        .await
        .map_err(|e| format!("cannot reach {url}: {e}"))?;
    if !reply.status().is_success() {
        return Err(format!("{url} answered {}", reply.status()));
    }
    let body: serde_json::Value = reply
        .json()
        .await
        .map_err(|e| format!("{url} did not answer a model list: {e}"))?;
    Ok(body["data"]
        .as_array()
        .map(|list| {
            list.iter()
                .filter_map(|m| m["id"].as_str().map(str::to_string))
                .collect()
        })
        .unwrap_or_default())
}
