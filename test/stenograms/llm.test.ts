import { readFileSync } from 'node:fs';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { LlmError } from '../../core/llm/llmError.ts';
import { createLlmClient } from '../../core/llm/openaiClient.ts';
import { createLlmStenogramGenerator } from '../../core/stenograms/createLlmStenogramGenerator.ts';
import { createOfflineStenogramGenerator } from '../../core/stenograms/createOfflineStenogramGenerator.ts';
import type { GeneratedStenogram, StenogramCue, StenogramProgress } from '../../core/stenograms/stenogram.ts';
import { comparableWords, unfaithfulness } from '../../core/stenograms/wordGuard.ts';
import { parse } from '../../core/subtitles/parse.ts';
import { createTokeniser } from '../../core/text/tokenise.ts';
import { itReal } from '../kit/describeReal.ts';
import { realFixture } from '../kit/realFixtures.ts';
import { start, type ChatRequest, type OpenAiServer } from '../kit/servers/openai-server.ts';
import { TALK_WORDS } from '../kit/talkWords.ts';

/**
 * A conversation: `turns` turns of `cuesPerTurn` cues of 8 words, 2 s a cue; the first `named`
 * turns open with ">> ANNA:" / ">> BEN:", the others with a bare ">>" (the speakerChange flag).
 * The words cycle through the vocabulary with a period of 16, so no caption repeats the end of the
 * one before (which would be roll-up).
 */
function conversation(turns: number, named: number, cuesPerTurn = 3): StenogramCue[] {
  const cues: StenogramCue[] = [];
  let word = 0;
  for (let turn = 0; turn < turns; turn++) {
    for (let c = 0; c < cuesPerTurn; c++) {
      const text = Array.from({ length: 8 }, () => TALK_WORDS[(word++ * 5) % 16]).join(' ');
      const start = cues.length * 2;
      const label = c === 0 && turn < named ? `${turn % 2 ? 'BEN' : 'ANNA'}: ` : '';
      cues.push({ start, end: start + 2, text: `${label}${text}`, ...(c === 0 ? { speakerChange: true } : {}) });
    }
  }
  return cues;
}

const userOf = (request: ChatRequest) => request.messages.find((message) => message.role === 'user')!.content;
const partOf = (request: ChatRequest) => Number(/Part (\d+) of/.exec(userOf(request))![1]);
const linesOf = (request: ChatRequest) =>
  [...userOf(request).matchAll(/^\[(\d+)\] (.+)$/gm)].map((match) => ({ start: Number(match[1]), text: match[2]! }));

/**
 * A model that does as it is told: a paragraph per turn, the speaker named by the line or else the
 * other of the two speakers so far (`names`), the words passed through `rewrite` (unchanged by default).
 */
function obedient(request: ChatRequest, rewrite = (text: string) => text, names = ['Speaker 1', 'Speaker 2']) {
  let speaker = /Speaking at the end of the previous part: (.+)\.$/m.exec(userOf(request))?.[1] ?? names[0]!;
  const paragraphs: Array<{ startSeconds: number; speaker: string; text: string }> = [];
  for (const line of linesOf(request)) {
    const turn = /^>> (?:([A-Z]+): )?(.*)$/.exec(line.text);
    if (turn) speaker = turn[1] ?? (speaker.toLowerCase() === names[0]!.toLowerCase() ? names[1]! : names[0]!);
    const text = rewrite(turn ? turn[2]! : line.text);
    if (turn || paragraphs.length === 0) paragraphs.push({ startSeconds: line.start, speaker, text });
    else paragraphs.at(-1)!.text += ` ${text}`;
  }
  return { paragraphs };
}

/** What a request costs at 3 characters a token (the prompt and the schema), plus the answer it allows. */
function requestTokens(request: ChatRequest): number {
  const prompt = request.messages.reduce((sum, message) => sum + message.content.length, 0);
  return Math.ceil((prompt + JSON.stringify(request.response_format ?? {}).length) / 3) + (request.max_tokens ?? 0);
}

const TAG = /^\*\*\[(\d+(?::\d\d)+)\] (.+?):\*\* (.*)$/;
const paragraphs = (stenogram: GeneratedStenogram) =>
  stenogram.markdown
    .trimEnd()
    .split('\n\n')
    .slice(2)
    .flatMap((block) => {
      const match = TAG.exec(block);
      return match ? [{ time: match[1]!, speaker: match[2]!, text: match[3]! }] : [];
    });
