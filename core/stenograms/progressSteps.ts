/** Progress as generators report it, with a turn of the event loop each time so that an abort can arrive and stop the work. */
import { setImmediate as nextTurn } from 'node:timers/promises';
import type { StenogramProgress } from './stenogram.ts';

export interface GenerateOptions {
  signal?: AbortSignal;
  onProgress?: (progress: StenogramProgress) => void;
}

export function progressSteps({ signal, onProgress }: GenerateOptions): (progress: StenogramProgress) => Promise<void> {
  return async (progress) => {
    signal?.throwIfAborted();
    onProgress?.(progress);
    await nextTurn();
    signal?.throwIfAborted();
  };
}
