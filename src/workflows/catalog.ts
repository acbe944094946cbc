// The workflows this Worker serves, compiled in: the files of workflows/ (src/workflows/files.generated.ts, built by
// scripts/build-workflows.ts), and TypeScript workflows (defineWorkflow, src/workflows/workflow.ts: an import and an
// entry in the list below). Each is resolved against the Worker's agents as the registry is assembled, so a workflow
// naming an agent that does not exist stops the Worker at startup, wherever it was defined.
import { registry as agents } from "../agents/catalog.ts";
import { WORKFLOW_FILES } from "./files.generated.ts";
import { WorkflowRegistry } from "./registry.ts";
import { fileWorkflows } from "./workflow-file.ts";

export const workflows = WorkflowRegistry.from(agents, fileWorkflows(WORKFLOW_FILES), []);
