#!/usr/bin/env bash
# Installs everything the demo and the tests need, on a fresh machine or an old one; skips what is there.
# Idempotent. Needs: rustup/cargo and Node 20+ (on the machine image), root for apt-get, the registries.
set -euo pipefail
cd "$(dirname "$0")/.."
say() { printf '\033[1m[setup]\033[0m %s\n' "$*"; }

command -v cargo >/dev/null || { echo "cargo not found: install Rust (rustup) first" >&2; exit 1; }
command -v node >/dev/null || { echo "node not found: install Node.js 20+ first" >&2; exit 1; }

# 1. The wasm target.
if ! grep -qx wasm32-unknown-unknown <<<"$(rustup target list --installed)"; then
  say "adding the wasm32-unknown-unknown target"
  rustup target add wasm32-unknown-unknown
fi
for c in clippy rustfmt; do
  grep -q "^$c" <<<"$(rustup component list --installed)" || rustup component add "$c"
done

# 2. wasm-bindgen CLI (and its test runner) at exactly the version in Cargo.lock.
[ -f Cargo.lock ] || cargo generate-lockfile
want=$(awk '/^name = "wasm-bindgen"$/{getline; gsub(/version = |"/,""); print; exit}' Cargo.lock)
have=$(wasm-bindgen --version 2>/dev/null | awk '{print $2}' || true)
if [ "$have" != "$want" ] || ! command -v wasm-bindgen-test-runner >/dev/null; then
  say "installing wasm-bindgen-cli $want (about 2 minutes on 2 cores)"
  # Not --locked: the registry lacks the webpki-roots version its lockfile names (see TOOLCHAIN.md).
  cargo install wasm-bindgen-cli --version "$want"
fi

# 2b. wasm-pack, pinned: `wasm-pack test --headless --chrome` runs the boundary tests in Chrome (scripts/test.sh).
wp=0.15.1
if [ "$(wasm-pack --version 2>/dev/null | awk '{print $2}')" != "$wp" ]; then
  say "installing wasm-pack $wp (about 8 minutes on 2 cores)"
  cargo install wasm-pack --version "$wp" --locked
fi

# 2c. mdBook, pinned: the book under docs/ (scripts/demo.sh builds it; scripts/test.sh checks it builds).
mdb=0.5.4
if [ "$(mdbook --version 2>/dev/null | awk '{print $2}')" != "v$mdb" ]; then
  say "installing mdbook $mdb (about 2 minutes on 2 cores)"
  cargo install mdbook --version "$mdb" --locked --no-default-features --features search
fi

# 3. Headless Chromium and its driver, from Debian.
if [ ! -x /usr/bin/chromium ] || [ ! -x /usr/bin/chromedriver ]; then
  say "installing chromium and chromium-driver"
  export DEBIAN_FRONTEND=noninteractive
  apt-get update -qq
  apt-get install -y -qq --no-install-recommends chromium chromium-driver >/dev/null
fi

# 4. npm packages (wasm-opt from binaryen, tsc, playwright-core, the MCP SDK, ...), when the lockfile changed.
stamp=node_modules/.setup-stamp
sum=$(sha256sum package-lock.json | cut -d' ' -f1)
if [ ! -f "$stamp" ] || [ "$(cat "$stamp")" != "$sum" ]; then
  say "installing npm packages"
  npm ci --no-audit --no-fund --loglevel=error
  echo "$sum" > "$stamp"
fi
# 5. The fault zoo (tests/zoo, scripts/zoo.sh): nginx and HAProxy from Debian (run by the zoo in the
#    foreground with its own configs: the packages' services are not used), the Python MCP server in its own
#    venv with pinned versions, and the zoo's own npm packages (the older TS SDK beside its zod 3).
if ! command -v nginx >/dev/null || ! command -v haproxy >/dev/null; then
  say "installing nginx and haproxy"
  export DEBIAN_FRONTEND=noninteractive
  apt-get update -qq
  apt-get install -y -qq --no-install-recommends nginx haproxy >/dev/null
