//! Runs the reference scripts under `tests/reference/`: short Python programs written from each
//! method's own text (not from arena's code), which tests use as a second, independent route to
//! a figure arena prints under the method's name.

use std::{
    io::Write,
    process::{Command, Stdio},
};

/// Runs `tests/reference/<script>` with `input` as JSON on stdin and returns its JSON output, or
/// `None` after [`crate::test_parts::missing`] when python3 cannot be started.
///
/// # Panics
/// When the script fails or prints something that is not JSON.
pub fn run(test: &str, script: &str, input: &serde_json::Value) -> Option<serde_json::Value> {
    let path = format!(
        "{}/tests/reference/{script}",
        concat!(env!("CARGO_MANIFEST_DIR"), "/../..")
    );
    let child = Command::new("python3")
        .arg(&path)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn();
    let Ok(mut child) = child else {
        crate::test_parts::missing(test, "python3", "apt-get install python3");
        return None;
    };
    child
        .stdin
        .take()
        .expect("a piped stdin")
        .write_all(input.to_string().as_bytes())
        .expect("the script reads its input");
    let out = child.wait_with_output().expect("the script ends");
    assert!(
        out.status.success(),
        "{path} failed: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    Some(serde_json::from_slice(&out.stdout).unwrap_or_else(|e| panic!("{path}: {e}")))
}
