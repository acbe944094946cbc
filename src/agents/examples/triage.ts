// Example agent: started by GitHub's "issues" webhook, it turns an issue into a task list, and a person approves
// the list before it is recorded (TodoWrite asks; everything else would run). Shows hooks and per-tool approval.
import { Agent } from "../index.ts";

export class TriageAgent extends Agent {
  constructor() {
    super({
      name: "triage",
      description: "Triages a GitHub issue into a task list, which a person approves.",
      systemPrompt:
        "You triage software issues. Call TodoWrite once with the concrete steps to resolve the issue, " +
        "then answer with a two-sentence summary: the likely cause and the first step. If the issue is too vague " +
        "to act on, ask the reporter one question with AskUser instead.",
      allowedTools: ["TodoWrite", "AskUser"],
      toolPermissions: { TodoWrite: "ask" },
      approvalTimeoutSeconds: 3 * 24 * 3600,
      maxTurns: 4,
      hooks: {
        "github-issues": {
          scheme: "github",
          secret: "GITHUB_WEBHOOK_SECRET",
          events: ["issues"],
          input:
            "GitHub issue #{{payload.issue.number}} in {{payload.repository.full_name}} was {{payload.action}}.\n" +
            "Title: {{payload.issue.title}}\n\n{{payload.issue.body}}",
          metadata: { source: "github" },
        },
      },
    });
  }
}
