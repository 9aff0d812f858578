import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { createOfflineStenogramGenerator } from '../../core/stenograms/createOfflineStenogramGenerator.ts';
import type { GeneratedStenogram, StenogramCue, StenogramInput, StenogramProgress } from '../../core/stenograms/stenogram.ts';
import { validLanguageHint } from '../../core/stenograms/stenogramLanguage.ts';
import { escapeMarkdown } from '../../core/stenograms/stenogramMarkdown.ts';

// Synthetic transcripts in the shapes captions come in after the codec's normaliseCues: one line a
// cue, a ">>" as the speakerChange flag, "- " dashes and "NAME:" labels left in the text.

const generator = createOfflineStenogramGenerator();

/** Cues 2 s apart, each on screen until the next starts (no pauses). */
const cues = (...texts: Array<string | StenogramCue>): StenogramCue[] =>
  texts.map((text, i) => (typeof text === 'string' ? { start: i * 2, end: i * 2 + 2, text } : text));
const flagged = (start: number, text: string): StenogramCue => ({ start, end: start + 2, text, speakerChange: true });

const input = (list: StenogramCue[], extra: Partial<StenogramInput> = {}): StenogramInput => ({
  videoId: 'dQw4w9WgXcQ',
  title: 'A talk',
  channelTitle: 'A channel',
  language: 'en',
  cues: list,
  ...extra,
});
const generate = (list: StenogramCue[], extra: Partial<StenogramInput> = {}) => generator.generate(input(list, extra));

interface Tagged {
  time: string;
  speaker: string;
  text: string;
}
const TAG = /^\*\*\[(\d+(?::\d\d)+)\] (.+?):\*\* (.*)$/;

/** The document's blocks after the heading and the facts line. */
const body = (stenogram: GeneratedStenogram) => stenogram.markdown.trimEnd().split('\n\n').slice(2);
const paragraphs = (stenogram: GeneratedStenogram): Tagged[] =>
  body(stenogram).flatMap((block) => {
    const match = TAG.exec(block);
    return match ? [{ time: match[1]!, speaker: match[2]!, text: match[3]! }] : [];
  });
const unescapeMarkdown = (text: string) => text.replace(/\\(.)/g, '$1');
/** The words a reader sees in the paragraphs: tags and stage direction lines taken away, escapes undone. */
const spokenWords = (stenogram: GeneratedStenogram) =>
  paragraphs(stenogram).flatMap((paragraph) => unescapeMarkdown(paragraph.text).split(' '));

