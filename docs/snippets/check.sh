# run: sh
# The README's check of the server quick start (MCP_URL from the environment).
# ANCHOR: all
npx mcp-retry-policy check "${MCP_URL:-http://127.0.0.1:3000/mcp}" \
  --tool create_ticket --args '{"title":"Printer on fire"}' \
  --header 'Authorization: Bearer alice' --other-tenant-header 'Authorization: Bearer bob'
# ANCHOR_END: all
