//! Caller-side operation-id journals: the id of an intended write is recorded **before its first send**, and a
//! second `begin` for the same intent returns the first entry — the same id — whatever its state: an id is
//! never replaced. The same contract as the npm package's `client/journal.js`.
//!
//! The trait is synchronous: a journal write is one short local operation (a map insert, a line appended and
//! flushed to disk), done once per call before the first send. [`MemoryJournal`] lives in the process;
//! [`FileJournal`] in a file that several processes may share (it locks the file around each operation).

use std::collections::HashMap;
use std::fmt;
use std::sync::{Mutex, MutexGuard};

use serde_json::{json, Map, Value};

pub use super::file_journal::FileJournal;
use crate::retry::FinalStatus;

/// One journaled operation.
///
/// ```
/// use mcp_retry_policy::rmcp::{Journal, JournalEntry, MemoryJournal};
///
/// let journal = MemoryJournal::new();
/// let entry = JournalEntry {
///     operation_id: "0b6f3c1e-8d2a-4f7e-9c3b-2a1d5e6f7a8b".into(),
///     tool: "create_ticket".into(),
///     server: Some("https://tickets.example.com/mcp".into()),
///     intent: Some("tool-call-1".into()),
///     arguments: None,
///     settled: None,
///     created_at_ms: 1_700_000_000_000,
///     settled_at_ms: None,
/// };
/// let kept = journal.begin(entry)?;
/// assert!(kept.is_unresolved());
/// # Ok::<(), mcp_retry_policy::rmcp::JournalError>(())
/// ```
#[derive(Clone, Debug, PartialEq)]
pub struct JournalEntry {
    /// The operation id sent with every attempt of this call.
    pub operation_id: String,
    /// The tool.
    pub tool: String,
    /// The server the write went to (the wrapper's `server` option), if known.
    pub server: Option<String>,
    /// The app's key for this one intended call (e.g. the model's tool-call id), if given.
    pub intent: Option<String>,
    /// The call's arguments, unless the wrapper was told not to keep them.
    pub arguments: Option<Map<String, Value>>,
    /// `None` while in flight (or after a crash); the final status once known.
    pub settled: Option<FinalStatus>,
    /// When it was begun (ms since the Unix epoch).
    pub created_at_ms: u64,
    /// When it was settled.
    pub settled_at_ms: Option<u64>,
}

impl JournalEntry {
    /// Whether its outcome is not known to be final: in flight, crashed, `pending` or `unknown`.
    ///
    /// ```
    /// use mcp_retry_policy::retry::FinalStatus;
    /// use mcp_retry_policy::rmcp::JournalEntry;
    ///
    /// let mut entry = JournalEntry {
    ///     operation_id: "op-0001-abcd".into(), tool: "pay".into(), server: None, intent: None,
    ///     arguments: None, settled: None, created_at_ms: 0, settled_at_ms: None,
    /// };
    /// assert!(entry.is_unresolved()); // in flight, or the process died
    /// entry.settled = Some(FinalStatus::Unknown);
    /// assert!(entry.is_unresolved());
    /// entry.settled = Some(FinalStatus::Succeeded);
    /// assert!(!entry.is_unresolved());
    /// ```
    pub fn is_unresolved(&self) -> bool {
        matches!(self.settled, None | Some(FinalStatus::Pending | FinalStatus::Unknown))
    }

    pub(super) fn to_json(&self) -> Value {
        json!({
            "operationId": self.operation_id,
            "tool": self.tool,
            "server": self.server,
            "intent": self.intent,
            "arguments": self.arguments,
            "state": self.settled.map_or("pending", FinalStatus::as_str),
            "createdAt": self.created_at_ms,
            "settledAt": self.settled_at_ms,
        })
    }

    pub(super) fn from_json(v: &Value) -> Option<JournalEntry> {
        let text = |k: &str| v.get(k).and_then(Value::as_str).map(str::to_string);
        let state = v.get("state").and_then(Value::as_str)?;
        let settled = match state {
            "pending" if v.get("settledAt").map_or(true, Value::is_null) => None,
            s => Some(FinalStatus::ALL.into_iter().find(|f| f.as_str() == s)?),
        };
        Some(JournalEntry {
            operation_id: text("operationId")?,
            tool: text("tool")?,
            server: text("server"),
            intent: text("intent"),
            arguments: v.get("arguments").and_then(Value::as_object).cloned(),
            settled,
            created_at_ms: v.get("createdAt").and_then(Value::as_u64).unwrap_or(0),
            settled_at_ms: v.get("settledAt").and_then(Value::as_u64),
        })
    }
}

