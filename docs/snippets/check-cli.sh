# run: sh
# check.md: the checker's command, against the quick-start server (MCP_URL from the environment) in place of a
# staging server; the quick start's stand-in tokens are the tenants' names.
set -euo pipefail
# ANCHOR: cli
STAGING_URL=${MCP_URL:-https://staging.example/mcp}   # your staging server's endpoint
npx -p mcp-retry-policy -p @modelcontextprotocol/sdk mcp-retry-policy check "$STAGING_URL" \
  --tool create_ticket --args '{"title":"Printer on fire"}' \
  --header 'Authorization: Bearer alice' --other-tenant-header 'Authorization: Bearer bob'
# ANCHOR_END: cli

# --json for CI: nothing failed and a failure window was tested (exit 0); a bad flag is exit 2.
npx mcp-retry-policy check "$STAGING_URL" --tool create_ticket --args '{"title":"Printer on fire"}' \
  --header 'Authorization: Bearer alice' --other-tenant-header 'Authorization: Bearer bob' --json > "${TMPDIR:-/tmp}/check-report.$$.json"
node -e '
  const r = JSON.parse(require("fs").readFileSync(process.argv[1], "utf8"));
  if (!r.ok || !r.tested || r.counts.pass < 8) { console.error(JSON.stringify(r.counts)); process.exit(1); }
' "${TMPDIR:-/tmp}/check-report.$$.json"
rm -f "${TMPDIR:-/tmp}/check-report.$$.json"
set +e
npx mcp-retry-policy check "$STAGING_URL" --tool create_ticket --no-such-flag 2>/dev/null
code=$?
set -e
[ "$code" -eq 2 ] || { echo "a bad flag exited $code, not 2"; exit 1; }
