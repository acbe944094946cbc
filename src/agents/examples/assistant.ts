// Example agent: a system prompt and nothing else. The default tool-use loop does the rest.
import { Agent } from "../index.ts";

export class AssistantAgent extends Agent {
  constructor() {
    super({
      name: "assistant",
      description: "A concise general-purpose assistant that answers in one turn.",
      systemPrompt:
        "You are a concise, accurate assistant. Answer the user's request directly. " +
        "If something is ambiguous, state your assumption in one sentence and proceed.",
      maxTurns: 1,
    });
  }
}