/// Why a journal operation failed.
///
/// ```
/// use mcp_retry_policy::rmcp::JournalError;
///
/// let e = JournalError::new("disk full");
/// assert_eq!(e.to_string(), "journal: disk full");
/// ```
#[derive(Debug)]
pub struct JournalError(String);

impl JournalError {
    /// An error with this description (for a [`Journal`] of your own).
    ///
    /// ```
    /// use mcp_retry_policy::rmcp::JournalError;
    ///
    /// let e = JournalError::new("the journal's database is read-only");
    /// # let _ = e;
    /// ```
    pub fn new(message: impl Into<String>) -> Self {
        JournalError(message.into())
    }
}

impl fmt::Display for JournalError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "journal: {}", self.0)
    }
}

impl std::error::Error for JournalError {}

/// Where a retrying client keeps its operation ids.
///
/// A journal in your own storage — here one that delegates to a [`MemoryJournal`] and logs each id it keeps:
/// ```
/// use std::sync::Arc;
/// use mcp_retry_policy::retry::FinalStatus;
/// use mcp_retry_policy::rmcp::{Journal, JournalEntry, JournalError, MemoryJournal};
///
/// #[derive(Default)]
/// struct Logged(MemoryJournal);
///
/// impl Journal for Logged {
///     fn begin(&self, entry: JournalEntry) -> Result<JournalEntry, JournalError> {
///         let kept = self.0.begin(entry)?;
///         eprintln!("journaled {} for {}", kept.operation_id, kept.tool);
///         Ok(kept)
///     }
///     fn settle(&self, id: &str, status: FinalStatus, at_ms: u64) -> Result<Option<JournalEntry>, JournalError> {
///         self.0.settle(id, status, at_ms)
///     }
///     fn get(&self, id: &str) -> Result<Option<JournalEntry>, JournalError> {
///         self.0.get(id)
///     }
///     fn pending(&self) -> Result<Vec<JournalEntry>, JournalError> {
///         self.0.pending()
///     }
/// }
///
/// let journal: Arc<dyn Journal> = Arc::new(Logged::default()); // `RetryClient::journal(journal)`
/// # let _ = journal;
/// ```
pub trait Journal: Send + Sync {
    /// Records `entry` (state: in flight) before its first send and returns it — or, when its intent (or its
    /// id) is already journaled, the existing entry unchanged: an id is never replaced.
    fn begin(&self, entry: JournalEntry) -> Result<JournalEntry, JournalError>;
    /// Marks the outcome once known. `None` when the id is not journaled.
    fn settle(
        &self,
        operation_id: &str,
        status: FinalStatus,
        settled_at_ms: u64,
    ) -> Result<Option<JournalEntry>, JournalError>;
    /// The entry for an id.
    fn get(&self, operation_id: &str) -> Result<Option<JournalEntry>, JournalError>;
    /// Entries whose outcome is not known to be final ([`JournalEntry::is_unresolved`]).
    fn pending(&self) -> Result<Vec<JournalEntry>, JournalError>;
}

/// The entries by id and by intent, in the order they were begun.
#[derive(Default)]
pub(super) struct Entries {
    by_id: HashMap<String, JournalEntry>,
    by_intent: HashMap<String, String>,
    order: Vec<String>,
}

impl Entries {
    pub(super) fn existing(&self, e: &JournalEntry) -> Option<&JournalEntry> {
        e.intent
            .as_ref()
            .and_then(|i| self.by_intent.get(i))
            .and_then(|id| self.by_id.get(id))
            .or_else(|| self.by_id.get(&e.operation_id))
    }

    pub(super) fn put(&mut self, mut e: JournalEntry) -> JournalEntry {
        if !self.by_id.contains_key(&e.operation_id) {
            self.order.push(e.operation_id.clone());
        }
        if let Some(i) = &e.intent {
            self.by_intent.insert(i.clone(), e.operation_id.clone());
        }
        e.settled = e.settled.filter(|_| e.settled_at_ms.is_some());
        self.by_id.insert(e.operation_id.clone(), e.clone());
        e
    }

