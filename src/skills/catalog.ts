// The skill catalog an agent chooses from: the skills compiled into the Worker (skills/ in the project, see
// scripts/build-skills.ts) and, optionally, skills uploaded to R2 under skills/<name>/. Each is parsed and checked
// once per load; a broken R2 skill is skipped and reported, never fatal to the run.
import type { BlobStore } from "../blob-store/blob-store.ts";
import {
  groupByFolder,
  parseSkill,
  type SkillDefinition,
  SkillFormatError,
  type SkillMetadata,
  type SkillSourceFile,
} from "./skill.ts";

export const R2_SKILLS_PREFIX = "skills/";
/** At most this much is read from R2 for the catalog (all skills together). */
const MAX_R2_CATALOG_BYTES = 8 * 1024 * 1024;

export interface SkippedSkill {
  name: string;
  reason: string;
}

export class SkillCatalog {
  private readonly skills: ReadonlyMap<string, SkillDefinition>;
  /** Skills that could not be used (a malformed R2 upload, a name already taken). */
  readonly skipped: readonly SkippedSkill[];

  private constructor(skills: Map<string, SkillDefinition>, skipped: SkippedSkill[]) {
    this.skills = skills;
    this.skipped = skipped;
  }

  /**
   * A catalog from bundled files (a broken bundled skill is a build error, so it throws) and R2 files (a broken one
   * is skipped). A name in both is the bundled skill's.
   */
  static from(bundled: readonly SkillSourceFile[], uploaded: readonly SkillSourceFile[] = []): SkillCatalog {
    const skills = new Map<string, SkillDefinition>();
    const skipped: SkippedSkill[] = [];
    for (const [folder, files] of groupByFolder(bundled)) skills.set(folder, parseSkill(folder, files, "bundled"));
    for (const [folder, files] of groupByFolder(uploaded)) {
      if (skills.has(folder)) {
        skipped.push({ name: folder, reason: "a bundled skill has this name" });
        continue;
      }
      try {
        skills.set(folder, parseSkill(folder, files, "r2"));
      } catch (error) {
        skipped.push({ name: folder, reason: error instanceof SkillFormatError ? error.message : String(error) });
      }
    }
    return new SkillCatalog(skills, skipped);
  }

  /** The bundled skills plus those in `bucket` under skills/ (listed and read now). */
  static async load(bundled: readonly SkillSourceFile[], bucket: BlobStore | null): Promise<SkillCatalog> {
    if (!bucket) return SkillCatalog.from(bundled);
    const uploaded: SkillSourceFile[] = [];
    let bytes = 0;
    let cursor: string | undefined;
    do {
      const page = await bucket.list({ prefix: R2_SKILLS_PREFIX, ...(cursor ? { cursor } : {}) });
      for (const object of page.objects) {
        bytes += object.size;
        if (bytes > MAX_R2_CATALOG_BYTES) break;
        const body = await bucket.get(object.key);
        if (body) uploaded.push({ path: object.key.slice(R2_SKILLS_PREFIX.length), content: await body.text() });
      }
      cursor = page.truncated && bytes <= MAX_R2_CATALOG_BYTES ? page.cursor : undefined;
    } while (cursor);
    const catalog = SkillCatalog.from(bundled, uploaded);
    if (bytes > MAX_R2_CATALOG_BYTES) {
      return new SkillCatalog(new Map(catalog.skills), [
        ...catalog.skipped,
        { name: "(r2)", reason: `skills in R2 over ${MAX_R2_CATALOG_BYTES} bytes were not read` },
      ]);
    }
    return catalog;
  }

  /** Seed 002 SkillMetadata of every skill, by name. */
  list(): SkillMetadata[] {
    return [...this.skills.values()].map((s) => s.metadata).sort((a, b) => a.name.localeCompare(b.name));
  }

  get(name: string): SkillDefinition | undefined {
    return this.skills.get(name);
  }

  /** A file of any skill by its catalog path ("release-notes/template.md"), or undefined. */
  file(path: string): string | undefined {
    const name = path.split("/")[0] ?? "";
    return this.skills.get(name)?.files[path];
  }

  get size(): number {
    return this.skills.size;
  }
}
