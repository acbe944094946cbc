// Example skill agent (seed 002): picks from the project's skills (skills/: release notes, incident triage), reads
// only the ones it needs, and acts through typed actions with a shell over its workspace.
import { SkillAgent } from "../index.ts";

export class OperatorAgent extends SkillAgent {
  constructor() {
    super({
      name: "operator",
      description: "Works through the project's skills (SKILL.md): release notes, incident triage, and any you add.",
      systemPrompt:
        "You are an operations assistant. Choose the skill that fits the task, read its SKILL.md before you follow " +
        "it, use the workspace shell for files and checks, and finish with the answer the task asks for.",
      allowedTools: ["Bash", "AskUser"],
      bash: { enabled: true },
      fileSystem: { read: true, write: true },
      maxTurns: 8,
      skills: "all",
    });
  }
}
