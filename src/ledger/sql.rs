//! The ledger's table and its statements, once, for the SQL stores of both faces: the Rust face's
//! `SqliteLedgerStore` and `PostgresLedgerStore`, and the npm package's SQLite, D1 and Postgres stores (rendered
//! into `pkg-template/generated/sql.js` by `cargo run --example names`), so a JS ledger and a Rust ledger share
//! one file or one table. Two dialects: SQLite's (`?` parameters, `INTEGER` milliseconds, a `UNIQUE` key) and
//! Postgres's (`$n`, `BIGINT`, the key as the primary key).
//!
//! The key `(tenant, action, operation_id)` is unique, so an `INSERT … ON CONFLICT DO NOTHING` makes a claim
//! atomic; every update is a compare-and-set on `version`. Two partial indexes: the purgeable rows (resolved,
//! ordered by expiry, so a purge reads only what it deletes) and the unresolved ones (the operators' listings).
//! The listings take an optional tenant and action, each given twice (`NULL` for any).

/// One dialect's statements.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct LedgerSql {
    /// The table, if it does not exist.
    pub create: &'static str,
    /// The partial index over resolved rows, by expiry.
    pub index: &'static str,
    /// The partial index over unresolved rows, for the operators' listings.
    pub unresolved_index: &'static str,
    /// A claim: key (3), then the record (6); nothing when the key exists.
    pub insert: &'static str,
    /// A compare-and-set: the record (6) and the result (1), the key (3), the expected version (1).
    pub update: &'static str,
    /// A record and its result by key (3).
    pub select: &'static str,
    /// Deletes the resolved records expired at a time (1).
    pub purge: &'static str,
    /// The unresolved records: the filter (4), a limit (1), oldest first.
    pub unresolved: &'static str,
    /// The unresolved records counted by tenant, action and state: the filter (4).
    pub count_unresolved: &'static str,
}

impl LedgerSql {
    /// Every statement by its JS name (`sql.js`'s keys), in the order they are rendered.
    pub const fn statements(&self) -> [(&'static str, &'static str); 9] {
        [
            ("create", self.create),
            ("index", self.index),
            ("unresolvedIndex", self.unresolved_index),
            ("insert", self.insert),
            ("update", self.update),
            ("select", self.select),
            ("purge", self.purge),
            ("unresolved", self.unresolved),
            ("countUnresolved", self.count_unresolved),
        ]
    }
}

/// The statements of one dialect: its integer type, its key constraint and its eleven parameters' spelling.
macro_rules! ledger_sql {
    ($int:literal, $key:literal, [$p1:literal, $p2:literal, $p3:literal, $p4:literal, $p5:literal, $p6:literal,
        $p7:literal, $p8:literal, $p9:literal, $p10:literal, $p11:literal]) => {
        LedgerSql {
            create: concat!(
                "CREATE TABLE IF NOT EXISTS mcp_operation_ledger (\n",
                "  tenant TEXT NOT NULL, action TEXT NOT NULL, operation_id TEXT NOT NULL,\n",
                "  state TEXT NOT NULL, fingerprint TEXT NOT NULL,\n",
                "  lease_until_ms ",
                $int,
                " NOT NULL, created_ms ",
                $int,
                " NOT NULL, expires_ms ",
                $int,
                " NOT NULL,\n",
                "  version ",
                $int,
                " NOT NULL, result TEXT,\n",
                "  ",
                $key,
                " (tenant, action, operation_id)\n",
                ")"
            ),
            index: "CREATE INDEX IF NOT EXISTS mcp_operation_ledger_expiry ON mcp_operation_ledger (expires_ms) \
                    WHERE state IN ('succeeded', 'failed')",
            unresolved_index: "CREATE INDEX IF NOT EXISTS mcp_operation_ledger_unresolved ON mcp_operation_ledger \
                               (tenant, action, created_ms) WHERE state IN ('pending', 'unknown')",
            insert: concat!(
                "INSERT INTO mcp_operation_ledger (tenant, action, operation_id, state, fingerprint, lease_until_ms, ",
                "created_ms, expires_ms, version)\n  VALUES (",
                $p1,
                ", ",
                $p2,
                ", ",
                $p3,
                ", ",
                $p4,
                ", ",
                $p5,
                ", ",
                $p6,
                ", ",
                $p7,
                ", ",
                $p8,
                ", ",
                $p9,
                ") ON CONFLICT (tenant, action, operation_id) DO NOTHING"
            ),
            update: concat!(
                "UPDATE mcp_operation_ledger SET state = ",
                $p1,
                ", fingerprint = ",
                $p2,
                ", lease_until_ms = ",
                $p3,
                ", created_ms = ",
                $p4,
                ", expires_ms = ",
                $p5,
                ",\n  version = ",
                $p6,
                ", result = ",
                $p7,
                " WHERE tenant = ",
                $p8,
                " AND action = ",
                $p9,
                " AND operation_id = ",
                $p10,
                " AND version = ",
                $p11
            ),
            select: concat!(
                "SELECT state, fingerprint, lease_until_ms, created_ms, expires_ms, version, result ",
                "FROM mcp_operation_ledger WHERE tenant = ",
                $p1,
                " AND action = ",
                $p2,
                " AND operation_id = ",
                $p3
            ),
            purge: concat!(
                "DELETE FROM mcp_operation_ledger WHERE state IN ('succeeded', 'failed') AND expires_ms <= ",
                $p1
            ),
            unresolved: concat!(
                "SELECT tenant, action, operation_id, state, fingerprint, lease_until_ms, created_ms, expires_ms, ",
                "version FROM mcp_operation_ledger WHERE state IN ('pending', 'unknown') AND (CAST(",
                $p1,
                " AS TEXT) IS NULL OR tenant = ",
                $p2,
                ") AND (CAST(",
                $p3,
                " AS TEXT) IS NULL OR action = ",
                $p4,
                ")\n  ORDER BY created_ms, tenant, action, operation_id LIMIT ",
                $p5
            ),
            count_unresolved: concat!(
                "SELECT tenant, action, state, COUNT(*) AS n FROM mcp_operation_ledger WHERE state IN ('pending', ",
                "'unknown') AND (CAST(",
                $p1,
                " AS TEXT) IS NULL OR tenant = ",
                $p2,
                ") AND (CAST(",
                $p3,
                " AS TEXT) IS NULL OR action = ",
                $p4,
                ")\n  GROUP BY tenant, action, state ORDER BY tenant, action, state"
            ),
        }
    };
}

