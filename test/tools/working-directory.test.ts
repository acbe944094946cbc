// Seed 004 working_directory end to end through the API: the folder is the shell's working directory and the base
// of relative paths, the file tools and the shell reach nothing outside it, it is made when the task's files lack
// it, the model is told where it works, and a CLAUDE.md in it is rule 4's warning.

import { describe, expect, it } from "vitest";
import { parseAgentFile } from "../../src/agents/agent-file.ts";
import { parseDefinition } from "../../src/agents/definition.ts";
import {
  api,
  defineAgent,
  done,
  errorOf,
  events,
  modelRequest,
  ofType,
  type ScriptTurn,
  script,
  startTask,
  textOf,
  toolResults,
  toolUse,
  uniqueMarker,
  waitForTask,
} from "../support/helpers.ts";

const tools = {
  fileSystem: { read: true, write: true, edit: true },
  bash: { enabled: true },
  workingDirectory: "project",
} as const;

const FILES = {
  "project/src/app.ts": "export const app = 1;\n",
  "project/README.md": "the project\n",
  "secret.txt": "outside the working directory\n",
};

/** Runs one scripted turn of tool calls and a closing answer on `agent` with FILES; returns the task id. */
async function runTurn(
  agent: string,
  calls: ScriptTurn["content"],
  files: Record<string, string> = FILES,
): Promise<string> {
  const marker = uniqueMarker("wd");
  await script(marker, [{ content: calls, stop_reason: "tool_use" }, done]);
  const task = await startTask(agent, `work ${marker}`, { files });
  expect((await waitForTask(task.id)).status).toBe("completed");
  return task.id;
}

describe("an agent's working directory", () => {
  it("resolves relative paths against it and refuses paths outside it, in every file tool", async () => {
    const agent = defineAgent(tools);
    const id = await runTurn(agent, [
      toolUse("Read", { file_path: "src/app.ts" }),
      toolUse("Read", { file_path: "/workspace/project/README.md" }),
      toolUse("Read", { file_path: "/workspace/secret.txt" }),
      toolUse("Read", { file_path: "../secret.txt" }),
      toolUse("Write", { file_path: "notes.md", content: "kept\n" }),
      toolUse("Edit", { file_path: "../secret.txt", old_string: "outside", new_string: "changed" }),
      toolUse("Glob", { pattern: "**/*" }),
      toolUse("Grep", { pattern: "the|outside" }),
      toolUse("Grep", { pattern: "outside", path: "/workspace" }),
    ]);
    const results = await toolResults(id, 2);
    const outside = (path: string) =>
      `${path} is outside the working directory /workspace/project; use paths under it (or relative to it).`;
    expect(results.map((r) => [r.is_error, r.content])).toEqual([
      [false, "     1\texport const app = 1;"],
      [false, "     1\tthe project"],
      [true, outside("/workspace/secret.txt")],
      [true, outside("../secret.txt")],
      [false, "Created /workspace/project/notes.md (5 bytes)."],
      [true, outside("../secret.txt")],
      [false, expect.any(String)],
      [false, "/workspace/project/README.md"],
      [true, outside("/workspace")],
    ]);
    // Glob lists the folder's files only (newest first: the one just written).
    expect(String(results[6]?.content).split("\n")).toEqual([
      "/workspace/project/notes.md",
      "/workspace/project/README.md",
      "/workspace/project/src/app.ts",
    ]);
    expect(await (await api(`/v1/tasks/${id}/workspace/project/notes.md`)).text()).toBe("kept\n");
    expect(await (await api(`/v1/tasks/${id}/workspace/secret.txt`)).text()).toBe("outside the working directory\n");
  });

  it("is the shell's working directory and all of the workspace the shell can reach", async () => {
    const agent = defineAgent(tools);
    const id = await runTurn(agent, [
      toolUse("Bash", { command: "pwd && echo $HOME && ls && echo made > out.txt" }),
      toolUse("Bash", { command: "cat ../secret.txt" }),
      toolUse("Bash", { command: "cat /workspace/secret.txt" }),
      toolUse("Bash", { command: "cd .. && ls" }),
    ]);
    const results = await toolResults(id, 2);
    expect(results[0]).toMatchObject({
      is_error: false,
      content: "exit code: 0\nstdout:\n/workspace/project\n/workspace/project\nREADME.md\nsrc\n",
    });
    expect(results[1]).toMatchObject({ is_error: true });
    expect(String(results[1]?.content)).toContain("No such file or directory");
    expect(results[2]).toMatchObject({ is_error: true });
    expect(String(results[2]?.content)).toContain("No such file or directory");
    // Above the working directory the shell sees only the folder itself, not the workspace's other files.
    expect(results[3]).toMatchObject({ is_error: false, content: "exit code: 0\nstdout:\nproject\n" });
    expect(await (await api(`/v1/tasks/${id}/workspace/project/out.txt`)).text()).toBe("made\n");
    const completed = ofType(await events(id), "tool_call_completed");
    expect(completed[0]?.payload.details).toMatchObject({ changed_paths: ["/workspace/project/out.txt"] });
  });

  it("is made when the task's files lack it, so the shell starts there and files can be written", async () => {
    const agent = defineAgent({ ...tools, workingDirectory: "/workspace/deep/folder" });
    const id = await runTurn(agent, [toolUse("Bash", { command: "pwd && echo hi > a.txt" })], {});
    const [result] = await toolResults(id, 2);
    expect(result).toMatchObject({ is_error: false, content: "exit code: 0\nstdout:\n/workspace/deep/folder\n" });
    expect(await (await api(`/v1/tasks/${id}/workspace/deep/folder/a.txt`)).text()).toBe("hi\n");
  });

  it("is told to the model in the system prompt", async () => {
    const agent = defineAgent(tools);
    const id = await runTurn(agent, [toolUse("Read", { file_path: "README.md" })]);
    const request = (await modelRequest(id, 1)) as { system?: unknown };
    expect(textOf(request.system)).toBe(
      "You use tools.\n\nYour working directory is /workspace/project: relative paths resolve against it, the shell " +
        "starts in it, and files outside it cannot be read or changed.",
    );
    const plain = defineAgent({ fileSystem: { read: true } });
    const other = await runTurn(plain, [toolUse("Read", { file_path: "secret.txt" })]);
    expect(textOf(((await modelRequest(other, 1)) as { system?: unknown }).system)).toBe("You use tools.");
    expect((await toolResults(other, 2))[0]).toMatchObject({
      is_error: false,
      content: "     1\toutside the working directory",
    });
  });

  it("warns, in the task's first event, of a CLAUDE.md in it (seed 004 rule 4)", async () => {
    const agent = defineAgent(tools);
    const id = await runTurn(agent, [toolUse("Read", { file_path: "CLAUDE.md" })], {
      ...FILES,
      "project/CLAUDE.md": "# Instructions\n",
    });
    const [created] = ofType(await events(id), "task_created");
    expect(created?.payload.warnings).toEqual([
      "/workspace/project/CLAUDE.md is in the agent's working directory (rule 4): Outpost does not load CLAUDE.md " +
        "as instructions, so it is an ordinary file the agent may read; the agent's instructions are its system prompt.",
    ]);
    const quiet = await runTurn(agent, [toolUse("Read", { file_path: "README.md" })], {
      ...FILES,
      "CLAUDE.md": "# At the root, outside the working directory\n",
    });
    const [plain] = ofType(await events(quiet), "task_created");
    expect(plain?.payload).not.toHaveProperty("warnings");
  });
});