describe('offline stenograms: speakers', () => {
  it('writes each ">>" turn as its own paragraph, unnamed turns alternating Speaker 1 and Speaker 2', async () => {
    const stenogram = await generate([
      { start: 0, end: 2, text: 'so what brings you here today' },
      flagged(2, 'I came to talk about rivers'),
      { start: 4, end: 6, text: 'and the bridges over them' },
      flagged(6, 'bridges? tell me more'),
      flagged(8, 'well there are many'),
    ]);
    expect(paragraphs(stenogram)).toEqual([
      { time: '0:00', speaker: 'Speaker 1', text: 'so what brings you here today' },
      { time: '0:02', speaker: 'Speaker 2', text: 'I came to talk about rivers and the bridges over them' },
      { time: '0:06', speaker: 'Speaker 1', text: 'bridges? tell me more' },
      { time: '0:08', speaker: 'Speaker 2', text: 'well there are many' },
    ]);
    expect(stenogram).toMatchObject({
      speakers: 2,
      paragraphs: 4,
      words: 25,
      llmModel: 'afterimage-stenogram-1',
      tokensUsed: null,
      chunks: 0,
      fallbackChunks: 0,
    });
  });

  it('reads a ">>" that stayed inside a line (auto captions) as a turn too', async () => {
    const stenogram = await generate(cues('did you see it >> yes I did', 'it was huge'));
    expect(paragraphs(stenogram).map((p) => [p.speaker, p.text])).toEqual([
      ['Speaker 1', 'did you see it'],
      ['Speaker 2', 'yes I did it was huge'],
    ]);
  });

  it('invents no alternation: captions without any turn are one Speaker 1', async () => {
    const stenogram = await generate(cues('welcome back to the channel', 'today we look at engines', 'and why they fail'));
    expect(new Set(paragraphs(stenogram).map((p) => p.speaker))).toEqual(new Set(['Speaker 1']));
    expect(stenogram.speakers).toBe(1);
  });

  it('names speakers from NAME: labels, the same name (any case) always one speaker, spelt as first written', async () => {
    const stenogram = await generate([
      flagged(0, 'MIRA MURATI: Hi everyone.'),
      { start: 2, end: 4, text: 'Thank you for coming.' },
      flagged(4, 'MARK CHEN: Hi, I am Mark.'),
      flagged(6, 'Mira Murati: Welcome, Mark.'),
      { start: 8, end: 10, text: 'DR. SMITH: And I am the doctor.' },
      flagged(10, 'MARK CHEN: Hello again.'),
    ]);
    expect(paragraphs(stenogram).map((p) => [p.speaker, p.text])).toEqual([
      ['MIRA MURATI', 'Hi everyone. Thank you for coming.'],
      ['MARK CHEN', 'Hi, I am Mark.'],
      ['MIRA MURATI', 'Welcome, Mark.'],
      ['DR. SMITH', 'And I am the doctor.'],
      ['MARK CHEN', 'Hello again.'],
    ]);
    expect(stenogram.speakers).toBe(3);
  });

  it('takes a capitalised "Name:" for a speaker where the captions use labels, never a time or a URL', async () => {
    const stenogram = await generate(
      cues(
        'Anna: Where were you?',
        'Ben: Out.',
        'Anna: Out where?',
        'we met at 10:30 sharp',
        'HTTPS://EXAMPLE.COM is the page',
        '>> Carla: I was there too.',
      ),
    );
    expect(paragraphs(stenogram).map((p) => [p.speaker, p.text])).toEqual([
      ['Anna', 'Where were you?'],
      ['Ben', 'Out.'],
      ['Anna', 'Out where? we met at 10:30 sharp HTTPS://EXAMPLE.COM is the page'],
      ['Carla', 'I was there too.'],
    ]);
    // Without other labels, one capitalised word and a colon is a word.
    const note = await generate(cues('Note: this line has no speaker', 'we met at 10:30'));
    expect(paragraphs(note).map((p) => [p.speaker, p.text])).toEqual([['Speaker 1', 'Note: this line has no speaker we met at 10:30']]);
  });

  it('mixes named and unnamed turns: an unnamed turn goes to the last unnamed speaker who is not speaking', async () => {
    const stenogram = await generate([
      flagged(0, 'ANNA: Questions?'),
      flagged(2, 'How long did it take?'),
      flagged(4, 'ANNA: Two years.'),
      flagged(6, 'And the cost?'),
      flagged(8, 'Was it worth it?'),
    ]);
    expect(paragraphs(stenogram).map((p) => p.speaker)).toEqual(['ANNA', 'Speaker 1', 'ANNA', 'Speaker 1', 'Speaker 2']);
  });

  it('reads leading dialogue dashes as turns, and a dash inside a sentence as punctuation', async () => {
    const stenogram = await generate(cues('- Where are you going? - Home.', '- Now? - Yes, now.', 'It was late - very late - and dark.'));
    expect(paragraphs(stenogram).map((p) => [p.speaker, p.text])).toEqual([
      ['Speaker 1', 'Where are you going?'],
      ['Speaker 2', 'Home.'],
      ['Speaker 1', 'Now?'],
      ['Speaker 2', 'Yes, now. It was late - very late - and dark.'],
    ]);
    // A dash opening a caption in the middle of a sentence (Russian "X — это Y" wrapped) continues it.
    const wrapped = await generate(cues('Windows', '— это коммерческий продукт.', '— А Linux? — Бесплатный.'));
    expect(paragraphs(wrapped).map((p) => [p.speaker, p.text])).toEqual([
      ['Speaker 1', 'Windows — это коммерческий продукт.'],
      ['Speaker 2', 'А Linux?'],
      ['Speaker 1', 'Бесплатный.'],
    ]);
  });
});

