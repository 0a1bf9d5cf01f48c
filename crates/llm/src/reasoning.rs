//! Splitting a model's visible reasoning from its answer.
//!
//! Reasoning models served through plain chat completions (DeepSeek-R1, Qwen3, QwQ under llama.cpp or
//! vLLM without a reasoning parser) inline their chain of thought as `<think>...</think>` blocks in the
//! message content. Reply parsers must only see the answer, while the store keeps the reasoning.
//!
//! ```
//! use arena_llm::split_reasoning;
//!
//! let (answer, reasoning) = split_reasoning("<think>e4 is central</think>\n<move>e2e4</move>");
//! assert_eq!(answer, "<move>e2e4</move>");
//! assert_eq!(reasoning.as_deref(), Some("e4 is central"));
//! ```

const OPEN: &str = "<think>";
const CLOSE: &str = "</think>";

/// Splits `text` into the answer (with every `<think>...</think>` block removed, trimmed) and the
/// reasoning (the blocks' contents, trimmed, joined by blank lines; `None` when there is none).
///
/// Two truncated forms are also understood:
/// - an unclosed `<think>` at the start (the reply ran out of tokens while thinking): all of it is
///   reasoning and the answer is empty;
/// - a `</think>` with no opening tag before it (chat templates that put `<think>` into the prompt, as
///   DeepSeek-R1's does): everything before it is reasoning.
///
/// An unclosed `<think>` after some answer text is kept as answer text, since the model is then
/// more likely quoting the tag than thinking.
pub fn split_reasoning(text: &str) -> (String, Option<String>) {
    let mut answer = String::new();
    let mut thoughts: Vec<&str> = Vec::new();
    let mut rest = text;

    if let Some(close) = rest.find(CLOSE)
        && !rest[..close].contains(OPEN)
    {
        thoughts.push(&rest[..close]);
        rest = &rest[close + CLOSE.len()..];
    }

    loop {
        let Some(open) = rest.find(OPEN) else {
            answer.push_str(rest);
            break;
        };
        let inside = &rest[open + OPEN.len()..];
        match inside.find(CLOSE) {
            Some(close) => {
                answer.push_str(&rest[..open]);
                thoughts.push(&inside[..close]);
                rest = &inside[close + CLOSE.len()..];
            }
            None => {
                if answer.trim().is_empty() && rest[..open].trim().is_empty() {
                    thoughts.push(inside);
                    answer.clear();
                } else {
                    answer.push_str(rest);
                }
                break;
            }
        }
    }

    let reasoning = thoughts
        .iter()
        .map(|t| t.trim())
        .filter(|t| !t.is_empty())
        .collect::<Vec<_>>()
        .join("\n\n");
    let reasoning = (!reasoning.is_empty()).then_some(reasoning);
    (answer.trim().to_owned(), reasoning)
}

#[cfg(test)]
mod tests {
    use super::split_reasoning;

    fn split(text: &str) -> (String, Option<String>) {
        split_reasoning(text)
    }

    #[test]
    fn plain_text_has_no_reasoning() {
        assert_eq!(split("  e2e4 \n"), ("e2e4".to_owned(), None));
    }

    #[test]
    fn leading_block_is_removed() {
        let (answer, reasoning) = split("<think>\nI like e4.\n</think>\n\nMy move: e2e4");
        assert_eq!(answer, "My move: e2e4");
        assert_eq!(reasoning.as_deref(), Some("I like e4."));
    }

    #[test]
    fn several_blocks_are_joined() {
        let (answer, reasoning) = split("<think>a</think>first <think>b</think>second");
        assert_eq!(answer, "first second");
        assert_eq!(reasoning.as_deref(), Some("a\n\nb"));
    }

    #[test]
    fn empty_block_gives_no_reasoning() {
        // Qwen3 in non-thinking mode still emits an empty block.
        let (answer, reasoning) = split("<think>\n\n</think>\n\nd2d4");
        assert_eq!(answer, "d2d4");
        assert_eq!(reasoning, None);
    }

    #[test]
    fn unclosed_block_at_start_is_all_reasoning() {
        let (answer, reasoning) = split("\n<think>Let me consider Nf3 and");
        assert_eq!(answer, "");
        assert_eq!(reasoning.as_deref(), Some("Let me consider Nf3 and"));
    }

    #[test]
    fn closing_tag_without_opening_ends_reasoning() {
        let (answer, reasoning) = split("thinking about c4\n</think>\nc2c4");
        assert_eq!(answer, "c2c4");
        assert_eq!(reasoning.as_deref(), Some("thinking about c4"));
    }

    #[test]
    fn unclosed_tag_after_answer_text_is_kept() {
        let (answer, reasoning) = split("I write <think> tags sometimes");
        assert_eq!(answer, "I write <think> tags sometimes");
        assert_eq!(reasoning, None);
    }
}
