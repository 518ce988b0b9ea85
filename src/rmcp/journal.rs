//! Caller-side operation-id journals: the id of an intended write is recorded **before its first send**, and a
//! second `begin` for the same intent returns the first entry — the same id — whatever its state: an id is
//! never replaced. The same contract as the npm package's `client/journal.js`.
//!
//! The trait is synchronous: a journal write is one short local operation (a map insert, a line appended and
//! flushed to disk), done once per call before the first send.

use std::collections::HashMap;
use std::fmt;
use std::fs::{File, OpenOptions};
use std::io::{BufRead, BufReader, Read, Seek, SeekFrom, Write};
use std::path::{Path, PathBuf};
use std::sync::{Mutex, MutexGuard};

use serde_json::{json, Map, Value};

use crate::retry::FinalStatus;

/// One journaled operation.
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
    pub fn is_unresolved(&self) -> bool {
        matches!(self.settled, None | Some(FinalStatus::Pending | FinalStatus::Unknown))
    }

    fn to_json(&self) -> Value {
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

    fn from_json(v: &Value) -> Option<JournalEntry> {
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
#[derive(Debug)]
pub struct JournalError(String);

impl JournalError {
    /// An error with this description.
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

#[derive(Default)]
struct Entries {
    by_id: HashMap<String, JournalEntry>,
    by_intent: HashMap<String, String>,
    order: Vec<String>,
}

impl Entries {
    fn existing(&self, e: &JournalEntry) -> Option<&JournalEntry> {
        e.intent
            .as_ref()
            .and_then(|i| self.by_intent.get(i))
            .and_then(|id| self.by_id.get(id))
            .or_else(|| self.by_id.get(&e.operation_id))
    }

    fn put(&mut self, mut e: JournalEntry) -> JournalEntry {
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

    fn pending(&self) -> Vec<JournalEntry> {
        self.order.iter().filter_map(|id| self.by_id.get(id)).filter(|e| e.is_unresolved()).cloned().collect()
    }
}

fn check(e: &JournalEntry) -> Result<(), JournalError> {
    if e.operation_id.is_empty() || e.tool.is_empty() {
        return Err(JournalError::new("an entry needs an operation id and a tool"));
    }
    Ok(())
}

fn lock<T>(m: &Mutex<T>) -> MutexGuard<'_, T> {
    m.lock().unwrap_or_else(std::sync::PoisonError::into_inner)
}

/// In memory: lost with the process. The default.
#[derive(Default)]
pub struct MemoryJournal {
    entries: Mutex<Entries>,
}

impl MemoryJournal {
    /// An empty journal.
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

/// In a file: one JSON line per change (the entry as it now is), appended and flushed to disk (`fsync`) before
/// `begin` returns, so an id survives a crash of the process right after it was created. Read back in full when
/// opened (the last line for an id wins; a torn last line from a crash is skipped).
pub struct FileJournal {
    path: PathBuf,
    state: Mutex<(Entries, File)>,
}

impl FileJournal {
    /// Opens (or creates) the journal at `path`.
    pub fn open(path: impl AsRef<Path>) -> Result<Self, JournalError> {
        let path = path.as_ref().to_path_buf();
        let io = |e: std::io::Error| JournalError::new(format!("{}: {e}", path.display()));
        let mut entries = Entries::default();
        let mut torn = false;
        if let Ok(f) = File::open(&path) {
            for line in BufReader::new(f).split(b'\n') {
                let line = line.map_err(io)?;
                match serde_json::from_slice::<Value>(&line).ok().as_ref().and_then(JournalEntry::from_json) {
                    Some(e) => {
                        entries.put(e);
                        torn = false;
                    }
                    None => torn = !line.is_empty(),
                }
            }
        }
        // Read as well: each write first looks at the file's last byte (`write`).
        let mut file = OpenOptions::new().create(true).read(true).append(true).open(&path).map_err(io)?;
        if torn {
            // End the torn line, so that the next entry starts on a line of its own.
            file.write_all(b"\n").map_err(io)?;
        }
        Ok(FileJournal { path, state: Mutex::new((entries, file)) })
    }

    /// The file.
    pub fn path(&self) -> &Path {
        &self.path
    }

    fn write(&self, file: &mut File, e: &JournalEntry) -> Result<(), JournalError> {
        let io = |err: std::io::Error| JournalError::new(format!("{}: {err}", self.path.display()));
        // A write that failed half-way (a full disk, an I/O error) left a partial line: this entry starts on a
        // line of its own, or it would be glued to that fragment and lost on the next open.
        let mut line = if ends_mid_line(file).map_err(io)? { "\n".to_string() } else { String::new() };
        line.push_str(&e.to_json().to_string());
        line.push('\n');
        file.write_all(line.as_bytes()).map_err(io)?;
        file.sync_data().map_err(io)
    }
}

/// Whether `file` ends in the middle of a line (not empty, its last byte not a newline). Appends always go to
/// the end whatever the read position.
fn ends_mid_line(file: &mut File) -> std::io::Result<bool> {
    if file.metadata()?.len() == 0 {
        return Ok(false);
    }
    file.seek(SeekFrom::End(-1))?;
    let mut last = [0u8; 1];
    file.read_exact(&mut last)?;
    Ok(last != *b"\n")
}

impl Journal for FileJournal {
    fn begin(&self, entry: JournalEntry) -> Result<JournalEntry, JournalError> {
        check(&entry)?;
        let mut g = lock(&self.state);
        let (entries, file) = &mut *g;
        if let Some(e) = entries.existing(&entry) {
            return Ok(e.clone());
        }
        let e = JournalEntry { settled: None, settled_at_ms: None, ..entry };
        // On disk first: an id that is not persisted is never handed out.
        self.write(file, &e)?;
        Ok(entries.put(e))
    }

    fn settle(&self, id: &str, status: FinalStatus, at: u64) -> Result<Option<JournalEntry>, JournalError> {
        let mut g = lock(&self.state);
        let (entries, file) = &mut *g;
        let Some(mut e) = entries.by_id.get(id).cloned() else { return Ok(None) };
        e.settled = Some(status);
        e.settled_at_ms = Some(at);
        self.write(file, &e)?;
        Ok(Some(entries.put(e)))
    }

    fn get(&self, id: &str) -> Result<Option<JournalEntry>, JournalError> {
        Ok(lock(&self.state).0.by_id.get(id).cloned())
    }

    fn pending(&self) -> Result<Vec<JournalEntry>, JournalError> {
        Ok(lock(&self.state).0.pending())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn entry(id: &str, intent: Option<&str>) -> JournalEntry {
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

    fn contract(j: &dyn Journal) {
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

    #[test]
    fn file_journal_keeps_the_contract_and_survives_a_reopen() {
        let dir = std::env::temp_dir().join(format!("mrp-journal-{}", std::process::id()));
        let _ = std::fs::create_dir_all(&dir);
        let path = dir.join("j.jsonl");
        let _ = std::fs::remove_file(&path);
        let j = FileJournal::open(&path);
        assert!(j.is_ok(), "open");
        if let Ok(j) = j {
            contract(&j);
        }
        // A torn last line (a crash mid-write) is skipped.
        if let Ok(mut f) = OpenOptions::new().append(true).open(&path) {
            let _ = f.write_all(b"{\"operationId\":\"e\",\"to");
        }
        let reopened = FileJournal::open(&path).ok();
        let j = reopened.as_ref().map(|j| j as &dyn Journal);
        let e = j.and_then(|j| j.begin(entry("z", Some("intent-1"))).ok());
        assert_eq!(e.map(|e| e.operation_id), Some("a".to_string()), "the intent's id survives a restart");
        let pending = j.and_then(|j| j.pending().ok()).unwrap_or_default();
        assert_eq!(pending.len(), 1);
        let _ = std::fs::remove_dir_all(&dir);
    }

    #[test]
    fn an_entry_after_a_write_that_failed_half_way_survives_a_reopen() {
        let dir = std::env::temp_dir().join(format!("mrp-journal-half-{}", std::process::id()));
        let _ = std::fs::create_dir_all(&dir);
        let path = dir.join("j.jsonl");
        let _ = std::fs::remove_file(&path);
        let j = FileJournal::open(&path).ok();
        assert!(j.as_ref().is_some_and(|j| j.begin(entry("a", Some("intent-a"))).is_ok()), "open, begin");
        // A write that failed half-way while the journal is open: its partial line stays in the file.
        let torn =
            OpenOptions::new().append(true).open(&path).and_then(|mut f| f.write_all(b"{\"operationId\":\"x\",\"to"));
        assert!(torn.is_ok(), "{torn:?}");
        let b = j.as_ref().and_then(|j| j.begin(entry("b", Some("intent-b"))).ok());
        assert_eq!(b.map(|e| e.operation_id), Some("b".to_string()));
        drop(j);
        // Reopened (a restart): the intent's id comes back — not a new one, which would be a second write.
        let j = FileJournal::open(&path).ok();
        let again = j.as_ref().and_then(|j| j.begin(entry("c", Some("intent-b"))).ok());
        assert_eq!(again.map(|e| e.operation_id), Some("b".to_string()), "the intent's id survives the partial line");
        assert!(j.as_ref().and_then(|j| j.settle("b", FinalStatus::Succeeded, 9).ok().flatten()).is_some());
        drop(j);
        let j = FileJournal::open(&path).ok();
        let get = |id: &str| j.as_ref().and_then(|j| j.get(id).ok().flatten());
        assert_eq!(get("b").and_then(|e| e.settled), Some(FinalStatus::Succeeded));
        assert!(get("a").is_some());
        let _ = std::fs::remove_dir_all(&dir);
    }
}
