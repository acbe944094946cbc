// A definition's keys in an agent file's terms (src/agents/agent-file.ts): a refusal of the definition's checks names
// a key of the definition ("maxTokens", "mcpServers.docs.url", "allowedTools.2"), and the file's refusal names the same
// key as the file spells it ("model.max_tokens", "tools.0.url", "claude.allowed_tools.2"), at its line, with the
// message worded in the file's terms too.

/** Each top-level key of a definition, as the file spells it. */
const TOP_KEYS: Readonly<Record<string, string>> = {
  systemPrompt: "instructions",
  model: "model.name",
  temperature: "model.temperature",
  maxTokens: "model.max_tokens",
  llmConfig: "model",
  maxTurns: "claude.max_turns",
  permissionMode: "claude.permission_mode",
  extendedThinking: "claude.extended_thinking",
  webSearch: "claude.web_search",
  bash: "claude.bash",
  fileSystem: "claude.file_system",
  subagents: "claude.subagents",
  workingDirectory: "claude.working_directory",
  allowedTools: "claude.allowed_tools",
  embeddingProvider: "embedding_provider",
  maxBudgetUsd: "max_budget_usd",
  providerWaitSeconds: "provider_wait_seconds",
  contextWindow: "context_window",
  promptCache: "prompt_cache",
  responseFormat: "response_format",
  redactionMode: "redaction_mode",
  webFetch: "web_fetch",
  toolPermissions: "tool_permissions",
  approvalTimeoutSeconds: "approval_timeout_seconds",
  onApprovalTimeout: "on_approval_timeout",
  testCases: "test_cases",
};

/** The file's `tools` list as written: MCP servers and knowledge tools, by position. */
export type FileTools = readonly { type?: unknown; name?: unknown }[] | undefined;

/**
 * The file's key for a definition's `key`. A server of mcpServers and a knowledge tool are entries of the file's
 * `tools`, found by name and by position among the knowledge tools; a server named alone is its entry's name.
 */
export function fileKeyOf(key: string, tools: FileTools): string {
  const [top = "", ...rest] = key.split(".");
  const entries = (tools ?? []).map((tool, index) => ({ tool, index }));
  if (top === "mcpServers" && rest.length > 0) {
    const tail = rest.join(".");
    // Server names may hold what a path separates with, so the longest name the path starts with is the server.
    const server = entries
      .filter(({ tool }) => tool.type === "mcp" && typeof tool.name === "string")
      .filter(({ tool }) => tail === tool.name || tail.startsWith(`${tool.name}.`))
      .sort((a, b) => String(b.tool.name).length - String(a.tool.name).length)[0];
    if (server) {
      const after = tail.slice(String(server.tool.name).length + 1);
      return `tools.${server.index}.${after || "name"}`;
    }
    return "tools";
  }
  if (top === "knowledgeTools") {
    const knowledge = entries.filter(({ tool }) => tool.type !== "mcp")[Number(rest[0])];
    return knowledge ? ["tools", knowledge.index, ...rest.slice(1)].join(".") : "tools";
  }
  if (top === "llmConfig" && rest.length > 0) return ["model", ...rest].join(".");
  const file = TOP_KEYS[top];
  return file ? [file, ...rest].join(".") : key;
}

/** A definition's key → the file's, for the words of a message from the checks that relate keys (parseDefinition). */
const MESSAGE_KEYS: Readonly<Record<string, string>> = {
  "extendedThinking.budget_tokens": "claude.extended_thinking.budget_tokens",
  extendedThinking: "claude.extended_thinking",
  webSearch: "claude.web_search",
  maxTokens: "model.max_tokens",
  temperature: "model.temperature",
  allowedTools: "claude.allowed_tools",
  toolPermissions: "tool_permissions",
  responseFormat: "response_format",
  testCases: "test_cases",
  "subagents.agents": "claude.subagents.agents",
  "hooks.": "hooks.",
  "llmConfig.": "model.",
  llmConfig: "model",
  "embeddingProvider.": "embedding_provider.",
  embeddingProvider: "embedding_provider",
  knowledgeTools: "tools",
  "fileSystem.": "claude.file_system.",
  "bash.": "claude.bash.",
  "webFetch.": "web_fetch.",
  "mcpServers.": "tools.",
  "promptCache.": "prompt_cache.",
  "contextWindow.": "context_window.",
  contextWindow: "context_window",
  promptCache: "prompt_cache",
};

/** A definition check's message in the file's terms. */
export function inFileTerms(message: string): string {
  let out = message;
  for (const [from, to] of Object.entries(MESSAGE_KEYS)) out = out.replaceAll(from, to);
  return out;
}

/** The keys a message names, in the file's terms: the first of them is the key at fault when nothing else says. */
export function namedFileKeys(): readonly string[] {
  return Object.values(MESSAGE_KEYS).map((k) => k.replace(/\.$/, ""));
}
