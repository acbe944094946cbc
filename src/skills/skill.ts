// Skills (seed 002): a SKILL.md file (YAML frontmatter with name and description, then a Markdown body) and the
// files beside it in its folder. The catalog shows the model only each skill's metadata; the body and the files are
// disclosed when the model asks for them (progressive disclosure).
import { parse as parseYaml } from "yaml";

/** Skill names are folder names and appear in prompts and events: lowercase words joined by dashes. */
export const SKILL_NAME_PATTERN = /^[a-z0-9]+(?:-[a-z0-9]+)*$/;
const MAX_NAME_CHARS = 64;
const MAX_DESCRIPTION_CHARS = 1024;
/** A skill's files, SKILL.md included, are text; larger ones are refused when the skill is loaded. */
export const MAX_SKILL_FILE_BYTES = 256 * 1024;
export const MAX_SKILL_FILES = 100;

/** One file of a skill's folder, by its path relative to the skills folder ("release-notes/template.md"). */
export interface SkillSourceFile {
  path: string;
  content: string;
}

/** Seed 002 SkillMetadata: what the catalog shows the model for each skill. */
export interface SkillMetadata {
  name: string;
  description: string;
  /** Where SKILL.md is, relative to the skills folder ("release-notes/SKILL.md"). */
  path: string;
  /** The skill's other files, relative to the skills folder: what the model may ask to see. */
  files: string[];
  /** Other frontmatter fields (e.g. license, allowed-tools), kept as given. */
  extra: Record<string, unknown>;
  /** "bundled" (compiled into the Worker) or "r2" (loaded from the RUNS bucket under skills/). */
  source: "bundled" | "r2";
}

/** Seed 002 SkillDefinition: the metadata, the instructions (SKILL.md's body) and the files' contents. */
export interface SkillDefinition {
  metadata: SkillMetadata;
  body: string;
  files: Readonly<Record<string, string>>;
}

export class SkillFormatError extends Error {
  readonly path: string;
  constructor(path: string, message: string) {
    super(`${path}: ${message}`);
    this.name = "SkillFormatError";
    this.path = path;
  }
}

const FRONTMATTER = /^---\r?\n([\s\S]*?)\r?\n---\r?\n?([\s\S]*)$/;

/**
 * A skill from its folder's files. The folder name is the skill's name, and SKILL.md's frontmatter must say the
 * same name. Throws SkillFormatError naming the file and what is wrong.
 */
export function parseSkill(
  folder: string,
  files: readonly SkillSourceFile[],
  source: SkillMetadata["source"],
): SkillDefinition {
  const skillPath = `${folder}/SKILL.md`;
  const skillFile = files.find((f) => f.path === skillPath);
  if (!skillFile) throw new SkillFormatError(skillPath, "missing (every skill folder has a SKILL.md)");
  if (files.length > MAX_SKILL_FILES) {
    throw new SkillFormatError(folder, `has ${files.length} files; a skill may have at most ${MAX_SKILL_FILES}`);
  }
  for (const file of files) {
    if (!file.path.startsWith(`${folder}/`) || file.path.split("/").some((s) => s === "" || s === "." || s === "..")) {
      throw new SkillFormatError(file.path, `is not a file inside ${folder}/`);
    }
    if (new TextEncoder().encode(file.content).byteLength > MAX_SKILL_FILE_BYTES) {
      throw new SkillFormatError(file.path, `is larger than ${MAX_SKILL_FILE_BYTES} bytes`);
    }
  }
  const match = FRONTMATTER.exec(skillFile.content.replace(/^\uFEFF/, ""));
  if (!match) throw new SkillFormatError(skillPath, "must start with YAML frontmatter between --- lines");
  let front: unknown;
  try {
    front = parseYaml(match[1] ?? "");
  } catch (error) {
    throw new SkillFormatError(
      skillPath,
      `frontmatter is not valid YAML: ${error instanceof Error ? error.message : error}`,
    );
  }
  if (typeof front !== "object" || front === null || Array.isArray(front)) {
    throw new SkillFormatError(skillPath, "frontmatter must be a mapping with name and description");
  }
  const { name, description, ...extra } = front as Record<string, unknown>;
  if (typeof name !== "string" || !SKILL_NAME_PATTERN.test(name) || name.length > MAX_NAME_CHARS) {
    throw new SkillFormatError(
      skillPath,
      `name must be lowercase words joined by dashes, at most ${MAX_NAME_CHARS} characters`,
    );
  }
  if (name !== folder) throw new SkillFormatError(skillPath, `name "${name}" must be the folder's name, "${folder}"`);
  if (typeof description !== "string" || !description.trim() || description.length > MAX_DESCRIPTION_CHARS) {
    throw new SkillFormatError(skillPath, `description is required, at most ${MAX_DESCRIPTION_CHARS} characters`);
  }
  const body = (match[2] ?? "").trim();
  if (!body) throw new SkillFormatError(skillPath, "has no instructions after the frontmatter");
  const others = files.filter((f) => f.path !== skillPath).sort((a, b) => a.path.localeCompare(b.path));
  return {
    metadata: {
      name,
      description: description.trim(),
      path: skillPath,
      files: others.map((f) => f.path),
      extra,
      source,
    },
    body,
    files: Object.fromEntries([[skillPath, skillFile.content], ...others.map((f) => [f.path, f.content] as const)]),
  };
}

/** Groups a flat list of files under a skills folder into skills, by their first path segment. */
export function groupByFolder(files: readonly SkillSourceFile[]): Map<string, SkillSourceFile[]> {
  const folders = new Map<string, SkillSourceFile[]>();
  for (const file of files) {
    const folder = file.path.split("/")[0] ?? "";
    folders.set(folder, [...(folders.get(folder) ?? []), file]);
  }
  return folders;
}
