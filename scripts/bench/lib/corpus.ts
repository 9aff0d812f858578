/** Seeded generated transcripts: talks (summaries), conversations (stenograms), rolling auto-caption WebVTT (subtitles-*). */
import type { StenogramCue } from '../../../core/stenograms/stenogram.ts';
import { formatTimestamp } from '../../../core/subtitles/timestamps.ts';
import type { TranscriptCue } from '../../../core/subtitles/transcriptCue.ts';
import type { loadVocabulary } from '../../../test/kit/corpus-vocabulary.ts';
import { between, draw, random, zipfCdf } from '../../../test/kit/random.ts';
import { round } from './stats.ts';

/** Spoken English in rough order of frequency: what most of any talk is made of. */
const SPOKEN = (
  'i you the and to a it that so is of we this in just like know what have do be was on for with they but not can are if go get ' +
  'about all there one really going my me think right at yeah okay well now here how because some people then out up thing lot want ' +
  'see make very gonna kind time little actually also more when good much back would which way look into where he she our them been ' +
  'said over first something your even two got um uh basically pretty sure mean let us take need could maybe other different next ' +
  "every guys today video these those still new why who let's it's don't that's i'm you're we're there's can't"
).split(' ');

export type Vocabulary = ReturnType<typeof loadVocabulary>;

/** Topic words of talks: the words of real trending-video tags (English), most used first. */
export function topicWords(vocabulary: Vocabulary): string[] {
  const spoken = new Set(SPOKEN);
  const seen = new Set<string>();
  for (const tag of vocabulary.vocabularies.en.tags) {
    for (const word of tag.toLowerCase().split(/\s+/)) if (/^[a-z]{3,16}$/.test(word) && !spoken.has(word)) seen.add(word);
  }
  return [...seen];
}

/**
 * A talk of `minutes`, ~150 words a minute in sentences of 5-20: 60 % filler, the rest the section's topic words
 * (a new section every 2-5 minutes), the theme's and stray ones. Auto captions: lower case, unpunctuated, 3-7 words
 * a cue, [Music] now and then; manual: capitals and punctuation, cues of up to two lines ending with sentences.
 */
export function talkTranscript(
  words: string[],
  minutes: number,
  style: 'auto' | 'manual',
  seed: number,
): { cues: TranscriptCue[]; words: number } {
  const rnd = random(seed);
  const spokenCdf = zipfCdf(SPOKEN.length, 1, 2);
  const topicCdf = zipfCdf(words.length, 0.9, 10);
  const topic = () => words[draw(topicCdf, rnd)]!;
  const theme = Array.from({ length: 6 }, topic);
  const cues: TranscriptCue[] = [];
  const at = (seconds: number) => Math.round(seconds * 1000) / 1000;
  let t = 1 + rnd() * 3;
  if (style === 'auto') cues.push({ start: 0, end: at(t), text: '[Music]' });
  let section: string[] = [];
  let sectionEnd = 0;
  let count = 0;
  let cue: string[] = [];
  let cueStart = t;
  let cueSize = 3 + Math.floor(rnd() * 5);
  const flush = () => {
    if (cue.length > 0) cues.push({ start: at(cueStart), end: at(t), text: cue.join(' ') });
    cue = [];
    cueSize = 3 + Math.floor(rnd() * 5);
  };
  while (t < minutes * 60) {
    if (t >= sectionEnd) {
      section = Array.from({ length: 10 }, topic);
      sectionEnd = t + 120 + rnd() * 180;
    }
    const length = 5 + Math.floor(rnd() * 16);
    for (let i = 0; i < length; i++) {
      const u = rnd();
      let word =
        u < 0.6
          ? SPOKEN[draw(spokenCdf, rnd)]!
          : u < 0.86
            ? section[Math.floor(rnd() * rnd() * section.length)]!
            : u < 0.95
              ? theme[Math.floor(rnd() * theme.length)]!
              : words[Math.floor(rnd() * words.length)]!;
      if (style === 'manual') {
        if (word === 'i' || word.startsWith("i'")) word = `I${word.slice(1)}`;
        if (i === 0) word = word[0]!.toUpperCase() + word.slice(1);
        if (i === length - 1) word += rnd() < 0.1 ? '?' : '.';
        else if (rnd() < 0.08) word += ',';
      }
      if (cue.length === 0) cueStart = t;
      cue.push(word);
      count++;
      t += 0.26 + rnd() * 0.2;
      const chars = cue.reduce((sum, w) => sum + w.length + 1, 0);
      if (style === 'auto' ? cue.length >= cueSize : chars > 70 || (i === length - 1 && chars > 35)) flush();
    }
    t += 0.15 + rnd() * 0.6;
    if (style === 'auto' && rnd() < 0.005) {
      flush();
      const start = t;
      t += 2 + rnd() * 6;
      cues.push({ start: at(start), end: at(t), text: rnd() < 0.7 ? '[Music]' : '[Applause]' });
    }
  }
  flush();
  return { cues, words: count };
}

