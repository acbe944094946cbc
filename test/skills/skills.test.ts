// Skills (seed 002): SKILL.md parsing, the catalog (bundled skills compiled from skills/, and skills uploaded to R2),
// the prefilter that ranks candidates for a task, and progressive disclosure within a token budget.
import { describe, expect, it } from "vitest";
import { BUNDLED_SKILL_FILES } from "../../src/skills/bundled.generated.ts";
import { R2_SKILLS_PREFIX, SkillCatalog } from "../../src/skills/catalog.ts";
import { computeBudget, disclose } from "../../src/skills/disclosure.ts";
import { prefilterSkills } from "../../src/skills/prefilter.ts";
import { parseSkill, SkillFormatError } from "../../src/skills/skill.ts";
import { estimateTokens } from "../../src/skills/tokens.ts";
import { runsBucket, runsStore } from "../support/runs-bucket.ts";

const skillMd = (front: string, body = "Do the thing.") => `---\n${front}\n---\n\n${body}\n`;

function parseError(folder: string, files: { path: string; content: string }[]): string {
  try {
    parseSkill(folder, files, "bundled");
  } catch (error) {
    expect(error).toBeInstanceOf(SkillFormatError);
    return (error as Error).message;
  }
  throw new Error("parsed");
}

describe("SKILL.md", () => {
  it("parses the frontmatter, the instructions and the files beside it", () => {
    const skill = parseSkill(
      "pdf-forms",
      [
        { path: "pdf-forms/SKILL.md", content: skillMd("name: pdf-forms\ndescription: Fill PDF forms.\nlicense: MIT") },
        { path: "pdf-forms/reference/fields.md", content: "# Fields" },
      ],
      "r2",
    );
    expect(skill.metadata).toEqual({
      name: "pdf-forms",
      description: "Fill PDF forms.",
      path: "pdf-forms/SKILL.md",
      files: ["pdf-forms/reference/fields.md"],
      extra: { license: "MIT" },
      source: "r2",
    });
    expect(skill.body).toBe("Do the thing.");
    expect(skill.files["pdf-forms/reference/fields.md"]).toBe("# Fields");
  });

  it("says which file is wrong and why", () => {
    const file = (content: string) => [{ path: "s/SKILL.md", content }];
    expect(parseError("s", [])).toMatch(/s\/SKILL\.md: missing/);
    expect(parseError("s", file("no frontmatter"))).toMatch(/must start with YAML frontmatter/);
    expect(parseError("s", file(skillMd("name: s\ndescription: a: b")))).toMatch(/not valid YAML/);
    expect(parseError("s", file(skillMd("name: Bad Name\ndescription: x")))).toMatch(/name must be lowercase/);
    expect(parseError("s", file(skillMd("name: other\ndescription: x")))).toMatch(/must be the folder's name/);
    expect(parseError("s", file(skillMd("name: s")))).toMatch(/description is required/);
    expect(parseError("s", file(skillMd("name: s\ndescription: x", "")))).toMatch(/no instructions/);
    expect(
      parseError("s", [...file(skillMd("name: s\ndescription: x")), { path: "s/../escape.md", content: "x" }]),
    ).toMatch(/not a file inside s\//);
  });
});

describe("the catalog", () => {
  it("holds the skills compiled from skills/ (the build checked them)", () => {
    const catalog = SkillCatalog.from(BUNDLED_SKILL_FILES);
    expect(catalog.list().map((s) => s.name)).toEqual(["incident-triage", "release-notes"]);
    expect(catalog.get("release-notes")?.metadata.files).toEqual([
      "release-notes/style.md",
      "release-notes/template.md",
    ]);
    expect(catalog.file("incident-triage/severity.md")).toContain("SEV1");
    expect(catalog.file("incident-triage/nope.md")).toBeUndefined();
  });

  it("adds skills uploaded to R2, skipping a broken one and one whose name a bundled skill has", async () => {
    const id = crypto.randomUUID().slice(0, 8);
    const good = `uploaded-${id}`;
    const broken = `broken-${id}`;
    await runsBucket().put(
      `${R2_SKILLS_PREFIX}${good}/SKILL.md`,
      skillMd(`name: ${good}\ndescription: Uploaded at run time.`),
    );
    await runsBucket().put(`${R2_SKILLS_PREFIX}${good}/notes.md`, "notes");
    await runsBucket().put(`${R2_SKILLS_PREFIX}${broken}/SKILL.md`, "no frontmatter");
    await runsBucket().put(`${R2_SKILLS_PREFIX}release-notes/SKILL.md`, skillMd("name: release-notes\ndescription: x"));
    try {
      const catalog = await SkillCatalog.load(BUNDLED_SKILL_FILES, runsStore());
      expect(catalog.get(good)?.metadata).toMatchObject({ source: "r2", files: [`${good}/notes.md`] });
      expect(catalog.get("release-notes")?.metadata.source).toBe("bundled");
      expect(catalog.skipped).toEqual(
        expect.arrayContaining([
          { name: broken, reason: expect.stringContaining("must start with YAML frontmatter") },
          { name: "release-notes", reason: "a bundled skill has this name" },
        ]),
      );
    } finally {
      await runsBucket().delete(
        [`${good}/SKILL.md`, `${good}/notes.md`, `${broken}/SKILL.md`, "release-notes/SKILL.md"].map(
          (p) => R2_SKILLS_PREFIX + p,
        ),
      );
    }
  });
});

describe("the prefilter", () => {
  const catalog = SkillCatalog.from(BUNDLED_SKILL_FILES);

  it("ranks the skills that match the task first, with the terms that matched", () => {
    const [first, second] = prefilterSkills("Our checkout API has an outage and errors spiked", catalog.list());
    expect(first).toMatchObject({ name: "incident-triage", matched_terms: expect.arrayContaining(["outage"]) });
    expect(first?.score).toBeGreaterThan(0);
    expect(second?.score).toBe(0);
    expect(prefilterSkills("Draft the changelog for version 2.4", catalog.list())[0]?.name).toBe("release-notes");
    // Naming a skill outright selects it.
    expect(prefilterSkills("use release-notes", catalog.list())[0]?.name).toBe("release-notes");
  });

  it("keeps the catalog's order when nothing matches, and trims to the limit", () => {
    const candidates = prefilterSkills("zzz qqq", catalog.list(), 1);
    expect(candidates).toEqual([
      { name: "incident-triage", description: expect.any(String), score: 0, matched_terms: [] },
    ]);
  });
});

describe("progressive disclosure", () => {
  const catalog = SkillCatalog.from(BUNDLED_SKILL_FILES);

  it("splits the context: response headroom, the prompt, and what is left for skills", () => {
    expect(computeBudget({ maxContextTokens: 200_000, responseHeadroomTokens: 8_000, promptTokens: 2_000 })).toEqual({
      max_context_tokens: 200_000,
      response_headroom_tokens: 8_000,
      allocated_prompt_tokens: 2_000,
      allocated_disclosure_tokens: 190_000,
    });
    expect(computeBudget({ maxContextTokens: 1_000, responseHeadroomTokens: 900, promptTokens: 500 })).toMatchObject({
      allocated_prompt_tokens: 100,
      allocated_disclosure_tokens: 0,
    });
  });

  it("loads the paths asked for within the budget, refusing unknown ones, repeats and what does not fit", () => {
    const skill = "release-notes/SKILL.md";
    const template = "release-notes/template.md";
    const all = disclose(catalog, [skill, template, "release-notes/missing.md", skill], 10_000, "skill_files");
    expect(all.paths).toEqual([skill, template]);
    expect(all.refused).toEqual([{ path: "release-notes/missing.md", reason: "unknown_path" }]);
    expect(all.total_tokens).toBe(all.items.reduce((s, i) => s + estimateTokens(i.content), 0));
    expect(all.total_bytes).toBeGreaterThan(0);

    const again = disclose(catalog, [skill], 10_000, "skill_files", new Set([skill]));
    expect(again.refused).toEqual([{ path: skill, reason: "already_disclosed" }]);

    const skillTokens = estimateTokens(catalog.file(skill) ?? "");
    const tight = disclose(catalog, [skill, template], skillTokens + 5, "skill_files");
    expect(tight.paths).toEqual([skill]);
    expect(tight.refused).toEqual([{ path: template, reason: "over_budget" }]);

    const cut = disclose(catalog, [skill], Math.ceil(skillTokens * 0.6), "skill_instructions");
    expect(cut.items[0]?.truncated).toBe(true);
    expect(cut.total_tokens).toBeLessThanOrEqual(Math.ceil(skillTokens * 0.6));
  });
});
