//! The status tool as both faces serve it: its name, description, input schema and annotations, and the sentence
//! the model reads for each answer. The JS `statusTool`/`registerStatusTool` read them from the generated
//! `names.js` (`STATUS_TOOL`, `STATUS_WORDS`), the Rust `StatusTool` from here: one text, two faces.

use super::record::OPERATION_STATUSES;

/// The status tool's default name.
pub const NAME: &str = "operation_status";

/// What the model reads about the tool.
pub const DESCRIPTION: &str = "Reports what happened to an earlier write, by the operation id it was sent with: \
succeeded (with its result), failed, still in progress, not done, not found, or unknown. Read-only: it never runs \
the write. Use it instead of calling a write again with a new id.";

/// Its arguments, as JSON Schema: `{ action, operation_id }`.
pub const INPUT_SCHEMA: &str = r#"{"type":"object","properties":{"action":{"type":"string","minLength":1,"maxLength":256,"description":"The tool (action) the operation was sent to."},"operation_id":{"type":"string","description":"The operation id the write was sent with."}},"required":["action","operation_id"]}"#;

/// Its annotations: read-only, idempotent, closed-world.
pub const ANNOTATIONS: &str =
    r#"{"readOnlyHint":true,"idempotentHint":true,"destructiveHint":false,"openWorldHint":false}"#;

/// What the model reads for an answer of `status` (one of [`OPERATION_STATUSES`]; anything else reads as
/// `unknown`): `{id}` stands for the operation id, `{seconds}` for the wait ([`wait_seconds`]).
pub fn words_template(status: &str) -> &'static str {
    match status {
        "not_found" => "No record of operation {id}: the server never received it, or it finished long ago and its record was purged. This does not prove it did not happen. Calling the tool again with the same operation id does it at most once.",
        "not_done" => "Operation {id} did not take effect. Calling the tool again with the same operation id does it now.",
        "in_progress" => "Operation {id} is still running. Ask again in about {seconds} s; do not call the tool again with a new operation id.",
        "succeeded" => "Operation {id} succeeded; its result is attached, exactly as it was first returned.",
        "failed" => "Operation {id} ran and reported an error; its result is attached.",
        _ => "The outcome of operation {id} is unknown to the server too: it may or may not have taken effect. Do not call the tool again with a new operation id.",
    }
}

/// Each answer's sentence template, in [`OPERATION_STATUSES`]' order.
pub fn words_templates() -> [(&'static str, &'static str); 6] {
    OPERATION_STATUSES.map(|s| (s, words_template(s)))
}

/// The wait an `in_progress` answer suggests, in whole seconds for the model: rounded, at least 1.
pub const fn wait_seconds(retry_after_ms: u64) -> u64 {
    let s = retry_after_ms.saturating_add(500) / 1000;
    if s == 0 {
        1
    } else {
        s
    }
}

/// The sentence for an answer: the template of `status` with the operation id and the wait filled in.
pub fn words(status: &str, operation_id: &str, retry_after_ms: Option<u64>) -> String {
    let seconds = wait_seconds(retry_after_ms.unwrap_or(0));
    words_template(status).replace("{id}", operation_id).replace("{seconds}", &seconds.to_string())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_status_has_its_own_words_and_the_wait_rounds_to_at_least_a_second() {
        let all = words_templates();
        for (i, (s, w)) in all.iter().enumerate() {
            assert!(w.contains("{id}"), "{s}");
            assert!(all.iter().skip(i + 1).all(|(_, other)| other != w), "{s} shares its words");
        }
        assert_eq!(wait_seconds(0), 1);
        assert_eq!(wait_seconds(1_499), 1);
        assert_eq!(wait_seconds(1_500), 2);
        assert_eq!(words("in_progress", "op-1", Some(2_400)), "Operation op-1 is still running. Ask again in about 2 s; do not call the tool again with a new operation id.");
        assert_eq!(words("nonsense", "op-1", None), words("unknown", "op-1", None));
    }
}