const writtenWords = (stenogram: GeneratedStenogram) => paragraphs(stenogram).flatMap((paragraph) => paragraph.text.split(' '));
const transcriptWords = (cues: StenogramCue[]) => cues.flatMap((cue) => cue.text.replace(/^[A-Z]+: /, '').split(' '));

let server: OpenAiServer;
afterEach(() => server.close());

function generator(contextTokens: number) {
  const client = createLlmClient({
    baseUrl: server.url,
    model: 'test-model',
    contextTokens,
    concurrency: 2,
    timeoutMs: 10_000,
    retries: 1,
    minRetryDelayMs: 10,
  });
  return createLlmStenogramGenerator(client, createOfflineStenogramGenerator());
}
const video = (cues: StenogramCue[]) => ({
  videoId: 'dQw4w9WgXcQ',
  title: 'A conversation',
  channelTitle: 'A channel',
  language: 'en',
  cues,
});

describe('the LLM stenogram generator', () => {
  describe('with a model that keeps the words', () => {
    beforeEach(async () => {
      server = await start({ answer: (request) => obedient(request) });
    });

    it("labels unnamed voices in the transcript's language, whether the model writes Speaker N or the language's label", async () => {
      const cues = conversation(4, 0);
      const french = { ...video(cues), language: 'fr' };
      const stenogram = await generator(8192).generate(french);
      expect(stenogram).toMatchObject({ language: 'fr', fallbackChunks: 0 });
      const alternating = ['Intervenant 2', 'Intervenant 1', 'Intervenant 2', 'Intervenant 1'];
      expect(paragraphs(stenogram).map((paragraph) => paragraph.speaker)).toEqual(alternating);
      server.close();
      server = await start({ answer: (request) => obedient(request, undefined, ['Intervenant 1', 'Intervenant 2']) });
      const own = await generator(8192).generate(french);
      expect(own.fallbackChunks).toBe(0);
      expect(paragraphs(own).map((paragraph) => paragraph.speaker)).toEqual(alternating);
    });

    it("keeps the model's paragraphs and speakers, in the offline generator's Markdown shape", async () => {
      const cues = conversation(4, 2);
      const stenogram = await generator(8192).generate(video(cues));
      expect(stenogram).toMatchObject({
        llmModel: 'test-model',
        chunks: 1,
        fallbackChunks: 0,
        language: 'en',
        speakers: 4,
        paragraphs: 4,
        words: 96,
      });
      expect(stenogram.tokensUsed!.prompt).toBeGreaterThan(0);
      expect(stenogram.tokensUsed!.completion).toBeGreaterThan(0);
      expect(paragraphs(stenogram).map((paragraph) => [paragraph.time, paragraph.speaker])).toEqual([
        ['0:00', 'ANNA'],
        ['0:06', 'BEN'],
        ['0:12', 'Speaker 1'],
        ['0:18', 'Speaker 2'],
      ]);
      expect(writtenWords(stenogram)).toEqual(transcriptWords(cues));
      expect(stenogram.markdown.split('\n\n').slice(0, 2)).toEqual([
        '# A conversation',
        'Channel: A channel · Video: https://www.youtube.com/watch?v=dQw4w9WgXcQ · Language: en',
      ]);

      const [request] = server.requests();
      expect(request!.body.response_format).toMatchObject({ type: 'json_schema', json_schema: { name: 'stenogram_chunk' } });
      expect(userOf(request!.body)).toContain('[0] >> ANNA: archive');
      expect(userOf(request!.body)).toContain('No speakers are named yet.');
    });

    it('chunks a 2-hour transcript within an 8k context, one chunk after another, every word once', async () => {
      // 3,600 cues of 5 words, a turn every 20 cues.
      const cues: StenogramCue[] = Array.from({ length: 3_600 }, (_, i) => ({
        start: i * 2,
        end: i * 2 + 2,
        text: Array.from({ length: 5 }, (_, k) => TALK_WORDS[((i * 5 + k) * 5) % 16]).join(' '),
        ...(i % 20 === 0 ? { speakerChange: true } : {}),
      }));
      const progress: StenogramProgress[] = [];
      const stenogram = await generator(8192).generate(video(cues), { onProgress: (step) => progress.push(step) });

      const requests = server.requests().map((entry) => entry.body);
      expect(requests.length).toBe(stenogram.chunks);
      expect(stenogram.chunks).toBeGreaterThanOrEqual(4);
      for (const request of requests) expect(requestTokens(request)).toBeLessThanOrEqual(8192);
      expect(requests.map(partOf)).toEqual(requests.map((_, index) => index + 1));
      const starts = requests.flatMap((request) => linesOf(request).map((line) => line.start));
      expect(starts[0]).toBe(0);
      expect(starts.at(-1)).toBeGreaterThan(7_000);
      expect(starts).toEqual([...starts].sort((a, b) => a - b));

      expect(stenogram.fallbackChunks).toBe(0);
      expect(stenogram.words).toBe(18_000);
      expect(writtenWords(stenogram)).toEqual(cues.flatMap((cue) => cue.text.split(' ')));
      const chunkSteps = progress.filter((step) => step.stage === 'chunk');
      expect(chunkSteps.map((step) => step.chunk)).toEqual(requests.map((_, index) => index + 1));
      expect(progress.at(-1)).toEqual({ stage: 'writing', percent: 100 });
    });
  });

  it('catches a chunk the model paraphrased: that chunk is the offline text, the others stay the model’s', async () => {
    const paraphrase = (text: string) =>
      text
        .split(' ')
        .map((word, index) => (index % 3 === 0 ? 'basically' : word.replace('river', 'stream')))
        .join(' ');
    server = await start({ answer: (request) => (partOf(request) === 2 ? obedient(request, paraphrase) : obedient(request)) });
    const cues = conversation(12, 0);
    const stenogram = await generator(2048).generate(video(cues));
    expect(stenogram.chunks).toBeGreaterThanOrEqual(3);
    expect(stenogram.fallbackChunks).toBe(1);
    expect(stenogram.markdown).not.toContain('basically');
    expect(stenogram.markdown).not.toContain('stream');
    expect(writtenWords(stenogram)).toEqual(transcriptWords(cues));
  });

  it('accepts what a faithful model may still change: case and punctuation', async () => {
    const tidy = (text: string) => `${text[0]!.toUpperCase()}${text.slice(1).replace(/ (\w+) (\w+)$/, ', $1 $2')}.`;
    server = await start({ answer: (request) => obedient(request, tidy) });
    const stenogram = await generator(2048).generate(video(conversation(6, 0)));
    expect(stenogram.fallbackChunks).toBe(0);
    expect(paragraphs(stenogram)[0]!.text).toMatch(/^Archive .*\.$/);
  });

  it('keeps speakers consistent across chunks: the next request names the speakers so far', async () => {
    // The model calls the unnamed speakers of later chunks by the names it was given, in lower case.
    server = await start({
      answer: (request) => {
        const known = /Speakers so far: (.+?)\. /
          .exec(userOf(request))?.[1]
          ?.split(', ')
          .map((name) => name.toLowerCase());
        return obedient(request, undefined, known && known.length >= 2 ? known : undefined);
      },
    });
    const cues = conversation(16, 4);
    const stenogram = await generator(2048).generate(video(cues));
    expect(stenogram.chunks).toBeGreaterThanOrEqual(3);
    const [first, second] = server.requests().map((entry) => userOf(entry.body));
    expect(first).toContain('>> ANNA:');
    // The first part names all its speakers (the later ones name none), so its answer names them.
    const firstTurns = linesOf(server.requests()[0]!.body).filter((line) => line.text.startsWith('>>'));
    expect(firstTurns.every((line) => /^>> [A-Z]+: /.test(line.text))).toBe(true);
    expect(second).toContain('Speakers so far: ANNA, BEN. Speaking at the end of the previous part:');
    // Spelt as the captions spell them, whatever case the model wrote.
    expect(new Set(paragraphs(stenogram).map((paragraph) => paragraph.speaker))).toEqual(new Set(['ANNA', 'BEN']));
    expect(stenogram.speakers).toBe(2);
    expect(stenogram.fallbackChunks).toBe(0);
    const turns = paragraphs(stenogram).map((paragraph) => paragraph.speaker);
    expect(turns.every((speaker, index) => index === 0 || speaker !== turns[index - 1])).toBe(true);
  });

  it('writes a chunk whose answers are twice not JSON offline, and stops on a refused request', async () => {
    server = await start({ answer: (request) => obedient(request) });
    server.enqueue('malformed', 'malformed');
    const cues = conversation(4, 2);
    const stenogram = await generator(8192).generate(video(cues));
    expect(stenogram).toMatchObject({ chunks: 1, fallbackChunks: 1 });
    expect(writtenWords(stenogram)).toEqual(transcriptWords(cues));
    expect(paragraphs(stenogram).map((paragraph) => paragraph.speaker)).toEqual(['ANNA', 'BEN', 'Speaker 1', 'Speaker 2']);

    server.enqueue('unauthorized');
    await expect(generator(8192).generate(video(cues))).rejects.toBeInstanceOf(LlmError);
    const aborted = new AbortController();
    aborted.abort();
    await expect(generator(8192).generate(video(cues), { signal: aborted.signal })).rejects.toThrow(/abort/i);
    await expect(generator(1024).generate(video(cues))).rejects.toThrow(/no room/);
  });
});

