// A workflow written as a file of workflows/ (seed 003's workflows/{workflow_name}.json, or the same as YAML): read,
// then checked exactly as a TypeScript workflow is (checkedWorkflow). scripts/build-workflows.ts compiles the folder
// in and fails the build with the file, line and key of the first problem; the Worker checks the definitions again
// when it assembles its workflow registry (src/workflows/catalog.ts).
import { DefinitionFileError } from "../errors.ts";
import { readYaml, YamlSyntaxError } from "../lib/yaml-source.ts";
import { type WorkflowDefinition, WorkflowDefinitionError } from "./definition.ts";
import { type AgentCatalog, checkedWorkflow, resolveWorkflow, type Workflow } from "./workflow.ts";

/** Largest workflow file accepted (bytes). */
export const MAX_WORKFLOW_FILE_BYTES = 256 * 1024;

/** A checked workflow file as the build compiles it in (src/workflows/files.generated.ts): defaults applied. */
export interface WorkflowFile {
  /** Where it came from, e.g. "workflows/plan_and_build.yaml". */
  path: string;
  definition: WorkflowDefinition;
}

/** The workflows of the compiled-in files, checked again (conditions parsed) as the Worker loads them. */
export function fileWorkflows(files: readonly WorkflowFile[]): Workflow[] {
  return files.map((file) => checkedWorkflow(file.definition, { kind: "file", path: file.path }));
}

/** A problem in a workflow file: the file, the line of the key it is about when known, the key and the message. */
export class WorkflowFileError extends DefinitionFileError {}

/**
 * Reads and checks one workflow file (YAML, or JSON, which is YAML too); with `agents`, also what it names outside
 * itself (resolveWorkflow). Every problem is a WorkflowFileError.
 */
export function parseWorkflowFile(path: string, source: string, agents?: AgentCatalog): Workflow {
  let doc: ReturnType<typeof readYaml>;
  try {
    doc = readYaml(source);
  } catch (error) {
    if (error instanceof YamlSyntaxError) throw new WorkflowFileError(path, error.line, null, error.message);
    throw error;
  }
  try {
    const workflow = checkedWorkflow(doc.value, { kind: "file", path });
    if (agents) resolveWorkflow(workflow, agents);
    return workflow;
  } catch (error) {
    if (!(error instanceof WorkflowDefinitionError)) throw error;
    const key = error.keys.length > 0 ? error.keys.map(String).join(".") : null;
    throw new WorkflowFileError(path, doc.lineOf(error.keys), key, error.detail);
  }
}
