import { z } from 'zod';
import type { JsonRequest, LlmClient } from '../llm/types.ts';
import {
  chunkLines,
  estimateTokens,
  formatLine,
  nearestLineStart,
  packConsecutive,
  transcriptLines,
  type TranscriptLine,
} from '../llm/chunkTranscript.ts';
import {
  keyPoint,
  summaryContent,
  type GeneratedSummary,
  type KeyPoint,
  type SummaryContent,
  type SummaryGenerator,
  type SummaryInput,
  type SummaryProgress,
  type TokenUsage,
} from './summary.ts';

/** What one chunk (or, when combining in rounds, a run of chunks) comes down to. */
const partialSummary = z.object({
  summary: z.string().min(1).describe('what this part says, in one or two paragraphs'),
  keyPoints: z.array(keyPoint).min(1).max(6).describe('in the order of the video'),
  tags: z.array(z.string().min(1).max(40)).max(8).describe('salient topics, lower case'),
  language: summaryContent.shape.language,
});
type PartialSummary = z.infer<typeof partialSummary> & { from: number; to: number };

/*
 * The token budget of one call: the context window, less a 10% margin for the estimate's error and
 * the chat template's own tokens, less the answer (max_tokens), the note a malformed answer's retry
 * adds, the system prompt, the JSON schema (sent as response_format or, in json_object mode, in the
 * system prompt) and the user message's headers. What is left is for the transcript or the parts.
 */
const SAFETY = 0.9;
const MESSAGE_OVERHEAD = 24;
const RETRY_NOTE_TOKENS = 250;
const HEADER_TOKENS = 30;
const schemaTokens = (schema: z.ZodType) => estimateTokens(JSON.stringify(z.toJSONSchema(schema))) + 20;
const SUMMARY_SCHEMA_TOKENS = schemaTokens(summaryContent);
const PARTIAL_SCHEMA_TOKENS = schemaTokens(partialSummary);

const TIMESTAMPS = 'Every transcript line starts with the second of the video at which it is said, in square brackets, like [754].';
const language = (hint: string | null) =>
  `Write in the language the transcript is in${hint ? ` (probably "${hint}")` : ''}, and give its ISO 639-1 code (639-3 when there is none) as language.`;
const SUMMARY_FIELDS =
  'title: a short title for what the video is about. tldr: two or three sentences. keyPoints: up to 12 main points, in the order of the video. ' +
  'detailedSummary: paragraphs in the order of the video, separated by blank lines. tags: up to 12 salient topics, lower case.';
const PARTIAL_FIELDS =
  'summary: what this part says, in one or two paragraphs. keyPoints: up to 6 main points, in the order they are made. tags: up to 8 topics, lower case.';
const POINT_TIMES = 'startSeconds of a key point is the bracketed second where it is made.';

/** The answer's limit in words (about 0.6 of its tokens), so the model writes to fit rather than being cut off. */
const answer = (tokens: number) => `Keep the whole answer under ${Math.floor(tokens * 0.6)} words. Answer with JSON only.`;
const COMBINING = 'You combine the summaries of consecutive parts of one video into one summary of';
const POINTS_GIVEN = 'Key points carry the second of the video where they are made, in square brackets.';

const prompts = {
  whole: (hint: string | null, tokens: number) =>
    `You summarise a video from its transcript. ${TIMESTAMPS} ${language(hint)} ${SUMMARY_FIELDS} ${POINT_TIMES} ${answer(tokens)}`,
  chunk: (hint: string | null, tokens: number) =>
    `You summarise one part of a video's transcript. ${TIMESTAMPS} ${language(hint)} ${PARTIAL_FIELDS} ${POINT_TIMES} ${answer(tokens)}`,
  combine: (hint: string | null, tokens: number) =>
    `${COMBINING} the whole video. ${POINTS_GIVEN} ${language(hint)} ${SUMMARY_FIELDS} ${POINT_TIMES} ${answer(tokens)}`,
  combineParts: (hint: string | null, tokens: number) =>
    `${COMBINING} those parts. ${POINTS_GIVEN} ${language(hint)} ${PARTIAL_FIELDS} ${POINT_TIMES} ${answer(tokens)}`,
};

/**
 * Summaries by an LLM. A transcript that fits the model's context is summarised in one call; a
 * longer one is cut by time into chunks that fit (map: a partial summary of each), whose partials
 * are then combined (reduce), in rounds when they do not fit one call together.
 */
