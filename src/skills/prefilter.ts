// The prefilter (seed 002 SkillCandidate, event skill_prefilter_completed): before the model sees the catalog, the
// skills are ranked against the task by lexical relevance (BM25 over each skill's name and description), so a large
// catalog costs a few candidates' metadata in the prompt, not all of it. With no match at all the catalog's first
// skills are kept: the model still chooses, the prefilter only orders and trims.
import type { SkillMetadata } from "./skill.ts";

export interface SkillCandidate {
  name: string;
  description: string;
  /** BM25 relevance to the task (0 when nothing matched). */
  score: number;
  /** The task's terms found in the skill's name or description. */
  matched_terms: string[];
}

export const DEFAULT_CANDIDATE_LIMIT = 8;

const STOPWORDS = new Set(
  "a an and are as at be but by can do for from has have how i in is it its me my of on or our please so that the their them then there these this to use was we what when which who will with you your".split(
    " ",
  ),
);

export function terms(text: string): string[] {
  return (text.toLowerCase().match(/[\p{L}\p{N}]+/gu) ?? []).filter((t) => t.length > 1 && !STOPWORDS.has(t));
}

/** The skills most relevant to `task`, best first, at most `limit`. */
export function prefilterSkills(
  task: string,
  skills: readonly SkillMetadata[],
  limit = DEFAULT_CANDIDATE_LIMIT,
): SkillCandidate[] {
  const query = [...new Set(terms(task))];
  const docs = skills.map((s) => terms(`${s.name.replaceAll("-", " ")} ${s.name} ${s.description}`));
  const averageLength = docs.reduce((sum, d) => sum + d.length, 0) / Math.max(docs.length, 1) || 1;
  const k1 = 1.2;
  const b = 0.75;
  const scored = skills.map((skill, i) => {
    const doc = docs[i] ?? [];
    let score = 0;
    const matched: string[] = [];
    for (const term of query) {
      const frequency = doc.filter((t) => t === term).length;
      if (frequency === 0) continue;
      matched.push(term);
      const containing = docs.filter((d) => d.includes(term)).length;
      const idf = Math.log(1 + (docs.length - containing + 0.5) / (containing + 0.5));
      score += (idf * frequency * (k1 + 1)) / (frequency + k1 * (1 - b + (b * doc.length) / averageLength));
    }
    // A task that names the skill outright wants it.
    if (task.toLowerCase().includes(skill.name)) score += 10;
    return {
      name: skill.name,
      description: skill.description,
      score: Math.round(score * 1000) / 1000,
      matched_terms: matched,
      index: i,
    };
  });
  return scored
    .sort((x, y) => y.score - x.score || x.index - y.index)
    .slice(0, limit)
    .map(({ index: _index, ...candidate }) => candidate);
}