/** Paragraphs as obedient() writes them; `tamper` changes the answer to part 2 only. */
type Paragraphs = ReturnType<typeof obedient>['paragraphs'];
const tamperingPart2 = (tamper: (paragraphs: Paragraphs) => void) => (request: ChatRequest) => {
  const answer = obedient(request);
  if (partOf(request) === 2) tamper(answer.paragraphs);
  return answer;
};
/** Changes the words of part 2's first paragraph (24 words of the vocabulary). */
const rewording = (change: (words: string[]) => void) =>
  tamperingPart2(([first]) => {
    const words = first!.text.split(' ');
    change(words);
    first!.text = words.join(' ');
  });

describe('the guard against a model that adds, drops, moves or relabels', () => {
  const cues = conversation(12, 0);
  const refused: Array<[string, (request: ChatRequest) => unknown, RegExp?]> = [
    ['three words inserted', rewording((words) => words.splice(10, 0, 'visit', 'evil', 'example')), /evil/],
    ['three words dropped', rewording((words) => words.splice(10, 3))],
    ['three words moved further on', rewording((words) => words.splice(12, 0, ...words.splice(4, 3)))],
    [
      'speakers relabelled with markup',
      tamperingPart2((paragraphs) => paragraphs.forEach((paragraph) => (paragraph.speaker = '<script>alert(1)</script> PWNED'))),
      /PWNED|script/,
    ],
    [
      'a speaker renamed to someone the captions never name',
      tamperingPart2((paragraphs) => (paragraphs[1]!.speaker = 'Mallory')),
      /Mallory/,
    ],
  ];
  for (const [tampering, answer, leak] of refused) {
    it(`writes the chunk offline when its answer has ${tampering}`, async () => {
      server = await start({ answer });
      const stenogram = await generator(2048).generate(video(cues));
      expect(stenogram.chunks).toBeGreaterThanOrEqual(3);
      expect(stenogram.fallbackChunks).toBe(1);
      expect(writtenWords(stenogram)).toEqual(transcriptWords(cues));
      expect(new Set(paragraphs(stenogram).map((paragraph) => paragraph.speaker))).toEqual(new Set(['Speaker 1', 'Speaker 2']));
      if (leak) expect(stenogram.markdown).not.toMatch(leak);
    });
  }

  it("keeps an answer with two words inserted, or honest, and escapes the model's text", async () => {
    server = await start({ answer: rewording((words) => words.splice(10, 0, '<truly>', 'evil.example')) });
    const inserted = await generator(2048).generate(video(cues));
    expect(inserted.fallbackChunks).toBe(0);
    expect(inserted.markdown).toContain('\\<truly> evil.example');
    expect(inserted.markdown).not.toMatch(/(?<!\\)</);
    await server.close();

    server = await start({ answer: (request) => obedient(request) });
    const honest = await generator(2048).generate(video(cues));
    expect(honest).toMatchObject({ chunks: inserted.chunks, fallbackChunks: 0 });
    expect(writtenWords(honest)).toEqual(transcriptWords(cues));
  });
});