describe("working_directory in a definition", () => {
  const definition = { name: "wd_agent", systemPrompt: "Work." };

  it("is kept as the folder of the workspace it names, however it is written", () => {
    for (const written of ["project", "./project/", "/workspace/project", "/workspace/x/../project"]) {
      expect(parseDefinition({ ...definition, workingDirectory: written }).settings.workingDirectory).toBe("/project");
    }
    expect(parseDefinition(definition).settings.workingDirectory).toBe("/");
  });

  it("refuses a folder outside the workspace, naming the key", () => {
    expect(errorOf(() => parseDefinition({ ...definition, workingDirectory: "/etc" })).message).toBe(
      'Agent "wd_agent": workingDirectory must be a folder of the workspace: /etc is outside the workspace; use paths under /workspace/.',
    );
    expect(errorOf(() => parseDefinition({ ...definition, workingDirectory: "../up" })).message).toBe(
      'Agent "wd_agent": workingDirectory must be a folder of the workspace: ../up is outside the workspace; use paths under /workspace/.',
    );
  });

  it("is claude.working_directory in an agent file, refused there with its line", () => {
    const file = parseAgentFile(
      "agents/coder.yaml",
      "name: coder\ninstructions: Code.\nclaude:\n  working_directory: repo\n",
    );
    expect(file.definition.workingDirectory).toBe("repo");
    expect(parseDefinition(file.definition).settings.workingDirectory).toBe("/repo");
    expect(
      errorOf(() =>
        parseAgentFile("agents/coder.yaml", "name: coder\ninstructions: Code.\nclaude:\n  working_directory: /etc\n"),
      ).message,
    ).toBe(
      "agents/coder.yaml:4: claude.working_directory: must be a folder of the workspace: /etc is outside the workspace; use paths under /workspace/.",
    );
  });
});
