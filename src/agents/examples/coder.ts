// Example agent with a workspace: it reads, edits and writes files and runs shell commands (just-bash) in the
// task's workspace. Seed files with the task (`files` in the POST body) and download results from
// GET /v1/tasks/:id/workspace/<path>. Its capabilities are turned on explicitly; nothing else is (no network).
import { Agent } from "../index.ts";

export class CoderAgent extends Agent {
  constructor() {
    super({
      name: "coder",
      description: "Works on the files of its task's workspace with a shell and file tools.",
      systemPrompt:
        "You work in a workspace at /workspace. Inspect files before changing them, make the smallest change " +
        "that does the job, check your work with the shell, and finish with a short summary of what changed.",
      bash: { enabled: true },
      fileSystem: { read: true, write: true, edit: true },
      // Listed to fix the order the model sees them in; the settings above are what make them available.
      allowedTools: ["Bash", "Read", "Write", "Edit", "Glob", "Grep"],
      maxTurns: 12,
    });
  }
}
