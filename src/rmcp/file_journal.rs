//! [`FileJournal`]: the operation-id journal in a file, safe to share between processes.
//!
//! Each operation takes an advisory lock on the file (`flock` on Unix, `LockFileEx` on Windows: std's
//! `File::lock`), reads what other openers appended since it last looked, then — for `begin` and `settle`,
//! under the exclusive lock — appends its line and flushes it to disk before the lock is let go. So two
//! processes (or two journals in one) that begin the same intent get the same operation id: the second reads
//! the first's line before it decides. Locking around each operation rather than for the journal's whole life
//! lets a restarted client open its journal while the old process is still shutting down, and lets several
//! workers share one journal, at the cost of one lock and a read of the new lines per operation (the `fsync`
//! costs more). The file is created readable and writable by its owner only (0600 on Unix): it holds the
//! calls' arguments.

use std::fs::{File, OpenOptions};
use std::io::{Read, Seek, SeekFrom, Write};
use std::path::{Path, PathBuf};
use std::sync::Mutex;

use serde_json::Value;

use super::journal::{check, lock, Entries, Journal, JournalEntry, JournalError};
use crate::retry::FinalStatus;

/// In a file: one JSON line per change (the entry as it now is), appended and flushed to disk (`fsync`) before
/// `begin` returns, so an id survives a crash of the process right after it was created. Every operation
/// locks the file and first reads the lines appended since (the last line for an id wins; a torn line from a
/// crash is skipped), so openers in several processes share it: one intent, one id (see the module docs).
///
/// ```
/// use mcp_retry_policy::rmcp::{FileJournal, Journal};
///
/// let path = std::env::temp_dir().join(format!("doc-file-journal-{}.jsonl", std::process::id()));
/// let journal = FileJournal::open(&path)?; // e.g. ~/.local/state/my-agent/journal.jsonl
/// // A restarted agent: the operations it does not know the end of.
/// for entry in journal.pending()? {
///     println!("{} {}: look it up before calling again", entry.tool, entry.operation_id);
/// }
/// # let _ = std::fs::remove_file(&path);
/// # Ok::<(), mcp_retry_policy::rmcp::JournalError>(())
/// ```
pub struct FileJournal {
    path: PathBuf,
    state: Mutex<Opened>,
}

/// The file and what has been read of it.
struct Opened {
    entries: Entries,
    file: File,
    /// How many bytes of the file `entries` has read.
    read: u64,
}

/// Which lock an operation takes.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Lock {
    /// A read (`get`, `pending`).
    Shared,
    /// A write (`begin`, `settle`).
    Exclusive,
}

impl FileJournal {
    /// Opens (or creates, 0600 on Unix) the journal at `path` and reads it.
    ///
    /// ```
    /// use std::sync::Arc;
    /// use mcp_retry_policy::rmcp::FileJournal;
    ///
    /// let path = std::env::temp_dir().join(format!("doc-open-journal-{}.jsonl", std::process::id()));
    /// let journal = Arc::new(FileJournal::open(&path)?); // `RetryClient::journal(journal)`
    /// # drop(journal);
    /// # let _ = std::fs::remove_file(&path);
    /// # Ok::<(), mcp_retry_policy::rmcp::JournalError>(())
    /// ```
    pub fn open(path: impl AsRef<Path>) -> Result<Self, JournalError> {
        let path = path.as_ref().to_path_buf();
        let mut options = OpenOptions::new();
        // Read as well: each operation reads the lines appended since it last looked.
        options.create(true).read(true).append(true);
        #[cfg(unix)]
        std::os::unix::fs::OpenOptionsExt::mode(&mut options, 0o600);
        let file = options.open(&path).map_err(|e| io_error(&path, &e))?;
        let journal = FileJournal { path, state: Mutex::new(Opened { entries: Entries::default(), file, read: 0 }) };
        // Read in full now: a journal that cannot be read (or locked) fails here, not on the first call.
        journal.locked(Lock::Shared, |_| Ok(()))?;
        Ok(journal)
    }

    /// The file.
    ///
    /// ```
    /// use mcp_retry_policy::rmcp::FileJournal;
    ///
    /// let path = std::env::temp_dir().join(format!("doc-path-journal-{}.jsonl", std::process::id()));
    /// let journal = FileJournal::open(&path)?;
    /// assert_eq!(journal.path(), path.as_path());
    /// # let _ = std::fs::remove_file(&path);
    /// # Ok::<(), mcp_retry_policy::rmcp::JournalError>(())
    /// ```
    pub fn path(&self) -> &Path {
        &self.path
    }

