import { readdirSync, readFileSync } from 'node:fs';
import { expect, it } from 'vitest';
import type { Cue } from '../../core/subtitles/cue.ts';
import { detectFormat } from '../../core/subtitles/detectFormat.ts';
import { parse } from '../../core/subtitles/parse.ts';
import { render } from '../../core/subtitles/render.ts';
import { describeReal } from '../kit/describeReal.ts';
import { haveRealFixtures, realFixture } from '../kit/realFixtures.ts';

// Real caption files from public repositories (see SOURCES.md section 2 there), read in place.

type Kind = 'roll-up' | 'manual';
const lattifai = haveRealFixtures() ? readdirSync(realFixture('lattifai-benchmark')).filter((name) => name.endsWith('.vtt')) : [];
const fixtures: Array<{ file: string; kind: Kind; format: string }> = [
  { file: 'vtt-rs/test.vtt', kind: 'roll-up', format: 'vtt' },
  { file: 'wrolpi/example1.en.vtt', kind: 'roll-up', format: 'vtt' },
  { file: 'wrolpi/example3.en.srt', kind: 'roll-up', format: 'srt' },
  { file: 'youtube-captions-dataset-parser/test/subs.ru.vtt', kind: 'roll-up', format: 'vtt' },
  { file: 'wrolpi/example2.en.vtt', kind: 'manual', format: 'vtt' },
  { file: 'youtube-captions-dataset-parser/subs.ru.vtt', kind: 'manual', format: 'vtt' },
  ...lattifai.map((name) => ({ file: `lattifai-benchmark/${name}`, kind: 'manual' as const, format: 'vtt' })),
  { file: 'youtube-transcript-api/transcript.xml.static', kind: 'manual', format: 'srv1' },
];

// A reading of the raw files independent of the codecs: crude, but enough for these files.
const ENTITIES: Record<string, string> = { '&gt;': '>', '&lt;': '<', '&amp;': '&', '&#39;': "'", '&quot;': '"', '&nbsp;': ' ' };
const plain = (text: string) => text.replace(/<[^>]*>/g, '').replace(/&(?:gt|lt|amp|#39|quot|nbsp);/g, (e) => ENTITIES[e]!);
const words = (text: string) => text.split(/\s+/).filter(Boolean);

/** Each cue's text lines, as written, markup removed. */
function rawCueLines(text: string, format: string): string[][] {
  if (format === 'srv1') return [...text.matchAll(/<text[^>]*>([\s\S]*?)<\/text>/g)].map((m) => [plain(plain(m[1]!))]);
  const blocks = text.replace(/\r\n?/g, '\n').split(/\n\n+/);
  return blocks.flatMap((block) => {
    const lines = block.split('\n');
    const timing = lines.findIndex((line) => line.includes('-->'));
    if (timing < 0) return [];
    return [
      lines
        .slice(timing + 1)
        .map((line) => plain(line).replace(/\s+/g, ' ').trim())
        .filter(Boolean),
    ];
  });
}

const spokenWords = (cues: Cue[]) => cues.flatMap((cue) => words(cue.text));

function isSubsequence(needle: string[], haystack: string[]): boolean {
  let at = 0;
  for (const word of haystack) if (at < needle.length && word === needle[at]) at++;
  return at === needle.length;
}

function checkRollUp(cues: Cue[], cueLines: string[][]) {
  const output = spokenWords(cues);
  // Each cue's last line, a line held over several cues counted once.
  const finals = cueLines.map((lines) => lines.at(-1)).filter((line): line is string => line !== undefined);
  const finalRun = finals.filter((line, i) => line !== finals[i - 1]);
  expect(isSubsequence(finalRun.flatMap(words), output)).toBe(true);
  // No more words than that, plus lines that were never a last line (the file's first lines).
  const finalSet = new Set(finals);
  const neverFinal = new Set(cueLines.flat().filter((line) => !finalSet.has(line)));
  expect(output.length).toBeLessThanOrEqual(finalRun.flatMap(words).length + [...neverFinal].flatMap(words).length);
  // No rolled-up line twice in a row.
  const joined = ` ${output.join(' ')} `;
  for (const line of new Set(cueLines.flat())) if (words(line).length >= 3) expect(joined).not.toContain(` ${line} ${line} `);
  for (let i = 1; i < cues.length; i++) expect(cues[i]!.text).not.toBe(cues[i - 1]!.text);
}

function checkManual(cues: Cue[], cueLines: string[][]) {
  const source = cueLines.flat().map((line) => line.replace(/^(?:>>\s*)+/, ''));
  expect(spokenWords(cues)).toEqual(source.flatMap(words));
  expect(cues.filter((cue) => cue.speakerChange)).toHaveLength(cueLines.flat().filter((line) => line.startsWith('>>')).length);
}

describeReal('real caption files', () => {
  it('include the lattifai benchmark track', () => {
    expect(lattifai.length).toBeGreaterThan(0);
  });

  it.each(fixtures)('$file ($kind) converts to SRT, WebVTT and text without losing or repeating words', ({ file, kind, format }) => {
    const raw = readFileSync(realFixture(file), 'utf8');
    expect(detectFormat(raw, file)).toBe(format);
    const cues = parse(raw, file);
    expect(cues.length).toBeGreaterThan(0);
    const cueLines = rawCueLines(raw, format);
    if (kind === 'roll-up') checkRollUp(cues, cueLines);
    else checkManual(cues, cueLines);

    expect(parse(render(cues, 'srt'), 'srt')).toEqual(cues);
    expect(parse(render(cues, 'vtt'), 'vtt')).toEqual(cues);
    const text = render(cues, 'txt').split('\n');
    expect(text.pop()).toBe('');
    expect(text).toHaveLength(cues.length);
    expect(text.flatMap((line) => words(line.replace(/^>> /, '')))).toEqual(spokenWords(cues));
  });
});
