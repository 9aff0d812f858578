import { readFile } from 'node:fs/promises';
import { AppError } from '../../core/errors.ts';
import { outputFormats, type Cue, type InputFormat } from '../../core/subtitles/cue.ts';
import { decodeBytes } from '../../core/subtitles/decodeBytes.ts';
import { detectFormat } from '../../core/subtitles/detectFormat.ts';
import { normaliseCues } from '../../core/subtitles/normaliseCues.ts';
import { parseRaw } from '../../core/subtitles/parse.ts';
import { render } from '../../core/subtitles/render.ts';
import { output, parseOptions, subcommand, UsageError } from '../cli.ts';

const USAGE = `usage: npx afterimage subtitles convert <file> --to srt|vtt|txt [--json]
any WebVTT, SRT, timedtext or json3 file, normalised, to stdout`;
const READS = 'WebVTT, SRT, YouTube timedtext XML (srv1, srv2, srv3) or json3';

async function readText(file: string): Promise<string> {
  try {
    return decodeBytes(await readFile(file));
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code;
    throw new UsageError(
      `cannot read ${file}: ${code === 'ENOENT' ? 'no such file' : code === 'EISDIR' ? 'it is a folder' : (error as Error).message}`,
    );
  }
}

function readCues(file: string, text: string, format: InputFormat): Cue[] {
  try {
    return normaliseCues(parseRaw(text, format));
  } catch (error) {
    // A file that looks like one format but is broken (json3 that is not JSON, say).
    if (error instanceof AppError && error.code === 'INVALID_INPUT') throw new UsageError(`${file}: ${error.message}`);
    throw error;
  }
}

/** `subtitles convert`: any subtitle file the codecs read to normalised SRT, WebVTT or text on stdout. */
export async function subtitlesCommand(command: string[]): Promise<void> {
  const [, args] = subcommand(command, ['convert'], USAGE);
  const { values, positionals } = parseOptions(args, { to: { type: 'string' } }, { usage: USAGE, positionals: true });
  const [file, ...extra] = positionals;
  if (!file || extra.length > 0 || !values.to) throw new UsageError(USAGE);
  const to = outputFormats.find((format) => format === values.to?.toLowerCase());
  if (!to) throw new UsageError(`--to takes srt, vtt or txt (got ${JSON.stringify(values.to)})`);

  const text = await readText(file);
  const from = detectFormat(text, file);
  if (!from) throw new UsageError(`${file} is not a subtitle file afterimage can read (${READS})`);
  const cues = readCues(file, text, from);
  const rendered = render(cues, to);
  if (values.json) output(true, { file, from, to, cues, output: rendered }, () => '');
  else process.stdout.write(rendered);
}
