import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { parseJson, runCli, runCommand } from '../support/cli.ts';

let dir: string;
const file = (name: string) => join(dir, name);

beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), 'afterimage-subtitles-'));
  await writeFile(
    file('auto.en.vtt'),
    'WEBVTT\r\nKind: captions\r\n\r\n00:00:00.080 --> 00:00:01.309 align:start position:0%\r\n \r\nhello<00:00:00.500><c> there</c>\r\n\r\n00:00:01.309 --> 00:00:01.319 align:start position:0%\r\nhello there\r\n \r\n\r\n00:00:01.319 --> 00:00:03.000 align:start position:0%\r\nhello there\r\n&gt;&gt; BOB: hi<00:00:02.000><c> &amp;</c><c> bye</c>\r\n',
  );
  await writeFile(file('broken.json3'), '{"events": [ {"tStartMs": 1');
  await writeFile(file('notes.txt'), 'just some notes\n');
});
afterAll(async () => {
  await rm(dir, { recursive: true, force: true });
});

describe('afterimage subtitles convert', () => {
  // SRT from a real process (its stdout and exit); the rest in this process, the same command.
  it('writes normalised SRT, WebVTT and text to stdout', async () => {
    const srt = await runCli(['subtitles', 'convert', file('auto.en.vtt'), '--to', 'srt']);
    const vtt = await runCommand(['subtitles', 'convert', file('auto.en.vtt'), '--to', 'vtt']);
    const txt = await runCommand(['subtitles', 'convert', file('auto.en.vtt'), '--to', 'txt']);
    expect(srt).toMatchObject({ code: 0, stderr: '' });
    expect(srt.stdout).toBe('1\n00:00:00,080 --> 00:00:01,309\nhello there\n\n2\n00:00:01,319 --> 00:00:03,000\n>> BOB: hi & bye\n');
    expect(vtt.stdout).toBe(
      'WEBVTT\n\n00:00:00.080 --> 00:00:01.309\nhello there\n\n00:00:01.319 --> 00:00:03.000\n&gt;&gt; BOB: hi &amp; bye\n',
    );
    expect(txt.stdout).toBe('hello there\n>> BOB: hi & bye\n');
  });

  it('gives the cues as JSON with --json', async () => {
    const result = parseJson(await runCommand(['subtitles', 'convert', file('auto.en.vtt'), '--to', 'txt', '--json']));
    expect(result).toMatchObject({ from: 'vtt', to: 'txt', output: 'hello there\n>> BOB: hi & bye\n' });
    expect(result.cues[1]).toEqual({ startMs: 1319, endMs: 3000, text: 'BOB: hi & bye', speakerChange: true });
  });

  it('fails with a usage error (exit 2) for missing, unknown or broken files and bad options', async () => {
    const cases: Array<[string[], RegExp]> = [
      [['subtitles', 'convert', file('missing.vtt'), '--to', 'srt'], /cannot read .*missing\.vtt: no such file/],
      [['subtitles', 'convert', dir, '--to', 'srt'], /it is a folder/],
      [['subtitles', 'convert', file('notes.txt'), '--to', 'srt'], /notes\.txt is not a subtitle file afterimage can read/],
      [['subtitles', 'convert', file('broken.json3'), '--to', 'srt'], /broken\.json3: json3 captions are not valid JSON/],
      [['subtitles', 'convert', file('auto.en.vtt'), '--to', 'ass'], /--to takes srt, vtt or txt/],
      [['subtitles', 'convert', file('auto.en.vtt')], /usage: npx afterimage subtitles convert/],
      [['subtitles', 'split'], /usage: npx afterimage subtitles convert/],
    ];
    const results = await Promise.all(cases.map(([args]) => runCommand(args)));
    cases.forEach(([args, message], i) => {
      expect(results[i]!.code, args.join(' ')).toBe(2);
      expect(results[i]!.stdout).toBe('');
      expect(results[i]!.stderr).toMatch(message);
    });
  });
});