export function createLlmSummaryGenerator(client: LlmClient): SummaryGenerator {
  return { model: client.model, summarise: (input, options = {}) => summarise(client, input, options) };
}

interface Run {
  client: LlmClient;
  title: string;
  hint: string | null;
  /** max_tokens of the summary's answer and of a partial one. */
  finalTokens: number;
  partialTokens: number;
  usage: TokenUsage;
  signal?: AbortSignal;
  progress: (progress: SummaryProgress) => void;
}

async function summarise(
  client: LlmClient,
  input: SummaryInput,
  options: { signal?: AbortSignal; onProgress?: (progress: SummaryProgress) => void },
): Promise<GeneratedSummary> {
  const lines = transcriptLines(input.cues);
  if (lines.length === 0) throw new Error('the transcript has no text to summarise');
  const hint = /^([a-z]{2,3})(?:[-_].*)?$/i.exec(input.language ?? '')?.[1]?.toLowerCase() ?? null;
  const run: Run = {
    client,
    title: input.title ? `Video title: ${input.title.slice(0, 200)}\n` : '',
    hint,
    finalTokens: clamp(Math.floor(client.contextTokens / 4), 512, 2048),
    partialTokens: clamp(Math.floor(client.contextTokens / 8), 256, 1024),
    usage: { prompt: 0, completion: 0 },
    ...(options.signal ? { signal: options.signal } : {}),
    progress: options.onProgress ?? (() => {}),
  };
  let content: SummaryContent;
  const whole = prompts.whole(hint, run.finalTokens);
  if (linesTokens(lines) <= budget(run, whole, run.finalTokens, SUMMARY_SCHEMA_TOKENS)) {
    content = await askSummary(run, whole, `${run.title}Transcript:\n${lines.map(formatLine).join('\n')}`);
    run.progress({ stage: 'chunk', chunk: 1, of: 1, percent: 90 });
  } else {
    const chunkBudget = budget(run, prompts.chunk(hint, run.partialTokens), run.partialTokens, PARTIAL_SCHEMA_TOKENS);
    const partials = await summariseChunks(run, chunkLines(lines, chunkBudget), lines);
    content = await combine(run, partials, lines, 1);
  }
  return { ...finish(content, lines), llmModel: client.model, tokensUsed: run.usage };
}

/** The map step: every chunk at once (the client caps the calls in flight); the first failure stops the others. */
async function summariseChunks(run: Run, chunks: TranscriptLine[][], lines: TranscriptLine[]): Promise<PartialSummary[]> {
  const stop = new AbortController();
  const signal = run.signal ? AbortSignal.any([run.signal, stop.signal]) : stop.signal;
  const system = prompts.chunk(run.hint, run.partialTokens);
  let done = 0;
  try {
    return await Promise.all(
      chunks.map(async (chunk, index) => {
        const from = chunk[0]!.start;
        const to = chunk[chunk.length - 1]!.start;
        const user = `${run.title}Part ${index + 1} of ${chunks.length}, from [${from}] to [${to}]:\n${chunk.map(formatLine).join('\n')}`;
        const value = await askPartial(run, system, user, signal);
        done++;
        run.progress({ stage: 'chunk', chunk: done, of: chunks.length, percent: 10 + Math.round((75 * done) / chunks.length) });
        return { ...value, keyPoints: placePoints(value.keyPoints, lines, from, to), from, to };
      }),
    );
  } catch (error) {
    stop.abort();
    throw error;
  }
}

/** The reduce step: all partials in one call when they fit, else neighbours combined in groups and tried again. */
async function combine(run: Run, partials: PartialSummary[], lines: TranscriptLine[], round: number): Promise<SummaryContent> {
  run.progress({ stage: 'combining', percent: Math.min(95, 85 + 5 * (round - 1)) });
  const hint = majorityLanguage(partials, run.hint);
  const system = prompts.combine(hint, run.finalTokens);
  const texts = partials.map(formatPartial);
  // A single partial is sent even if over budget: there is nothing left to split.
  if (
    partials.length === 1 ||
    texts.reduce((sum, text) => sum + estimateTokens(text) + 2, 0) <= budget(run, system, run.finalTokens, SUMMARY_SCHEMA_TOKENS)
  ) {
    return askSummary(
      run,
      system,
      `${run.title}Summaries of the ${partials.length} consecutive parts of the video:\n\n${texts.join('\n\n')}`,
    );
  }
  const groupBudget = budget(run, prompts.combineParts(hint, run.partialTokens), run.partialTokens, PARTIAL_SCHEMA_TOKENS);
  // Two parts a group at least, so every round shrinks the list.
  const groups = packConsecutive(
    texts.map((text) => estimateTokens(text) + 2),
    groupBudget,
    2,
  );
  const merged = await Promise.all(
    groups.map((group) =>
      combineGroup(
        run,
        group.map((index) => partials[index]!),
        lines,
      ),
    ),
  );
  return combine(run, merged, lines, round + 1);
}

