/**
 * JSON.parse of large yt-dlp documents on worker threads. A modern full dump is 300–900 KB (its
 * `formats` and `automatic_captions` URLs), so parsing, not reading, bounds a scan; workers use the
 * other cores and keep the event loop of the calling process responsive.
 *
 * Each worker parses, drops what no record needs (format lists, caption URLs, heatmaps…) and posts
 * back a small object; the caller turns it into records with the same parser as in-thread. The
 * worker is plain JavaScript evaluated from a string, so it runs the same under node, tsx and
 * vitest. If a worker cannot start or dies, parsing falls back to the calling thread.
 */
import { Worker } from 'node:worker_threads';

const WORKER_SOURCE = String.raw`
const { parentPort } = require('node:worker_threads');
// Keys whose values no record needs. Kept as empty values where presence matters ('formats').
const DROP = new Set(['requested_formats', 'requested_downloads', 'heatmap', 'fragments', 'http_headers', 'requested_subtitles',
  '__files_to_merge', 'formats_table', 'thumbnails_table', 'subtitles_table', 'automatic_captions_table', 'annotations', 'comments', 'chapters', 'storyboards']);
function keysOnly(value) {
  if (!value || typeof value !== 'object' || Array.isArray(value)) return value;
  const out = {};
  for (const key of Object.keys(value)) out[key] = 0;
  return out;
}
function slim(doc, depth) {
  if (!doc || typeof doc !== 'object' || Array.isArray(doc)) return doc;
  const out = {};
  for (const key of Object.keys(doc)) {
    if (DROP.has(key)) continue;
    const value = doc[key];
    if (key === 'formats') out[key] = [];
    else if (key === 'subtitles' || key === 'automatic_captions') out[key] = keysOnly(value);
    else if (key === 'entries' && Array.isArray(value) && depth < 6) out[key] = value.map((entry) => slim(entry, depth + 1));
    else out[key] = value;
  }
  return out;
}
const decoder = new TextDecoder();
parentPort.on('message', (message) => {
  let data;
  try {
    data = JSON.parse(decoder.decode(message.bytes));
  } catch (error) {
    parentPort.postMessage({ id: message.id, invalid: String((error && error.message) || error) });
    return;
  }
  parentPort.postMessage({ id: message.id, data: slim(data, 0) });
});
`;

export class InvalidJsonError extends Error {
  override name = 'InvalidJsonError';
}

interface Pending {
  resolve: (value: unknown) => void;
  reject: (error: unknown) => void;
  bytes: Buffer;
}

interface Slot {
  worker: Worker;
  pending: Map<number, Pending>;
  dead: boolean;
}

/** Parses in the calling thread (the fallback, and for small documents). */
export function parseHere(bytes: Buffer): unknown {
  const text = bytes.toString('utf8');
  try {
    return JSON.parse(text.charCodeAt(0) === 0xfeff ? text.slice(1) : text);
  } catch (error) {
    throw new InvalidJsonError((error as Error).message);
  }
}

export class ParsePool {
  private slots: Slot[] = [];
  private nextId = 1;
  private broken = false;

  constructor(private readonly size: number) {}

  private start(): void {
    if (this.slots.length || this.broken || this.size <= 0) return;
    try {
      for (let i = 0; i < this.size; i++) {
        const slot: Slot = { worker: new Worker(WORKER_SOURCE, { eval: true }), pending: new Map(), dead: false };
        slot.worker.unref();
        slot.worker.on('message', (message: { id: number; data?: unknown; invalid?: string }) => {
          const pending = slot.pending.get(message.id);
          if (!pending) return;
          slot.pending.delete(message.id);
          if (message.invalid !== undefined) pending.reject(new InvalidJsonError(message.invalid));
          else pending.resolve(message.data);
        });
        const fail = () => this.retire(slot);
        slot.worker.on('error', fail);
        slot.worker.on('exit', fail);
        this.slots.push(slot);
      }
    } catch {
      this.broken = true;
      void this.close();
    }
  }

  /** A dead worker's documents are parsed here instead; later ones go to the others (or here). */
  private retire(slot: Slot): void {
    if (slot.dead) return;
    slot.dead = true;
    for (const [, pending] of slot.pending) {
      try {
        pending.resolve(parseHere(pending.bytes));
      } catch (error) {
        pending.reject(error);
      }
    }
    slot.pending.clear();
    if (this.slots.every((s) => s.dead)) this.broken = true;
  }

  /** The parsed (and slimmed) document; rejects with InvalidJsonError when it is not JSON. */
  parse(bytes: Buffer): Promise<unknown> {
    this.start();
    const live = this.slots.filter((s) => !s.dead);
    if (!live.length) {
      try {
        return Promise.resolve(parseHere(bytes));
      } catch (error) {
        return Promise.reject(error);
      }
    }
    const slot = live.reduce((a, b) => (b.pending.size < a.pending.size ? b : a));
    const id = this.nextId++;
    return new Promise((resolve, reject) => {
      slot.pending.set(id, { resolve, reject, bytes });
      try {
        slot.worker.postMessage({ id, bytes });
      } catch {
        slot.pending.delete(id);
        try {
          resolve(parseHere(bytes));
        } catch (error) {
          reject(error);
        }
      }
    });
  }

  /** Stops the workers; documents still being parsed are rejected. */
  async close(): Promise<void> {
    const slots = this.slots;
    this.slots = [];
    await Promise.all(
      slots.map((slot) => {
        slot.dead = true;
        for (const [, pending] of slot.pending) pending.reject(new Error('the parse pool was closed'));
        slot.pending.clear();
        return slot.worker.terminate().catch(() => undefined);
      }),
    );
  }
}
