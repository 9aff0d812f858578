import type { Cue } from './cue.ts';
import { decodeEntities } from '../text/entities.ts';
import { stripTags } from './markup.ts';

// srv1: <text start="1.2" dur="3.4">; srv2: <text t="1200" d="3400">; srv3: <p t="1200" d="3400"><s>…</s></p>.
const ELEMENT = /<(text|p)\b([^>]*?)(?:\/>|>([\s\S]*?)<\/\1\s*>)/g;
const ATTRIBUTE = /([A-Za-z_:][\w:.-]*)\s*=\s*(?:"([^"]*)"|'([^']*)')/g;

function attributes(source: string): Map<string, string> {
  const found = new Map<string, string>();
  for (const m of source.matchAll(ATTRIBUTE)) found.set(m[1]!, decodeEntities(m[2] ?? m[3] ?? ''));
  return found;
}

// YouTube writes plain decimals ("1.54", "3309"); Number() would also read "0x10", "1e3" or "-5".
const DECIMAL = /^\s*(?:\d+(?:\.\d*)?|\.\d+)\s*$/;

function number(value: string | undefined): number | undefined {
  return value !== undefined && DECIMAL.test(value) ? Number(value) : undefined;
}

const seconds = (value: string | undefined) => {
  const parsed = number(value);
  return parsed === undefined ? undefined : parsed * 1000;
};

/**
 * XML element content to plain text. YouTube escapes the caption's own markup and entities once
 * more inside the XML ("&lt;i&gt;", "&amp;#39;"), so after the XML is undone the HTML is too.
 */
function content(xml: string): string {
  const once = decodeEntities(xml.replace(/<br\s*\/?>/gi, '\n').replace(/<[^>]*>/g, ''));
  return decodeEntities(stripTags(once));
}

/**
 * Reads YouTube timedtext XML: srv1 (<transcript>, seconds), srv2 and srv3 (<timedtext>,
 * milliseconds; srv3's word <s> spans are joined). Elements whose content is only a line break
 * (srv3 auto captions' "append" paragraphs) come out as empty cues for normaliseCues to drop.
 */
export function parseTimedtext(input: string): Cue[] {
  const cues: Cue[] = [];
  for (const m of input.matchAll(ELEMENT)) {
    const attrs = attributes(m[2] ?? '');
    // srv2 and srv3 count milliseconds in t and d, srv1 seconds in start and dur.
    const inMs = attrs.has('t');
    const start = inMs ? number(attrs.get('t')) : seconds(attrs.get('start'));
    if (start === undefined) continue;
    const duration = (inMs ? number(attrs.get('d')) : seconds(attrs.get('dur'))) ?? 0;
    const startMs = Math.round(start);
    cues.push({ startMs, endMs: startMs + Math.max(0, Math.round(duration)), text: content(m[3] ?? '') });
  }
  return cues;
}
