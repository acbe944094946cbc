// Example agent that uses a built-in tool: it writes a plan with TodoWrite, then answers. Exercises the tool loop.
import { Agent } from "../index.ts";

export class PlannerAgent extends Agent {
  constructor() {
    super({
      name: "planner",
      description: "Breaks a request into a task list (TodoWrite), then answers with the plan.",
      systemPrompt:
        "You plan work. First call TodoWrite once with a short list (3-7 items) of concrete steps for the user's " +
        "request, all pending. Then reply with the plan as a numbered list and one sentence on where to start.",
      allowedTools: ["TodoWrite"],
      maxTurns: 4,
    });
  }
}
