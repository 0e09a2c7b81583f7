-- Neovim 0.7's built-in LSP client against `pcdlint server` (tests/editor/test_neovim.py).
-- Opens the file, waits for the diagnostics the client holds, writes them as JSON, quits.
local root = os.getenv("PCDLINT_NVIM_ROOT")
local file = os.getenv("PCDLINT_NVIM_FILE")
local out = os.getenv("PCDLINT_NVIM_OUT")
local cmd = vim.fn.json_decode(os.getenv("PCDLINT_NVIM_CMD"))

-- 0.7 has no vim.lsp.start (0.8): start_client, then attach the buffer
local client_id = vim.lsp.start_client({
  name = "pcdlint",
  cmd = cmd,
  root_dir = root,
  workspace_folders = { { uri = vim.uri_from_fname(root), name = "project" } },
})
vim.cmd("edit " .. vim.fn.fnameescape(file))
vim.lsp.buf_attach_client(0, client_id)

local found = vim.wait(90000, function()
  return #vim.diagnostic.get(0) > 0
end, 100)

local result = { found = found, diagnostics = {} }
for _, d in ipairs(vim.diagnostic.get(0)) do
  local lsp = (d.user_data or {}).lsp or {}
  table.insert(result.diagnostics, {
    lnum = d.lnum,
    col = d.col,
    end_lnum = d.end_lnum,
    end_col = d.end_col,
    severity = d.severity,
    message = d.message,
    source = d.source,
    code = d.code or lsp.code,
    href = (lsp.codeDescription or {}).href,
  })
end
vim.fn.writefile({ vim.fn.json_encode(result) }, out)
vim.lsp.stop_client(client_id)
vim.wait(5000, function()
  return vim.lsp.client_is_stopped(client_id)
end, 50)
vim.cmd("qall!")
