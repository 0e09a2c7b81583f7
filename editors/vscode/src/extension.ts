// pcdlint for VS Code: starts `pcdlint server` (the language server) from the configured
// interpreter and hands it the JSON and YAML documents; diagnostics, code actions and hover come
// from the server. Settings: pcdlint.interpreter, pcdlint.debounce.
import * as vscode from "vscode";
import { LanguageClient, LanguageClientOptions, ServerOptions } from "vscode-languageclient/node";

let client: LanguageClient | undefined;

function makeClient(): LanguageClient {
  const config = vscode.workspace.getConfiguration("pcdlint");
  const interpreter = config.get<string>("interpreter") || "python3";
  const serverOptions: ServerOptions = {
    command: interpreter,
    args: ["-m", "auditor", "server"],
  };
  const clientOptions: LanguageClientOptions = {
    documentSelector: [
      { scheme: "file", language: "json" },
      { scheme: "file", language: "jsonc" },
      { scheme: "file", language: "yaml" },
    ],
    initializationOptions: { debounce: config.get<number>("debounce") },
  };
  return new LanguageClient("pcdlint", "pcdlint", serverOptions, clientOptions);
}

export async function activate(context: vscode.ExtensionContext): Promise<void> {
  client = makeClient();
  await client.start();
  context.subscriptions.push(
    vscode.commands.registerCommand("pcdlint.restart", async () => {
      await client?.stop();
      client = makeClient();
      await client.start();
    }),
    vscode.workspace.onDidChangeConfiguration(async (event) => {
      if (event.affectsConfiguration("pcdlint")) {
        await vscode.commands.executeCommand("pcdlint.restart");
      }
    }),
  );
}

export async function deactivate(): Promise<void> {
  await client?.stop();
}
