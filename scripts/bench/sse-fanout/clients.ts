import { spawn, type ChildProcess } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import type { ClientMessage, ParentMessage } from './protocol.ts';
import { OPEN_FILES } from './shape.ts';

const clientScript = fileURLToPath(new URL('./child.ts', import.meta.url));

export interface ClientsHandle {
  child: ChildProcess;
  next(type: ClientMessage['type']): Promise<ClientMessage>;
  send(message: ParentMessage): void;
}

/** The clients' process, its open-files limit raised through bash (which then execs node, keeping the IPC channel). */
export function startClients(): ClientsHandle {
  const child = spawn(
    'bash',
    [
      '-c',
      `if [ "$(ulimit -n)" != unlimited ] && [ "$(ulimit -n)" -lt ${OPEN_FILES} ]; then ulimit -n ${OPEN_FILES} || exit 97; fi; exec "$0" "$@"`,
      process.execPath,
      '--import',
      'tsx',
      clientScript,
    ],
    { stdio: ['ignore', 'inherit', 'inherit', 'ipc'] },
  );
  const waiting = new Map<string, (message: ClientMessage) => void>();
  const failures: Array<(error: Error) => void> = [];
  const fail = (error: Error) => {
    for (const reject of failures.splice(0)) reject(error);
  };
  child.on('message', (message: ClientMessage) => {
    if (message.type === 'failed') return fail(new Error(`the stream clients failed: ${message.message}`));
    waiting.get(message.type)?.(message);
    waiting.delete(message.type);
  });
  child.once('exit', (code, signal) => setTimeout(() => fail(new Error(`the stream clients exited (${signal ?? code})`)), 1_000));
  return {
    child,
    next: (type) =>
      new Promise((resolve, reject) => {
        waiting.set(type, resolve);
        failures.push(reject);
      }),
    send: (message) => child.send(message),
  };
}