    fn io(&self, e: &std::io::Error) -> JournalError {
        io_error(&self.path, e)
    }

    /// Runs `f` under the file's `how` lock, after reading the lines other openers appended.
    // std's `File::lock` family (Rust 1.89): the crate's `rust-version` is the core's; the `rmcp` feature
    // already needs a newer Rust (rmcp 3.11 needs 1.88), and this one lock is all it adds.
    #[clippy::msrv = "1.89"]
    fn locked<T>(&self, how: Lock, f: impl FnOnce(&mut Opened) -> Result<T, JournalError>) -> Result<T, JournalError> {
        let mut g = lock(&self.state);
        let opened = &mut *g;
        let locking = match how {
            Lock::Shared => opened.file.lock_shared(),
            Lock::Exclusive => opened.file.lock(),
        };
        locking.map_err(|e| self.io(&e))?;
        let out = opened.catch_up().map_err(|e| self.io(&e)).and_then(|()| f(opened));
        let unlocked = opened.file.unlock().map_err(|e| self.io(&e));
        let out = out?;
        unlocked?;
        Ok(out)
    }

    /// Appends `e`'s line and flushes it to disk (under the exclusive lock), then keeps it.
    fn write(&self, opened: &mut Opened, e: JournalEntry) -> Result<JournalEntry, JournalError> {
        let file = &mut opened.file;
        // A write that failed half-way (a full disk, an I/O error, a crash) left a partial line: this entry
        // starts on a line of its own, or it would be glued to that fragment and lost on the next read.
        let mut line = if ends_mid_line(file).map_err(|e| self.io(&e))? { "\n".to_string() } else { String::new() };
        line.push_str(&e.to_json().to_string());
        line.push('\n');
        file.write_all(line.as_bytes()).map_err(|e| self.io(&e))?;
        file.sync_data().map_err(|e| self.io(&e))?;
        // Nobody else wrote meanwhile (the exclusive lock): this line is read.
        opened.read = file.metadata().map_err(|e| self.io(&e))?.len();
        Ok(opened.entries.put(e))
    }
}

fn io_error(path: &Path, e: &std::io::Error) -> JournalError {
    JournalError::new(format!("{}: {e}", path.display()))
}

impl Opened {
    /// Reads the lines appended since the last look (all of them if the file got shorter: it was replaced).
    /// A last line without its newline is a torn write (writers hold the exclusive lock until their line is
    /// whole): skipped, and the next write starts on a fresh line.
    fn catch_up(&mut self) -> std::io::Result<()> {
        let len = self.file.metadata()?.len();
        if len < self.read {
            self.entries = Entries::default();
            self.read = 0;
        }
        if len == self.read {
            return Ok(());
        }
        self.file.seek(SeekFrom::Start(self.read))?;
        let mut bytes = Vec::new();
        self.file.read_to_end(&mut bytes)?;
        for line in bytes.split(|b| *b == b'\n') {
            if let Some(e) = serde_json::from_slice::<Value>(line).ok().as_ref().and_then(JournalEntry::from_json) {
                self.entries.put(e);
            }
        }
        self.read = self.read.saturating_add(u64::try_from(bytes.len()).unwrap_or(u64::MAX));
        Ok(())
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
        self.locked(Lock::Exclusive, |opened| {
            if let Some(e) = opened.entries.existing(&entry) {
                return Ok(e.clone());
            }
            // On disk first: an id that is not persisted is never handed out.
            self.write(opened, JournalEntry { settled: None, settled_at_ms: None, ..entry })
        })
    }

    fn settle(&self, id: &str, status: FinalStatus, at: u64) -> Result<Option<JournalEntry>, JournalError> {
        self.locked(Lock::Exclusive, |opened| {
            let Some(mut e) = opened.entries.get(id).cloned() else { return Ok(None) };
            e.settled = Some(status);
            e.settled_at_ms = Some(at);
            self.write(opened, e).map(Some)
        })
    }

    fn get(&self, id: &str) -> Result<Option<JournalEntry>, JournalError> {
        self.locked(Lock::Shared, |opened| Ok(opened.entries.get(id).cloned()))
    }