// Words as people say them, with the apostrophes of contractions; a few long, technical ones.
const CONVERSATION_WORDS = (
  'the and so we you it that is to of a in this really going know like just think about right what yeah there well people thing ' +
  "things time because actually very good want can would one get make see kind little bit lot way back look mean first new work don't " +
  "it's i'm that's we're they world year years still much thought different system engine river bridge question problem answer data " +
  'model power water city history music story project team build test design market energy temperature microcontroller measurement'
).split(' ');
const NAMES = ['ANNA', 'MARK CHEN', 'DR. SMITH', 'LUIS'];
const DIRECTIONS = ['[Music]', '[Applause]', '[Laughter]', '(APPLAUSE)', '[inaudible]'];

/**
 * A conversation of `minutes` shaped as normalised manual captions: cues of 1.1–2.7 s, 3–7 words (2 hours ≈ 18,000
 * words), sentences of 6–18 words, a speaker change every 2–7 cues (a quarter with a NAME: label), a stage direction
 * one cue in 100, a pause over 2 s before one in 30. `words` counts spoken words only.
 */
export function conversation(minutes: number, seed: number) {
  const next = random(seed);
  const cues: StenogramCue[] = [];
  const counts = { words: 0, turns: 0, labels: 0, directions: 0, pauses: 0 };
  let t = 0;
  let turnIn = between(next, 2, 7);
  let sentenceIn = between(next, 6, 18);
  const pause = () => {
    if (next() >= 1 / 30) return 0;
    counts.pauses++;
    return 2.5 + next() * 2;
  };
  while (t < minutes * 60) {
    const duration = 1.1 + next() * 1.6;
    if (next() < 0.01) {
      cues.push({ start: t, end: t + duration, text: DIRECTIONS[Math.floor(next() * DIRECTIONS.length)]! });
      counts.directions++;
      t += duration + pause();
      continue;
    }
    const count = between(next, 3, 7);
    const words: string[] = [];
    for (let i = 0; i < count; i++) {
      let word = CONVERSATION_WORDS[Math.floor(next() * CONVERSATION_WORDS.length)]!;
      if (--sentenceIn === 0) {
        word += next() < 0.8 ? '.' : '?';
        sentenceIn = between(next, 6, 18);
      } else if (next() < 0.05) word += ',';
      words.push(word);
    }
    counts.words += count;
    const cue: StenogramCue = { start: round(t, 3)!, end: round(t + duration, 3)!, text: words.join(' ') };
    if (--turnIn === 0) {
      cue.speakerChange = true;
      counts.turns++;
      turnIn = between(next, 2, 7);
      if (next() < 0.25) {
        cue.text = `${NAMES[Math.floor(next() * NAMES.length)]}: ${cue.text}`;
        counts.labels++;
      }
    }
    cues.push(cue);
    t += duration + pause();
  }
  return { cues, ...counts };
}

// Words as speech recognition writes them, a few with characters WebVTT escapes.
const CAPTION_WORDS = (
  'the and so we you it that is to of a in this really going know like just microcontroller vendor compiler debugger temperature ' +
  "developer experience embedded systems about R&amp;D &gt;&gt; don't it's [Music] 72° naïve über café números очень время 大家 ok"
).split(' ');

/** Rolling auto-caption WebVTT of about `megabytes` MB, as yt-dlp downloads it. */
export function rollingCaptions(megabytes: number, seed = 1): string {
  const next = random(seed);
  const target = megabytes * 1_000_000;
  const parts: string[] = ['WEBVTT\nKind: captions\nLanguage: en\n\n'];
  let size = parts[0]!.length;
  let t = 80;
  let previous = ' ';
  while (size < target) {
    const count = 3 + Math.floor(next() * 6);
    const line: string[] = [];
    for (let i = 0; i < count; i++) line.push(CAPTION_WORDS[Math.floor(next() * CAPTION_WORDS.length)]!);
    const duration = 1200 + Math.floor(next() * 2000);
    const step = duration / count;
    const timed = line.map((word, i) => (i === 0 ? word : `<${formatTimestamp(t + i * step, '.')}><c> ${word}</c>`)).join('');
    const end = t + duration;
    const block =
      `${formatTimestamp(t, '.')} --> ${formatTimestamp(end, '.')} align:start position:0%\n${previous}\n${timed}\n\n` +
      `${formatTimestamp(end, '.')} --> ${formatTimestamp(end + 10, '.')} align:start position:0%\n${line.join(' ')}\n \n\n`;
    parts.push(block);
    size += block.length;
    previous = line.join(' ');
    t = end + 10;
  }
  return parts.join('');
}