describe('offline stenograms: stage directions and paragraphs', () => {
  it('keeps stage directions as italic lines of their own, in place', async () => {
    const stenogram = await generate(
      cues('[Music]', 'Thanks for coming. [Applause] Let us begin.', '♪ we will rock you ♪', '(APPLAUSE)', 'it works (which is true)'),
    );
    expect(body(stenogram)).toEqual([
      '*[Music]*',
      '**[0:02] Speaker 1:** Thanks for coming.',
      '*[Applause]*',
      '**[0:02] Speaker 1:** Let us begin.',
      '*♪ we will rock you ♪*',
      '*(APPLAUSE)*',
      '**[0:08] Speaker 1:** it works (which is true)',
    ]);
    expect(stenogram.words).toBe(11);
  });

  it('starts a paragraph with its timestamp after a pause of more than 2 s, m:ss and h:mm:ss', async () => {
    const stenogram = await generate([
      { start: 0, end: 1.5, text: 'first thought' },
      { start: 3, end: 4, text: 'still the first, after 1.5 s' },
      { start: 6.5, end: 8, text: 'second thought, after 2.5 s' },
      { start: 3725, end: 3727, text: 'an hour later' },
    ]);
    expect(paragraphs(stenogram).map((p) => [p.time, p.text])).toEqual([
      ['0:00', 'first thought still the first, after 1.5 s'],
      ['0:06', 'second thought, after 2.5 s'],
      ['1:02:05', 'an hour later'],
    ]);
  });

  it('ends a long paragraph at the first sentence end after about 120 words, and an unpunctuated one at a caption end after 200', async () => {
    const sentence = (n: number) => `${Array.from({ length: 9 }, (_, k) => `w${n}x${k}`).join(' ')} end${n}.`;
    const punctuated = await generate(cues(...Array.from({ length: 30 }, (_, n) => sentence(n))));
    const lengths = paragraphs(punctuated).map((p) => p.text.split(' ').length);
    expect(lengths).toEqual([120, 120, 60]);
    expect(paragraphs(punctuated).every((p) => p.text.endsWith('.'))).toBe(true);

    const bare = await generate(cues(...Array.from({ length: 60 }, (_, n) => `a${n} b${n} c${n} d${n} e${n} f${n} g${n}`)));
    expect(paragraphs(bare).map((p) => p.text.split(' ').length)).toEqual([203, 203, 14]);
  });

  it('drops roll-up repetition left at the joins, but keeps a word said again', async () => {
    const stenogram = await generate(
      cues('so we', 'so we went', 'so we went down to the', 'down to the river bank', 'no', 'no no', 'I said no'),
    );
    expect(spokenWords(stenogram)).toEqual('so we went down to the river bank no no no I said no'.split(' '));
  });

  it('writes the heading, the channel, the video URL and the language, and counts what it wrote', async () => {
    const stenogram = await generate(cues('hello there'), { title: 'C# in #1 minute #', channelTitle: 'Dev_Channel *official*' });
    const [heading, facts] = stenogram.markdown.split('\n\n');
    expect(heading).toBe('# C\\# in \\#1 minute \\#');
    expect(facts).toBe('Channel: Dev_Channel \\*official\\* · Video: https://www.youtube.com/watch?v=dQw4w9WgXcQ · Language: en');
    const untitled = await generate(cues('hello there'), { title: null, channelTitle: null });
    expect(untitled.markdown.split('\n\n').slice(0, 2)).toEqual([
      '# Video dQw4w9WgXcQ',
      'Video: https://www.youtube.com/watch?v=dQw4w9WgXcQ · Language: en',
    ]);
  });

  it('writes the same stenogram for the same transcript, whatever it wrote before', async () => {
    const talk = [
      ...cues('ANNA: so where do we start', '[Music]', 'with the river I think.'),
      flagged(6, 'MARK CHEN: Right, the river.'),
      flagged(12, 'and then the bridge'),
      { start: 20, end: 22, text: '- after a long pause?' },
    ];
    const first = await generate(talk);
    const other = await generate(cues('BEN: something else entirely', 'with other speakers'));
    expect(other.markdown).not.toBe(first.markdown);
    expect(await generate(talk)).toEqual(first);
  });

  it('escapes what would change the rendering and leaves ordinary punctuation alone', async () => {
    const stenogram = await generate(
      cues(
        '# not a heading, *not bold* and _not italic_ or `code`',
        'a [half open (http://x) <b>tag</b> ~~struck~~ 2*3 snake_case AT&T &amp; back\\slash',
        "it's fine: commas, dashes - and (parentheses)! 50% off? yes.",
      ),
    );
    expect(paragraphs(stenogram)[0]!.text).toBe(
      '# not a heading, \\*not bold\\* and \\_not italic\\_ or \\`code\\` a \\[half open (http://x) \\<b>tag\\</b> \\~\\~struck\\~\\~ 2\\*3 snake_case AT&T \\&amp; back\\\\slash ' +
        "it's fine: commas, dashes - and (parentheses)! 50% off? yes.",
    );
    expect(escapeMarkdown('[Music]', false)).toBe('[Music]');
  });
});