async function combineGroup(run: Run, group: PartialSummary[], lines: TranscriptLine[]): Promise<PartialSummary> {
  if (group.length === 1) return group[0]!;
  const from = group[0]!.from;
  const to = group[group.length - 1]!.to;
  const user = `${run.title}Summaries of ${group.length} consecutive parts of the video, from [${from}] to [${to}]:\n\n${group.map(formatPartial).join('\n\n')}`;
  const value = await askPartial(run, prompts.combineParts(majorityLanguage(group, run.hint), run.partialTokens), user);
  return { ...value, keyPoints: placePoints(value.keyPoints, lines, from, to), from, to };
}

function formatPartial(partial: PartialSummary): string {
  const points = partial.keyPoints.map((point) => `[${point.startSeconds}] ${point.text}`).join('\n');
  const topics = partial.tags.length > 0 ? `\nTopics: ${partial.tags.join(', ')}` : '';
  return `Part from [${partial.from}] to [${partial.to}]:\n${partial.summary}\nKey points:\n${points}${topics}`;
}

/** Key points on line starts within [from, to], in video order: the model's times are checked, not trusted. */
function placePoints(points: KeyPoint[], lines: TranscriptLine[], from: number, to: number): KeyPoint[] {
  return points
    .map((point) => ({ text: point.text, startSeconds: nearestLineStart(lines, clamp(point.startSeconds, from, to)) }))
    .sort((a, b) => a.startSeconds - b.startSeconds);
}

/** The final content with key points placed on the transcript and tags tidied, checked once more. */
function finish(content: SummaryContent, lines: TranscriptLine[]): SummaryContent {
  const tags = [...new Set(content.tags.map((tag) => tag.trim().toLowerCase()).filter((tag) => tag.length > 0))];
  return summaryContent.parse({
    ...content,
    tags,
    keyPoints: placePoints(content.keyPoints, lines, lines[0]!.start, lines[lines.length - 1]!.start),
  });
}

const askSummary = (run: Run, system: string, user: string) =>
  ask(run, { system, user, schema: summaryContent, schemaName: 'video_summary', maxOutputTokens: run.finalTokens });
const askPartial = (run: Run, system: string, user: string, signal?: AbortSignal) =>
  ask(run, {
    system,
    user,
    schema: partialSummary,
    schemaName: 'partial_summary',
    maxOutputTokens: run.partialTokens,
    ...(signal ? { signal } : {}),
  });

async function ask<S extends z.ZodType>(run: Run, request: JsonRequest<S>): Promise<z.output<S>> {
  const signal = request.signal ?? run.signal;
  const { value, usage } = await run.client.completeJson({ ...request, ...(signal ? { signal } : {}) });
  run.usage.prompt += usage.prompt;
  run.usage.completion += usage.completion;
  return value;
}

/** The parts' own verdict on the language beats the track's label. */
function majorityLanguage(partials: PartialSummary[], fallback: string | null): string | null {
  const counts = new Map<string, number>();
  for (const partial of partials) counts.set(partial.language, (counts.get(partial.language) ?? 0) + 1);
  return [...counts].sort((a, b) => b[1] - a[1])[0]?.[0] ?? fallback;
}

/** What is left of the context for the transcript or the parts, after everything else the call carries. */
function budget(run: Run, system: string, answerTokens: number, schemaTokens: number): number {
  const fixed =
    answerTokens + RETRY_NOTE_TOKENS + MESSAGE_OVERHEAD + HEADER_TOKENS + estimateTokens(run.title) + estimateTokens(system) + schemaTokens;
  return Math.floor(run.client.contextTokens * SAFETY) - fixed;
}

const linesTokens = (lines: TranscriptLine[]) => lines.reduce((sum, line) => sum + estimateTokens(formatLine(line)) + 1, 0);

function clamp(value: number, min: number, max: number): number {
  return Math.min(max, Math.max(min, value));
}
