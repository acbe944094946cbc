// The NLP metrics of an evaluation, BLEU and ROUGE-L, written by hand (no maintained library runs in workerd without
// a tokenizer or model download). Both compare word tokens: lower-cased runs of letters and digits, so punctuation
// and case do not count. Each returns a score from 0 to 1.

/** Lower-cased words (Unicode letters and digits), in order. */
export function tokens(text: string): string[] {
  return text.toLowerCase().match(/[\p{L}\p{N}]+/gu) ?? [];
}

function ngramCounts(words: readonly string[], n: number): Map<string, number> {
  const counts = new Map<string, number>();
  for (let i = 0; i + n <= words.length; i++) {
    const gram = words.slice(i, i + n).join("\u0000");
    counts.set(gram, (counts.get(gram) ?? 0) + 1);
  }
  return counts;
}

/**
 * Sentence BLEU with one reference: Papineni et al. 2002, "BLEU: a Method for Automatic Evaluation of Machine
 * Translation" (ACL): the geometric mean of the modified (clipped) n-gram precisions p_1..p_N with uniform weights,
 * times the brevity penalty BP = 1 if c > r else exp(1 - r/c) (c, r: candidate and reference lengths). One sentence
 * has too few n-grams for the corpus formula, so p_n for n ≥ 2 is smoothed by adding one to its numerator and
 * denominator (Lin and Och 2004, "ORANGE", COLING; smoothing 2 of Chen and Cherry 2014). An empty candidate, or one
 * sharing no word with the reference, scores 0.
 */
export function bleu(candidate: string, reference: string, maxN = 4): number {
  const cand = tokens(candidate);
  const ref = tokens(reference);
  if (cand.length === 0 || ref.length === 0) return 0;
  let logSum = 0;
  for (let n = 1; n <= maxN; n++) {
    const candCounts = ngramCounts(cand, n);
    const refCounts = ngramCounts(ref, n);
    let matched = 0;
    let total = 0;
    for (const [gram, count] of candCounts) {
      matched += Math.min(count, refCounts.get(gram) ?? 0);
      total += count;
    }
    const precision = n === 1 ? matched / total : (matched + 1) / (total + 1);
    if (precision === 0) return 0;
    logSum += Math.log(precision) / maxN;
  }
  const brevity = cand.length > ref.length ? 1 : Math.exp(1 - ref.length / cand.length);
  return brevity * Math.exp(logSum);
}

/**
 * The words of the candidate and of the reference ROUGE-L matches: the LCS is quadratic (an unbounded answer of
 * 15,000 words took seconds), so it is computed over the first 2,000 words of each, at most 4 million steps.
 */
export const ROUGE_L_MAX_WORDS = 2_000;

/**
 * ROUGE-L: Lin 2004, "ROUGE: A Package for Automatic Evaluation of Summaries" (ACL workshop), section 3.1: with LCS
 * the longest common subsequence of words, R = LCS/|reference|, P = LCS/|candidate|, and F = (1+β²)RP/(R+β²P) with
 * β = 1 (the F1 that Google's rouge-score reports). The LCS is that of the first ROUGE_L_MAX_WORDS words of each, the
 * lengths are the whole texts': past the cap a word can only lower the score, never raise it.
 */
export function rougeL(candidate: string, reference: string): number {
  const cand = tokens(candidate);
  const ref = tokens(reference);
  if (cand.length === 0 || ref.length === 0) return 0;
  const lcs = longestCommonSubsequence(
    cand.slice(0, ROUGE_L_MAX_WORDS),
    ref.slice(0, ROUGE_L_MAX_WORDS),
    (a, b) => a === b,
  );
  if (lcs === 0) return 0;
  const recall = lcs / ref.length;
  const precision = lcs / cand.length;
  return (2 * recall * precision) / (recall + precision);
}

/** The length of the longest common subsequence of `a` and `b` under `same` (dynamic programming, O(|a|·|b|)). */
export function longestCommonSubsequence<A, B>(
  a: readonly A[],
  b: readonly B[],
  same: (x: A, y: B) => boolean,
): number {
  let previous = new Array<number>(b.length + 1).fill(0);
  for (const x of a) {
    const row = new Array<number>(b.length + 1).fill(0);
    for (let j = 1; j <= b.length; j++) {
      row[j] = same(x, b[j - 1] as B) ? (previous[j - 1] ?? 0) + 1 : Math.max(previous[j] ?? 0, row[j - 1] ?? 0);
    }
    previous = row;
  }
  return previous[b.length] ?? 0;
}