describe('offline stenograms: language, progress, abort', () => {
  it('takes a valid ISO 639-1/639-2 hint, else detects the language', async () => {
    expect(['en-US', 'pt_BR', 'ger', 'deu', 'fra', 'xx', 'und', 'english', null].map(validLanguageHint)).toEqual([
      'en',
      'pt',
      'de',
      'de',
      'fr',
      null,
      null,
      null,
      null,
    ]);
    const german = cues(
      'Wir haben heute über die Geschichte der Stadt gesprochen und darüber, wie die Brücken gebaut wurden, als der Fluss noch wild war.',
    );
    expect((await generate(german, { language: null })).language).toBe('de');
    expect((await generate(german, { language: 'xx' })).language).toBe('de');
    expect((await generate(german, { language: 'de-AT' })).language).toBe('de');
  });

  it('reports reading and writing, and stops when aborted', async () => {
    const progress: StenogramProgress[] = [];
    await generator.generate(input(cues('a few words')), { onProgress: (step) => progress.push(step) });
    expect(progress.map((step) => step.stage)).toEqual(['reading', 'writing', 'writing']);
    expect(progress.at(-1)!.percent).toBe(100);

    const aborted = new AbortController();
    aborted.abort();
    await expect(generator.generate(input(cues('a few words')), { signal: aborted.signal })).rejects.toThrow(/abort/i);
    const midway = new AbortController();
    await expect(
      generator.generate(input(cues('a few words')), { signal: midway.signal, onProgress: () => midway.abort() }),
    ).rejects.toThrow(/abort/i);
    await expect(generate([])).rejects.toThrow(/no cues/);
  });
});

describe('offline stenograms: the words are the transcript words', () => {
  const letters = fc.stringMatching(/^[a-z]{1,8}$/);
  const decorated = fc.tuple(
    fc.constantFrom('', '', '', '*', '_', '`', '#', '<', '&', '\\', '~', "'"),
    letters,
    fc.constantFrom('', '', '', '.', ',', '?', '!', '*', '_', '`', ';', '&', '#', '\\'),
  );
  const cue = fc.record({
    words: fc.array(decorated, { minLength: 1, maxLength: 8 }),
    turn: fc.constantFrom('none', 'none', 'flag', 'inline', 'dash', 'label', 'direction'),
    gap: fc.constantFrom(0, 0, 0.5, 3),
  });

  it('writes every word of random captions once, in order, whatever the markers, escapes and paragraphs', async () => {
    await fc.assert(
      fc.asyncProperty(fc.array(cue, { minLength: 1, maxLength: 40 }), async (drawn) => {
        const expected: string[] = [];
        const list: StenogramCue[] = [];
        let t = 0;
        drawn.forEach((spec, index) => {
          // A number in every word keeps random captions from repeating each other's words (roll-up).
          const words = spec.words.map(([before, word, after], k) => `${before}${word}${index}n${k}${after}`);
          // A dash opening a caption is a turn after a sentence's end; within a sentence it is punctuation.
          if (spec.turn === 'dash' && index > 0 && !/[.?!]$/.test(expected.at(-1)!)) expected.push('-');
          expected.push(...words);
          const half = Math.ceil(words.length / 2);
          const text = {
            none: words.join(' '),
            flag: words.join(' '),
            inline: `${words.slice(0, half).join(' ')} >> ${words.slice(half).join(' ')}`,
            dash: `- ${words.join(' ')}`,
            label: `${index % 2 ? 'ANNA' : 'BEN OKAFOR'}: ${words.join(' ')}`,
            direction: `[Music] ${words.join(' ')}`,
          }[spec.turn];
          t += spec.gap;
          list.push({ start: t, end: t + 1, text, ...(spec.turn === 'flag' ? { speakerChange: true } : {}) });
          t += 1;
        });
        const stenogram = await generate(list);
        expect(spokenWords(stenogram)).toEqual(expected);
        expect(stenogram.words).toBe(expected.filter((word) => word !== '-').length);
        expect(stenogram.paragraphs).toBe(paragraphs(stenogram).length);
      }),
      { numRuns: 150 },
    );
  });
});
