//! What an evaluation needs from its scripts: a [`Task`] turns an item into a prompt and a reply
//! into an answer; an [`Evaluation`] is a loaded evaluation script; an [`EvalHost`] loads them.
//!
//! The built-in tasks are Lua scripts (`crates/lua` implements these traits); the evaluation runner
//! knows only the traits.

use std::path::Path;

use super::spec::{EvalSpec, TaskSpec};
use crate::{
    llm::ChatMessage,
    script::{CheckErrors, ScriptError},
};

/// Options as JSON: the task's defaults overlaid with the script's.
pub type Options = serde_json::Map<String, serde_json::Value>;

/// What a task's `parse` made of a reply.
#[derive(Debug, Clone, PartialEq)]
pub enum Parsed {
    /// The answer, as JSON.
    Answer(serde_json::Value),
    /// No usable answer: the error the hook returned (`{kind, message}` or a string), as JSON.
    Failed(serde_json::Value),
}

/// A task module bound to its options.
pub trait Task: Send {
    /// The effective options.
    fn options(&self) -> &Options;

    /// The messages that ask `item`; `ctx` says who asks and how (`ctx.options` is set to the
    /// effective options).
    ///
    /// # Errors
    /// A script error, or a result that is not a non-empty list of messages.
    fn prompt(
        &self,
        item: &serde_json::Value,
        ctx: &serde_json::Value,
    ) -> Result<Vec<ChatMessage>, ScriptError>;

    /// What `reply` answers.
    ///
    /// # Errors
    /// A script error.
    fn parse(
        &self,
        reply: &str,
        item: &serde_json::Value,
        ctx: &serde_json::Value,
    ) -> Result<Parsed, ScriptError>;

    /// The message after a refused answer (a puzzle's retry).
    ///
    /// # Errors
    /// A script error.
    fn feedback(
        &self,
        err: &serde_json::Value,
        item: &serde_json::Value,
        ctx: &serde_json::Value,
    ) -> Result<String, ScriptError>;
}

/// A loaded, validated evaluation script.
pub trait Evaluation: Send + Sync {
    /// What the script asks for.
    fn spec(&self) -> &EvalSpec;

    /// The task module of `task`, fresh, as the script loaded it.
    ///
    /// # Errors
    /// When the module no longer loads (a resource limit).
    fn task(&self, task: &TaskSpec) -> Result<Box<dyn Task>, ScriptError>;
}

/// Loads evaluation scripts and task modules.
pub trait EvalHost: Send + Sync {
    /// Loads and validates the evaluation script at `entry`.
    ///
    /// # Errors
    /// Every problem found, each at `file:line` where known.
    fn load_evaluation(&self, entry: &Path) -> Result<Box<dyn Evaluation>, CheckErrors>;

    /// Loads task `module` from disk (the folder `dir` first, then the built-ins) with
    /// `options`: for re-scoring stored replies with the current task scripts.
    ///
    /// # Errors
    /// A missing module or hook, or an unknown option.
    fn task_from_disk(
        &self,
        dir: &Path,
        module: &str,
        options: &Options,
    ) -> Result<Box<dyn Task>, ScriptError>;
}
