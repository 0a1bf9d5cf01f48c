//! The `samples` option of a model player (self-consistency voting, `tournament::vote`) as a
//! script writes it, and the checks a valid one passes.

use super::PlayerSpec;

/// The mode option that asks for several samples per attempt.
pub const SAMPLES_OPTION: &str = "samples";

/// The most samples one attempt may ask for.
pub const MAX_SAMPLES: u64 = 32;

/// The samples per attempt `options` ask for: 1 without the option.
///
/// # Errors
/// A value that is not a whole number from 1 to [`MAX_SAMPLES`], as a message.
pub fn samples_of(options: &serde_json::Map<String, serde_json::Value>) -> Result<u32, String> {
    match options.get(SAMPLES_OPTION) {
        None => Ok(1),
        Some(v) => v
            .as_u64()
            .filter(|n| (1..=MAX_SAMPLES).contains(n))
            .map(|n| n as u32)
            .ok_or_else(|| {
                format!(
                    "option `{SAMPLES_OPTION}` must be a whole number from 1 to {MAX_SAMPLES}, not {v}"
                )
            }),
    }
}

/// The player's options as its play mode sees them: without the options arena handles itself
/// (`samples`), which no mode declares.
pub fn mode_options(
    options: &serde_json::Map<String, serde_json::Value>,
) -> std::borrow::Cow<'_, serde_json::Map<String, serde_json::Value>> {
    if options.contains_key(SAMPLES_OPTION) {
        let mut own = options.clone();
        own.remove(SAMPLES_OPTION);
        std::borrow::Cow::Owned(own)
    } else {
        std::borrow::Cow::Borrowed(options)
    }
}

/// What is wrong with `player`'s `samples`, each message naming the player: a bad value, more
/// than one sample without a temperature above 0 (the samples would all be alike, or the
/// provider's default would decide), a mixture of agents, or an engine given the option.
pub fn problems(player: &PlayerSpec) -> Vec<String> {
    let what = format!("player `{}`", player.name());
    let (options, temperature) = match player {
        PlayerSpec::Llm(p) => (&p.options, p.temperature),
        PlayerSpec::Moa(p) => {
            return match samples_of(&p.options) {
                Ok(1) => Vec::new(),
                Ok(n) => vec![format!(
                    "{what}: `{SAMPLES_OPTION} = {n}` is for a single model (`arena.llm`); a mixture of agents already asks several models each turn"
                )],
                Err(e) => vec![format!("{what}: {e}")],
            };
        }
        PlayerSpec::Engine(e) => {
            return if e.options.contains_key(SAMPLES_OPTION) {
                vec![format!(
                    "{what}: `{SAMPLES_OPTION}` is a model player's option (self-consistency voting); an engine's `options` are UCI options, and an engine plays the one move it searched"
                )]
            } else {
                Vec::new()
            };
        }
        PlayerSpec::Random(_) | PlayerSpec::Human(_) => return Vec::new(),
    };
    match samples_of(options) {
        Err(e) => vec![format!("{what}: {e}")],
        Ok(1) => Vec::new(),
        Ok(n) => match temperature {
            Some(t) if t > 0.0 => Vec::new(),
            Some(t) => vec![format!(
                "{what}: `{SAMPLES_OPTION} = {n}` needs a sampling `temperature` above 0, not {t}: at {t} every sample would be the same reply"
            )],
            None => vec![format!(
                "{what}: `{SAMPLES_OPTION} = {n}` needs a sampling `temperature` above 0 (the player sets none, so the provider's default, possibly 0, would decide how the samples differ)"
            )],
        },
    }
}
