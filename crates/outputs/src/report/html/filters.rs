//! The games list's filter controls, one builder for the report and `arena serve`: the report's
//! script filters its rows in the page (`data-filter`), the server's form asks for a filtered
//! page (`name`); the choices and their words are the same.

use super::markup::{Element, el};

/// Where a control's choice goes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Bind {
    /// `data-filter=NAME`: the report's script reads it and hides rows.
    Script,
    /// `name=NAME`: a form sends it to the server.
    Form,
}

/// A labelled `select` named `name`, with `current` selected (none: the first choice).
pub fn select(
    bind: Bind,
    name: &'static str,
    label: &str,
    current: Option<&str>,
    options: Vec<(String, String)>,
) -> Element {
    let mut s = match bind {
        Bind::Script => el("select").attr("data-filter", name),
        Bind::Form => el("select").attr("name", name),
    };
    for (value, text) in options {
        let mut o = el("option").attr("value", &value);
        if current == Some(value.as_str()) {
            o = o.attr("selected", "");
        }
        s.push(o.text(text));
    }
    el("label").text(format!("{label} ")).child(s)
}

/// The choice that filters nothing.
fn any() -> (String, String) {
    (String::new(), "any".to_owned())
}

/// The player control: any, then each of `players`.
pub fn player<'a>(
    bind: Bind,
    current: Option<&str>,
    players: impl IntoIterator<Item = &'a str>,
) -> Element {
    let options = std::iter::once(any())
        .chain(players.into_iter().map(|p| (p.to_owned(), p.to_owned())))
        .collect();
    select(bind, "player", "player", current, options)
}

/// The colour control: either, White or Black.
pub fn colour(bind: Bind, current: Option<&str>) -> Element {
    let options = vec![
        (String::new(), "either colour".into()),
        ("white".into(), "White".into()),
        ("black".into(), "Black".into()),
    ];
    select(bind, "colour", "playing", current, options)
}

/// The result control: any, the three results, `more` (each page's own), unfinished.
pub fn result(bind: Bind, current: Option<&str>, more: &[(&str, &str)]) -> Element {
    let mut options = vec![
        any(),
        ("1-0".into(), "1-0".into()),
        ("0-1".into(), "0-1".into()),
        ("1/2-1/2".into(), "½-½".into()),
    ];
    options.extend(more.iter().map(|(v, t)| ((*v).to_owned(), (*t).to_owned())));
    options.push(("none".into(), "unfinished".into()));
    select(bind, "result", "result", current, options)
}

/// The termination control: any, then each of `terminations` in words.
pub fn termination<'a>(
    bind: Bind,
    current: Option<&str>,
    terminations: impl IntoIterator<Item = &'a str>,
) -> Element {
    let options = std::iter::once(any())
        .chain(
            terminations
                .into_iter()
                .map(|t| (t.to_owned(), t.replace('_', " "))),
        )
        .collect();
    select(bind, "termination", "termination", current, options)
}
