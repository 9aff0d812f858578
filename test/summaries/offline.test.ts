import { data as francData } from 'franc/data.js';
import { expressions as francScripts } from 'franc/expressions.js';
import stopwordsIso from 'stopwords-iso/stopwords-iso.json' with { type: 'json' };
import { describe, expect, it } from 'vitest';
import { buildUnits } from '../../core/summaries/offline/buildUnits.ts';
import { createExtractiveGenerator } from '../../core/summaries/offline/createExtractiveGenerator.ts';
import { detectLanguage, toIso6391 } from '../../core/text/detectLanguage.ts';
import { spokenCues } from '../../core/subtitles/stageDirections.ts';
import { timeSections } from '../../core/summaries/offline/timeSections.ts';
import { createTokeniser } from '../../core/text/tokenise.ts';
import { summaryContent, type GeneratedSummary, type SummaryInput, type SummaryProgress } from '../../core/summaries/summary.ts';
import type { TranscriptCue } from '../../core/subtitles/transcriptCue.ts';
import { random } from '../kit/random.ts';

// Synthetic transcripts in the shape auto captions have: lower case, no punctuation, a few words a cue.

const FUNCTION_WORDS = 'the and of to we is that it you this so in on for with are be as have then just what when there'.split(' ');
const COOKING =
  'onion garlic butter pasta simmer sauce tomato basil oven bake flour dough knead skillet pepper salt olive broth stir recipe'.split(' ');
const ASTRONOMY =
  'telescope galaxy nebula orbit planet comet asteroid jupiter saturn eclipse spectrum redshift observatory star cluster supernova moon gravity lens quasar'.split(
    ' ',
  );
const TRAVEL =
  'passport airport luggage hotel train ticket border museum beach island ferry hostel backpack visa itinerary map tour village harbour sunset'.split(
    ' ',
  );
const MUSIC =
  'guitar chord melody drummer tempo rhythm violin piano bass concert album lyrics chorus verse amplifier tuning harmony studio vinyl orchestra'.split(
    ' ',
  );

/** Words of one topic mixed with function words, `count` of them, seeded. */
function speech(topic: readonly string[], count: number, seed: number): string[] {
  const rnd = random(seed);
  return Array.from({ length: count }, () => {
    const pool = rnd() < 0.45 ? topic : FUNCTION_WORDS;
    return pool[Math.floor(rnd() * pool.length)]!;
  });
}

/** Auto-caption cues: 4-6 words each, 2 s apart, a 1.5 s pause after every seventh. */
function autoCaptions(words: readonly string[], from = 0, seed = 1): TranscriptCue[] {
  const rnd = random(seed);
  const cues: TranscriptCue[] = [];
  let t = from;
  for (let i = 0, n = 0; i < words.length; n++) {
    const size = 4 + Math.floor(rnd() * 3);
    cues.push({ start: t, end: t + 2, text: words.slice(i, i + size).join(' ') });
    i += size;
    t += n % 7 === 6 ? 3.5 : 2;
  }
  return cues;
}