describe('the word-for-word guard', () => {
  const tokeniser = createTokeniser('en');
  const why = (a: string, b: string) => unfaithfulness(comparableWords(a, tokeniser), comparableWords(b, tokeniser));
  const said = 'so we went down to the river and the water was higher than anyone had seen it in years, and nobody knew why';

  it('passes case, punctuation, hesitations and changes of a word or two; refuses three words added, dropped or moved, and rewording', () => {
    expect(
      why(said, 'So, um, we went down to the river. And the water was higher than anyone had seen it in years; and nobody knew why!'),
    ).toBeNull();
    expect(why(`uh ${said}`, said)).toBeNull();
    expect(why(said, 'So we went down to the river and the water was higher than anyone had seen in years and nobody knew why')).toBeNull();
    expect(
      why(said, 'So we went down to the river and the water was higher than anyone had ever seen it in 20 years and nobody knew why'),
    ).toBeNull();
    expect(
      why(said, 'So we went down to the big old muddy river and the water was higher than anyone had seen it in years and nobody knew why'),
    ).toMatch(/3 words in a row inserted or moved: "big old muddy"/);
    expect(why(said, 'So we went down to the river and the water was higher than anyone had seen and nobody knew why')).toMatch(
      /3 transcript words in a row dropped or moved: "it in years"/,
    );
    expect(
      why(said, 'so we went down to the river and the water was higher than anyone had seen it in years and nobody knew why at all'),
    ).toBeNull();
    expect(why(said, 'nobody knew why so we went down to the river and the water was higher than anyone had seen it in years and')).toMatch(
      /3 .* in a row .*moved: "nobody knew why"/,
    );
    expect(
      why(said, 'We walked to the river, where the water was higher than it had been for years, and no one knew the reason.'),
    ).not.toBeNull();
    expect(why(said, 'The river was unusually high.')).toMatch(/fewer than/);
    expect(why(said, `${said} and that is all I want to say about it today`)).toMatch(/more than/);
    expect(why('', '')).toBeNull();
  });

  it('refuses two words inserted after every word kept, which no run of three shows', () => {
    const words = said.split(' ');
    const padded = words.map((word, index) => (index % 4 === 0 ? `${word} buy now` : word)).join(' ');
    expect(why(said, padded)).toMatch(/inserted, more than 4 in 24|more than the transcript's/);
  });

  itReal('passes what a careful model makes of real live captions, chunk after chunk of 480 words', () => {
    // The CART captions of a 26-minute talk, with an "um" every 40 words as auto captions have them.
    const file = 'lattifai-benchmark/DQacCB9tDaw.en-uYU-mmqFLq8.vtt';
    const text = parse(readFileSync(realFixture(file), 'utf8'), 'vtt')
      .map((cue) => cue.text.replace(/^[A-Z][A-Z. ]+:\s*/, '').replace(/\[[^\]]*\]/g, ' '))
      .join(' ');
    const captions = text
      .split(/\s+/)
      .filter(Boolean)
      .flatMap((word, index) => (index % 40 === 39 ? ['um', word] : [word]));
    const numbers: Record<string, string> = { one: '1', two: '2', three: '3', four: '4', five: '5', ten: '10' };
    let changed = 0;
    for (let from = 0; from < captions.length; from += 480) {
      const chunk = captions.slice(from, from + 480);
      // Hesitations gone, numbers as digits, sentences capitalised, a comma now and then.
      const tidied = chunk
        .filter((word) => word !== 'um')
        .map((word, index, kept) => {
          const bare = word.toLowerCase().replace(/[.,?!]$/, '');
          const written = numbers[bare] ? `${numbers[bare]}${word.slice(bare.length)}` : word;
          if (written !== word) changed++;
          const capital = index === 0 || /[.?!]$/.test(kept[index - 1]!) ? `${written[0]!.toUpperCase()}${written.slice(1)}` : written;
          return index % 17 === 16 && !/[.,?!]$/.test(capital) ? `${capital},` : capital;
        });
      expect(why(chunk.join(' '), tidied.join(' ')), `words ${from}–${from + chunk.length}`).toBeNull();
    }
    expect(captions.length).toBeGreaterThan(3_000);
    expect(changed).toBeGreaterThan(10);
  });
});
