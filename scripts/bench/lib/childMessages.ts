/** How a benchmark's child process talks to its parent (fork IPC): one request in, one report or failure out. */

export const sendToParent = (message: unknown) => new Promise<void>((done) => process.send!(message, () => done()));

/** Answers the parent's one request with `{type, report}` from `measure`, or `{type: 'failed', message}`, then lets go of the channel. */
export function answerOnce<R>(type: string, measure: (request: R) => Promise<unknown>): void {
  process.once('message', (request: R) => {
    measure(request).then(
      async (report) => {
        await sendToParent({ type, report });
        process.disconnect();
      },
      async (error: unknown) => {
        await sendToParent({ type: 'failed', message: error instanceof Error ? (error.stack ?? error.message) : String(error) });
        process.disconnect();
      },
    );
  });
}