/// SQLite's (and Cloudflare D1's) statements.
pub const SQLITE: LedgerSql = ledger_sql!("INTEGER", "UNIQUE", ["?", "?", "?", "?", "?", "?", "?", "?", "?", "?", "?"]);

/// Postgres's statements.
pub const POSTGRES: LedgerSql =
    ledger_sql!("BIGINT", "PRIMARY KEY", ["$1", "$2", "$3", "$4", "$5", "$6", "$7", "$8", "$9", "$10", "$11"]);

/// Taken before Postgres's `create` and indexes, in the same transaction: two sessions running `CREATE TABLE IF
/// NOT EXISTS` at once can otherwise fail with a unique violation in the catalog.
pub const POSTGRES_SETUP_LOCK: &str = "SELECT pg_advisory_xact_lock(hashtext('mcp_operation_ledger'))";

/// `sql.js`: both dialects' statements as frozen objects (`SQLITE_SQL`, `POSTGRES_SQL`) and the setup lock.
pub fn render_js() -> String {
    let mut s = String::from(
        "// Generated by `cargo run --example names` from src/ledger/sql.rs. Do not edit: scripts/build.sh and `cargo test`\n\
         // (tests/names.rs) fail when this file differs from what they render.\n",
    );
    for (name, sql) in [("SQLITE_SQL", SQLITE), ("POSTGRES_SQL", POSTGRES)] {
        s.push_str(&format!("export const {name} = /* @__PURE__ */ Object.freeze({{\n"));
        for (key, text) in sql.statements() {
            s.push_str(&format!("  {key}: {},\n", js_string(text)));
        }
        s.push_str("});\n");
    }
    s.push_str(&format!("export const POSTGRES_SETUP_LOCK = {};\n", js_string(POSTGRES_SETUP_LOCK)));
    s
}

/// A JS string literal (single-quoted, as the rest of the generated files).
fn js_string(text: &str) -> String {
    let mut out = String::from("'");
    for c in text.chars() {
        match c {
            '\\' => out.push_str("\\\\"),
            '\'' => out.push_str("\\'"),
            '\n' => out.push_str("\\n"),
            c => out.push(c),
        }
    }
    out.push('\'');
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The two dialects are the same statements: each takes as many parameters in each, numbered in order in
    /// Postgres's, and once the parameters and types are spelled alike they are the same text.
    #[test]
    fn the_dialects_differ_only_in_how_they_spell_parameters_and_types() {
        for ((name, lite), (_, pg)) in SQLITE.statements().into_iter().zip(POSTGRES.statements()) {
            let marks = lite.matches('?').count();
            let mut numbered = pg.to_string();
            for n in (1..=marks).rev() {
                assert!(numbered.contains(&format!("${n}")), "{name}: ${n}");
                numbered = numbered.replace(&format!("${n}"), "?");
            }
            assert!(!numbered.contains('$'), "{name}: more parameters in Postgres's");
            let same = numbered.replace("BIGINT", "INTEGER").replace("PRIMARY KEY (", "UNIQUE (");
            assert_eq!(same, lite, "{name}");
        }
    }

    #[test]
    fn the_rendered_strings_read_back_as_the_statements() {
        let js = render_js();
        for sql in [SQLITE, POSTGRES] {
            for (key, text) in sql.statements() {
                assert!(js.contains(&format!("  {key}: {},\n", js_string(text))), "{key}");
            }
        }
        assert_eq!(js_string("a'b\\c\nd"), "'a\\'b\\\\c\\nd'");
    }
}