    fn pending(&self) -> Result<Vec<JournalEntry>, JournalError> {
        self.locked(Lock::Shared, |opened| Ok(opened.entries.pending()))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::rmcp::journal::tests::{contract, entry};

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

    #[test]
    fn openers_racing_on_one_intent_get_one_id() {
        let dir = std::env::temp_dir().join(format!("mrp-journal-race-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        let _ = std::fs::create_dir_all(&dir);
        let path = dir.join("j.jsonl");
        // Two openers on two threads (two open files: the lock is the file's, as between processes) begin each
        // intent at once, each with an id of its own: the lock makes read-then-append one step, so each intent
        // keeps one id.
        let rounds = 200;
        let barrier = std::sync::Barrier::new(2);
        let ids: Vec<Vec<Option<String>>> = std::thread::scope(|s| {
            let racers: Vec<_> = ["x", "y"]
                .into_iter()
                .map(|who| {
                    let (path, barrier) = (&path, &barrier);
                    s.spawn(move || {
                        let j = FileJournal::open(path).ok();
                        (0..rounds)
                            .map(|n| {
                                barrier.wait();
                                let e = entry(&format!("id-{who}-{n}"), Some(&format!("intent-{n}")));
                                j.as_ref().and_then(|j| j.begin(e).ok()).map(|e| e.operation_id)
                            })
                            .collect()
                    })
                })
                .collect();
            racers.into_iter().map(|r| r.join().unwrap_or_default()).collect()
        });
        let [x, y] = ids.as_slice() else { return assert_eq!(ids.len(), 2) };
        assert_eq!(x.len(), rounds);
        let split: Vec<_> = x.iter().zip(y).enumerate().filter(|(_, (a, b))| a.is_none() || a != b).collect();
        assert!(split.is_empty(), "intents given two ids (or none): {split:?}");
        let _ = std::fs::remove_dir_all(&dir);
    }

    #[test]
    fn two_opens_of_one_journal_give_an_intent_one_id() {
        let dir = std::env::temp_dir().join(format!("mrp-journal-two-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        let _ = std::fs::create_dir_all(&dir);
        let path = dir.join("j.jsonl");
        // Two openers of one file (two processes, or two journals in one): each begin sees what the other wrote.
        let (a, b) = (FileJournal::open(&path), FileJournal::open(&path));
        assert!(a.is_ok() && b.is_ok(), "both open");
        let (Ok(a), Ok(b)) = (a, b) else { return };
        assert_eq!(a.begin(entry("id-a", Some("intent-1"))).ok().map(|e| e.operation_id).as_deref(), Some("id-a"));
        let second = b.begin(entry("id-b", Some("intent-1"))).ok().map(|e| e.operation_id);
        assert_eq!(second.as_deref(), Some("id-a"), "one intent, one operation id");
        // The other way round, and what one settles the other reads.
        assert!(b.begin(entry("id-c", Some("intent-2"))).is_ok());
        assert_eq!(a.begin(entry("id-d", Some("intent-2"))).ok().map(|e| e.operation_id).as_deref(), Some("id-c"));
        assert!(a.settle("id-c", FinalStatus::Succeeded, 5).ok().flatten().is_some());
        assert_eq!(b.get("id-c").ok().flatten().and_then(|e| e.settled), Some(FinalStatus::Succeeded));
        let pending: Vec<String> = b.pending().unwrap_or_default().into_iter().map(|e| e.operation_id).collect();
        assert_eq!(pending, ["id-a"]);
        assert!(b.settle("id-a", FinalStatus::Unknown, 6).ok().flatten().is_some());
        assert_eq!(a.get("id-a").ok().flatten().and_then(|e| e.settled), Some(FinalStatus::Unknown));
        drop((a, b));
        // Reopened: each id once, as last written.
        let j = FileJournal::open(&path).ok();
        let all = j.as_ref().and_then(|j| j.pending().ok()).unwrap_or_default();
        assert_eq!(all.into_iter().map(|e| e.operation_id).collect::<Vec<_>>(), ["id-a"]);
        let _ = std::fs::remove_dir_all(&dir);
    }

    #[cfg(unix)]
    #[test]
    fn the_journal_file_is_created_readable_by_its_owner_only() {
        use std::os::unix::fs::PermissionsExt;
        let dir = std::env::temp_dir().join(format!("mrp-journal-mode-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        let _ = std::fs::create_dir_all(&dir);
        let path = dir.join("j.jsonl");
        let j = FileJournal::open(&path).ok();
        assert!(j.as_ref().is_some_and(|j| j.begin(entry("a", None)).is_ok()), "open, begin");
        // It holds the calls' arguments: 0600, whatever the umask lets a default create make (usually 0644).
        let mode = std::fs::metadata(&path).map(|m| format!("{:o}", m.permissions().mode() & 0o777)).ok();
        assert_eq!(mode.as_deref(), Some("600"));
        let _ = std::fs::remove_dir_all(&dir);
    }
}