    pub(super) fn get(&self, id: &str) -> Option<&JournalEntry> {
        self.by_id.get(id)
    }

    pub(super) fn pending(&self) -> Vec<JournalEntry> {
        self.order.iter().filter_map(|id| self.by_id.get(id)).filter(|e| e.is_unresolved()).cloned().collect()
    }
}

pub(super) fn check(e: &JournalEntry) -> Result<(), JournalError> {
    if e.operation_id.is_empty() || e.tool.is_empty() {
        return Err(JournalError::new("an entry needs an operation id and a tool"));
    }
    Ok(())
}

pub(super) fn lock<T>(m: &Mutex<T>) -> MutexGuard<'_, T> {
    m.lock().unwrap_or_else(std::sync::PoisonError::into_inner)
}

/// In memory: lost with the process. The default.
///
/// ```
/// use std::sync::Arc;
/// use mcp_retry_policy::rmcp::{Journal, MemoryJournal};
///
/// let journal: Arc<dyn Journal> = Arc::new(MemoryJournal::new());
/// assert!(journal.pending()?.is_empty());
/// # Ok::<(), mcp_retry_policy::rmcp::JournalError>(())
/// ```
#[derive(Default)]
pub struct MemoryJournal {
    entries: Mutex<Entries>,
}

impl MemoryJournal {
    /// An empty journal.
    ///
    /// ```
    /// use mcp_retry_policy::rmcp::MemoryJournal;
    ///
    /// let journal = MemoryJournal::new();
    /// # let _ = journal;
    /// ```
    pub fn new() -> Self {
        Self::default()
    }
}

impl Journal for MemoryJournal {
    fn begin(&self, entry: JournalEntry) -> Result<JournalEntry, JournalError> {
        check(&entry)?;
        let mut g = lock(&self.entries);
        if let Some(e) = g.existing(&entry) {
            return Ok(e.clone());
        }
        Ok(g.put(JournalEntry { settled: None, settled_at_ms: None, ..entry }))
    }

    fn settle(&self, id: &str, status: FinalStatus, at: u64) -> Result<Option<JournalEntry>, JournalError> {
        let mut g = lock(&self.entries);
        let Some(mut e) = g.by_id.get(id).cloned() else { return Ok(None) };
        e.settled = Some(status);
        e.settled_at_ms = Some(at);
        Ok(Some(g.put(e)))
    }

    fn get(&self, id: &str) -> Result<Option<JournalEntry>, JournalError> {
        Ok(lock(&self.entries).by_id.get(id).cloned())
    }

    fn pending(&self) -> Result<Vec<JournalEntry>, JournalError> {
        Ok(lock(&self.entries).pending())
    }
}

#[cfg(test)]
pub(crate) mod tests {
    use super::*;

    pub(crate) fn entry(id: &str, intent: Option<&str>) -> JournalEntry {
        JournalEntry {
            operation_id: id.into(),
            tool: "create_ticket".into(),
            server: None,
            intent: intent.map(str::to_string),
            arguments: None,
            settled: None,
            created_at_ms: 1,
            settled_at_ms: None,
        }
    }

    pub(crate) fn contract(j: &dyn Journal) {
        let first = j.begin(entry("a", Some("intent-1"))).ok();
        assert_eq!(first.as_ref().map(|e| e.operation_id.as_str()), Some("a"));
        // The same intent: the first id, never a new one — also after it settled.
        let again = j.begin(entry("b", Some("intent-1"))).ok();
        assert_eq!(again.map(|e| e.operation_id), Some("a".to_string()));
        assert!(j.settle("a", FinalStatus::Succeeded, 5).ok().flatten().is_some());
        let after = j.begin(entry("c", Some("intent-1"))).ok();
        assert_eq!(after.map(|e| e.operation_id), Some("a".to_string()));
        assert!(j.begin(entry("d", None)).is_ok());
        assert!(j.settle("d", FinalStatus::Unknown, 6).is_ok());
        let pending: Vec<String> = j.pending().unwrap_or_default().into_iter().map(|e| e.operation_id).collect();
        assert_eq!(pending, vec!["d".to_string()]);
        assert!(j.settle("nope", FinalStatus::Failed, 7).ok().flatten().is_none());
        assert!(j.begin(entry("", None)).is_err());
    }

    #[test]
    fn memory_journal_keeps_the_contract() {
        contract(&MemoryJournal::new());
    }
}
