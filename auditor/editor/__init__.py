"""pcdlint where requests are written: the language server (`pcdlint server`, lsp_server.py, on
pygls) and the MCP server for coding agents (`pcdlint mcp`, mcp_server.py, on the official SDK).

Both lint through `workspace.Workspace`: the configuration the CLI reads (handed in by the CLI as
a `SettingsReader`, so this layer never imports cli/), the same rule selection, engines and
tokenizers, and the same file dispatch as `pcdlint check --stdin-filename NAME -`. Neither runs
`verify`, reaches the network (tokenizers load cache-only), imports workspace code, or reads a
file outside its roots. pygls and mcp are extras (`[editor]`, `[mcp]`): only the module of the
command that needs one imports it.
"""