const input = (cues: TranscriptCue[], extra: Partial<SummaryInput> = {}): SummaryInput => ({
  videoId: 'dQw4w9WgXcQ',
  title: null,
  language: null,
  cues,
  ...extra,
});
const wordsOf = (text: string) => text.toLowerCase().match(/[\p{L}\p{N}']+/gu) ?? [];
const generator = createExtractiveGenerator();

function expectValid(summary: GeneratedSummary) {
  expect(summary.llmModel).toBe('afterimage-extractive-1');
  expect(summary.tokensUsed).toBeNull();
  expect(summaryContent.safeParse(summary).success).toBe(true);
  const starts = summary.keyPoints.map((point) => point.startSeconds);
  expect(starts).toEqual([...starts].sort((a, b) => a - b));
}

describe('offline summary generator: sentences from cues', () => {
  it('cuts an unpunctuated auto-caption transcript into units of 12-40 words, each starting with a cue', () => {
    const cues = autoCaptions(speech(COOKING, 700, 7));
    const units = buildUnits(spokenCues(cues), createTokeniser('en'));
    const sizes = units.map((unit) => unit.words.length);
    expect(sizes.every((size) => size >= 12 && size <= 40)).toBe(true);
    expect(sizes.reduce((a, b) => a + b, 0)).toBe(700); // nothing lost, nothing twice
    const starts = new Set(cues.map((cue) => cue.start));
    expect(units.every((unit) => starts.has(unit.start))).toBe(true);
  });

  it('prefers cutting at pauses between cues', () => {
    const cues = autoCaptions(speech(COOKING, 700, 8));
    const units = buildUnits(spokenCues(cues), createTokeniser('en'));
    const afterPause = new Set(cues.filter((cue, i) => i > 0 && cue.start - cues[i - 1]!.end > 1).map((cue) => cue.start));
    // Pauses come every 7 cues (~35 words): most units start after one.
    expect(units.filter((unit) => afterPause.has(unit.start)).length).toBeGreaterThan(units.length * 0.6);
  });

  it('follows punctuation where there is some, across cues, and starts a unit with the cue its first word is in', () => {
    const cues: TranscriptCue[] = [
      { start: 0.5, end: 3, text: 'Welcome back to the channel, today we are baking' },
      { start: 3, end: 6, text: 'sourdough bread at home. First you need a starter' },
      { start: 6.2, end: 9, text: 'that is active and bubbly. Thank you.' },
      { start: 9, end: 12, text: 'Then mix the flour with water and salt until the dough comes together.' },
    ];
    const units = buildUnits(spokenCues(cues), createTokeniser('en'));
    expect(units.map((unit) => [unit.text, unit.start])).toEqual([
      ['Welcome back to the channel, today we are baking sourdough bread at home.', 0.5],
      ['First you need a starter that is active and bubbly.', 3],
      // A sentence under six words joins the next one.
      ['Thank you. Then mix the flour with water and salt until the dough comes together.', 6.2],
    ]);
  });

  it('joins Chinese and Japanese cues without spaces, other scripts with one', () => {
    const zh = buildUnits(
      spokenCues([
        { start: 0, end: 2, text: '今天我们来介绍' },
        { start: 2, end: 4, text: '如何种植番茄。' },
        { start: 4, end: 6, text: '首先要选择阳光充足的地方。' },
      ]),
      createTokeniser('zh'),
    );
    expect(zh.map((unit) => [unit.text, unit.start])).toEqual([
      ['今天我们来介绍如何种植番茄。', 0],
      ['首先要选择阳光充足的地方。', 4],
    ]);
    expect(zh[0]!.words.map((word) => zh[0]!.text.slice(word.index, word.end))).toContain('番茄');
  });

  it('leaves sound descriptions, notes and speaker labels out of what it quotes', () => {
    const cues = spokenCues([
      { start: 0, end: 2, text: '[Music]' },
      { start: 2, end: 4, text: '♪ la la ♪ [Applause] so today (LAUGHTER)' },
      { start: 4, end: 6, text: '>> MIRA MURATI: hello (which is true)' },
    ]);
    expect(cues).toEqual([
      { start: 2, end: 4, text: 'la la so today', turn: false },
      { start: 4, end: 6, text: 'hello (which is true)', turn: true },
    ]);
  });
});

describe('offline summary generator: summaries', () => {
  it('takes key points from both halves of a transcript on two different subjects', async () => {
    const first = autoCaptions(speech(COOKING, 1200, 11));
    const second = autoCaptions(speech(ASTRONOMY, 1200, 12), first.at(-1)!.end + 1, 2);
    const summary = await generator.summarise(input([...first, ...second]));
    expectValid(summary);
    const middle = second[0]!.start;
    const early = summary.keyPoints.filter((point) => point.startSeconds < middle);
    const late = summary.keyPoints.filter((point) => point.startSeconds >= middle);
    expect(early.length).toBeGreaterThan(0);
    expect(late.length).toBeGreaterThan(0);
    // Each point is about its half's subject.
    for (const point of early) expect(wordsOf(point.text).some((word) => COOKING.includes(word))).toBe(true);
    for (const point of late) expect(wordsOf(point.text).some((word) => ASTRONOMY.includes(word))).toBe(true);
    expect(summary.tags.some((tag) => COOKING.some((word) => tag.includes(word)))).toBe(true);
    expect(summary.tags.some((tag) => ASTRONOMY.some((word) => tag.includes(word)))).toBe(true);
  });

  it('writes tags without stopwords, in lower case, at most 12 of at most 40 characters', async () => {
    const cues = autoCaptions(speech(MUSIC, 1500, 21)).map((cue) => ({ ...cue, text: cue.text.replace(/^\w/, (c) => c.toUpperCase()) }));
    const summary = await generator.summarise(input(cues));
    const stopwords = new Set((stopwordsIso as Record<string, string[]>).en);
    expect(summary.tags.length).toBeGreaterThan(3);
    expect(summary.tags.length).toBeLessThanOrEqual(12);
    for (const tag of summary.tags) {
      expect(tag).toBe(tag.toLowerCase());
      expect(tag.length).toBeLessThanOrEqual(40);
      for (const word of tag.split(/[\s-]+/)) expect(stopwords.has(word), `${tag} has the stopword "${word}"`).toBe(false);
    }
  });

  it('spreads the key points of a two-hour transcript over its time sections', async () => {
    const topics = [COOKING, ASTRONOMY, TRAVEL, MUSIC];
    const cues: TranscriptCue[] = [];
    for (let k = 0; k < 4; k++) cues.push(...autoCaptions(speech(topics[k]!, 4500, 30 + k), (cues.at(-1)?.end ?? 0) + 1, k));
    expect(cues.at(-1)!.end).toBeGreaterThan(7200);
    const summary = await generator.summarise(input(cues));
    expectValid(summary);
    expect(summary.keyPoints).toHaveLength(12);
    const sections = timeSections(cues.at(-1)!.end);
    const perSection = new Map<number, number>();
    for (const point of summary.keyPoints)
      perSection.set(sections.of(point.startSeconds), (perSection.get(sections.of(point.startSeconds)) ?? 0) + 1);
    expect(perSection.size).toBe(sections.count); // every section has one
    expect(Math.max(...perSection.values())).toBeLessThanOrEqual(Math.ceil((1.5 * 12) / sections.count));
    // The detailed summary: one paragraph per section, headed by its time range, in order.
    const paragraphs = summary.detailedSummary.split('\n\n');
    expect(paragraphs).toHaveLength(sections.count);
    expect(paragraphs.map((p) => p.split(': ')[0])).toEqual(Array.from({ length: sections.count }, (_, i) => sections.label(i)));
    expect(paragraphs[0]).toMatch(/^0:00–\d+:59: /);
  });

  it('uses the video title, or else the start of the best sentence', async () => {
    const cues = autoCaptions(speech(TRAVEL, 400, 41));
    expect((await generator.summarise(input(cues, { title: 'Ten days in Lisbon ' }))).title).toBe('Ten days in Lisbon');
    const untitled = await generator.summarise(input(cues));
    expect(untitled.title.length).toBeLessThanOrEqual(80);
    expect(untitled.title[0]).toBe(untitled.title[0]!.toUpperCase());
    expect(untitled.tldr.length).toBeGreaterThan(untitled.title.length);
  });

  it('gives the same summary for the same transcript', async () => {
    const cues = autoCaptions(speech(ASTRONOMY, 900, 51));
    expect(await generator.summarise(input(cues))).toEqual(await generator.summarise(input(cues)));
  });

  it('summarises Japanese and Chinese, which have no spaces between words, and French with its accents', async () => {
    const ja = await generator.summarise(input(sentences(JAPANESE)));
    expectValid(ja);
    expect(ja.language).toBe('ja');
    expect(ja.tags).toContain('玉ねぎ');
    expect(ja.tldr).not.toMatch(/\s/);
    const zh = await generator.summarise(input(sentences(CHINESE)));
    expectValid(zh);
    expect(zh.language).toBe('zh');
    expect(zh.tags).toContain('番茄');
    const fr = await generator.summarise(input(sentences(FRENCH)));
    expectValid(fr);
    expect(fr.language).toBe('fr');
    expect(fr.tags).toContain('café');
    expect(fr.tags).not.toContain('très'); // a French stopword
  });
});

// Issue 31.5: summaries a person would call summaries.
describe('offline summary generator: what a person would write', () => {
  /** Manual-caption cues, one sentence each, 4 s apart. */
  const sentences = (lines: readonly string[]): TranscriptCue[] => lines.map((text, i) => ({ start: i * 4, end: i * 4 + 4, text }));

  it('tags inflected forms as one word, written in their commonest form, and never filler words', async () => {
    const talk = Array.from({ length: 12 }, (_, i) =>
      i % 2
        ? 'Hey, the users said the telescope stuff was real, and we love to bring the telescope to users.'
        : 'Every user of the telescope is a user who loves a telescope, basically; yeah, time and time again.',
    );
    const summary = await createExtractiveGenerator().summarise(input(sentences(talk)));
    expect(summary.tags).toContain('telescope');
    expect(summary.tags.filter((tag) => /^users?$/.test(tag))).toHaveLength(1);
    for (const filler of ['hey', 'stuff', 'real', 'love', 'bring', 'basically', 'yeah', 'time']) expect(summary.tags).not.toContain(filler);

    const russian = Array.from({ length: 12 }, (_, i) =>
      i % 2
        ? 'Пастила из абрикосов сушится на поддоне, например, целые сутки.'
        : 'Готовую пастилу снимаем с поддона, либо видите, пастилы хватает надолго.',
    );
    const tags = (await createExtractiveGenerator().summarise(input(sentences(russian)))).tags;
    expect(tags.filter((tag) => tag.startsWith('пастил'))).toHaveLength(1);
    expect(tags.filter((tag) => tag.startsWith('поддон'))).toHaveLength(1);
    for (const filler of ['например', 'либо', 'видите', 'сушится']) expect(tags).not.toContain(filler);
  });

  it('quotes key points and the tl;dr without the greetings and connectives that tied them to what came before', async () => {
    const talk = [
      'Hi Mark. The telescope gathers light from distant galaxies with a mirror eight metres wide.',
      'And the mirror of the telescope is polished to a precision of a few nanometres across its surface.',
      'But the observatory on the mountain keeps the telescope above most of the clouds and the haze.',
      'So, the astronomers measure the redshift of every galaxy the telescope finds in the survey.',
      'And then the galaxy survey maps the distances of a million galaxies across the sky.',
      'Now the spectrum of each galaxy tells the astronomers how fast the galaxy moves away from us.',
    ];
    const summary = await createExtractiveGenerator().summarise(input(sentences(talk)));
    for (const text of [summary.tldr, ...summary.keyPoints.map((point) => point.text)]) {
      expect(text).not.toMatch(/(?:^|[.!?] )(?:Hi Mark|And|But|So,)/);
    }
    expect(summary.keyPoints.map((point) => point.text)).toContain(
      'The telescope gathers light from distant galaxies with a mirror eight metres wide.',
    );
  });

  it('writes auto captions as sentences: a capital, a full stop where the speaker paused after a word that can end one, and a capital I', async () => {
    const words = speech(ASTRONOMY, 400, 7).map((word, i) => (i % 37 === 5 ? 'i' : word));
    const summary = await createExtractiveGenerator().summarise(input(autoCaptions(words)));
    const quoted = [...summary.keyPoints.map((point) => point.text), summary.tldr];
    for (const text of quoted) {
      expect(text[0]).toBe(text[0]!.toUpperCase());
      expect(text).not.toMatch(/(?:^| )i(?= |$)/);
    }
    expect(summary.keyPoints.some((point) => point.text.endsWith('.'))).toBe(true);
    for (const point of summary.keyPoints) expect(point.text).toMatch(/[.…]$/);
  });

  it('gives a ten-minute talk eight key points spread over it, one per 75 seconds', async () => {
    const cues = autoCaptions(speech(TRAVEL, 1_500, 3));
    const duration = cues.at(-1)!.end;
    expect(duration).toBeGreaterThan(590);
    const summary = await createExtractiveGenerator().summarise(input(cues));
    expect(summary.keyPoints).toHaveLength(Math.round(duration / 75));
    const slices = summary.keyPoints.map((point) => Math.floor(point.startSeconds / (duration / summary.keyPoints.length)));
    expect(new Set(slices).size).toBeGreaterThanOrEqual(summary.keyPoints.length / 2);
    for (const slice of slices) expect(slices.filter((other) => other === slice).length).toBeLessThanOrEqual(2);
  });
});

describe('offline summary generator: edges', () => {
  it('throws when aborted, before or while it works', async () => {
    const cues = autoCaptions(speech(COOKING, 600, 61));
    const before = new AbortController();
    before.abort();
    await expect(generator.summarise(input(cues), { signal: before.signal })).rejects.toMatchObject({ name: 'AbortError' });
    const during = new AbortController();
    const seen: string[] = [];
    const onProgress = (progress: SummaryProgress) => {
      seen.push(progress.stage);
      during.abort();
    };
    await expect(generator.summarise(input(cues), { signal: during.signal, onProgress })).rejects.toMatchObject({ name: 'AbortError' });
    expect(seen).toEqual(['reading']);
  });

  it('reports progress: reading, then writing, up to 100', async () => {
    const progress: SummaryProgress[] = [];
    await generator.summarise(input(autoCaptions(speech(COOKING, 600, 62))), { onProgress: (p) => progress.push(p) });
    expect(progress.map((p) => p.stage)).toEqual(['reading', 'reading', 'writing', 'writing']);
    expect(progress.map((p) => p.percent)).toEqual([10, 40, 70, 100]);
  });

  it('summarises a transcript of music only as what it is: no speech, the sounds and when', async () => {
    // A valid summary, not an error: "no speech" is the true answer and retrying cannot change it.
    const cues: TranscriptCue[] = [
      { start: 0, end: 30, text: '[Music]' },
      { start: 30, end: 60, text: '[Music]' },
      { start: 61.5, end: 63, text: '[Applause]' },
      { start: 64, end: 200, text: '♪♪' },
    ];
    const summary = await generator.summarise(input(cues, { language: 'de' }));
    expectValid(summary);
    expect(summary.tldr).toMatch(/no spoken words/);
    expect(summary.keyPoints).toEqual([
      { text: '[Music]', startSeconds: 0 },
      { text: '[Applause]', startSeconds: 61 },
      { text: '♪♪', startSeconds: 64 },
    ]);
    expect(summary.tags).toEqual(['music', 'applause']);
    expect(summary.language).toBe('en'); // the language the summary is written in
    expect(summary.title).toMatch(/^No speech: \[Music\]/);
    expect((await generator.summarise(input(cues, { title: 'Ambient mix' }))).title).toBe('Ambient mix');
  });

  it('refuses a transcript without cues', async () => {
    await expect(generator.summarise(input([]))).rejects.toThrow(/no cues/);
  });

  it('copes with a transcript that is one long cue without punctuation', async () => {
    const text = speech(TRAVEL, 2000, 71).join(' ');
    const summary = await generator.summarise(input([{ start: 0, end: 900, text }]));
    expectValid(summary);
    expect(summary.keyPoints.every((point) => point.startSeconds === 0)).toBe(true);
    const units = buildUnits(spokenCues([{ start: 0, end: 900, text }]), createTokeniser('en'));
    expect(units.every((unit) => unit.words.length >= 12 && unit.words.length <= 40)).toBe(true);
  });

  it('summarises a transcript of one short line', async () => {
    const summary = await generator.summarise(input([{ start: 3.7, end: 5, text: 'hello there' }], { language: 'en-US' }));
    expectValid(summary);
    expect(summary.keyPoints).toEqual([{ text: 'Hello there…', startSeconds: 3 }]);
    expect(summary.language).toBe('en');
  });
});

describe('offline summary generator: language', () => {
  it('maps every language franc can answer to ISO 639-1 where there is a code, else keeps 639-3', () => {
    const codes = [
      ...Object.values(francData).flatMap((languages) => Object.keys(languages)),
      ...Object.keys(francScripts).filter((key) => /^[a-z]{3}$/.test(key)),
    ];
    for (const code of codes) expect(toIso6391(code)).toMatch(/^[a-z]{2,3}$/);
    expect(['eng', 'rus', 'jpn', 'cmn', 'arb', 'pes', 'zlm', 'ekk', 'lvs', 'swh', 'sco'].map(toIso6391)).toEqual([
      'en',
      'ru',
      'ja',
      'zh',
      'ar',
      'fa',
      'ms',
      'et',
      'lv',
      'sw',
      'sco',
    ]);
  });

  it("takes the track's language when the text is too short, and says 'und' when nothing tells", () => {
    expect(detectLanguage('ok', 'pt-BR')).toBe('pt');
    expect(detectLanguage('ok', 'deu')).toBe('de');
    expect(detectLanguage('ok', null)).toBe('und');
    expect(detectLanguage('ok', 'not a language')).toBe('und');
  });

  it("detects from the text, whatever the track's language claims", () => {
    const german =
      'Heute zeigen wir euch, wie man einen Apfelkuchen backt. Zuerst schälen wir die Äpfel und schneiden sie in kleine Stücke. Dann kommt der Teig in die Form.';
    expect(detectLanguage(german, 'en')).toBe('de');
    expect(detectLanguage(german, null)).toBe('de');
  });
});

const JAPANESE = [
  '今日はカレーの作り方を紹介します。',
  'まず玉ねぎを細かく切ります。',
  '次に鍋に油を入れて玉ねぎを炒めます。',
  '玉ねぎが茶色になったら肉を入れます。',
  '肉に火が通ったら水を加えて煮込みます。',
  'カレーのルーを入れてさらに煮込みます。',
  '最後にご飯と一緒に盛り付けて完成です。',
  'カレーは次の日に食べるともっと美味しくなります。',
  '玉ねぎをよく炒めるとカレーが甘くなります。',
];
const CHINESE = [
  '今天我们来介绍如何种植番茄。',
  '首先要选择阳光充足的地方。',
  '番茄需要每天至少六个小时的阳光。',
  '种植之前要把土壤翻松并加入肥料。',
  '番茄苗长高以后需要用竹竿支撑。',
  '夏天要经常浇水但不要浇太多。',
  '番茄成熟以后颜色会变成红色。',
  '自己种的番茄比超市买的更好吃。',
];
const FRENCH = [
  'Le café est une boisson très populaire en France et dans le monde entier.',
  'Pour préparer un bon café, il faut choisir des grains fraîchement torréfiés.',
  'La mouture doit être adaptée à la méthode de préparation choisie.',
  'Un café filtre demande une mouture moyenne, un expresso une mouture très fine.',
  "L'eau ne doit pas être bouillante, sinon le café devient amer.",
  'Enfin, on déguste le café sans attendre, avec ou sans sucre.',
];

/** One sentence a cue, four seconds each (manual captions). */
const sentences = (lines: readonly string[]): TranscriptCue[] => lines.map((text, i) => ({ start: i * 4, end: i * 4 + 4, text }));
