/** JSON objects a page embeds in its scripts: assigned to globals, or stringified inside other JSON. */
import { isObject, type JsonObject } from './json.ts';

/** The balanced `{…}` starting at `start` (which must be `{`), strings and escapes respected. */
function sliceJsonObject(text: string, start: number): string | undefined {
  if (text.charCodeAt(start) !== 123) return undefined;
  let depth = 0;
  let inString = false;
  let escaped = false;
  for (let i = start; i < text.length; i++) {
    const c = text.charCodeAt(i);
    if (inString) {
      if (escaped) escaped = false;
      else if (c === 92) escaped = true;
      else if (c === 34) inString = false;
      continue;
    }
    if (c === 34) inString = true;
    else if (c === 123) depth++;
    else if (c === 125 && --depth === 0) return text.slice(start, i + 1);
  }
  return undefined;
}

/** `text` parsed as a JSON object; undefined when it is not JSON or not an object. */
export function parseObject(text: string | undefined): JsonObject | undefined {
  if (!text) return undefined;
  try {
    const value = JSON.parse(text) as unknown;
    return isObject(value) ? value : undefined;
  } catch {
    return undefined;
  }
}

/**
 * Objects a page assigns to a global: `var NAME = {…};`, `window["NAME"] = {…};`, `NAME = {…}`,
 * and `"NAME": {…}` inside other objects.
 */
export function findAssignedObjects(html: string, name: string): JsonObject[] {
  const found: JsonObject[] = [];
  const pattern = new RegExp(`(?:\\b${name}\\b["']?\\s*\\]?\\s*=|["']${name}["']\\s*:)\\s*(?=\\{)`, 'g');
  for (const match of html.matchAll(pattern)) {
    const object = parseObject(sliceJsonObject(html, match.index + match[0].length));
    if (object) found.push(object);
  }
  return found;
}

/** JSON-in-a-string values such as `"player_response":"{\"videoDetails\":…}"`, decoded twice. */
export function findStringifiedObjects(html: string, key: string): JsonObject[] {
  const found: JsonObject[] = [];
  const pattern = new RegExp(`["']?${key}["']?\\s*[:=]\\s*"`, 'g');
  for (const match of html.matchAll(pattern)) {
    const open = match.index + match[0].length - 1;
    let end = open + 1;
    for (; end < html.length; end++) {
      const c = html.charCodeAt(end);
      if (c === 92) end++;
      else if (c === 34) break;
    }
    try {
      const inner = JSON.parse(html.slice(open, end + 1)) as unknown;
      if (typeof inner === 'string') {
        const object = parseObject(inner);
        if (object) found.push(object);
      }
    } catch {
      // not a JSON string literal
    }
  }
  return found;
}