fi
venv=tests/zoo/.venv
reqs=tests/zoo/requirements.txt
if [ ! -x "$venv/bin/python" ] || [ ! -f "$venv/.setup-stamp" ] || [ "$(cat "$venv/.setup-stamp")" != "$(sha256sum "$reqs" | cut -d' ' -f1)" ]; then
  say "creating the Python venv for the zoo (mcp, uvicorn; pinned in $reqs)"
  python3 -m venv "$venv"
  "$venv/bin/pip" install -q --disable-pip-version-check -r "$reqs"
  sha256sum "$reqs" | cut -d' ' -f1 > "$venv/.setup-stamp"
fi
zstamp=tests/zoo/node_modules/.setup-stamp
zsum=$(sha256sum tests/zoo/package-lock.json | cut -d' ' -f1)
if [ ! -f "$zstamp" ] || [ "$(cat "$zstamp")" != "$zsum" ]; then
  say "installing the zoo's npm packages (tests/zoo)"
  (cd tests/zoo && npm ci --no-audit --no-fund --loglevel=error)
  echo "$zsum" > "$zstamp"
fi
# 5b. The peer matrix (tests/peers, scripts/peers.sh): MCP servers this project did not write. Its own npm
#     packages (server-everything, the TS SDK v2 server), its own Python venv (FastMCP, which pulls the Python SDK
#     2.x; pinned in tests/peers/requirements.txt), and a small rmcp server built once (release, ~2-3 minutes).
pstamp=tests/peers/node_modules/.setup-stamp
psum=$(sha256sum tests/peers/package-lock.json | cut -d' ' -f1)
if [ ! -f "$pstamp" ] || [ "$(cat "$pstamp")" != "$psum" ]; then
  say "installing the peer matrix's npm packages (tests/peers)"
  (cd tests/peers && npm ci --no-audit --no-fund --loglevel=error)
  echo "$psum" > "$pstamp"
fi
pvenv=tests/peers/.venv
preqs=tests/peers/requirements.txt
if [ ! -x "$pvenv/bin/python" ] || [ ! -f "$pvenv/.setup-stamp" ] || [ "$(cat "$pvenv/.setup-stamp")" != "$(sha256sum "$preqs" | cut -d' ' -f1)" ]; then
  say "creating the Python venv for the peer matrix (fastmcp, mcp, uvicorn; pinned in $preqs)"
  python3 -m venv "$pvenv"
  "$pvenv/bin/pip" install -q --disable-pip-version-check -r "$preqs"
  sha256sum "$preqs" | cut -d' ' -f1 > "$pvenv/.setup-stamp"
fi
rbin=tests/peers/rmcp-server/target/release/peers-rmcp-server
rsum=$(cat tests/peers/rmcp-server/Cargo.toml tests/peers/rmcp-server/Cargo.lock tests/peers/rmcp-server/src/*.rs | sha256sum | cut -d' ' -f1)
if [ ! -x "$rbin" ] || [ "$(cat "$rbin.setup-stamp" 2>/dev/null)" != "$rsum" ]; then
  say "building the rmcp peer server (tests/peers/rmcp-server, release; about 3 minutes on 2 cores)"
  cargo build --release --locked --manifest-path tests/peers/rmcp-server/Cargo.toml
  echo "$rsum" > "$rbin.setup-stamp"
fi
# 6. PostgreSQL for the Postgres ledger store's tests and benchmark (tests/support/postgres.mjs starts a throwaway
#    cluster from the server binaries; the package's own service is not used).
if ! ls /usr/lib/postgresql/*/bin/initdb >/dev/null 2>&1; then
  say "installing postgresql"
  export DEBIAN_FRONTEND=noninteractive
  apt-get update -qq
  apt-get install -y -qq --no-install-recommends postgresql >/dev/null
fi
# The rmcp face's SQLite store (feature `sqlite`) links the system libsqlite3 through rusqlite (pkg-config).
if ! pkg-config --exists sqlite3 2>/dev/null; then
  say "installing libsqlite3-dev and pkg-config"
  export DEBIAN_FRONTEND=noninteractive
  apt-get update -qq
  apt-get install -y -qq --no-install-recommends libsqlite3-dev pkg-config >/dev/null
fi
say "ready: $(cargo --version), wasm-bindgen $(wasm-bindgen --version | awk '{print $2}'), node $(node --version), $(/usr/bin/chromium --version 2>/dev/null | head -1)"
